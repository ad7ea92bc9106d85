// Test ops of the emulated device itself (csrc/core/cuda/emulation.h), for tests/test_cuda_emulation.py:
//   myops_emu::_emu_seed(int seed) -> int               sets the thread-order seed, returns the old one
//   myops_emu::_emu_launch(int[] grid, int[] block) -> Tensor
//       launches a kernel that records which thread ran when: out[k] = linear id (block-major,
//       x fastest) of the k-th thread that ran, through the same MYOPS_LAUNCH as the kernels
//   myops_emu::_emu_cub_misuse(str algorithm, str misuse) -> int
//       calls the CUB stand-in ("select": DeviceSelect::Flagged, "reduce": DeviceReduce::Reduce
//       in int32, "sum": DeviceReduce::Sum, "segsort": DeviceSegmentedRadixSort::SortPairs over
//       two segments) the way `misuse` names ("none": as documented) and
//       returns the CUDA error code of the second call, or for "none" 0 when the count and the
//       selection are right
//   myops_emu::_emu_work_counter(str name, bool reset) -> int
//       the emulation's work counter `name` (MYOPS_EMU_COUNT, core/cuda/work_counter.h); `reset`:
//       zeroes it after the read
//   myops_emu::_emu_cub_items(int num_items, int every) -> int[]
//       selects every `every`-th of num_items (int64) items: [count, last rank, last item]
//   myops_emu::_emu_variant(str spec) -> str
//       sets the kernel variants the emulated ops run (core/variants.h's override, the syntax of
//       MYOPS_CUDA_VARIANT; "" clears it), returns the previous spec
//   myops_emu::_emu_counters(bool reset) -> int[]
//       [kernel launches, memsets, host syncs, temporary bytes] since the last reset
//   myops_emu::_emu_block_scan(bool barrier, int blocks) -> int[]
//       the exclusive prefix sums of 1..256 in each of `blocks` blocks of 256 threads, by a copy of
//       multiclass_nms.cu's block_scan, with its first barrier or (barrier=False) without it: a
//       kernel that drops a barrier must give wrong sums here, as on a device
//   myops_emu::_emu_spin_order(bool atomic_tiles, int blocks) -> int
//       a look-back chain over `blocks` blocks of 64 threads, each waiting on the previous tile:
//       tiles from an atomic counter (returns the sum the chain carries), or from blockIdx (which
//       a device may deadlock on: the emulation reports it)
#include <ATen/core/Tensor.h>
#include <ATen/ops/empty.h>
#include <torch/library.h>

#include <cstdint>
#include <string>
#include <vector>

#include "core/cuda/cub_emulation.h"
#include "core/cuda/launch.h"
#include "core/cuda/work_counter.h"
#include "core/variants.h"

namespace {

__global__ void record_order_kernel(int64_t* out, int64_t* next) {
  const int64_t threads = int64_t(blockDim.x) * blockDim.y * blockDim.z;
  const int64_t block = (int64_t(blockIdx.z) * gridDim.y + blockIdx.y) * gridDim.x + blockIdx.x;
  const int64_t thread = (int64_t(threadIdx.z) * blockDim.y + threadIdx.y) * blockDim.x + threadIdx.x;
  out[(*next)++] = block * threads + thread;  // an order dependence, on purpose
}

dim3 to_dim3(const std::vector<int64_t>& v) {
  TORCH_CHECK(v.size() == 3, "_emu_launch: three dims expected");
  return dim3(static_cast<unsigned>(v[0]), static_cast<unsigned>(v[1]), static_cast<unsigned>(v[2]));
}

at::Tensor emu_launch(std::vector<int64_t> grid, std::vector<int64_t> block) {
  const dim3 g = to_dim3(grid), b = to_dim3(block);
  const int64_t n = int64_t(g.x) * g.y * g.z * b.x * b.y * b.z;
  at::Tensor out = at::empty({n > 0 && n < (int64_t(1) << 28) ? n : 0}, at::kLong);
  int64_t next = 0;
  MYOPS_LAUNCH(g, b, nullptr, record_order_kernel)(out.data_ptr<int64_t>(), &next);
  return out;
}

struct EveryKth {
  int64_t k;
  bool operator()(int64_t i) const { return i % k == 0; }
};

int64_t emu_cub_misuse(std::string algorithm, std::string misuse) {
  TORCH_CHECK(algorithm == "select" || algorithm == "reduce" || algorithm == "sum" || algorithm == "segsort",
              "_emu_cub_misuse: unknown algorithm ", algorithm);
  const int64_t n = 1000000, every = 7, expected = (n + every - 1) / every;
  const auto flags = thrust::make_transform_iterator(thrust::counting_iterator<int64_t>(0), EveryKth{every});
  std::vector<int64_t> out(n);
  int64_t count = -1;
  // segsort: keys (n - i) % 1000 and values i in two segments, [0, n/2) and [n/2, n)
  std::vector<uint32_t> keys_in(n), keys_out(n, 0);
  std::vector<int32_t> vals_in(n), vals_out(n, -1);
  const int32_t offsets[3] = {0, static_cast<int32_t>(n / 2), static_cast<int32_t>(n)};
  if (algorithm == "segsort") {
    for (int64_t i = 0; i < n; ++i) {
      keys_in[i] = static_cast<uint32_t>((n - i) % 1000);
      vals_in[i] = static_cast<int32_t>(i);
    }
  }
  auto call = [&](void* temp, size_t& bytes, int64_t items) {
    if (algorithm == "segsort") {
      return cub::DeviceSegmentedRadixSort::SortPairs(temp, bytes, keys_in.data(), keys_out.data(), vals_in.data(),
                                                      vals_out.data(), static_cast<int>(items), 2, offsets, offsets + 1,
                                                      0, 10);
    }
    if (algorithm == "select") {
      auto writer = [&out](int64_t r, int64_t i) { out[r] = i; };
      return cub::DeviceSelect::Flagged(temp, bytes, thrust::counting_iterator<int64_t>(0), flags,
                                        thrust::make_tabulate_output_iterator(writer), &count, items);
    }
    if (algorithm == "reduce") {
      auto it = thrust::make_transform_iterator(flags, [](bool f) -> int32_t { return f ? 1 : 0; });
      return cub::DeviceReduce::Reduce(
          temp, bytes, it, &count, static_cast<int32_t>(items), [](int32_t a, int32_t b) { return a + b; }, int32_t{0});
    }
    auto it = thrust::make_transform_iterator(flags, [](bool f) -> int64_t { return f ? 1 : 0; });
    return cub::DeviceReduce::Sum(temp, bytes, it, &count, items);
  };
  size_t bytes = 0;
  const int64_t query_items = misuse == "other_num_items" ? n / 100 : n;
  if (cudaError_t e = call(nullptr, bytes, query_items); e != cudaSuccess) return e;
  TORCH_CHECK(count == -1 && bytes > 0, "_emu_cub_misuse: the size query wrote its output");
  auto block = c10::cuda::CUDACachingAllocator::get()->allocate(bytes + 512);
  char* temp = static_cast<char*>(block.get());
  if (misuse == "misaligned_temp") temp += 16;
  if (misuse == "short_temp") bytes -= 1;
  if (misuse == "negative_num_items") {
    if (cudaError_t e = call(temp, bytes, -1); e != cudaSuccess) return e;
    return 0;
  }
  if (cudaError_t e = call(temp, bytes, n); e != cudaSuccess) return e;
  TORCH_CHECK(misuse == "none", "_emu_cub_misuse: unknown misuse ", misuse);
  myops::emu::synchronize();
  if (algorithm == "segsort") {  // each segment sorted by key, equal keys in their input order
    for (int64_t i = 0; i < n; ++i) {
      const bool first = i == 0 || i == n / 2;
      if (keys_out[i] != keys_in[vals_out[i]]) return -2;
      if (!first &&
          (keys_out[i - 1] > keys_out[i] || (keys_out[i - 1] == keys_out[i] && vals_out[i - 1] > vals_out[i]))) {
        return -2;
      }
      if ((i < n / 2) != (vals_out[i] < n / 2)) return -2;  // no item leaves its segment
    }
    return 0;
  }
  if (count != expected) return count;
  if (algorithm == "select") {
    for (int64_t r = 0; r < expected; ++r) {
      if (out[r] != r * every) return -2;
    }
  }
  return 0;
}

std::vector<int64_t> emu_cub_items(int64_t num_items, int64_t every) {
  int64_t count = -1, last_rank = -1, last_item = -1;
  auto writer = [&](int64_t r, int64_t i) {
    if (r > last_rank) {
      last_rank = r;
      last_item = i;
    }
  };
  const thrust::counting_iterator<int64_t> first(0);
  const auto flags = thrust::make_transform_iterator(first, EveryKth{every});
  auto out = thrust::make_tabulate_output_iterator(writer);
  size_t bytes = 0;
  C10_CUDA_CHECK(cub::DeviceSelect::Flagged(nullptr, bytes, first, flags, out, &count, num_items));
  auto temp = c10::cuda::CUDACachingAllocator::get()->allocate(bytes);
  C10_CUDA_CHECK(cub::DeviceSelect::Flagged(temp.get(), bytes, first, flags, out, &count, num_items));
  myops::emu::synchronize();
  return {count, last_rank, last_item};
}

int64_t emu_work_counter(std::string name, bool reset) {
  auto& c = myops::emu::work_counter(name);
  return reset ? c.exchange(0) : c.load();
}

std::string emu_variant(std::string spec) { return myops::set_cuda_variant(spec); }

std::vector<int64_t> emu_counters(bool reset) {
  auto& c = myops::emu::counters();
  std::vector<int64_t> out = {c.launches, c.memsets, c.syncs, c.temp_bytes};
  if (reset) c = myops::emu::Counters{};
  return out;
}

// state[0]: the tile counter; state[1 + k]: tile k's inclusive value (0: not yet)
__global__ void spin_chain_kernel(bool atomic_tiles, unsigned long long* state) {
  MYOPS_SHARED(int64_t, s_tile, 1);
  if (threadIdx.x == 0) s_tile[0] = atomic_tiles ? static_cast<int64_t>(atomicAdd(state, 1ull)) : blockIdx.x;
  __syncthreads();
  const int64_t tile = s_tile[0];
  volatile unsigned long long* value = state + 1;
  if (threadIdx.x == 0) {
    unsigned long long prev = 0;
    if (tile > 0) {
      while ((prev = value[tile - 1]) == 0) MYOPS_SPIN_PAUSE();
    }
    value[tile] = prev + 1;
  }
}

int64_t emu_spin_order(bool atomic_tiles, int64_t blocks) {
  std::vector<unsigned long long> state(static_cast<size_t>(blocks) + 1, 0);
  MYOPS_LAUNCH_COOP(dim3(static_cast<unsigned>(blocks)), 64, nullptr, spin_chain_kernel)(atomic_tiles, state.data());
  return static_cast<int64_t>(state.back());
}

// A copy of multiclass_nms.cu's block_scan; `barrier`: with the barrier between the writes of
// buf and the first reads of other threads' entries.
__global__ void block_scan_kernel(bool barrier, int64_t* out) {
  MYOPS_SHARED(int64_t, buf, 256);
  const int t = threadIdx.x;
  const int64_t v = t + 1;
  buf[t] = v;
  if (barrier) __syncthreads();
  for (int off = 1; off < static_cast<int>(blockDim.x); off <<= 1) {
    const int64_t x = t >= off ? buf[t - off] : 0;
    __syncthreads();
    buf[t] += x;
    __syncthreads();
  }
  out[int64_t(blockIdx.x) * blockDim.x + t] = buf[t] - v;
}

std::vector<int64_t> emu_block_scan(bool barrier, int64_t blocks) {
  std::vector<int64_t> out(static_cast<size_t>(blocks) * 256, -1);
  MYOPS_LAUNCH_COOP(dim3(static_cast<unsigned>(blocks)), 256, nullptr, block_scan_kernel)(barrier, out.data());
  return out;
}

int64_t emu_seed(int64_t seed) { return static_cast<int64_t>(myops::emu::set_seed(static_cast<uint64_t>(seed))); }

}  // namespace

TORCH_LIBRARY_FRAGMENT(myops_emu, m) {
  m.def("_emu_seed(int seed) -> int", &emu_seed);
  m.def("_emu_launch(int[] grid, int[] block) -> Tensor", &emu_launch);
  m.def("_emu_cub_misuse(str algorithm, str misuse) -> int", &emu_cub_misuse);
  m.def("_emu_cub_items(int num_items, int every) -> int[]", &emu_cub_items);
  m.def("_emu_work_counter(str name, bool reset) -> int", &emu_work_counter);
  m.def("_emu_variant(str spec) -> str", &emu_variant);
  m.def("_emu_counters(bool reset) -> int[]", &emu_counters);
  m.def("_emu_spin_order(bool atomic_tiles, int blocks) -> int", &emu_spin_order);
  m.def("_emu_block_scan(bool barrier, int blocks) -> int[]", &emu_block_scan);
}
