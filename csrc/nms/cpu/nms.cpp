// nms / batched_nms / nms_static / batched_nms_static on CPU, equal to torchvision.ops.nms and
// torchvision.ops.batched_nms (torchvision 0.29) on every input:
//   * the same visiting order: scores sorted descending by torch's stable sort (NaN first, ties
//     in index order), as torchvision's kernels;
//   * the same IoU arithmetic in the boxes' dtype: areas (x2 - x1) * (y2 - y1),
//     inter = max(0, min(x2) - max(x1)) * max(0, min(y2) - max(y1)), iou = inter / (a + b - inter),
//     box j suppressed when iou > iou_threshold (a NaN never suppresses);
//   * batched_nms takes torchvision's two paths: above nms_common::vanilla_above
//     elements of `boxes`, one nms per class and a final sort by score; otherwise the coordinate trick
//     (boxes shifted by idx * (max + 1), then one nms).
//
// The sweep is torchvision's greedy loop, reorganized: the candidates live in score order in
// structure-of-arrays buffers; each kept box is the head of the list, one vectorizable pass
// marks the candidates it suppresses, and the list is compacted only when something was
// suppressed. Suppressed boxes are never visited again (torchvision skips them one by one).
// Same decisions, same order, much less memory traffic.
#include <ATen/core/Tensor.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/full.h>
#include <ATen/ops/index_select.h>
#include <ATen/ops/scalar_tensor.h>
#include <ATen/ops/sort.h>
#include <torch/library.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "core/checks.h"
#include "nms/nms_common.h"

namespace myops {
namespace {

// torchvision's comparisons, in the same operand order (NaN handling included).
template <typename T>
inline T max_(T a, T b) {
  return a < b ? b : a;
}
template <typename T>
inline T min_(T a, T b) {
  return b < a ? b : a;
}

// `iou > thr` with iou of type T and thr a double is `iou > t` for the largest T value t <= thr
// (NaN stays NaN): the comparison then stays in T and vectorizes.
template <typename T>
T floor_threshold(double thr) {
  T t = static_cast<T>(thr);
  if (static_cast<double>(t) > thr) t = std::nextafter(t, -std::numeric_limits<T>::infinity());
  return t;
}

// Greedy NMS over n boxes visited in `order` (torchvision's score order). Writes the kept
// original indices, in visiting order, to keep[0 .. min(kept, limit)) and returns the number kept.
template <typename T>
int64_t sweep(const at::Tensor& boxes, const int64_t* order, int64_t n, double iou_threshold, int64_t* keep,
              int64_t limit) {
  std::vector<T> x1(n), y1(n), x2(n), y2(n), area(n);
  std::vector<int64_t> idx(n);
  std::vector<uint8_t> sup(n);
  const T* b = boxes.const_data_ptr<T>();
  const int64_t s0 = boxes.stride(0), s1 = boxes.stride(1);
  for (int64_t k = 0; k < n; ++k) {
    const T* p = b + order[k] * s0;
    x1[k] = p[0];
    y1[k] = p[s1];
    x2[k] = p[2 * s1];
    y2[k] = p[3 * s1];
    area[k] = (x2[k] - x1[k]) * (y2[k] - y1[k]);
    idx[k] = order[k];
  }
  const T thr = floor_threshold<T>(iou_threshold);
  int64_t kept = 0, head = 0, end = n;
  T* X1 = x1.data();
  T* Y1 = y1.data();
  T* X2 = x2.data();
  T* Y2 = y2.data();
  T* A = area.data();
  int64_t* I = idx.data();
  uint8_t* S = sup.data();
  while (head < end) {
    if (kept < limit) keep[kept] = I[head];
    ++kept;
    const T ix1 = X1[head], iy1 = Y1[head], ix2 = X2[head], iy2 = Y2[head], ia = A[head];
    ++head;
    int64_t nsup = 0;
    for (int64_t j = head; j < end; ++j) {
      const T w = max_(T(0), min_(ix2, X2[j]) - max_(ix1, X1[j]));
      const T h = max_(T(0), min_(iy2, Y2[j]) - max_(iy1, Y1[j]));
      const T inter = w * h;
      const T iou = inter / (ia + A[j] - inter);
      const uint8_t s = iou > thr;
      S[j] = s;
      nsup += s;
    }
    if (nsup == 0) continue;
    int64_t w = head;
    for (int64_t j = head; j < end; ++j) {
      X1[w] = X1[j];
      Y1[w] = Y1[j];
      X2[w] = X2[j];
      Y2[w] = Y2[j];
      A[w] = A[j];
      I[w] = I[j];
      w += !S[j];
    }
    end = w;
  }
  return kept;
}

void check_boxes_scores(const at::Tensor& boxes, const at::Tensor& scores, const char* op) {
  nms_common::check_boxes_scores(boxes, scores, op, /*cpu=*/true);
}

// Greedy NMS of (boxes, scores); writes min(kept, limit) indices to `keep`, returns kept.
int64_t nms_into(const at::Tensor& boxes, const at::Tensor& scores, double iou_threshold, int64_t* keep,
                 int64_t limit) {
  const int64_t n = boxes.size(0);
  if (n == 0) return 0;
  const at::Tensor order = std::get<1>(scores.sort(/*stable=*/true, 0, /*descending=*/true)).contiguous();
  int64_t kept = 0;
  if (boxes.scalar_type() == at::kDouble) {
    kept = sweep<double>(boxes, order.const_data_ptr<int64_t>(), n, iou_threshold, keep, limit);
  } else {
    kept = sweep<float>(boxes, order.const_data_ptr<int64_t>(), n, iou_threshold, keep, limit);
  }
  return kept;
}

at::Tensor nms_cpu(const at::Tensor& boxes, const at::Tensor& scores, double iou_threshold) {
  check_boxes_scores(boxes, scores, "nms");
  const int64_t n = boxes.size(0);
  at::Tensor keep = at::empty({n}, boxes.options().dtype(at::kLong));
  const int64_t kept = nms_into(boxes, scores, iou_threshold, keep.data_ptr<int64_t>(), n);
  return keep.narrow(0, 0, kept);
}

// torchvision's per-class path: for every class (ascending), nms over its boxes in index order,
// then the kept indices in ascending order sorted by score (descending, torch's sort).
at::Tensor batched_vanilla(const at::Tensor& boxes, const at::Tensor& scores, const at::Tensor& idxs,
                           double iou_threshold) {
  const int64_t n = boxes.size(0);
  // group the boxes by class: a stable sort keeps each class's indices ascending
  const bool fp = at::isFloatingType(idxs.scalar_type());
  const at::Tensor key = idxs.to(fp ? at::kDouble : at::kLong);
  auto [sorted, perm] = key.sort(/*stable=*/true, 0, /*descending=*/false);
  sorted = sorted.contiguous();
  perm = perm.contiguous();
  const int64_t* p = perm.const_data_ptr<int64_t>();
  std::vector<int64_t> kept_all;
  std::vector<int64_t> sub_keep;
  int64_t s = 0;
  while (s < n) {
    int64_t e = s + 1;
    if (fp) {
      const double* v = sorted.const_data_ptr<double>();
      while (e < n && v[e] == v[s]) ++e;
      if (std::isnan(v[s])) {  // `idxs == nan` selects nothing: torchvision keeps none of them
        s = e;
        continue;
      }
    } else {
      const int64_t* v = sorted.const_data_ptr<int64_t>();
      while (e < n && v[e] == v[s]) ++e;
    }
    const at::Tensor cur = perm.narrow(0, s, e - s);
    const at::Tensor sb = boxes.index_select(0, cur);
    const at::Tensor ss = scores.index_select(0, cur);
    sub_keep.resize(e - s);
    const int64_t k = nms_into(sb, ss, iou_threshold, sub_keep.data(), e - s);
    for (int64_t t = 0; t < k; ++t) kept_all.push_back(p[s + sub_keep[t]]);
    s = e;
  }
  std::sort(kept_all.begin(), kept_all.end());
  const auto lopts = boxes.options().dtype(at::kLong);
  const int64_t nk = static_cast<int64_t>(kept_all.size());
  at::Tensor keep_idx = at::empty({nk}, lopts);
  std::copy(kept_all.begin(), kept_all.end(), keep_idx.data_ptr<int64_t>());
  const at::Tensor order = std::get<1>(scores.index_select(0, keep_idx).sort(-1, /*descending=*/true));
  return keep_idx.index_select(0, order);
}

at::Tensor batched_nms_cpu(const at::Tensor& boxes, const at::Tensor& scores, const at::Tensor& idxs,
                           double iou_threshold) {
  check_boxes_scores(boxes, scores, "batched_nms");
  nms_common::check_idxs(boxes, idxs, "batched_nms");
  if (boxes.numel() > nms_common::vanilla_above(true)) return batched_vanilla(boxes, scores, idxs, iou_threshold);
  if (boxes.numel() == 0) return at::empty({0}, boxes.options().dtype(at::kLong));
  return nms_cpu(nms_common::offset_boxes(boxes, idxs), scores, iou_threshold);
}

// [size] padded with -1 plus the true count (a 0-d int64).
std::tuple<at::Tensor, at::Tensor> pad_static(const at::Tensor& keep, int64_t size) {
  const auto lopts = keep.options();
  at::Tensor out = at::full({size}, -1, lopts);
  const int64_t k = keep.size(0);
  const int64_t m = std::min(k, size);
  if (m > 0) out.narrow(0, 0, m).copy_(keep.narrow(0, 0, m));
  return {out, at::scalar_tensor(k, lopts)};
}

std::tuple<at::Tensor, at::Tensor> nms_static_cpu(const at::Tensor& boxes, const at::Tensor& scores,
                                                  double iou_threshold, int64_t size) {
  check_boxes_scores(boxes, scores, "nms_static");
  check_size(size, "nms_static");
  return pad_static(nms_cpu(boxes, scores, iou_threshold), size);
}

std::tuple<at::Tensor, at::Tensor> batched_nms_static_cpu(const at::Tensor& boxes, const at::Tensor& scores,
                                                          const at::Tensor& idxs, double iou_threshold, int64_t size) {
  check_boxes_scores(boxes, scores, "batched_nms_static");
  nms_common::check_idxs(boxes, idxs, "batched_nms_static");
  check_size(size, "batched_nms_static");
  return pad_static(batched_nms_cpu(boxes, scores, idxs, iou_threshold), size);
}

}  // namespace
}  // namespace myops

TORCH_LIBRARY_IMPL(myops, CPU, m) {
  m.impl("nms", &myops::nms_cpu);
  m.impl("batched_nms", &myops::batched_nms_cpu);
  m.impl("nms_static", &myops::nms_static_cpu);
  m.impl("batched_nms_static", &myops::batched_nms_static_cpu);
}
