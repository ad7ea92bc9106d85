// Keeps libmyops.so and myops/_C*.so loadable on glibc 2.28, as torch's own wheels are
// (manylinux_2_28), when they are built on a newer glibc. Included by exactly one .cpp of each
// library: csrc/common/glibc_compat.cpp (libmyops) and csrc/python/glibc_compat.cpp (_C).
//
// A binary needs the newest symbol version it references. Built on glibc >= 2.32, two kinds of
// reference come out newer than 2.28 (tests/test_package.py checks the built libraries):
//  - exp, exp2, log, log2, pow (double): glibc 2.29 added new versions of these (the same
//    values, without the old SVID error handling). Each library defines them here, hidden, as
//    calls to the version every glibc has, the one torch's wheels call too.
//  - __libc_single_threaded (glibc 2.32): libstdc++'s headers (GCC >= 11) read it to skip the
//    atomic reference counts of shared_ptr and friends in a single-threaded process. A hidden
//    definition holding 0 ("maybe multi-threaded") makes them always count atomically, which
//    is what the same headers do on glibc 2.28.
// Hidden: the definitions bind the library's own references and are not exported, so they
// never stand in for another library's.
#pragma once

#if defined(__linux__)
#include <features.h>  // __GLIBC__ (musl has no such symbol versions)
#endif

#if defined(__GLIBC__) && defined(__x86_64__)

// The asm label names the symbol: a C++ name of its own keeps GCC's built-in exp() (whose
// declaration carries default visibility) out of the way.
#define MYOPS_GLIBC_2_2_5_MATH(name, params, args)                                          \
  double myops_glibc_2_2_5_##name params;                                                   \
  __asm__(".symver myops_glibc_2_2_5_" #name ", " #name "@GLIBC_2.2.5");                   \
  __attribute__((visibility("hidden"))) double myops_glibc_compat_##name params __asm__(#name); \
  double myops_glibc_compat_##name params { return myops_glibc_2_2_5_##name args; }

extern "C" {
MYOPS_GLIBC_2_2_5_MATH(exp, (double x), (x))
MYOPS_GLIBC_2_2_5_MATH(exp2, (double x), (x))
MYOPS_GLIBC_2_2_5_MATH(log, (double x), (x))
MYOPS_GLIBC_2_2_5_MATH(log2, (double x), (x))
MYOPS_GLIBC_2_2_5_MATH(pow, (double x, double y), (x, y))

__attribute__((visibility("hidden"))) char __libc_single_threaded = 0;
}

#undef MYOPS_GLIBC_2_2_5_MATH

#endif
