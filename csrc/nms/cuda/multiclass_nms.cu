// multiclass_nms_static on CUDA: the whole batch in a fixed number of launches, no host sync, no
// data-dependent shape (CUDA-graph capturable), the work following each image's real candidates.
// Equal, element for element, to the op's reference (python/myops/_nms.py; csrc/nms/multiclass_nms.cpp
// is the composite every other device runs): the same candidates, order, torchvision's CUDA IoU and
// its own choice between batched_nms's two paths.
//
// The pipeline (P = A*C with multi_label, else A; every per-image buffer has P slots, image n's
// at [n*P, n*P + P), of which only the first count[n] are ever touched past the first pass):
//  1. count_kernel (grid (G, N)): each block of kChunk scores flags the candidates (score >
//     score_threshold; without multi_label each anchor's first best class, no NaN in its row) and
//     counts them.
//  2. compact_kernel (grid (G, N)): the candidates of image n, in (anchor, class) order, at
//     [n*P, n*P + count[n]): id a*C + c and a 32/64-bit key that sorts ascending as the score
//     descending (-0.0 == +0.0, as torch's sort; ties then keep the (a, c) order). count[n] and
//     the sort segments stay on the device.
//  3. CUB segmented radix sort #1 (stable) over the segments [n*P, n*P + count[n]): the image's
//     candidate order. Its first M[n] = min(count[n], pre_nms_top_k) rows (rank r) go to NMS.
//  4. prepare_kernel (grid (G, N), blocks past M[n] exit at once): per rank r < M[n] the class key
//     (0 when class_agnostic) and r; clears the kept / removed bytes; the block maxima of the
//     boxes (torchvision's coordinate trick shifts by the real boxes' max).
//  5. CUB segmented radix sort #2 (stable, on the class bits only) over [n*P, n*P + M[n]): the
//     ranks grouped by class, score order inside each class: the (image, class) segments.
//  6. ranges_kernel (grid (C, N)): under the coordinate trick (4*M[n] <= nms_common::vanilla_above,
//     as torchvision decides) the x-range of each class's shifted boxes, to prove that no box of one
//     class can suppress one of another (then NMS per class on the shifted boxes equals the one NMS
//     torchvision runs on them); when that proof fails (a negative iou_threshold, boxes that reach
//     into the next class's range, non-finite shifts) the image is one segment in candidate order.
//  7. sweep_kernel (grid (C, N), one block per segment; empty segments exit at once): greedy NMS
//     over the segment in tiles of 64 rows: the tile's 64x64 IoU bits in shared memory, one thread
//     decides the tile's survivors, then all threads test the later rows of the segment against
//     those survivors only. It stops once the segment has K = max_detections survivors (no later
//     one can enter the image's top K: the K it has rank before it). Marks the survivors by rank.
//  8. gather_kernel (grid N): the survivors in rank order (score descending, ties by (anchor,
//     class)), the first K, gathered into the padded outputs (the original boxes and scores), the
//     padding after them.
//
// Work: the IoU tests are at most (64 + K) * S per segment of S real rows (S * (S - 1) / 2 when
// fewer survive), never a pair of two classes unless the proof of step 6 fails; no IoU matrix is
// stored, so pre_nms_top_k bounds nothing but the candidates. Memory: 22 bytes of scratch per
// slot (30 for double; N * P slots, allocated uninitialized: only the real candidates' slots are
// ever written), plus CUB's temp storage.
//
// Which design should be fastest on an H200, and why (to be confirmed by the GPU session's
// profile): this one. At the benchmark's headline case (N = 8, A = 8,400, C = 80, ~7,900 real
// candidates per image) steps 1-2 read the 21.5 MB of scores once (a few us at 4.8 TB/s), the two
// sorts see only the real candidates (63k keys), and the sweep runs N*C = 640 independent blocks of
// ~100 rows each, all resident at once on 132 SMs, instead of one serial 64-box walk per image over
// 30,000 padded rows and a 112 MB mask per image. What remains serial is the 64-step decision per
// tile (one thread) and the one block per image of the gather. The alternatives: a full bit mask
// per segment (torchvision's / EfficientNMS's mask + sweep) costs S^2 / 8 bytes per segment and
// a second pass over it, more than the survivors-only tests here when K is small; a single
// DeviceRadixSort over the batch with the image in the key's high bits would spread one big
// image's sort over the whole GPU where the segmented sort gives a segment one block (the dense
// case, N = 1, is where that would win; DeviceSegmentedSort is the drop-in to try there).
#include <ATen/core/Tensor.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/full.h>
#include <ATen/ops/zeros.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <c10/cuda/CUDAException.h>
#include <c10/util/Half.h>
#include <torch/library.h>

#include <cstdint>
#include <cmath>
#include <cstring>
#include <limits>
#include <optional>
#include <tuple>

#include "core/checks.h"
#include "core/cuda/cub.h"
#include "core/cuda_rules.h"
#include "core/cuda/glue.h"
#include "core/cuda/launch.h"
#include "core/cuda/work_counter.h"
#include "nms/cuda/iou.cuh"
#include "nms/nms_common.h"

namespace myops {
namespace {

using nms_iou::iou_above;
using Result = std::tuple<at::Tensor, at::Tensor, at::Tensor, at::Tensor, at::Tensor>;

constexpr int kTile = 64;         // rows per sweep tile (one 64-bit word of IoU bits per row)
constexpr int64_t kChunk = 2048;  // scores (or ranks) per block of the per-image passes
// the blocks' threads meet at barriers: every kernel here launches with MYOPS_LAUNCH_COOP (the
// emulation runs the 256 threads as fibers) and keeps its shared memory in MYOPS_SHARED
constexpr int kThreads = 256;

struct Dims {
  int64_t N, A, C, P, G;  // P: slots per image; G: blocks per image of the per-image passes
  int64_t top_k, K;       // top_k: pre_nms_top_k (P when none)
  bool multi_label, box_per_class, agnostic;
  float iou;           // torchvision's threshold type
  int64_t trick_rows;  // the coordinate trick when M[n] <= trick_rows (4 * M <= vanilla_above)
  double score_threshold;
};

template <typename Acc>
__device__ __forceinline__ Acc inf() {
  return static_cast<Acc>(INFINITY);
}

template <typename T>
struct KeyOf {
  using type = uint32_t;
};
template <>
struct KeyOf<double> {
  using type = uint64_t;
};

// A key that sorts ascending as the score (float or double) descending; -0.0 and +0.0 are one key.
template <typename Acc>
__device__ __forceinline__ typename KeyOf<Acc>::type desc_key(Acc v) {
  using U = typename KeyOf<Acc>::type;
  static_assert(sizeof(U) == sizeof(Acc), "a key of the score's width");
  constexpr U kSign = U(1) << (8 * sizeof(U) - 1);
  if (v == Acc(0)) v = Acc(0);
  U u;
  memcpy(&u, &v, sizeof(u));
  u = (u & kSign) ? ~u : (u | kSign);
  return ~u;
}

template <typename A>
__device__ __forceinline__ bool is_nan(A v) {
  return v != v;
}

// Whether item i (a score index with multi_label, else an anchor) of image n is a candidate;
// its id a*C + c. thr: score_threshold as torch's comparison takes it (rounded to T).
template <typename T, typename Acc>
__device__ __forceinline__ bool candidate(const T* scores, const Dims& d, int64_t n, int64_t i, Acc thr, int32_t& id) {
  if (d.multi_label) {
    id = static_cast<int32_t>(i);
    return static_cast<Acc>(scores[n * d.P + i]) > thr;
  }
  const T* row = scores + (n * d.A + i) * d.C;
  Acc best = static_cast<Acc>(row[0]);
  int64_t bc = 0;
  if (is_nan(best)) return false;  // argmax takes the NaN: its score fails the threshold
  for (int64_t c = 1; c < d.C; ++c) {
    const Acc v = static_cast<Acc>(row[c]);
    if (is_nan(v)) return false;
    if (v > best) {
      best = v;
      bc = c;
    }
  }
  id = static_cast<int32_t>(i * d.C + bc);
  return best > thr;
}

// Exclusive prefix sum of v over the block (every thread calls it); *total: the block's sum.
__device__ __forceinline__ int64_t block_scan(int64_t v, int64_t* buf, int64_t& total) {
  const int t = threadIdx.x;
  buf[t] = v;
  __syncthreads();
  for (int off = 1; off < static_cast<int>(blockDim.x); off <<= 1) {
    const int64_t x = t >= off ? buf[t - off] : 0;
    __syncthreads();
    buf[t] += x;
    __syncthreads();
  }
  total = buf[blockDim.x - 1];
  const int64_t excl = buf[t] - v;
  __syncthreads();
  return excl;
}

// 1. per block of kChunk items: the number of candidates.
template <typename T, typename Acc>
__global__ void count_kernel(const T* scores, Dims d, Acc thr, int64_t* block_counts) {
  MYOPS_SHARED(int64_t, buf, kThreads);
  const int64_t n = blockIdx.y, lo = int64_t(blockIdx.x) * kChunk;
  const int64_t hi = lo + kChunk < d.P ? lo + kChunk : d.P;
  int64_t c = 0;
  int32_t id;
  for (int64_t i = lo + threadIdx.x; i < hi; i += blockDim.x) c += candidate(scores, d, n, i, thr, id) ? 1 : 0;
  int64_t total;
  block_scan(c, buf, total);
  if (threadIdx.x == 0) block_counts[n * d.G + blockIdx.x] = total;
}

// 2. the candidates of each block at their place in (a, c) order; count and the sort segments.
template <typename T, typename Acc, typename Key>
__global__ void compact_kernel(const T* scores, Dims d, Acc thr, const int64_t* block_counts, Key* keys, int32_t* ids,
                               int64_t* count, int32_t* seg_begin, int32_t* seg_end, int32_t* seg_top_end) {
  MYOPS_SHARED(int64_t, buf, kThreads);
  const int64_t n = blockIdx.y, g = blockIdx.x, lo = g * kChunk;
  const int64_t hi = lo + kChunk < d.P ? lo + kChunk : d.P;
  int64_t at = 0;
  for (int64_t b = 0; b < g; ++b) at += block_counts[n * d.G + b];
  if (g == 0 && threadIdx.x == 0) {
    int64_t total = 0;
    for (int64_t b = 0; b < d.G; ++b) total += block_counts[n * d.G + b];
    count[n] = total;
    seg_begin[n] = static_cast<int32_t>(n * d.P);
    seg_end[n] = static_cast<int32_t>(n * d.P + total);
    seg_top_end[n] = static_cast<int32_t>(n * d.P + (total < d.top_k ? total : d.top_k));
  }
  for (int64_t base = lo; base < hi; base += blockDim.x) {
    const int64_t i = base + threadIdx.x;
    int32_t id = 0;
    const bool f = i < hi && candidate(scores, d, n, i, thr, id);
    int64_t tile;
    const int64_t r = at + block_scan(f ? 1 : 0, buf, tile);
    if (f) {
      keys[n * d.P + r] = desc_key(static_cast<Acc>(scores[n * d.A * d.C + id]));
      ids[n * d.P + r] = id;
    }
    at += tile;
  }
}

template <typename T>
__device__ __forceinline__ const T* box_of(const T* boxes, const Dims& d, int64_t n, int32_t id) {
  const int64_t a = id / d.C;
  return d.box_per_class ? boxes + (n * d.A * d.C + id) * 4 : boxes + (n * d.A + a) * 4;
}

__device__ __forceinline__ int64_t rows_of(const int64_t* count, const Dims& d, int64_t n) {
  return count[n] < d.top_k ? count[n] : d.top_k;
}

template <typename Acc>
__device__ __forceinline__ Acc nan_max(Acc m, Acc v) {
  return (is_nan(v) || v > m) ? v : m;  // torch's max: a NaN wins and stays
}

// 4. per rank r < M[n]: the class key and r for sort #2, the kept / removed bytes cleared, and
//    the block's maximum box coordinate (NaN if any).
template <typename T, typename Acc>
__global__ void prepare_kernel(const T* boxes, Dims d, const int32_t* ids, const int64_t* count, uint32_t* cls_keys,
                               int32_t* ranks, uint8_t* kept, uint8_t* removed, Acc* block_max) {
  MYOPS_SHARED(Acc, buf, kThreads);
  const int64_t n = blockIdx.y, lo = int64_t(blockIdx.x) * kChunk;
  const int64_t m = rows_of(count, d, n);
  if (lo >= m) return;  // past the real rows
  const int64_t hi = lo + kChunk < m ? lo + kChunk : m;
  Acc mx = -inf<Acc>();
  for (int64_t r = lo + threadIdx.x; r < hi; r += blockDim.x) {
    const int64_t s = n * d.P + r;
    const int32_t id = ids[s];
    cls_keys[s] = d.agnostic ? 0u : static_cast<uint32_t>(id % d.C);
    ranks[s] = static_cast<int32_t>(r);
    kept[s] = 0;
    removed[s] = 0;
    const T* b = box_of(boxes, d, n, id);
    for (int k = 0; k < 4; ++k) mx = nan_max(mx, static_cast<Acc>(b[k]));
  }
  buf[threadIdx.x] = mx;
  __syncthreads();
  if (threadIdx.x == 0) {
    for (int t = 1; t < static_cast<int>(blockDim.x); ++t) mx = nan_max(mx, buf[t]);
    block_max[n * d.G + blockIdx.x] = mx;
  }
}

// The image's maximum coordinate over its M real rows (the blocks of prepare_kernel that ran).
template <typename Acc>
__device__ __forceinline__ Acc image_max(const Acc* block_max, const Dims& d, int64_t n, int64_t m) {
  Acc mx = -inf<Acc>();
  for (int64_t g = 0; g * kChunk < m; ++g) mx = nan_max(mx, block_max[n * d.G + g]);
  return mx;
}

// torchvision's coordinate trick for one box of class c: b + c * (max + 1), op for op in T as
// torch computes it (each op in the accumulate type, rounded to T). torch runs the multiply and
// the add as two kernels, each result rounded: mul_rn / add_rn keep nvcc from fusing them into one
// FFMA (tests/test_package.py checks the SASS; tests/test_cuda_emulation.py the boxes at the
// threshold).
template <typename T, typename Acc>
__device__ __forceinline__ void shift_box(const T* b, int64_t c, Acc top, T* out) {
  const T m1 = static_cast<T>(add_rn(top, static_cast<Acc>(1)));
  const T off = static_cast<T>(mul_rn(static_cast<Acc>(static_cast<T>(static_cast<Acc>(c))), static_cast<Acc>(m1)));
  for (int k = 0; k < 4; ++k) out[k] = static_cast<T>(add_rn(static_cast<Acc>(b[k]), static_cast<Acc>(off)));
}

// [lo, hi) of class c in image n's class-sorted rows.
__device__ __forceinline__ void class_segment(const uint32_t* cls_sorted, const Dims& d, int64_t n, int64_t m,
                                              uint32_t c, int64_t& lo, int64_t& hi) {
  const uint32_t* k = cls_sorted + n * d.P;
  int64_t a = 0, b = m;
  while (a < b) {  // first >= c
    const int64_t mid = (a + b) / 2;
    if (k[mid] < c)
      a = mid + 1;
    else
      b = mid;
  }
  lo = a;
  b = m;
  while (a < b) {  // first > c
    const int64_t mid = (a + b) / 2;
    if (k[mid] <= c)
      a = mid + 1;
    else
      b = mid;
  }
  hi = a;
}

// 6. under the coordinate trick: the x-range of class c's shifted boxes (lo > hi: no box), and
//    whether a shifted coordinate is NaN.
template <typename T, typename Acc>
__global__ void ranges_kernel(const T* boxes, Dims d, const int32_t* ids, const int64_t* count,
                              const uint32_t* cls_sorted, const int32_t* ranks_sorted, const Acc* block_max, Acc* xlo,
                              Acc* xhi, uint8_t* bad) {
  MYOPS_SHARED(Acc, blo, kThreads);
  MYOPS_SHARED(Acc, bhi, kThreads);
  MYOPS_SHARED(uint8_t, bbad, kThreads);
  const int64_t n = blockIdx.y, c = blockIdx.x;
  const int64_t m = rows_of(count, d, n);
  if (d.agnostic || m == 0 || m > d.trick_rows) return;  // no trick: nothing reads the ranges
  int64_t s0, s1;
  class_segment(cls_sorted, d, n, m, static_cast<uint32_t>(c), s0, s1);
  const Acc top = image_max(block_max, d, n, m);
  Acc lo = inf<Acc>(), hi = -inf<Acc>();
  uint8_t nan = 0;
  for (int64_t i = s0 + threadIdx.x; i < s1; i += blockDim.x) {
    const int32_t r = ranks_sorted[n * d.P + i];
    T sb[4];
    shift_box(box_of(boxes, d, n, ids[n * d.P + r]), c, top, sb);
    for (int k = 0; k < 4; k += 2) {
      const Acc x = static_cast<Acc>(sb[k]);
      nan |= is_nan(x) ? 1 : 0;
      lo = x < lo ? x : lo;
      hi = x > hi ? x : hi;
    }
  }
  blo[threadIdx.x] = lo;
  bhi[threadIdx.x] = hi;
  bbad[threadIdx.x] = nan;
  __syncthreads();
  if (threadIdx.x == 0) {
    for (int t = 1; t < static_cast<int>(blockDim.x); ++t) {
      lo = blo[t] < lo ? blo[t] : lo;
      hi = bhi[t] > hi ? bhi[t] : hi;
      nan |= bbad[t];
    }
    xlo[n * d.C + c] = lo;
    xhi[n * d.C + c] = hi;
    bad[n * d.C + c] = nan;
  }
}

// Whether image n runs as one segment in candidate order: class_agnostic, or the trick without
// the proof that classes never meet (every class's shifted x-range ends where the next begins,
// no NaN shift, iou_threshold >= 0; then a pair of two classes has no intersection, IoU 0 or NaN,
// never above the threshold). A NaN maximum makes every shifted IoU NaN: nothing is suppressed
// either way.
template <typename Acc>
__device__ bool one_segment(const Dims& d, bool trick, Acc top, const Acc* xlo, const Acc* xhi, const uint8_t* bad,
                            int64_t n) {
  if (d.agnostic) return true;
  if (!trick || is_nan(top)) return false;
  if (!(d.iou >= 0.0f)) return true;
  Acc prev = -inf<Acc>();
  for (int64_t c = 0; c < d.C; ++c) {
    const Acc lo = xlo[n * d.C + c], hi = xhi[n * d.C + c];
    if (bad[n * d.C + c]) return true;
    if (lo > hi) continue;  // no box of class c
    if (!(prev <= lo)) return true;
    prev = hi;
  }
  return false;
}

// 7. greedy NMS over one segment (see the file comment).
template <typename T, typename Acc>
__global__ void sweep_kernel(const T* boxes, Dims d, const int32_t* ids, const int64_t* count,
                             const uint32_t* cls_sorted, const int32_t* ranks_sorted, const Acc* block_max,
                             const Acc* xlo, const Acc* xhi, const uint8_t* bad, uint8_t* kept, uint8_t* removed) {
  using Box = T[4];
  MYOPS_SHARED(Box, tb, kTile);
  MYOPS_SHARED(uint64_t, rowmask, kTile);
  MYOPS_SHARED(int, tkept, kTile);
  MYOPS_SHARED(int, ntkept_s, 1);
  MYOPS_SHARED(int64_t, nkept_s, 1);
  MYOPS_SHARED(bool, whole_sh, 1);
  MYOPS_SHARED(Acc, top_sh, 1);
  int& ntkept = *ntkept_s;
  int64_t& nkept = *nkept_s;
  bool& whole_s = *whole_sh;
  Acc& top_s = *top_sh;
  const int64_t n = blockIdx.y, c = blockIdx.x;
  const int64_t m = rows_of(count, d, n);
  if (m == 0) return;
  const bool trick = !d.agnostic && m <= d.trick_rows;
  if (threadIdx.x == 0) {
    top_s = trick ? image_max(block_max, d, n, m) : Acc(0);
    whole_s = one_segment(d, trick, top_s, xlo, xhi, bad, n);
    nkept = 0;
  }
  __syncthreads();
  const bool whole = whole_s;
  const Acc top = top_s;
  if (whole && c != 0) return;
  int64_t s0 = 0, s1 = m;
  if (!whole) class_segment(cls_sorted, d, n, m, static_cast<uint32_t>(c), s0, s1);
  if (s0 >= s1) return;  // an empty segment
  const int64_t base_slot = n * d.P;
  // row i of the segment: its rank (position in the candidate order) and its box (shifted)
  auto rank_of = [&](int64_t i) -> int64_t { return whole ? i : ranks_sorted[base_slot + i]; };
  auto load = [&](int64_t i, T* out) {
    const int32_t id = ids[base_slot + rank_of(i)];
    const T* b = box_of(boxes, d, n, id);
    if (trick) {
      shift_box(b, id % d.C, top, out);
    } else {
      for (int k = 0; k < 4; ++k) out[k] = b[k];
    }
  };
  for (int64_t base = s0; base < s1; base += kTile) {
    if (nkept >= d.K) break;  // the segment's first K survivors are found: no later row can enter
    const int mt = s1 - base < kTile ? static_cast<int>(s1 - base) : kTile;
    for (int k = threadIdx.x; k < mt; k += blockDim.x) load(base + k, tb[k]);
    __syncthreads();
    for (int k = threadIdx.x; k < mt; k += blockDim.x) {
      uint64_t bits = 0;
      if (!removed[base_slot + base + k]) {
        int tested = 0;
        for (int j = k + 1; j < mt; ++j) {
          if (removed[base_slot + base + j]) continue;
          ++tested;
          if (iou_above(tb[k], tb[j], d.iou)) bits |= uint64_t(1) << j;
        }
        MYOPS_EMU_COUNT("multiclass_nms_iou", tested);  // the emulation counts the IoU tests
      }
      rowmask[k] = bits;
    }
    __syncthreads();
    if (threadIdx.x == 0) {
      uint64_t gone = 0;
      for (int k = 0; k < mt; ++k) gone |= uint64_t(removed[base_slot + base + k] ? 1 : 0) << k;
      int nt = 0;
      int64_t total = nkept;
      for (int k = 0; k < mt && total < d.K; ++k) {
        if ((gone >> k) & 1) continue;
        tkept[nt++] = k;
        gone |= rowmask[k];
        kept[base_slot + rank_of(base + k)] = 1;
        ++total;
      }
      ntkept = nt;
      nkept = total;
    }
    __syncthreads();
    const int nt = ntkept;
    if (nkept < d.K && nt > 0) {
      for (int64_t j = base + mt + threadIdx.x; j < s1; j += blockDim.x) {
        if (removed[base_slot + j]) continue;
        T bj[4];
        load(j, bj);
        int tested = 0;
        for (int k = 0; k < nt; ++k) {
          ++tested;
          if (iou_above(tb[tkept[k]], bj, d.iou)) {
            removed[base_slot + j] = 1;
            break;
          }
        }
        MYOPS_EMU_COUNT("multiclass_nms_iou", tested);  // the emulation counts the IoU tests
      }
    }
    __syncthreads();
  }
}

// 8. the survivors in rank order, the first K, and the padding.
template <typename T>
__global__ void gather_kernel(const T* boxes, const T* scores, Dims d, const int32_t* ids, const int64_t* count,
                              const uint8_t* kept, int64_t* num, T* out_boxes, T* out_scores, int64_t* out_classes,
                              int64_t* out_anchors) {
  MYOPS_SHARED(int64_t, buf, kThreads);
  const int64_t n = blockIdx.x;
  const int64_t m = rows_of(count, d, n);
  int64_t total = 0;
  for (int64_t base = 0; base < m && total < d.K; base += blockDim.x) {
    const int64_t r = base + threadIdx.x;
    const bool f = r < m && kept[n * d.P + r];
    int64_t tile;
    const int64_t slot = total + block_scan(f ? 1 : 0, buf, tile);
    if (f && slot < d.K) {
      const int32_t id = ids[n * d.P + r];
      const T* b = box_of(boxes, d, n, id);
      const int64_t o = n * d.K + slot;
      for (int k = 0; k < 4; ++k) out_boxes[o * 4 + k] = b[k];
      out_scores[o] = scores[n * d.A * d.C + id];
      out_classes[o] = id % d.C;
      out_anchors[o] = id / d.C;
    }
    total += tile;
  }
  const int64_t k = total < d.K ? total : d.K;
  if (threadIdx.x == 0) num[n] = k;
  for (int64_t j = k + threadIdx.x; j < d.K; j += blockDim.x) {
    const int64_t o = n * d.K + j;
    for (int q = 0; q < 4; ++q) out_boxes[o * 4 + q] = static_cast<T>(0);
    out_scores[o] = static_cast<T>(0);
    out_classes[o] = -1;
    out_anchors[o] = -1;
  }
}

template <typename T>
void run(const at::Tensor& boxes, const at::Tensor& scores, const Dims& d, const Result& out) {
  using Acc = typename OpMath<T>::type;
  using Key = typename KeyOf<T>::type;
  const cudaStream_t stream = current_stream();
  const int64_t NP = d.N * d.P;
  const auto opts = boxes.options();
  const at::Tensor block_counts = at::empty({d.N * d.G}, opts.dtype(at::kLong));
  const at::Tensor count = at::empty({d.N}, opts.dtype(at::kLong));
  const at::Tensor segs = at::empty({3 * d.N}, opts.dtype(at::kInt));
  // sort #1's buffers are sort #2's once sort #1 is done (stream order): its keys (in, out) take
  // the class keys (in, out), its input ids the ranks
  const at::Tensor keys = at::empty({2 * NP * int64_t(sizeof(Key))}, opts.dtype(at::kByte));
  const at::Tensor vals = at::empty({3 * NP}, opts.dtype(at::kInt));    // ids / ranks, sorted ids, sorted ranks
  const at::Tensor bytes = at::empty({2 * NP}, opts.dtype(at::kByte));  // kept, removed
  const at::Tensor accs = at::empty({d.N * d.G + 2 * d.N * d.C}, opts.dtype(c10::CppTypeToScalarType<Acc>::value));
  const at::Tensor bad = at::empty({d.N * d.C}, opts.dtype(at::kByte));
  const T* bx = boxes.const_data_ptr<T>();
  const T* sc = scores.const_data_ptr<T>();
  Key* keys_in = reinterpret_cast<Key*>(keys.data_ptr<uint8_t>());
  Key* keys_out = keys_in + NP;
  int32_t* ids_in = vals.data_ptr<int32_t>();
  int32_t* ids = ids_in + NP;  // the candidate order
  int32_t* ranks_in = ids_in;
  int32_t* ranks = ids + NP;  // grouped by class
  uint32_t* cls_in = reinterpret_cast<uint32_t*>(keys_in);
  uint32_t* cls_sorted = reinterpret_cast<uint32_t*>(keys_out);
  uint8_t* kept = bytes.data_ptr<uint8_t>();
  uint8_t* removed = kept + NP;
  Acc* block_max = accs.data_ptr<Acc>();
  Acc* xlo = block_max + d.N * d.G;
  Acc* xhi = xlo + d.N * d.C;
  int64_t* cnt = count.data_ptr<int64_t>();
  int32_t* seg_begin = segs.data_ptr<int32_t>();
  int32_t* seg_end = seg_begin + d.N;
  int32_t* seg_top_end = seg_end + d.N;
  const dim3 per_image(static_cast<unsigned>(d.G), static_cast<unsigned>(d.N));
  const dim3 per_class(static_cast<unsigned>(d.C), static_cast<unsigned>(d.N));
  // torch's `scores > score_threshold`: the scalar rounded to the scores' dtype, compared in Acc
  const Acc score_thr = static_cast<Acc>(static_cast<T>(d.score_threshold));
  MYOPS_LAUNCH_COOP(per_image, kThreads, stream, count_kernel<T, Acc>)(sc, d, score_thr,
                                                                       block_counts.data_ptr<int64_t>());
  C10_CUDA_KERNEL_LAUNCH_CHECK();
  MYOPS_LAUNCH_COOP(per_image, kThreads, stream, compact_kernel<T, Acc, Key>)(
      sc, d, score_thr, block_counts.const_data_ptr<int64_t>(), keys_in, ids_in, cnt, seg_begin, seg_end, seg_top_end);
  C10_CUDA_KERNEL_LAUNCH_CHECK();
  int cls_bits = 1;
  while (cls_bits < 32 && (int64_t(1) << cls_bits) < d.C) ++cls_bits;
  const int items = static_cast<int>(NP), segments = static_cast<int>(d.N);
  size_t temp1 = 0, temp2 = 0;
  C10_CUDA_CHECK(cub::DeviceSegmentedRadixSort::SortPairs(nullptr, temp1, keys_in, keys_out, ids_in, ids, items,
                                                          segments, seg_begin, seg_end, 0, int(sizeof(Key) * 8),
                                                          stream));
  C10_CUDA_CHECK(cub::DeviceSegmentedRadixSort::SortPairs(nullptr, temp2, cls_in, cls_sorted, ranks_in, ranks, items,
                                                          segments, seg_begin, seg_top_end, 0, cls_bits, stream));
  // CUB's temp storage from the caching allocator (its alignment; in stream order)
  size_t tb = temp1 > temp2 ? temp1 : temp2;
  const c10::DataPtr temp = c10::cuda::CUDACachingAllocator::get()->allocate(tb);
  C10_CUDA_CHECK(cub::DeviceSegmentedRadixSort::SortPairs(temp.get(), tb, keys_in, keys_out, ids_in, ids, items,
                                                          segments, seg_begin, seg_end, 0, int(sizeof(Key) * 8),
                                                          stream));
  MYOPS_LAUNCH_COOP(per_image, kThreads, stream, prepare_kernel<T, Acc>)(bx, d, ids, cnt, cls_in, ranks_in, kept,
                                                                         removed, block_max);
  C10_CUDA_KERNEL_LAUNCH_CHECK();
  tb = temp1 > temp2 ? temp1 : temp2;
  C10_CUDA_CHECK(cub::DeviceSegmentedRadixSort::SortPairs(temp.get(), tb, cls_in, cls_sorted, ranks_in, ranks, items,
                                                          segments, seg_begin, seg_top_end, 0, cls_bits, stream));
  MYOPS_LAUNCH_COOP(per_class, kThreads, stream, ranges_kernel<T, Acc>)(bx, d, ids, cnt, cls_sorted, ranks, block_max,
                                                                        xlo, xhi, bad.data_ptr<uint8_t>());
  C10_CUDA_KERNEL_LAUNCH_CHECK();
  MYOPS_LAUNCH_COOP(per_class, kThreads, stream, sweep_kernel<T, Acc>)(
      bx, d, ids, cnt, cls_sorted, ranks, block_max, xlo, xhi, bad.const_data_ptr<uint8_t>(), kept, removed);
  C10_CUDA_KERNEL_LAUNCH_CHECK();
  MYOPS_LAUNCH_COOP(static_cast<unsigned>(d.N), kThreads, stream, gather_kernel<T>)(
      bx, sc, d, ids, cnt, kept, std::get<0>(out).data_ptr<int64_t>(), std::get<1>(out).data_ptr<T>(),
      std::get<2>(out).data_ptr<T>(), std::get<3>(out).data_ptr<int64_t>(), std::get<4>(out).data_ptr<int64_t>());
  C10_CUDA_KERNEL_LAUNCH_CHECK();
}

constexpr const char* kOp = "multiclass_nms_static";

Result padding(const at::Tensor& boxes, int64_t n, int64_t k) {
  const auto lopts = boxes.options().dtype(at::kLong);
  return {at::zeros({n}, lopts), at::zeros({n, k, 4}, boxes.options()), at::zeros({n, k}, boxes.options()),
          at::full({n, k}, -1, lopts), at::full({n, k}, -1, lopts)};
}

Result multiclass_nms_cuda(const at::Tensor& boxes, const at::Tensor& scores, double score_threshold,
                           double iou_threshold, int64_t max_detections, std::optional<int64_t> pre_nms_top_k,
                           bool class_agnostic, bool multi_label) {
  nms_common::check_multiclass(boxes, scores, max_detections, pre_nms_top_k, kOp, /*cpu=*/false);
  CudaGuard guard(boxes.device());
  const int64_t N = scores.size(0), A = scores.size(1), C = scores.size(2), K = max_detections;
  const int64_t P = multi_label ? A * C : A;
  if (N == 0 || P == 0 || C == 0) return padding(boxes, N, K);
  if (N * P > std::numeric_limits<int32_t>::max() || A * C > std::numeric_limits<int32_t>::max() ||
      C > std::numeric_limits<uint16_t>::max() || N > std::numeric_limits<uint16_t>::max()) {
    // beyond the pipeline's 32-bit slots, or 65,535 classes / images (its grid.y and class key
    // bits): the composite's padded form
    static const auto padded = c10::Dispatcher::singleton()
                                   .findSchemaOrThrow("myops::_multiclass_nms_static_padded", "")
                                   .typed<Result(const at::Tensor&, const at::Tensor&, double, double, int64_t,
                                                 std::optional<int64_t>, bool, bool)>();
    return padded.call(boxes, scores, score_threshold, iou_threshold, max_detections, pre_nms_top_k, class_agnostic,
                       multi_label);
  }
  Dims d{};
  d.N = N;
  d.A = A;
  d.C = C;
  d.P = P;
  d.G = (P + kChunk - 1) / kChunk;
  d.top_k = pre_nms_top_k.has_value() && *pre_nms_top_k < P ? *pre_nms_top_k : P;
  d.K = K;
  d.multi_label = multi_label;
  d.box_per_class = boxes.dim() == 4;
  d.agnostic = class_agnostic;
  d.iou = static_cast<float>(iou_threshold);
  d.trick_rows = nms_common::vanilla_above(/*cpu=*/false) / 4;
  d.score_threshold = score_threshold;
  const auto lopts = boxes.options().dtype(at::kLong);
  Result out{at::empty({N}, lopts), at::empty({N, K, 4}, boxes.options()), at::empty({N, K}, boxes.options()),
             at::empty({N, K}, lopts), at::empty({N, K}, lopts)};
  const at::Tensor b = boxes.contiguous(), s = scores.contiguous();
  switch (b.scalar_type()) {
    case at::kHalf:
      run<c10::Half>(b, s, d, out);
      break;
    case at::kFloat:
      run<float>(b, s, d, out);
      break;
    default:
      run<double>(b, s, d, out);
      break;
  }
  return out;
}

}  // namespace
}  // namespace myops

MYOPS_CUDA_LIBRARY_IMPL(m) { m.impl("multiclass_nms_static", &myops::multiclass_nms_cuda); }
