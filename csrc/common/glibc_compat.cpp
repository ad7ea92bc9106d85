// The glibc 2.28 compatibility definitions for libmyops.so (see the header).
#include "common/glibc_compat.h"
