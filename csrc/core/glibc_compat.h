// Keeps libmyops.so and myops/_C*.so loadable on glibc 2.28, as torch's own wheels are
// (manylinux_2_28), when they are built on a newer glibc. Included by exactly one .cpp of each
// library: csrc/core/glibc_compat.cpp (libmyops) and csrc/python/glibc_compat.cpp (_C).
//
// A binary needs the newest symbol version it references. Built on glibc >= 2.34, three kinds of
// reference come out newer than 2.28 (tests/test_package.py checks the built libraries):
//  - exp, exp2, log, log2, pow (double): glibc 2.29 added new versions of these (the same
//    values, without the old SVID error handling);
//  - dlopen, dlsym, dlclose (CUB's headers, in the CUDA build) and pthread_once (std::call_once):
//    glibc 2.34 moved them from libdl / libpthread into libc under a new version. The old
//    version is still there (libc keeps it for old binaries), and on glibc 2.28 it is found in
//    libdl / libpthread, which libtorch_cpu and libc10 load before us.
//  Each library defines these here, hidden, as calls to the GLIBC_2.2.5 version every glibc
//  has, the one torch's wheels call too.
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
// declaration carries default visibility) and the system headers' declarations out of the way.
#define MYOPS_GLIBC_2_2_5(ret, name, params, args)                                           \
  ret myops_glibc_2_2_5_##name params;                                                       \
  __asm__(".symver myops_glibc_2_2_5_" #name ", " #name "@GLIBC_2.2.5");                     \
  __attribute__((visibility("hidden"))) ret myops_glibc_compat_##name params __asm__(#name); \
  ret myops_glibc_compat_##name params { return myops_glibc_2_2_5_##name args; }

extern "C" {
MYOPS_GLIBC_2_2_5(double, exp, (double x), (x))
MYOPS_GLIBC_2_2_5(double, exp2, (double x), (x))
MYOPS_GLIBC_2_2_5(double, log, (double x), (x))
MYOPS_GLIBC_2_2_5(double, log2, (double x), (x))
MYOPS_GLIBC_2_2_5(double, pow, (double x, double y), (x, y))
MYOPS_GLIBC_2_2_5(void*, dlopen, (const char* file, int mode), (file, mode))
MYOPS_GLIBC_2_2_5(void*, dlsym, (void* handle, const char* name), (handle, name))
MYOPS_GLIBC_2_2_5(int, dlclose, (void* handle), (handle))
MYOPS_GLIBC_2_2_5(int, pthread_once, (int* once, void (*init)(void)), (once, init))

__attribute__((visibility("hidden"))) char __libc_single_threaded = 0;
}

#undef MYOPS_GLIBC_2_2_5

#endif
