// The glibc 2.28 compatibility definitions for myops/_C (see the header).
#include "core/glibc_compat.h"
