// myops from C++: the C++ API (myops/ops.h) and an AOTInductor model that uses myops ops, in a
// process with no Python. Exits non-zero on any mismatch, or if libpython is mapped.
//
//   myops_example [package.pt2]
//
// The package (optional) is torch._inductor.aoti_compile_and_package of
//   forward(x, other) = relu(myops.max_pool2d_add(x, other)) + 1
// on CPU inputs x [2, 3, 9, 9] float32, other [2, 3, 5, 5] float32 (tests/test_cpp.py makes it).
#include <ATen/ATen.h>
#include <myops/ops.h>
#include "process.h"
#include <torch/csrc/inductor/aoti_package/model_package_loader.h>

#include <fstream>
#include <iostream>
#include <string>
#include <vector>

namespace {

int failures = 0;

void check(bool ok, const std::string& what) {
  std::cout << (ok ? "ok    " : "FAILED") << "  " << what << std::endl;
  if (!ok) ++failures;
}

// Exact equality: values, dtype, shape and strides.
bool same(const at::Tensor& a, const at::Tensor& b) {
  return a.scalar_type() == b.scalar_type() && a.sizes() == b.sizes() && a.strides() == b.strides() && at::equal(a, b);
}

}  // namespace

int main(int argc, char** argv) {
  at::manual_seed(0);

  // nonzero: == at::nonzero (values, shape, strides)
  at::Tensor x = at::randn({4, 7, 5});
  at::Tensor mask = x > 0.3;
  check(same(myops::nonzero(mask), at::nonzero(mask)), "myops::nonzero == at::nonzero");
  check(same(myops::nonzero_static(mask, 17, -1), at::nonzero_static(mask, 17, -1)),
        "myops::nonzero_static == at::nonzero_static");

  // max_pool2d_add: == at::max_pool2d(...) + other (defaults: 3x3, stride 2, padding 1)
  at::Tensor feat = at::randn({2, 8, 15, 13});
  at::Tensor skip = at::randn({2, 1, 8, 7});
  at::Tensor ref = at::max_pool2d(feat, {3, 3}, {2, 2}, {1, 1}) + skip;
  check(same(myops::max_pool2d_add(feat, skip), ref), "myops::max_pool2d_add == at::max_pool2d + other");
  check(same(myops::max_pool2d_add(feat, skip, {2, 2}, {2, 2}, {0, 0}, true),
             at::max_pool2d(feat, {2, 2}, {2, 2}, {0, 0}, {1, 1}, true) + skip),
        "myops::max_pool2d_add(2x2, ceil_mode) == at::max_pool2d + other");

  // elementwise and diagonal through the same API
  at::Tensor a = at::randn({3, 1, 6});
  at::Tensor b = at::randn({4, 6});
  check(same(myops::add(a, b, 2), at::add(a, b, 2)), "myops::add(alpha=2) == at::add");
  check(same(myops::relu(a), at::relu(a)), "myops::relu == at::relu");
  check(same(myops::diagonal(x, 1, 0, 2), at::diagonal(x, 1, 0, 2).contiguous()), "myops::diagonal == at::diagonal");
  // clamp: tensor bounds, and number bounds (torch's Scalar overload; either may be absent)
  check(same(myops::clamp(a, b - 1, b + 1), at::clamp(a, b - 1, b + 1)), "myops::clamp(tensors) == at::clamp");
  check(same(myops::clamp(a, -0.5, 0.5), at::clamp(a, -0.5, 0.5)), "myops::clamp(numbers) == at::clamp");
  check(same(myops::clamp(a, std::nullopt, 0), at::clamp(a, std::nullopt, 0)), "myops::clamp(max=0) == at::clamp");

  // roi_align_levels: each RoI pooled on its own level == a one-level call on that level
  std::vector<at::Tensor> levels_maps = {at::randn({2, 3, 16, 20}), at::randn({2, 3, 8, 10})};
  at::Tensor rois =
      at::tensor({0.f, 1.f, 2.f, 30.f, 40.f, 1.f, 5.f, 5.f, 60.f, 50.f, 1.f, -9.f, 3.f, 70.f, 20.f}).view({3, 5});
  at::Tensor levels = at::tensor({int64_t(1), int64_t(0), int64_t(1)});
  at::Tensor pooled = myops::roi_align_levels(levels_maps, rois, levels, {0.25, 0.125}, 7, 7, 2);
  bool rows_ok = pooled.sizes() == at::IntArrayRef({3, 3, 7, 7});
  const double scales[] = {0.25, 0.125};
  for (int64_t k = 0; k < 3; ++k) {
    const int64_t l = levels[k].item<int64_t>();
    at::Tensor one = myops::roi_align_levels({levels_maps[l]}, rois.slice(0, k, k + 1), at::zeros({1}, at::kLong),
                                             {scales[l]}, 7, 7, 2);
    rows_ok = rows_ok && at::equal(pooled.slice(0, k, k + 1), one);
  }
  check(rows_ok, "myops::roi_align_levels == one level per RoI");
  // inference only: with an input that requires grad the forward runs and the backward raises
  at::Tensor pooled_grad = myops::roi_align_levels({levels_maps[0].clone().requires_grad_(true)}, rois,
                                                   at::zeros({3}, at::kLong), {0.25}, 7, 7);
  bool raised = false;
  try {
    pooled_grad.sum().backward();
  } catch (const c10::Error& e) {
    raised =
        std::string(e.what()).find("derivative for myops::roi_align_levels is not implemented") != std::string::npos;
  }
  check(raised, "myops::roi_align_levels: the backward of a result that requires grad raises");

  // multiclass_nms_static: one image, 3 anchors, 2 classes; class 0's second box overlaps the first
  const auto f32 = at::TensorOptions().dtype(at::kFloat);
  const at::Tensor det_boxes =
      at::tensor(std::vector<double>{0, 0, 10, 10, 1, 1, 10, 10, 20, 20, 30, 30}, f32).view({1, 3, 4});
  const at::Tensor det_scores = at::tensor(std::vector<double>{0.9, 0.1, 0.8, 0.7, 0.2, 0.6}, f32).view({1, 3, 2});
  const auto [num, boxes_out, scores_out, classes_out, anchors_out] =
      myops::multiclass_nms_static(det_boxes, det_scores, 0.5, 0.5, 4);
  const at::Tensor expect_classes = at::tensor(std::vector<int64_t>{0, 1, 1, -1}).view({1, 4});
  const at::Tensor expect_anchors = at::tensor(std::vector<int64_t>{0, 1, 2, -1}).view({1, 4});
  check(num.item<int64_t>() == 3 && at::equal(classes_out, expect_classes) && at::equal(anchors_out, expect_anchors) &&
            at::equal(boxes_out[0][3], at::zeros({4}, f32)),
        "myops::multiclass_nms_static: 3 detections padded to 4");

  // autograd: the dispatcher records myops' backward
  at::Tensor leaf = at::randn({2, 3, 9, 9}).requires_grad_(true);
  myops::max_pool2d_add(leaf, at::zeros({1})).sum().backward();
  at::Tensor leaf2 = leaf.detach().clone().requires_grad_(true);
  at::max_pool2d(leaf2, {3, 3}, {2, 2}, {1, 1}).sum().backward();
  check(leaf.grad().defined() && at::equal(leaf.grad(), leaf2.grad()),
        "myops::max_pool2d_add backward == at::max_pool2d's");

  // An AOTInductor package of a model that calls myops ops
  if (argc > 1) {
    torch::inductor::AOTIModelPackageLoader loader(argv[1]);
    at::Tensor in = at::randn({2, 3, 9, 9});
    at::Tensor other = at::randn({2, 3, 5, 5});
    std::vector<at::Tensor> out = loader.run({in, other});
    at::Tensor expect = at::relu(at::max_pool2d(in, {3, 3}, {2, 2}, {1, 1}) + other) + 1;
    check(out.size() == 1 && out[0].sizes() == expect.sizes() && at::allclose(out[0], expect, 0, 0),
          std::string("AOTInductor package ") + argv[1]);
  }

  check(!mapped("libpython"), "no libpython in this process");
  std::cout << (failures ? "FAILED: " + std::to_string(failures) + " check(s)" : std::string("all checks passed"))
            << std::endl;
  return failures ? 1 : 0;
}
