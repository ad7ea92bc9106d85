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

def nonzero(input: Tensor, *, as_tuple: bool = False) -> Union[Tensor, Tuple[Tensor, ...]]:
    """Indices of the nonzero elements of ``input``, like :func:`torch.nonzero`.

    Returns an int64 tensor of shape ``[nnz, input.dim()]`` (same values and strides as torch on
    that device), or with ``as_tuple=True`` a tuple of ``input.dim()`` 1-D index tensors (one for a
    0-d input, as torch). NaN counts as nonzero, -0.0 as zero. Synchronizes with the host once on
    CUDA (the result size depends on the data); see :func:`nonzero_static` for a sync-free variant.
    """
    if not as_tuple:
        return _ops.nonzero.default(input)
    if input.dim() == 0:
        return _ops.nonzero.default(input.unsqueeze(0)).unbind(1)
    return _ops.nonzero.default(input).unbind(1)


def argwhere(input: Tensor) -> Tensor:
    """Indices of the nonzero elements as an ``[nnz, input.dim()]`` int64 tensor, like
    :func:`torch.argwhere` (the same as :func:`nonzero`)."""
    return _ops.nonzero.default(input)


def nonzero_static(input: Tensor, *, size: int, fill_value: int = -1) -> Tensor:
    """Like :func:`torch.nonzero_static`: an int64 ``[size, input.dim()]`` tensor holding the first
    ``size`` rows of ``nonzero(input)``, padded with ``fill_value`` when there are fewer nonzeros.

    The output shape does not depend on the data, so on CUDA it never synchronizes with the host
    and can be captured in a CUDA graph. ``size`` must be >= 0.
    """
    return _ops.nonzero_static.default(input, size=size, fill_value=fill_value)


def _where_cond(condition: Tensor) -> Tuple[Tensor, ...]:
    """``torch.where(condition)``: a tuple of 1-D index tensors, one per dim of ``condition``."""
    return nonzero(condition, as_tuple=True)


def where(
    condition: Tensor,
    self: Optional[Union[Tensor, float, int, bool]] = None,
    other: Optional[Union[Tensor, float, int, bool]] = None,
) -> Union[Tensor, Tuple[Tensor, ...]]:
    """Like :func:`torch.where`.

    ``where(condition)`` returns the indices of the nonzero elements of ``condition`` as a tuple
    of 1-D tensors (``nonzero(condition, as_tuple=True)``). ``where(condition, self, other)``
    picks elements of ``self`` where ``condition`` is true and of ``other`` elsewhere
    (broadcasting), computed by ``torch.ops.myops.where``.
    """
    if self is None and other is None:
        return _where_cond(condition)
    if self is None or other is None:
        raise TypeError("myops.where: expected both 'self' and 'other', or neither")
    return _ops.where.default(condition, self, other)


__all__ += ["nonzero", "argwhere", "nonzero_static", "where"]


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

def diagonal(self: Tensor, offset: int = 0, dim1: int = 0, dim2: int = 1) -> Tensor:
    """The diagonal of ``self`` over dims ``dim1`` and ``dim2`` as a new contiguous tensor.

    Equals ``torch.diagonal(self, offset, dim1, dim2)`` (``torch.diagonal_copy`` semantics): the
    two dims are removed and the diagonal is appended as the last dim. ``offset > 0`` selects a
    diagonal above the main one, ``offset < 0`` one below; an offset past the matrix gives an
    empty last dim. Any rank >= 2, any strides, any dtype. Differentiable.
    """
    return _ops.diagonal.default(self, offset, dim1, dim2)


def diagonal_backward(
    grad: Tensor, input_sizes: Sequence[int], offset: int, dim1: int, dim2: int
) -> Tensor:
    """A zero tensor of shape ``input_sizes`` (contiguous, dtype of ``grad``) with ``grad``
    written onto its diagonal ``(offset, dim1, dim2)``: the gradient of :func:`diagonal`.
    ``grad`` must have the shape of that diagonal. Differentiable (its gradient is
    :func:`diagonal` of the incoming gradient).
    """
    return _ops.diagonal_backward.default(grad, list(input_sizes), offset, dim1, dim2)


__all__ += ["diagonal", "diagonal_backward"]
