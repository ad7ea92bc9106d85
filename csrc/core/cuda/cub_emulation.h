#pragma once
// Test-only: host stand-ins for the CUB / thrust / caching-allocator pieces that nonzero's
// launchers (nonzero/cuda/nonzero.cuh) call, so that the launchers themselves - the temp-storage size
// query, the allocation, the second call, the device-side count - run unchanged in the CUDA
// emulation (core/cuda/emulation.h, tests/test_cuda_emulation.py).
//
// Held to CUB's documented contract, so that a misuse that would break on the device fails here:
//  - Two-phase temp storage: a call with d_temp_storage == nullptr only stores the size in
//    temp_storage_bytes (it reads no input, writes no output); the size depends on num_items.
//    The second call must pass at least that many bytes (else cudaErrorInvalidValue, as CUB's
//    AliasTemporaries returns) at an address aligned as cudaMalloc / the caching allocator
//    align it (256 bytes; else cudaErrorMisalignedAddress), and the stand-in really uses them
//    (per-tile counts live there, so an undersized buffer is also an out-of-bounds write under
//    `make sanitize`).
//  - num_items: any integer type up to 64 bits, counts past 2^31 - 1 included (CCCL >= 2.7);
//    a negative count is cudaErrorInvalidValue. Selection counts in 64 bits; a reduction
//    accumulates in CUB's accumulator type (DeviceReduce below).
//  - The outputs are written on the device, in stream order: d_out in no particular order (the
//    tiles are processed in the emulation's shuffled order, core/cuda/emulation.h), and the
//    select / reduce result (*d_num_selected_out, *d_out of Reduce / Sum) through its output iterator
//    or pointer, never returned to the host (the host reads it through read_device_int64,
//    core/cuda/glue.h, the one synchronization).
#if !defined(MYOPS_CUDA_EMULATION) || defined(__CUDACC__)
#error "core/cuda/cub_emulation.h is for host-compiler builds with MYOPS_CUDA_EMULATION only"
#endif
#include <c10/core/Allocator.h>
#include <c10/core/CPUAllocator.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <new>
#include <numeric>
#include <type_traits>
#include <vector>

#include "core/cuda/emulation.h"

// The CCCL whose contract the stand-ins follow (64-bit num_items: 2.7 and newer).
#define CCCL_VERSION 3000000

// ---- thrust: the iterators nonzero's launchers build --------------------------------------------

namespace thrust {

template <typename T>
struct counting_iterator {
  T base;
  explicit counting_iterator(T b = T(0)) : base(b) {}
  T operator[](int64_t i) const { return base + static_cast<T>(i); }
};

template <typename It, typename F>
struct transform_iterator {
  It it;
  F f;
  auto operator[](int64_t i) const { return f(it[i]); }
};
template <typename It, typename F>
transform_iterator<It, F> make_transform_iterator(It it, F f) {
  return {it, f};
}

// out[rank] = value calls f(rank, value)
template <typename F>
struct tabulate_output_iterator {
  F f;
  struct Ref {
    const F& f;
    int64_t rank;
    template <typename V>
    void operator=(const V& v) const {
      f(rank, v);
    }
  };
  Ref operator[](int64_t rank) const { return Ref{f, rank}; }
};
template <typename F>
tabulate_output_iterator<F> make_tabulate_output_iterator(F f) {
  return {f};
}

}  // namespace thrust

// ---- the caching allocator: device blocks are 512-byte aligned ------------------------------------

namespace myops {
namespace emu {

class DeviceAllocator final : public c10::Allocator {
 public:
  static constexpr size_t kAlign = 512;
  c10::DataPtr allocate(size_t n) override {
    counters().temp_bytes += static_cast<int64_t>(n);
    void* p = n == 0 ? nullptr : std::aligned_alloc(kAlign, (n + kAlign - 1) / kAlign * kAlign);
    if (n != 0 && p == nullptr) throw std::bad_alloc();
    // poisoned, as a device block holds whatever was there: a read before a write sees 0x7f bytes
    // (a NaN half, a huge float, a true flag, a count far out of range), not a helpful zero
    if (p != nullptr) std::memset(p, 0x7f, n);
    return {p, p, &std::free, c10::Device(c10::DeviceType::CPU)};
  }
  c10::DeleterFnPtr raw_deleter() const override { return &std::free; }
  void copy_data(void* dest, const void* src, std::size_t count) const override { default_copy_data(dest, src, count); }
};

}  // namespace emu
}  // namespace myops

namespace c10 {
namespace cuda {
namespace CUDACachingAllocator {
inline c10::Allocator* get() {
  static myops::emu::DeviceAllocator a;
  return &a;
}
}  // namespace CUDACachingAllocator
}  // namespace cuda
}  // namespace c10

// ---- CUB: DeviceSelect::Flagged, DeviceReduce::Reduce and Sum, DeviceSegmentedRadixSort::SortPairs
// ------------------------------------------------

namespace cub {
namespace emu_detail {

constexpr int64_t kTile = 4096;     // items per tile
constexpr size_t kTempAlign = 256;  // what the second call's d_temp_storage must be aligned to

template <typename N>
cudaError_t check_items(N num_items, int64_t& n) {
  static_assert(std::is_integral<N>::value && sizeof(N) <= 8, "num_items: an integer of at most 64 bits");
  if (num_items < 0) return cudaErrorInvalidValue;
  n = static_cast<int64_t>(num_items);
  return cudaSuccess;
}

inline int64_t tiles(int64_t n) { return (n + kTile - 1) / kTile; }

// Bytes of temp storage for n items: one 8-byte count per tile and a header, rounded up.
inline size_t temp_bytes(int64_t n) {
  const size_t b = 256 + static_cast<size_t>(tiles(n)) * sizeof(int64_t);
  return (b + kTempAlign - 1) / kTempAlign * kTempAlign;
}

// The second call's checks; returns the per-tile counts in d_temp.
inline cudaError_t check_temp(void* d_temp, size_t bytes, int64_t n, int64_t*& tile_counts) {
  if (bytes < temp_bytes(n)) return cudaErrorInvalidValue;
  if (reinterpret_cast<uintptr_t>(d_temp) % kTempAlign != 0) return cudaErrorMisalignedAddress;
  tile_counts = reinterpret_cast<int64_t*>(static_cast<char*>(d_temp) + 256);
  return cudaSuccess;
}

// The result a device pass stores at `p` (an int64_t*: what nonzero's launchers pass).
template <typename P>
void store_result(P p, int64_t v) {
  static_assert(std::is_same<std::remove_cv_t<std::remove_pointer_t<P>>, int64_t>::value,
                "the emulated count output is an int64_t*");
  *p = v;
}

// CUB's two-phase temp storage, the same for every algorithm: the size query (`query` set: it
// stores the size and does nothing else), or the checks of the second call's bytes and
// alignment, after which the per-tile counts live in the caller's buffer.
template <typename NumItems>
cudaError_t two_phase(void* d_temp, size_t& bytes, NumItems num_items, int64_t& n, int64_t*& tile_counts, bool& query) {
  if (cudaError_t e = check_items(num_items, n); e != cudaSuccess) return e;
  query = d_temp == nullptr;
  if (query) {
    bytes = temp_bytes(n);
    return cudaSuccess;
  }
  if (cudaError_t e = check_temp(d_temp, bytes, n, tile_counts); e != cudaSuccess) return e;
  myops::emu::counters().launches += 2;  // CUB's two kernels (select: init and sweep; reduce: two passes)
  myops::emu::synchronize();             // stream order: earlier work is visible
  return cudaSuccess;
}

}  // namespace emu_detail

// DeviceSelect::Flagged: d_out[rank] = d_in[i] for the i whose flag is set, in order of i.
struct DeviceSelect {
  template <typename In, typename Flags, typename Out, typename NumSel, typename NumItems>
  static cudaError_t Flagged(void* d_temp_storage, size_t& temp_storage_bytes, In d_in, Flags d_flags, Out d_out,
                             NumSel d_num_selected_out, NumItems num_items, cudaStream_t /*stream*/ = nullptr) {
    namespace d = emu_detail;
    int64_t n = 0;
    int64_t* tile_counts = nullptr;
    bool query = false;
    const cudaError_t e = d::two_phase(d_temp_storage, temp_storage_bytes, num_items, n, tile_counts, query);
    if (e != cudaSuccess || query) return e;
    const int64_t nt = d::tiles(n);
    const myops::emu::Shuffle order(static_cast<uint64_t>(nt),
                                    myops::emu::order_key({0x5e1ec7ull, static_cast<uint64_t>(n)}));
    auto flag = [&](int64_t i) { return static_cast<bool>(d_flags[i]); };
    // pass 1: flags counted per tile; pass 2: each tile scatters from its exclusive prefix
    for (int64_t k = 0; k < nt; ++k) {
      const int64_t t = static_cast<int64_t>(order(static_cast<uint64_t>(k)));
      int64_t c = 0;
      for (int64_t i = t * d::kTile; i < n && i < (t + 1) * d::kTile; ++i) c += flag(i) ? 1 : 0;
      tile_counts[t] = c;
    }
    int64_t total = 0;
    for (int64_t t = 0; t < nt; ++t) {
      const int64_t c = tile_counts[t];
      tile_counts[t] = total;
      total += c;
    }
    for (int64_t k = 0; k < nt; ++k) {
      const int64_t t = static_cast<int64_t>(order(static_cast<uint64_t>(k)));
      int64_t rank = tile_counts[t];
      for (int64_t i = t * d::kTile; i < n && i < (t + 1) * d::kTile; ++i) {
        if (flag(i)) d_out[rank++] = d_in[i];
      }
    }
    d::store_result(d_num_selected_out, total);
    return cudaSuccess;
  }
};

// DeviceReduce::Reduce and Sum. The accumulator is CUB's: the type of reduction_op(init, item),
// so that a count accumulated in 32 bits wraps here as it would on the device; Sum's init is the
// output's value type (int64: what store_result takes), as CUB's.
struct DeviceReduce {
  template <typename In, typename Out, typename NumItems, typename Op, typename T>
  static cudaError_t Reduce(void* d_temp_storage, size_t& temp_storage_bytes, In d_in, Out d_out, NumItems num_items,
                            Op reduction_op, T init, cudaStream_t /*stream*/ = nullptr) {
    namespace d = emu_detail;
    using Acc = std::decay_t<decltype(reduction_op(init, d_in[0]))>;
    int64_t n = 0;
    int64_t* tile_counts = nullptr;
    bool query = false;
    const cudaError_t e = d::two_phase(d_temp_storage, temp_storage_bytes, num_items, n, tile_counts, query);
    if (e != cudaSuccess || query) return e;
    const int64_t nt = d::tiles(n);
    Acc total = static_cast<Acc>(init);
    for (int64_t t = 0; t < nt; ++t) {
      Acc s = Acc{};
      for (int64_t i = t * d::kTile; i < n && i < (t + 1) * d::kTile; ++i) s = reduction_op(s, d_in[i]);
      tile_counts[t] = static_cast<int64_t>(s);
      total = reduction_op(total, s);
    }
    d::store_result(d_out, static_cast<int64_t>(total));
    return cudaSuccess;
  }

  template <typename In, typename Out, typename NumItems>
  static cudaError_t Sum(void* d_temp_storage, size_t& temp_storage_bytes, In d_in, Out d_out, NumItems num_items,
                         cudaStream_t stream = nullptr) {
    return Reduce(
        d_temp_storage, temp_storage_bytes, d_in, d_out, num_items, [](auto a, auto b) { return a + b; }, int64_t{0},
        stream);
  }
};

// DeviceSegmentedRadixSort::SortPairs (multiclass_nms_static, nms/cuda/multiclass_nms.cu): in each
// segment [d_begin_offsets[s], d_end_offsets[s]) (empty when end <= begin) the pairs sorted
// stably by the key bits [begin_bit, end_bit); slots outside every segment are not written. The
// stand-in takes unsigned integer keys only (what the pipeline sorts); the key and value ranges
// in and out must not overlap (else cudaErrorInvalidValue), and a segment past [0, num_items)
// is cudaErrorIllegalAddress (an out-of-bounds access on the device). The segments run in the
// emulation's shuffled order.
struct DeviceSegmentedRadixSort {
  template <typename K, typename V, typename BeginIt, typename EndIt>
  static cudaError_t SortPairs(void* d_temp_storage, size_t& temp_storage_bytes, const K* d_keys_in, K* d_keys_out,
                               const V* d_values_in, V* d_values_out, int num_items, int num_segments,
                               BeginIt d_begin_offsets, EndIt d_end_offsets, int begin_bit = 0,
                               int end_bit = sizeof(K) * 8, cudaStream_t /*stream*/ = nullptr) {
    static_assert(std::is_unsigned<K>::value, "the emulated segmented sort takes unsigned integer keys");
    namespace d = emu_detail;
    if (num_segments < 0 || begin_bit < 0 || end_bit > int(sizeof(K) * 8) || begin_bit >= end_bit) {
      return cudaErrorInvalidValue;
    }
    int64_t n = 0;
    int64_t* tile_counts = nullptr;
    bool query = false;
    const cudaError_t e = d::two_phase(d_temp_storage, temp_storage_bytes, num_items, n, tile_counts, query);
    if (e != cudaSuccess || query) return e;
    const auto overlap = [n](const void* a, const void* b, size_t size) {
      const char* x = static_cast<const char*>(a);
      const char* y = static_cast<const char*>(b);
      return n > 0 && x < y + n * size && y < x + n * size;
    };
    if (overlap(d_keys_in, d_keys_out, sizeof(K)) || overlap(d_values_in, d_values_out, sizeof(V))) {
      return cudaErrorInvalidValue;
    }
    const int bits = end_bit - begin_bit;
    const K mask = bits >= int(sizeof(K) * 8) ? ~K(0) : static_cast<K>((K(1) << bits) - 1);
    const auto digit = [&](int64_t i) { return static_cast<K>(d_keys_in[i] >> begin_bit) & mask; };
    const myops::emu::Shuffle order(static_cast<uint64_t>(num_segments),
                                    myops::emu::order_key({0x5e65047ull, static_cast<uint64_t>(num_segments)}));
    std::vector<int64_t> idx;
    for (int64_t k = 0; k < num_segments; ++k) {
      const int64_t s = static_cast<int64_t>(order(static_cast<uint64_t>(k)));
      const int64_t b = static_cast<int64_t>(d_begin_offsets[s]), end = static_cast<int64_t>(d_end_offsets[s]);
      if (end <= b) continue;
      if (b < 0 || end > n) return cudaErrorIllegalAddress;
      idx.resize(end - b);
      std::iota(idx.begin(), idx.end(), b);
      std::stable_sort(idx.begin(), idx.end(), [&](int64_t x, int64_t y) { return digit(x) < digit(y); });
      for (int64_t i = b; i < end; ++i) {
        d_keys_out[i] = d_keys_in[idx[i - b]];
        d_values_out[i] = d_values_in[idx[i - b]];
      }
    }
    return cudaSuccess;
  }
};

}  // namespace cub
