#pragma once
// Host/device qualifiers usable from .cpp (gcc) and .cu (nvcc) translation units.
#if defined(__CUDACC__)
#define MYOPS_HD __host__ __device__ __forceinline__
#define MYOPS_DEVICE __device__ __forceinline__
#else
#define MYOPS_HD inline
#define MYOPS_DEVICE inline
#endif

// `#pragma unroll` for nvcc only (gcc warns about the unknown pragma in host code).
#if defined(__CUDACC__)
#define MYOPS_UNROLL _Pragma("unroll")
#else
#define MYOPS_UNROLL
#endif

// Largest rank the CUDA kernels take after merging dimensions (kernel parameters hold
// per-dimension divisors and strides by value).
#define MYOPS_MAX_DIMS 16
