// multiclass_nms_static: a detector's whole post-processing (score filter, optional pre-NMS
// top-k, per-class or class-agnostic NMS, top-K) into outputs padded to K = max_detections, for
// a batch of images. A composite of aten ops and myops' NMS ops (CompositeExplicitAutograd: it
// runs on every device the ops it calls run on, and torch.export / AOTInductor keep it as one
// node), equal to this reference per image (python/myops/_nms.py has the full statement):
//
//   candidates  multi_label: every (anchor a, class c) with scores[a, c] > score_threshold, in
//               (a, c) order; else each anchor's first best class (argmax) when its score passes
//   order       stable sort by score, descending (ties: the candidate order)
//   top-k       the first pre_nms_top_k candidates of that order (when given)
//   NMS         torchvision.ops.batched_nms(boxes, scores, classes) (ops.nms when class_agnostic)
//               on the candidates in that order, with torchvision's own choice of its two paths
//   result      the survivors in candidate order (score descending, ties by (anchor, class)),
//               the first K; padding: boxes 0, scores 0, classes -1, anchors -1
//
// Two forms of the same computation (the results are equal; tests/test_multiclass_nms.py):
//  * the CPU form works on each image's real candidates (reading their count is no host sync on
//    the CPU): nonzero, a sort of the candidates, myops::nms / batched_nms (torchvision's path
//    by the real count, exactly as the reference), images in parallel;
//  * the padded form (every other device but CUDA, whose own kernel for the whole batch,
//    nms/cuda/multiclass_nms.cu, takes precedence over this composite there and falls back to
//    this form past its 32-bit sizes) has no data-dependent shape and never reads a device
//    value: one stable sort of the masked scores ([N, P], P = A*C, or A without multi_label)
//    puts the candidates first, in order, then per image batched_nms_static over
//    M = min(pre_nms_top_k, P) rows, the rows past the
//    count at -inf (visited after every real one), torchvision's path picked without a sync (the
//    shifted boxes or the plain ones, torch.where on the real count, as myops.detection does).
//    `_multiclass_nms_static_padded` runs this form on any device (the tests run it on the CPU).
#include <ATen/Parallel.h>
#include <ATen/TensorOperators.h>
#include <ATen/ThreadLocalState.h>
#include <ATen/core/Tensor.h>
#include <ATen/ops/amax.h>
#include <ATen/ops/any.h>
#include <ATen/ops/arange.h>
#include <ATen/ops/cat.h>
#include <ATen/ops/argmax.h>
#include <ATen/ops/div.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/full.h>
#include <ATen/ops/gather.h>
#include <ATen/ops/index_select.h>
#include <ATen/ops/lt.h>
#include <ATen/ops/nonzero.h>
#include <ATen/ops/ones_like.h>
#include <ATen/ops/remainder.h>
#include <ATen/ops/scalar_tensor.h>
#include <ATen/ops/sort.h>
#include <ATen/ops/stack.h>
#include <ATen/ops/sum.h>
#include <ATen/ops/where.h>
#include <ATen/ops/zeros.h>
#include <ATen/ops/zeros_like.h>
#include <torch/library.h>

#include <algorithm>
#include <limits>
#include <optional>
#include <tuple>
#include <vector>

#include "core/checks.h"
#include "nms/nms_common.h"
#include "myops/ops.h"

namespace myops {
namespace {

using Result = std::tuple<at::Tensor, at::Tensor, at::Tensor, at::Tensor, at::Tensor>;
constexpr const char* kOp = "multiclass_nms_static";

struct Args {
  double score_threshold, iou_threshold;
  int64_t max_detections;
  std::optional<int64_t> pre_nms_top_k;
  bool class_agnostic, multi_label;
};

// The padded outputs, filled with the padding values.
Result padding(const at::Tensor& boxes, int64_t n, int64_t k) {
  const auto lopts = boxes.options().dtype(at::kLong);
  return {at::zeros({n}, lopts), at::zeros({n, k, 4}, boxes.options()), at::zeros({n, k}, boxes.options()),
          at::full({n, k}, -1, lopts), at::full({n, k}, -1, lopts)};
}

// ---- the CPU form: each image's real candidates ---------------------------------------------

void image_cpu(const at::Tensor& boxes, const at::Tensor& scores, const Args& a, int64_t n, const Result& out) {
  const int64_t A = scores.size(1), C = scores.size(2);
  const at::Tensor s = scores.select(0, n);  // [A, C]
  at::Tensor anchor, cls, sc;
  if (a.multi_label) {
    const at::Tensor flat = s.reshape({-1});
    const at::Tensor idx = at::nonzero(flat > a.score_threshold).squeeze(1);  // (a, c) order
    sc = flat.index_select(0, idx);
    anchor = at::div(idx, C, "floor");
    cls = at::remainder(idx, C);
  } else {
    const at::Tensor best = s.argmax(1);                                // [A]: first best class
    const at::Tensor conf = s.gather(1, best.unsqueeze(1)).squeeze(1);  // its score (NaN if any)
    anchor = at::nonzero(conf > a.score_threshold).squeeze(1);
    sc = conf.index_select(0, anchor);
    cls = best.index_select(0, anchor);
  }
  at::Tensor order = std::get<1>(sc.sort(/*stable=*/true, 0, /*descending=*/true));
  if (a.pre_nms_top_k.has_value() && *a.pre_nms_top_k < order.size(0)) order = order.narrow(0, 0, *a.pre_nms_top_k);
  anchor = anchor.index_select(0, order);
  cls = cls.index_select(0, order);
  sc = sc.index_select(0, order);
  const at::Tensor b = boxes.dim() == 4 ? boxes.select(0, n).reshape({A * C, 4}).index_select(0, anchor * C + cls)
                                        : boxes.select(0, n).index_select(0, anchor);
  // positions in the candidate order, ascending: score descending, ties by candidate
  at::Tensor keep =
      a.class_agnostic ? myops::nms(b, sc, a.iou_threshold) : myops::batched_nms(b, sc, cls, a.iou_threshold);
  keep = std::get<0>(keep.sort(0, /*descending=*/false));
  const int64_t k = std::min<int64_t>(keep.size(0), a.max_detections);
  std::get<0>(out).select(0, n).fill_(k);
  if (k == 0) return;
  keep = keep.narrow(0, 0, k);
  std::get<1>(out).select(0, n).narrow(0, 0, k).copy_(b.index_select(0, keep));
  std::get<2>(out).select(0, n).narrow(0, 0, k).copy_(sc.index_select(0, keep));
  std::get<3>(out).select(0, n).narrow(0, 0, k).copy_(cls.index_select(0, keep));
  std::get<4>(out).select(0, n).narrow(0, 0, k).copy_(anchor.index_select(0, keep));
}

Result run_cpu(const at::Tensor& boxes, const at::Tensor& scores, const Args& a) {
  const int64_t N = scores.size(0);
  Result out = padding(boxes, N, a.max_detections);
  if (scores.numel() == 0) return out;
  // the worker threads take the caller's dispatch state (inference mode, the autograd keys this
  // kernel runs below)
  const at::ThreadLocalState state;
  at::parallel_for(0, N, 1, [&](int64_t begin, int64_t end) {
    const at::ThreadLocalStateGuard guard(state);
    for (int64_t n = begin; n < end; ++n) image_cpu(boxes, scores, a, n, out);
  });
  return out;
}

// ---- the padded form: static shapes, no host read ---------------------------------------------

// torchvision.ops.batched_nms (nms when class_agnostic) over the `count` real rows of M
// candidates (the first rows; the others at score -inf), as batched_nms_static: the positions of
// the survivors, padded with -1. torchvision takes the coordinate trick while the real boxes
// have at most nms_common::vanilla_above elements: then the boxes shifted as it shifts them (by
// the real boxes' max) and one class, else the boxes and their classes (M rows are then above
// the limit too, so the op takes its per-class path).
at::Tensor image_nms_padded(const at::Tensor& b, const at::Tensor& sc, const at::Tensor& cls, const at::Tensor& real,
                            const at::Tensor& count, const Args& a) {
  const int64_t M = b.size(0);
  if (a.class_agnostic) return std::get<0>(myops::nms_static(b, sc, a.iou_threshold, M));
  const int64_t limit = nms_common::vanilla_above(b.is_cpu());
  const at::Tensor trick = (count * 4).le(limit);
  const at::Tensor neg_inf = at::scalar_tensor(-std::numeric_limits<double>::infinity(), b.options());
  at::Tensor top = at::where(real.unsqueeze(1), b, neg_inf).amax();
  top = at::where(real.any(), top, at::zeros_like(top));
  const at::Tensor shifted = b + (cls.to(b.scalar_type()) * (top + at::ones_like(top))).unsqueeze(1);
  const at::Tensor nms_boxes = at::where(trick, shifted, b);
  const at::Tensor nms_cls = at::where(trick, at::zeros_like(cls), cls);
  return std::get<0>(myops::batched_nms_static(nms_boxes, sc, nms_cls, a.iou_threshold, M));
}

Result run_padded(const at::Tensor& boxes, const at::Tensor& scores, const Args& a) {
  const int64_t N = scores.size(0), A = scores.size(1), C = scores.size(2), K = a.max_detections;
  const int64_t P = a.multi_label ? A * C : A;
  const int64_t M = a.pre_nms_top_k.has_value() ? std::min(P, *a.pre_nms_top_k) : P;
  if (M == 0 || N == 0) return padding(boxes, N, K);
  const auto lopts = boxes.options().dtype(at::kLong);
  at::Tensor conf, best;
  if (a.multi_label) {
    conf = scores.reshape({N, P});
  } else {
    best = scores.argmax(2);                                // [N, A]
    conf = scores.gather(2, best.unsqueeze(2)).squeeze(2);  // [N, A]
  }
  const at::Tensor valid = conf > a.score_threshold;
  const at::Tensor neg_inf = at::scalar_tensor(-std::numeric_limits<double>::infinity(), conf.options());
  // the candidates first, score descending, ties (and the rest) in index order
  auto [sc, order] = at::where(valid, conf, neg_inf).sort(/*stable=*/true, 1, /*descending=*/true);
  sc = sc.narrow(1, 0, M);
  order = order.narrow(1, 0, M);
  const at::Tensor count = valid.sum(1).clamp_max(M);                                // [N]
  const at::Tensor real = at::arange(M, lopts).unsqueeze(0).lt(count.unsqueeze(1));  // [N, M]
  const at::Tensor anchor = a.multi_label ? at::div(order, C, "floor") : order;
  const at::Tensor cls = a.multi_label ? at::remainder(order, C) : best.gather(1, order);
  const at::Tensor row = boxes.dim() == 4 ? anchor * C + cls : anchor;
  const at::Tensor src = boxes.dim() == 4 ? boxes.reshape({N, A * C, 4}) : boxes;
  // the rows past the count get zero boxes: they take no part in the NMS's maximum
  const at::Tensor b =
      at::where(real.unsqueeze(2), src.gather(1, row.unsqueeze(2).expand({N, M, 4})), at::zeros({}, boxes.options()));
  std::vector<at::Tensor> keeps;
  keeps.reserve(N);
  for (int64_t n = 0; n < N; ++n) {
    keeps.push_back(
        image_nms_padded(b.select(0, n), sc.select(0, n), cls.select(0, n), real.select(0, n), count.select(0, n), a));
  }
  // the real survivors' positions, ascending (padding and rows past the count: M, last)
  const at::Tensor keep = at::stack(keeps);
  const at::Tensor ok = keep.ge(0).logical_and(keep.lt(count.unsqueeze(1)));
  at::Tensor pos = std::get<0>(at::where(ok, keep, at::scalar_tensor(M, lopts)).sort(1));
  const at::Tensor num = ok.sum(1).clamp_max(K);
  if (K <= M) {
    pos = pos.narrow(1, 0, K);
  } else {
    pos = at::cat({pos, at::full({N, K - M}, M, lopts)}, 1);
  }
  const at::Tensor rows = at::arange(K, lopts).unsqueeze(0).lt(num.unsqueeze(1));  // [N, K]
  const at::Tensor at_pos = pos.clamp_max(M - 1);
  const auto pick = [&](const at::Tensor& t, const at::Scalar& fill) {
    return at::where(rows, t.gather(1, at_pos), at::scalar_tensor(fill, t.options()));
  };
  const at::Tensor out_boxes =
      at::where(rows.unsqueeze(2), b.gather(1, at_pos.unsqueeze(2).expand({N, K, 4})), at::zeros({}, boxes.options()));
  return {num, out_boxes, pick(sc, 0), pick(cls, -1), pick(anchor, -1)};
}

Args args_of(double score_threshold, double iou_threshold, int64_t max_detections, std::optional<int64_t> pre_nms_top_k,
             bool class_agnostic, bool multi_label) {
  return {score_threshold, iou_threshold, max_detections, pre_nms_top_k, class_agnostic, multi_label};
}

Result empty_classes(const at::Tensor& boxes, const at::Tensor& scores, const Args& a) {
  return padding(boxes, scores.size(0), a.max_detections);
}

Result multiclass_nms_static_kernel(const at::Tensor& boxes, const at::Tensor& scores, double score_threshold,
                                    double iou_threshold, int64_t max_detections, std::optional<int64_t> pre_nms_top_k,
                                    bool class_agnostic, bool multi_label) {
  const Args a = args_of(score_threshold, iou_threshold, max_detections, pre_nms_top_k, class_agnostic, multi_label);
  nms_common::check_multiclass(boxes, scores, a.max_detections, a.pre_nms_top_k, kOp);
  if (scores.size(2) == 0) return empty_classes(boxes, scores, a);
  return boxes.is_cpu() ? run_cpu(boxes, scores, a) : run_padded(boxes, scores, a);
}

Result multiclass_nms_static_padded_kernel(const at::Tensor& boxes, const at::Tensor& scores, double score_threshold,
                                           double iou_threshold, int64_t max_detections,
                                           std::optional<int64_t> pre_nms_top_k, bool class_agnostic,
                                           bool multi_label) {
  const Args a = args_of(score_threshold, iou_threshold, max_detections, pre_nms_top_k, class_agnostic, multi_label);
  nms_common::check_multiclass(boxes, scores, a.max_detections, a.pre_nms_top_k, "_multiclass_nms_static_padded");
  if (scores.size(2) == 0) return empty_classes(boxes, scores, a);
  return run_padded(boxes, scores, a);
}

}  // namespace
}  // namespace myops

TORCH_LIBRARY_IMPL(myops, CompositeExplicitAutograd, m) {
  m.impl("multiclass_nms_static", &myops::multiclass_nms_static_kernel);
  m.impl("_multiclass_nms_static_padded", &myops::multiclass_nms_static_padded_kernel);
}
