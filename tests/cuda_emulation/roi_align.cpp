// The CUDA kernels and glue, built by the host compiler for tests/test_cuda_emulation.py.
//
// Without contraction, unlike the other kernels (loader.py): on a GPU, roi_align's reference is
// torchvision's CUDA kernel, which nvcc contracts where it contracts ours (the same expressions,
// bilinear weights times values summed); here it is torchvision's CPU kernel, which rounds every
// product. Contracting ours alone would compare two roundings that never meet on a device.
#pragma GCC optimize("fp-contract=off")
#include "roi_align/cuda/roi_align.cu"
