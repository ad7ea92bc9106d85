// The CUDA glue, built by the host compiler for tests/test_cuda_emulation.py.
#include "diagonal/cuda/diagonal_glue.cpp"
