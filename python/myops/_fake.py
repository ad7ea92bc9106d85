"""Fake (meta) kernels: output shape, dtype and strides without computing anything, so every
op works under torch.compile, torch.export and FakeTensor. The torch._check calls repeat the
C++ input checks."""
import torch
from torch.library import register_fake

# ---- nonzero family -------------------------------------------------------------------------

# (nonzero family fake kernels go here)


# ---- elementwise ----------------------------------------------------------------------------

# (elementwise fake kernels go here)


# ---- max_pool2d_add -------------------------------------------------------------------------

# (max_pool2d_add fake kernels go here)


# ---- diagonal -------------------------------------------------------------------------------

def _diagonal_shape(sizes, offset, dim1, dim2, op, tensor_arg):
    """Output shape of the diagonal; repeats the checks of csrc/common/diagonal_shape.h."""
    ndim = len(sizes)
    torch._check(
        ndim >= 2,
        lambda: f"myops.{op}: argument '{tensor_arg}' must have at least 2 dims, got a {ndim}-D tensor",
    )
    wrapped = []
    for name, d in (("dim1", dim1), ("dim2", dim2)):
        torch._check(
            -ndim <= d < ndim,
            lambda: f"myops.{op}: argument '{name}' must be in the range [{-ndim}, {ndim - 1}] "
            f"for a {ndim}-D tensor, got {d}",
        )
        wrapped.append(d % ndim)
    d1, d2 = wrapped
    torch._check(
        d1 != d2,
        lambda: f"myops.{op}: argument 'dim2' must refer to a different dim than 'dim1', "
        f"got dim1={dim1} and dim2={dim2}",
    )
    if offset >= 0:
        n = torch.sym_max(torch.sym_min(sizes[d1], sizes[d2] - offset), 0)
    else:
        n = torch.sym_max(torch.sym_min(sizes[d1] + offset, sizes[d2]), 0)
    return [s for i, s in enumerate(sizes) if i != d1 and i != d2] + [n]


@register_fake("myops::diagonal")
def _diagonal_fake(self, offset=0, dim1=0, dim2=1):
    return self.new_empty(_diagonal_shape(list(self.shape), offset, dim1, dim2, "diagonal", "self"))


@register_fake("myops::diagonal_backward")
def _diagonal_backward_fake(grad, input_sizes, offset, dim1, dim2):
    for s in input_sizes:
        torch._check(
            s >= 0,
            lambda: f"myops.diagonal_backward: argument 'input_sizes' must be non-negative, got {input_sizes}",
        )
    shape = _diagonal_shape(list(input_sizes), offset, dim1, dim2, "diagonal_backward", "input_sizes")
    torch._check(
        grad.dim() == len(shape) and all(g == s for g, s in zip(grad.shape, shape)),
        lambda: f"myops.diagonal_backward: argument 'grad' must have the shape of the diagonal "
        f"{list(shape)}, got {list(grad.shape)}",
    )
    return grad.new_empty(list(input_sizes))
