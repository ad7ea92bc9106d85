// The CUDA kernels and glue, built by the host compiler for tests/test_cuda_emulation.py.
#include "roi_align/cuda/roi_align.cu"
