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

# (diagonal fake kernels go here)
