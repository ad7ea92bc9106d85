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

_POOL_FLOATS = (torch.float32, torch.float64, torch.float16, torch.bfloat16)


def _pool_pair_arg(v, name, op, empty=None):
    v = list(v)
    if not v and empty is not None:
        return empty
    torch._check(
        len(v) in (1, 2),
        lambda: f"myops.{op}: argument '{name}' must be a single int or a list of two ints, got {v}",
    )
    return [v[0], v[-1]]


def _pooled_size(n, k, p, s, ceil_mode):
    # torch's pooling_output_shape with dilation 1 (// is floor division, like div_rtn)
    out = (n + 2 * p - (k - 1) - 1 + (s - 1 if ceil_mode else 0)) // s + 1
    if ceil_mode and (out - 1) * s >= n + p:
        out -= 1
    return out


def _pool2d_meta(self, kernel_size, stride, padding, ceil_mode, op):
    """Repeats the C++ checks (csrc/common/max_pool2d_add_shape.h); returns (pooled sizes,
    memory format)."""
    torch._check(
        self.dtype in _POOL_FLOATS,
        lambda: f"myops.{op}: argument 'self' must have dtype in {{Float, Double, Half, BFloat16}}, got {self.dtype}",
    )
    torch._check(
        self.dim() in (3, 4),
        lambda: f"myops.{op}: argument 'self' must be a 3-D [C, H, W] or 4-D [N, C, H, W] tensor, got {self.dim()}-D",
    )
    k = _pool_pair_arg(kernel_size, "kernel_size", op)
    s = _pool_pair_arg(stride, "stride", op, empty=k)
    p = _pool_pair_arg(padding, "padding", op)
    torch._check(k[0] > 0 and k[1] > 0, lambda: f"myops.{op}: argument 'kernel_size' must be positive, got {k}")
    torch._check(s[0] > 0 and s[1] > 0, lambda: f"myops.{op}: argument 'stride' must be positive, got {s}")
    torch._check(p[0] >= 0 and p[1] >= 0, lambda: f"myops.{op}: argument 'padding' must be non-negative, got {p}")
    torch._check(
        p[0] <= k[0] // 2 and p[1] <= k[1] // 2,
        lambda: f"myops.{op}: argument 'padding' must be at most half of kernel_size, got padding {p} for kernel_size {k}",
    )
    C, H, W = self.shape[-3:]
    torch._check(
        C > 0 and H > 0 and W > 0,
        lambda: f"myops.{op}: argument 'self' must have non-zero C, H and W (only the batch dim may be 0), got shape {tuple(self.shape)}",
    )
    Ho = _pooled_size(H, k[0], p[0], s[0], ceil_mode)
    Wo = _pooled_size(W, k[1], p[1], s[1], ceil_mode)
    torch._check(
        Ho >= 1 and Wo >= 1,
        lambda: f"myops.{op}: argument 'self' gives a pooled output of [{Ho}, {Wo}]: the pooled output must be at least 1 x 1",
    )
    sizes = list(self.shape[:-2]) + [Ho, Wo]
    fmt = torch.contiguous_format
    if self.dim() == 4 and torch._prims_common.suggest_memory_format(self) == torch.channels_last:
        fmt = torch.channels_last
    return sizes, fmt


@register_fake("myops::max_pool2d_add")
def _max_pool2d_add_fake(self, other, kernel_size=(3, 3), stride=(2, 2), padding=(1, 1), ceil_mode=False):
    op = "max_pool2d_add"
    torch._check(
        self.device == other.device,
        lambda: f"myops.{op}: expected all tensors on the same device, got 'self' on {self.device} and 'other' on {other.device}",
    )
    sizes, fmt = _pool2d_meta(self, kernel_size, stride, padding, ceil_mode, op)
    torch._check(
        other.dtype in _POOL_FLOATS,
        lambda: f"myops.{op}: argument 'other' must have dtype in {{Float, Double, Half, BFloat16}}, got {other.dtype}",
    )
    ok = other.dim() <= len(sizes) and all(
        other.shape[-i] == 1 or other.shape[-i] == sizes[-i] for i in range(1, other.dim() + 1)
    )
    torch._check(
        ok,
        lambda: f"myops.{op}: argument 'other' of shape {list(other.shape)} must broadcast to the pooled shape {sizes}",
    )
    dtype = torch.result_type(self, other)
    return torch.empty(sizes, dtype=dtype, device=self.device, memory_format=fmt)


@register_fake("myops::max_pool2d_add_backward")
def _max_pool2d_add_backward_fake(grad_output, self, kernel_size, stride, padding, ceil_mode):
    op = "max_pool2d_add_backward"
    torch._check(
        self.device == grad_output.device,
        lambda: f"myops.{op}: expected all tensors on the same device, got 'self' on {self.device} and 'grad_output' on {grad_output.device}",
    )
    sizes, fmt = _pool2d_meta(self, kernel_size, stride, padding, ceil_mode, op)
    torch._check(
        grad_output.dtype in _POOL_FLOATS,
        lambda: f"myops.{op}: argument 'grad_output' must have dtype in {{Float, Double, Half, BFloat16}}, got {grad_output.dtype}",
    )
    torch._check(
        list(grad_output.shape) == sizes,
        lambda: f"myops.{op}: argument 'grad_output' must have the pooled shape {sizes}, got {list(grad_output.shape)}",
    )
    return torch.empty(self.shape, dtype=self.dtype, device=self.device, memory_format=fmt)


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
