#pragma once
// The CUB / thrust / caching-allocator pieces the CUDA kernels call (nonzero's select and count
// passes, nonzero/cuda/nonzero.cuh; multiclass_nms_static's segmented sorts,
// nms/cuda/multiclass_nms.cu). Built with MYOPS_CUDA_EMULATION (the host compiler,
// tests/test_cuda_emulation.py), their host stand-ins, held to CUB's contract, take their place:
// core/cuda/cub_emulation.h.
#if defined(MYOPS_CUDA_EMULATION)
#include "core/cuda/cub_emulation.h"
#else
#include <c10/cuda/CUDACachingAllocator.h>
#include <cub/device/device_reduce.cuh>
#include <cub/device/device_segmented_radix_sort.cuh>
#include <cub/device/device_select.cuh>
#include <thrust/iterator/counting_iterator.h>
#include <thrust/iterator/tabulate_output_iterator.h>
#include <thrust/iterator/transform_iterator.h>
#endif

// CUB's DeviceSelect / DeviceReduce take more than 2^31 - 1 items (int64 num_items, streamed in
// partitions) from CCCL 2.7 on (NVIDIA/cccl#2400; CUDA 12.8); older ones would not count past it.
#if defined(CCCL_VERSION) && CCCL_VERSION >= 2007000
#define MYOPS_CUB_64BIT_ITEMS 1
#else
#define MYOPS_CUB_64BIT_ITEMS 0
#endif
