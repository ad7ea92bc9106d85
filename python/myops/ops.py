"""Typed, documented wrappers over ``torch.ops.myops.*``.

Each wrapper calls the ``.default`` overload of the registered op; all checks and all work
happen in the C++/CUDA kernels.
"""
from typing import Optional, Sequence, Tuple, Union

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

# (max_pool2d_add wrappers go here)


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
