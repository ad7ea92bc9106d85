// The glibc 2.28 compatibility definitions for myops/_C (see the header).
#include "common/glibc_compat.h"
