// nonzero's "lookback" variant (core/variants.h): the select pass as ONE kernel with a decoupled
// look-back over tiles, after a memset of its tile states. No count pass, no host sync.
//
// A block takes its tile id from an atomic counter (not from blockIdx), so tile k goes to the k-th
// block to start: every tile it looks back on belongs to a block that has started, and the kernel
// is correct - and cannot deadlock - in any block order. (The emulation runs several blocks at
// once in a shuffled order with every thread a fiber, core/cuda/emulation.h: a tile taken from
// blockIdx would wait there on a block that has not started.)
// Per tile of kTile = 256 threads x 32 elements:
//  1. each thread loads its 32 contiguous elements with 16-byte loads (when the input is 16-byte
//     aligned and the tile full; else element by element, or through strides) into a 32-bit
//     flag mask: one popc is its count;
//  2. a warp scan (__shfl_up_sync) and the warps' totals in shared memory give each thread its
//     rank in the tile; each thread writes the tile offsets of its selected elements at their ranks
//     (shared memory, 2 bytes each);
//  3. warp 0 publishes the tile's count (status A), looks back 32 tiles at a time (one status word
//     per lane, __ballot_sync finds the nearest tile with an inclusive prefix, status P, and a
//     warp sum adds the counts up to it), then publishes the tile's inclusive prefix (P);
//  4. the block writes the int64 coordinates of its selected elements from shared memory: thread j
//     writes rank base + j, so every coordinate row is written coalesced (any rank: the
//     CoordWriter of nonzero.cuh).
// An input of one tile with no tail to fill runs as one block: no counter, no memset (the small
// calls' latency).
// Blocks whose tile id is past the last tile fill nonzero_static's tail: they wait for the last
// tile's inclusive prefix (the count) and write fill_value to rows [min(count, size), size), so no
// second kernel is needed. The last tile stores the count at *d_count.
// The status words: [flag: 2 bits | value: 62 bits], one 64-bit store each (A / P published
// atomically), zero (no status) from the memset.
//
// Expected on an H200: this variant, at every size. At 10^7 elements and up both are bound by
// the input's bytes, and this one reads them with 16-byte loads (CUB's Flagged loads one element
// per item through the flag iterator) and writes the coordinates once from shared memory; at
// 10^3 - 10^5 launch latency dominates, and nonzero_static here is one kernel (plus a memset past
// one tile) against CUB's init and select kernels plus the tail fill. Where it could lose: the
// look-back chain at 1e8 (12,208 tiles; a tile waits only for its predecessors' counts, status A,
// not for their prefixes) - the sweep measures it.
#include <algorithm>
#include <cstdint>
#include <cstring>

#include "nonzero/cuda/nonzero.cuh"
#include "core/cuda/launch.h"

namespace myops {
namespace nonzero_cuda {
namespace {

constexpr int kThreads = 256;
constexpr int kItems = 32;  // elements per thread: one 32-bit flag mask
constexpr int kTile = kThreads * kItems;
constexpr int kWarps = kThreads / 32;
constexpr int kMaxFillBlocks = 1024;
constexpr unsigned kFull = 0xffffffffu;
constexpr unsigned long long kFlagA = 1ull << 62, kFlagP = 2ull << 62, kValue = (1ull << 62) - 1;
static_assert(kTile <= 65536, "tile offsets are stored in 16 bits");

// The flag mask of the kItems elements at [first, first + kItems) (bit j: element first + j).
template <typename Bits>
struct ContiguousMask {
  const Bits* data;
  detail::NonzeroBits<Bits> test;
  bool vec;  // data is 16-byte aligned
  __device__ uint32_t operator()(int64_t first, int64_t numel) const {
    uint32_t m = 0;
    if (vec && first + kItems <= numel) {
      constexpr int kPer = 16 / sizeof(Bits);
      const uint4* p = reinterpret_cast<const uint4*>(data + first);
      uint4 w[kItems / kPer];
#pragma unroll
      for (int u = 0; u < kItems / kPer; ++u) w[u] = __ldg(p + u);  // every load issued before any use
#pragma unroll
      for (int u = 0; u < kItems / kPer; ++u) {
        Bits b[kPer];
        memcpy(b, &w[u], 16);
#pragma unroll
        for (int v = 0; v < kPer; ++v) m |= static_cast<uint32_t>(test(b[v])) << (u * kPer + v);
      }
      return m;
    }
    for (int j = 0; j < kItems; ++j) {
      if (first + j < numel && test(detail::load_ro(data + first + j))) m |= 1u << j;
    }
    return m;
  }
};

template <typename Bits>
struct StridedMask {
  detail::StridedFlag<Bits> flag;
  __device__ uint32_t operator()(int64_t first, int64_t numel) const {
    uint32_t m = 0;
    for (int j = 0; j < kItems; ++j) {
      if (first + j < numel && flag(first + j)) m |= 1u << j;
    }
    return m;
  }
};

// Warp 0 of tile `tile` (> 0): publishes `total` (A), looks back, publishes the inclusive prefix
// (P); returns the exclusive prefix (on every lane).
__device__ int64_t look_back(int64_t tile, int total, volatile unsigned long long* status, int lane) {
  if (lane == 0) status[tile] = kFlagA | static_cast<unsigned long long>(total);
  int64_t excl = 0;
  for (int64_t pred = tile - 1;; pred -= 32) {
    const int64_t p = pred - lane;
    unsigned long long s = kFlagP;  // before tile 0: an inclusive prefix of 0
    if (p >= 0) {
      while (((s = status[p]) >> 62) == 0) MYOPS_SPIN_PAUSE();
    }
    const unsigned is_p = __ballot_sync(kFull, (s >> 62) == 2);
    const int stop = is_p != 0 ? __ffs(is_p) - 1 : 31;  // the nearest tile with a prefix
    int64_t v = lane <= stop ? static_cast<int64_t>(s & kValue) : 0;
#pragma unroll
    for (int d = 16; d > 0; d >>= 1) v += __shfl_xor_sync(kFull, v, d);
    excl += v;
    if (is_p != 0) break;
  }
  if (lane == 0) status[tile] = kFlagP | static_cast<unsigned long long>(excl + total);
  return excl;
}

// state[0]: the tile counter; state[1 + k]: tile k's status (null: a single block, tile 0). Tiles [0, num_tiles)
// select; ids past them fill rows [min(count, size), size) of the ndim rows of `out` (pitch `pitch`).
// At least 4 blocks per SM (64 registers a thread at most): the look-back hides its DRAM and
// neighbour waits with other resident blocks; the 2-byte strided-rank reader needed 75 (3 blocks).
// tests/test_sass.py holds every instantiation to it (tools/sass_floor.json).
template <typename Mask, typename Writer>
__global__ void __launch_bounds__(kThreads, 4)
    lookback_kernel(Mask mask, Writer writer, int64_t numel, int64_t num_tiles, unsigned long long* state,
                    int64_t* d_count, int64_t* out, int64_t pitch, int ndim, int64_t size, int64_t fill_blocks,
                    int64_t fill_value) {
  MYOPS_SHARED(int64_t, s_tile, 1);
  MYOPS_SHARED(int64_t, s_base, 1);
  MYOPS_SHARED(int, s_warp, kWarps);
  MYOPS_SHARED(uint16_t, s_idx, kTile);
  const int t = threadIdx.x, lane = t & 31, warp = t >> 5;
  volatile unsigned long long* status = state == nullptr ? nullptr : state + 1;
  if (t == 0) s_tile[0] = state == nullptr ? 0 : static_cast<int64_t>(atomicAdd(state, 1ull));
  __syncthreads();
  const int64_t tile = s_tile[0];

  if (tile >= num_tiles) {  // a fill block: every tile was taken by a block that has started
    if (t == 0) {
      unsigned long long s;
      while (((s = status[num_tiles - 1]) >> 62) != 2) MYOPS_SPIN_PAUSE();
      s_base[0] = static_cast<int64_t>(s & kValue);
    }
    __syncthreads();
    const int64_t start = s_base[0] < size ? s_base[0] : size;
    const int64_t step = fill_blocks * kThreads;
    for (int d = 0; d < ndim; ++d) {
      for (int64_t r = start + (tile - num_tiles) * kThreads + t; r < size; r += step) out[d * pitch + r] = fill_value;
    }
    return;
  }

  const int64_t tile_first = tile * kTile;
  const uint32_t m = mask(tile_first + static_cast<int64_t>(t) * kItems, numel);
  const int c = __popc(m);
  int incl = c;
#pragma unroll
  for (int d = 1; d < 32; d <<= 1) {
    const int y = __shfl_up_sync(kFull, incl, d);
    if (lane >= d) incl += y;
  }
  if (lane == 31) s_warp[warp] = incl;
  __syncthreads();
  int total = 0, rank = incl - c;
#pragma unroll
  for (int w = 0; w < kWarps; ++w) {
    const int v = s_warp[w];
    total += v;
    rank += w < warp ? v : 0;
  }
  for (uint32_t bits = m; bits != 0; bits &= bits - 1) {
    s_idx[rank++] = static_cast<uint16_t>(t * kItems + __ffs(bits) - 1);
  }
  if (warp == 0) {
    int64_t excl = 0;
    if (tile == 0) {
      if (lane == 0 && state != nullptr) status[0] = kFlagP | static_cast<unsigned long long>(total);
    } else {
      excl = look_back(tile, total, status, lane);
    }
    if (lane == 0) s_base[0] = excl;
  }
  __syncthreads();
  const int64_t base = s_base[0];
  for (int j = t; j < total; j += kThreads) writer(base + j, tile_first + s_idx[j]);
  if (t == 0 && tile == num_tiles - 1 && d_count != nullptr) *d_count = base + total;
}

template <typename Mask, typename Writer>
void launch(const Mask& mask, const Writer& writer, const CoordSpec& spec, int64_t numel, int64_t* d_count, bool fill,
            int64_t fill_value, cudaStream_t stream) {
  const int64_t num_tiles = (numel + kTile - 1) / kTile;
  const int64_t size = fill && spec.ndim > 0 ? spec.limit : 0;
  const int64_t fill_blocks = size > 0 ? std::min<int64_t>((size + kThreads - 1) / kThreads, kMaxFillBlocks) : 0;
  // one block (a small input, nothing to fill): tile 0, no counter, no look-back, no memset
  const bool single = num_tiles + fill_blocks == 1;
  const size_t bytes = single ? 0 : static_cast<size_t>(1 + num_tiles) * sizeof(unsigned long long);
  auto temp = c10::cuda::CUDACachingAllocator::get()->allocate(bytes);
  auto* state = static_cast<unsigned long long*>(temp.get());
  if (!single) C10_CUDA_CHECK(cudaMemsetAsync(state, 0, bytes, stream));
  const dim3 grid(static_cast<unsigned>(num_tiles + fill_blocks));
  MYOPS_LAUNCH_COOP(grid, kThreads, stream, lookback_kernel<Mask, Writer>)
  (mask, writer, numel, num_tiles, state, d_count, spec.out, spec.pitch, spec.ndim, size, fill_blocks, fill_value);
  C10_CUDA_KERNEL_LAUNCH_CHECK();
}

template <typename Mask>
void with_writer(const Mask& mask, const CoordSpec& spec, int64_t numel, int64_t* d_count, bool fill,
                 int64_t fill_value, cudaStream_t stream) {
  using detail::CoordWriter;
  if (spec.ndim <= 1) {
    launch(mask, CoordWriter<uint64_t, 0>(spec), spec, numel, d_count, fill, fill_value, stream);
  } else if (numel <= detail::kMax32) {
    if (spec.ndim <= 4) {
      launch(mask, CoordWriter<uint32_t, 3>(spec), spec, numel, d_count, fill, fill_value, stream);
    } else {
      launch(mask, CoordWriter<uint32_t, kMaxRank - 1>(spec), spec, numel, d_count, fill, fill_value, stream);
    }
  } else {
    launch(mask, CoordWriter<uint64_t, kMaxRank - 1>(spec), spec, numel, d_count, fill, fill_value, stream);
  }
}

}  // namespace

void select_lookback(const FlagSource& f, const CoordSpec& spec, int64_t numel, int64_t* d_count, bool fill,
                     int64_t fill_value, cudaStream_t stream) {
  TORCH_CHECK(numel > 0 && numel / kTile < (int64_t(1) << 31), "myops.nonzero: internal error, ", numel,
              " elements for the look-back pass");
  detail::with_bits(f.elem_size, [&](auto tag) {
    using Bits = typename decltype(tag)::type;
    const detail::NonzeroBits<Bits> test{static_cast<Bits>(f.mask)};
    if (f.contiguous) {
      const bool vec = reinterpret_cast<uintptr_t>(f.data) % 16 == 0;
      with_writer(ContiguousMask<Bits>{static_cast<const Bits*>(f.data), test, vec}, spec, numel, d_count, fill,
                  fill_value, stream);
    } else {
      with_writer(StridedMask<Bits>{{static_cast<const Bits*>(f.data), test, f.calc}}, spec, numel, d_count, fill,
                  fill_value, stream);
    }
  });
}

}  // namespace nonzero_cuda
}  // namespace myops
