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

# (diagonal fake kernels go here)
