"""Typed, documented wrappers over ``torch.ops.myops.*``.

Each wrapper calls the ``.default`` overload of the registered op; all checks and all work
happen in the C++/CUDA kernels.
"""
from typing import List, Optional, Sequence, Tuple, Union

import torch
from torch import Tensor

_ops = torch.ops.myops

__all__ = []

# =============================================================================================
# nonzero family: nonzero, where(cond), argwhere, nonzero_static
# =============================================================================================

# (nonzero family wrappers go here)


# =============================================================================================
# elementwise: unary, binary, ternary
# =============================================================================================

# (elementwise wrappers go here)


# =============================================================================================
# max_pool2d_add
# =============================================================================================

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


def max_pool2d_add(
    self: Tensor,
    other: Tensor,
    kernel_size: IntOrPair = (3, 3),
    stride: Optional[IntOrPair] = (2, 2),
    padding: IntOrPair = (1, 1),
    ceil_mode: bool = False,
) -> Tensor:
    """``F.max_pool2d(self, kernel_size, stride, padding, ceil_mode=ceil_mode) + other`` in one pass.

    ``self`` is ``[N, C, H, W]`` or unbatched ``[C, H, W]`` (float32, float64, float16, bfloat16);
    ``other`` must broadcast to the pooled shape (e.g. ``[N, 1, Ho, Wo]``, ``[1, C, 1, 1]``,
    ``[Wo]``, a 0-d tensor, or the full shape) and is never expanded in memory. The result has
    dtype ``torch.result_type(self, other)``, the pooled shape, and is channels_last when
    ``self`` is. Bit-identical to PyTorch: padding is -inf, NaN anywhere in a window gives NaN,
    ties (and -0.0 vs +0.0) resolve like torch's max_pool2d, output size follows torch's formula
    including ``ceil_mode``. Dilation is not supported (always 1).

    ``kernel_size``, ``stride`` and ``padding`` take an int or two ints. Unlike
    ``F.max_pool2d`` (whose ``stride`` defaults to ``kernel_size``) the default stride is
    ``(2, 2)``, matching the default ``kernel_size=(3, 3), padding=(1, 1)`` fast path; pass
    ``stride=None`` to get ``F.max_pool2d``'s behaviour (stride = kernel_size).
    Differentiable in ``self`` and ``other``.
    """
    k = _pool_pair(kernel_size, "kernel_size")
    s = k if stride is None else _pool_pair(stride, "stride")
    return _ops.max_pool2d_add.default(self, other, k, s, _pool_pair(padding, "padding"), ceil_mode)


__all__ += ["max_pool2d_add"]


# =============================================================================================
# diagonal
# =============================================================================================

# (diagonal wrappers go here)
