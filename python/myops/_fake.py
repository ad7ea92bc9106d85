"""Fake (meta) kernels: output shape, dtype and strides without computing anything, so every
op works under torch.compile, torch.export and FakeTensor. The torch._check calls repeat the
C++ input checks."""
import torch
from torch.library import register_fake

# ---- nonzero family -------------------------------------------------------------------------

_NONZERO_DTYPES = (
    torch.bool,
    torch.uint8,
    torch.int8,
    torch.int16,
    torch.int32,
    torch.int64,
    torch.float16,
    torch.bfloat16,
    torch.float32,
    torch.float64,
)
_NONZERO_CUDA_MAX_RANK = 64


def _nonzero_checks(self, op):
    torch._check(
        self.dtype in _NONZERO_DTYPES,
        lambda: f"myops.{op}: argument 'self' must have dtype in {{bool, uint8, int8, int16, int32, "
        f"int64, float16, bfloat16, float32, float64}}, got {self.dtype}",
    )
    if self.device.type == "cuda":
        torch._check(
            self.dim() <= _NONZERO_CUDA_MAX_RANK,
            lambda: f"myops.{op}: argument 'self' must have at most {_NONZERO_CUDA_MAX_RANK} dims "
            f"on CUDA, got {self.dim()}",
        )


@register_fake("myops::nonzero")
def _nonzero_fake(self):
    _nonzero_checks(self, "nonzero")
    numel = self.numel()
    if isinstance(numel, int) and numel == 0:
        nnz = 0
    else:
        ctx = torch.library.get_ctx()
        nnz = ctx.new_dynamic_size(max=numel if isinstance(numel, int) else None)
    # [nnz, ndim] with strides (1, nnz): a column-major buffer, as the CPU and CUDA kernels
    # (and torch) return it.
    return self.new_empty_strided((nnz, self.dim()), (1, nnz), dtype=torch.int64)


@register_fake("myops::nonzero_static")
def _nonzero_static_fake(self, *, size, fill_value=-1):
    _nonzero_checks(self, "nonzero_static")
    torch._check(size >= 0, lambda: f"myops.nonzero_static: argument 'size' must be >= 0, got {size}")
    if self.device.type == "cuda":
        # CUDA: the transpose of a contiguous [ndim, size] buffer
        return self.new_empty((self.dim(), size), dtype=torch.int64).t()
    return self.new_empty((size, self.dim()), dtype=torch.int64)


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
