// Autograd of diagonal and of diagonal_backward (each is the other's gradient), on
// core/autograd.h.
#include <torch/library.h>

#include "core/autograd.h"

namespace myops {
namespace {

using namespace myops::autograd;

MYOPS_AUTOGRAD_OP(op_diagonal, "diagonal", Tensor(const Tensor&, int64_t, int64_t, int64_t))
MYOPS_AUTOGRAD_OP(op_diagonal_backward, "diagonal_backward",
                  Tensor(const Tensor&, c10::SymIntArrayRef, int64_t, int64_t, int64_t))

struct DiagonalFn : Function<DiagonalFn> {
  static Tensor forward(AutogradContext* ctx, const Tensor& self, int64_t offset, int64_t dim1, int64_t dim2) {
    ctx->saved_data["sizes"] = self.sym_sizes();
    ctx->saved_data["args"] = std::vector<int64_t>{offset, dim1, dim2};
    return below_autograd(op_diagonal(), self, offset, dim1, dim2);
  }
  static variable_list backward(AutogradContext* ctx, variable_list g) {
    auto a = ctx->saved_data["args"].toIntVector();
    auto sizes = ctx->saved_data["sizes"].toSymIntVector();
    return {op_diagonal_backward().call(g[0], sizes, a[0], a[1], a[2]), Tensor(), Tensor(), Tensor()};
  }
};

Tensor diagonal_autograd(const Tensor& self, int64_t offset, int64_t dim1, int64_t dim2) {
  return with_autograd<DiagonalFn>(op_diagonal(), self, offset, dim1, dim2);
}

// diagonal_backward is linear in `grad`: its gradient is the diagonal of the incoming one
struct DiagonalBackwardFn : Function<DiagonalBackwardFn> {
  static Tensor forward(AutogradContext* ctx, const Tensor& grad, c10::SymIntArrayRef sizes, int64_t offset,
                        int64_t dim1, int64_t dim2) {
    ctx->saved_data["args"] = std::vector<int64_t>{offset, dim1, dim2};
    return below_autograd(op_diagonal_backward(), grad, sizes, offset, dim1, dim2);
  }
  static variable_list backward(AutogradContext* ctx, variable_list g) {
    auto a = ctx->saved_data["args"].toIntVector();
    return {op_diagonal().call(g[0], a[0], a[1], a[2]), Tensor(), Tensor(), Tensor(), Tensor()};
  }
};

Tensor diagonal_backward_autograd(const Tensor& grad, c10::SymIntArrayRef sizes, int64_t offset, int64_t dim1,
                                  int64_t dim2) {
  return with_autograd<DiagonalBackwardFn>(op_diagonal_backward(), grad, sizes, offset, dim1, dim2);
}

}  // namespace
}  // namespace myops

TORCH_LIBRARY_IMPL(myops, Autograd, m) {
  m.impl("diagonal", &myops::diagonal_autograd);
  m.impl("diagonal_backward", &myops::diagonal_backward_autograd);
}
