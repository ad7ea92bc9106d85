"""``max_pool2d_add``: ``F.max_pool2d(x, ...) + other`` in one pass."""

from typing import List, Optional, Sequence, Union

import torch
from torch import Tensor

from ._common import _fake_kernel, _fast, _fast_path, _info, _natural, Number, _ops, _rules

__all__ = ["max_pool2d_add"]

IntOrPair = Union[int, Sequence[int]]


def _pool_pair(v: IntOrPair, name: str) -> List[int]:
    if isinstance(v, int):
        return [v, v]
    v = [int(x) for x in v]
    if len(v) == 1:
        return v * 2
    if len(v) != 2:
        raise RuntimeError(
            f"myops.max_pool2d_add: argument '{name}' must be a single int or a list of two ints, got {v}"
        )
    return v


_K3, _S2, _P1 = (3, 3), (2, 2), (1, 1)  # the defaults (the fast entry point's fixed arguments)


def max_pool2d_add(
    self: Tensor,
    other: Union[Tensor, Number],
    kernel_size: IntOrPair = _K3,
    stride: Optional[IntOrPair] = _S2,
    padding: IntOrPair = _P1,
    ceil_mode: bool = False,
) -> Tensor:
    """``F.max_pool2d(self, kernel_size, stride, padding, ceil_mode=ceil_mode) + other`` in one
    pass, ``other`` never expanded in memory.

    Bit-identical to PyTorch: padding is -inf, NaN anywhere in a window gives NaN, ties (and -0.0
    vs +0.0) resolve like torch's max_pool2d, the output size follows torch's formula including
    ``ceil_mode``. Dilation is not supported (always 1). The result is channels_last when
    ``self`` is. Differentiable in ``self`` and ``other``, twice (the second derivative gathers
    by the same argmax).

    Unlike ``F.max_pool2d`` (whose ``stride`` defaults to ``kernel_size``) the default stride is
    ``(2, 2)``, matching the default ``kernel_size=(3, 3), padding=(1, 1)`` fast path; pass
    ``stride=None`` or ``[]`` to get ``F.max_pool2d``'s behaviour (stride = kernel_size).

    Args:
        self: ``[N, C, H, W]`` or unbatched ``[C, H, W]``; float32, float64, float16, bfloat16,
            and on the CPU uint8, int8, int16, int32, int64 (the dtypes torch's max_pool2d takes).
        other: a tensor that broadcasts with the pooled shape (e.g. ``[N, 1, Ho, Wo]``,
            ``[1, C, 1, 1]``, ``[Wo]``, 0-d, the full shape, or one that repeats the pooled
            result, as torch's add broadcasts), of any real dtype, or a Python number (added in
            its own precision, as torch adds it).
        kernel_size: an int or two ints.
        stride: an int or two ints; None or ``[]``: ``kernel_size``.
        padding: an int or two ints.
        ceil_mode: round the output size up, as ``F.max_pool2d``.

    Returns:
        The broadcast of the pooled shape and other's, with the strides torch's add gives it;
        dtype ``torch.result_type(self, other)`` (``self``'s floating dtype for an integer, bool
        or number ``other``).

    Raises:
        RuntimeError: a rank other than 3 or 4, an ``other`` that does not broadcast, window
            arguments torch refuses (values past a C int: torch's overflow error).
        NotImplementedError: a ``self`` dtype torch's max_pool2d does not take on its device.
        TypeError: an ``other`` that is neither a tensor nor a Python number.

    Example::

        >>> x = torch.arange(16.).reshape(1, 1, 4, 4)
        >>> myops.max_pool2d_add(x, torch.tensor(1.))[0, 0]
        tensor([[ 6.,  8.],
                [14., 16.]])
        >>> myops.max_pool2d_add(x, 0.5, kernel_size=2, stride=None, padding=0)[0, 0]
        tensor([[ 5.5000,  7.5000],
                [13.5000, 15.5000]])
    """
    if kernel_size is _K3 and stride is _S2 and padding is _P1 and ceil_mode is False:
        r = _fast_path(_fast.max_pool2d_add, self, other)
        if r is not NotImplemented:
            return r
    k = _pool_pair(kernel_size, "kernel_size")
    # stride None or [] (as torch.ops.aten.max_pool2d): stride = kernel_size
    s = k if stride is None or (not isinstance(stride, int) and len(stride) == 0) else _pool_pair(stride, "stride")
    p = _pool_pair(padding, "padding")
    if not isinstance(other, Tensor):
        if not isinstance(self, Tensor):
            raise TypeError(f"myops.max_pool2d_add: argument 'self' must be a Tensor, got {type(self).__name__}")
        if not isinstance(other, (bool, int, float)):
            raise TypeError(
                f"myops.max_pool2d_add: argument 'other' must be a Tensor or a Python number, got {type(other).__name__}"
            )
        try:
            if self.is_cuda and self.dtype in (torch.float16, torch.bfloat16):
                return _pool_number_cuda_reduced(other, self, k, s, p, ceil_mode)
            other = _pool_number(other, self)
        except OverflowError:
            # torch's composition pools first: its errors (rank, dtype, sizes) come before the
            # number's; with none, the number's own OverflowError
            with torch.no_grad():
                _ops.max_pool2d_add.default(
                    self, torch.zeros((), dtype=torch.bool, device=self.device), k, s, p, ceil_mode
                )
            raise
    return _ops.max_pool2d_add.default(self, other, k, s, p, ceil_mode)


def _float32_of(u: int) -> float:
    """A non-negative int rounded once to float32 (to nearest, ties to even), as C++'s
    static_cast<float> of a uint64 rounds it (not through double: no double rounding)."""
    shift = u.bit_length() - 24
    if shift <= 0:
        return float(u)
    q, r = divmod(u, 1 << shift)
    if r > 1 << (shift - 1) or (r == 1 << (shift - 1) and q & 1):
        q += 1
    return float(q << shift)


def _pool_number(v: Number, self: Tensor) -> Tensor:
    """A Python number ``other`` as the 0-d tensor that gives ``pooled + v`` (the result keeps
    self's floating dtype) in the number's own precision, made on the device by a fill
    (torch.tensor would copy from the host: a sync, and no CUDA graph capture). An int in
    [2^63, 2^64) (a uint64 to c10, a dtype the kernel does not take) is converted as torch's add
    converts it: to double for a float64 self, to float for the others. Past int64 / uint64:
    torch's OverflowError."""
    dt = _natural(v)
    if dt == torch.uint64 and isinstance(v, int) and v < 2**64:
        v, dt = (float(v) if self.dtype == torch.float64 else _float32_of(v)), torch.float64
    if dt == torch.float64 and not self.dtype.is_floating_point:
        dt = torch.get_default_dtype()  # an integer self and a float: torch's result dtype, the number in it
    return torch.full((), v, dtype=dt, device=self.device)


def _pool_number_cuda_reduced(v: Number, self: Tensor, k, s, p, ceil_mode: bool) -> Tensor:
    """``pooled + v`` for a float16 / bfloat16 ``self`` on CUDA, as torch's CUDA add computes it:
    a number there is a CPU scalar, read in the compute type (float32: `iter.scalar_value<opmath_t>`
    of BinaryAddSubKernel's opmath_gpu_kernel_with_scalars), not rounded to self's dtype first (its
    CPU add rounds it, as the plain path does), so the sum is float(pooled) + float32(v), rounded
    to float32 and then to self's dtype. The kernel computes exactly that with a float32 ``other``
    of one element (a float32 result), cast back: one more kernel, on this path only."""
    # _pool_number: torch's OverflowError past int64 / uint64, an int in [2^63, 2^64) already
    # rounded once to float32; every value it gives converts to float32 as c10 converts the number
    other = _pool_number(v, self).to(torch.float32).reshape(1)
    return _ops.max_pool2d_add.default(self, other, k, s, p, ceil_mode).to(self.dtype)


# ---- fake kernels: the result's shape, dtype and strides under a tracer, after the C++ checks ----
# (_fake_kernel collects them and myops._fake registers them; _rules runs the family's C++ rules)


@_fake_kernel("myops::max_pool2d_add")
def _max_pool2d_add_fake(self, other, kernel_size=(3, 3), stride=(2, 2), padding=(1, 1), ceil_mode=False):
    sizes, strides = _rules(
        "max_pool2d_add", *_info(self), *_info(other), kernel_size, stride, padding, ceil_mode, False
    )
    return torch.empty_strided(sizes, strides, dtype=torch.result_type(self, other), device=self.device)


@_fake_kernel("myops::max_pool2d_add_backward")
def _max_pool2d_add_backward_fake(grad_output, self, kernel_size, stride, padding, ceil_mode):
    sizes, strides = _rules(
        "max_pool2d_add", *_info(self), *_info(grad_output), kernel_size, stride, padding, ceil_mode, True
    )
    return torch.empty_strided(sizes, strides, dtype=self.dtype, device=self.device)
