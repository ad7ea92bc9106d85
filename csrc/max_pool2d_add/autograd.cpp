// Autograd of max_pool2d_add and of its backward (double backward), on core/autograd.h and the
// elementwise ops' gradient helpers (elementwise/elementwise_grad.h).
#include <ATen/ops/gather.h>
#include <ATen/ops/max_pool2d_with_indices.h>
#include <torch/library.h>

#include "elementwise/elementwise_grad.h"
#include "max_pool2d_add/max_pool2d_add_shape.h"

namespace myops {
namespace {

using namespace myops::autograd;

using PoolSig = Tensor(const Tensor&, const Tensor&, c10::IntArrayRef, c10::IntArrayRef, c10::IntArrayRef, bool);
MYOPS_AUTOGRAD_OP(op_max_pool2d_add, "max_pool2d_add", PoolSig)
MYOPS_AUTOGRAD_OP(op_max_pool2d_add_backward, "max_pool2d_add_backward", PoolSig)

struct MaxPool2dAddFn : Function<MaxPool2dAddFn> {
  static Tensor forward(AutogradContext* ctx, const Tensor& self, const Tensor& other, c10::IntArrayRef k,
                        c10::IntArrayRef s, c10::IntArrayRef p, bool ceil_mode) {
    // only `self` is saved: the backward recomputes each window's argmax from it
    ctx->save_for_backward({self.requires_grad() ? self : Tensor()});
    Meta::save(ctx, "other", other);
    ctx->saved_data["k"] = k;
    ctx->saved_data["s"] = s;
    ctx->saved_data["p"] = p;
    ctx->saved_data["ceil"] = ceil_mode;
    return below_autograd(op_max_pool2d_add(), self, other, k, s, p, ceil_mode);
  }
  static variable_list backward(AutogradContext* ctx, variable_list g) {
    Tensor gs, go;
    if (ctx->needs_input_grad(0)) {
      auto self = ctx->get_saved_variables()[0];
      auto& d = ctx->saved_data;
      const auto k = d["k"].toIntVector(), s = d["s"].toIntVector(), p = d["p"].toIntVector();
      const bool ceil_mode = d["ceil"].toBool();
      // where other broadcast the pooled result up, the pooled result's gradient sums the
      // result's over the copies (at::sum_to, as autograd reduces an add's broadcast operand)
      const auto pooled =
          max_pool2d_add::pool_shape(self, float_dtypes(), k, s, p, ceil_mode, "max_pool2d_add").out_sizes;
      Tensor go = g[0].sym_sizes().equals(pooled) ? g[0] : at::sum_to(g[0], pooled, /*always_return_non_view=*/true);
      gs = op_max_pool2d_add_backward().call(go, self, k, s, p, ceil_mode);
    }
    if (ctx->needs_input_grad(1)) go = reduce_saved(ctx, "other", g[0]);
    return {gs, go, Tensor(), Tensor(), Tensor(), Tensor()};
  }
};

Tensor max_pool2d_add_autograd(const Tensor& self, const Tensor& other, c10::IntArrayRef k, c10::IntArrayRef s,
                               c10::IntArrayRef p, bool ceil_mode) {
  return with_autograd<MaxPool2dAddFn>(op_max_pool2d_add(), self, other, k, s, p, ceil_mode);
}

// max_pool2d_add_backward scatters grad_output to each window's argmax of `self`: linear in
// grad_output, so its gradient w.r.t. grad_output gathers the incoming gradient at the same
// argmax (the indices of ATen's max_pool2d_with_indices, which picks the same element: ties
// and NaN alike, and on CUDA channels_last (0, 0) for a window with no element above -inf);
// w.r.t. `self` it is zero almost everywhere.
struct MaxPool2dAddBackwardFn : Function<MaxPool2dAddBackwardFn> {
  static Tensor forward(AutogradContext* ctx, const Tensor& grad_output, const Tensor& self, c10::IntArrayRef k,
                        c10::IntArrayRef s, c10::IntArrayRef p, bool ceil_mode) {
    ctx->save_for_backward({self});
    ctx->saved_data["k"] = k;
    ctx->saved_data["s"] = s;
    ctx->saved_data["p"] = p;
    ctx->saved_data["ceil"] = ceil_mode;
    ctx->saved_data["go.dtype"] = static_cast<int64_t>(grad_output.scalar_type());
    return below_autograd(op_max_pool2d_add_backward(), grad_output, self, k, s, p, ceil_mode);
  }
  static variable_list backward(AutogradContext* ctx, variable_list g) {
    Tensor ggo;
    if (ctx->needs_input_grad(0)) {
      auto self = ctx->get_saved_variables()[0];
      auto& d = ctx->saved_data;
      Tensor idx;
      {
        at::AutoDispatchBelowADInplaceOrView no_grad;  // indices only
        idx = std::get<1>(at::max_pool2d_with_indices(self.detach(), d["k"].toIntVector(), d["s"].toIntVector(),
                                                      d["p"].toIntVector(), {1, 1}, d["ceil"].toBool()));
      }
      auto gi = g[0];
      auto gathered = at::gather(gi.flatten(-2), -1, idx.flatten(-2)).view(idx.sizes());
      auto dtype = static_cast<at::ScalarType>(d["go.dtype"].toInt());
      ggo = gathered.scalar_type() == dtype ? gathered : ew::handles::cast().call(gathered, dtype);
    }
    return {ggo, Tensor(), Tensor(), Tensor(), Tensor(), Tensor()};
  }
};

Tensor max_pool2d_add_backward_autograd(const Tensor& grad_output, const Tensor& self, c10::IntArrayRef k,
                                        c10::IntArrayRef s, c10::IntArrayRef p, bool ceil_mode) {
  return with_autograd<MaxPool2dAddBackwardFn>(op_max_pool2d_add_backward(), grad_output, self, k, s, p, ceil_mode);
}

}  // namespace
}  // namespace myops

TORCH_LIBRARY_IMPL(myops, Autograd, m) {
  m.impl("max_pool2d_add", &myops::max_pool2d_add_autograd);
  m.impl("max_pool2d_add_backward", &myops::max_pool2d_add_backward_autograd);
}
