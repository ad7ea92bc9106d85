// The glibc 2.28 compatibility definitions for libmyops.so (see the header).
#include "core/glibc_compat.h"
