"""Unary elementwise ops (the op table's ``unary``, ``gelu`` and ``cast`` rows): each a written-out
function over the op's direct entry point (``myops._C.<fn>``) and ``torch.ops.myops.<fn>``."""

import torch
from torch import Tensor

from ._common import _fast, _fast_path, _ops

__all__ = ["relu", "gelu", "silu", "sigmoid", "cast", "abs", "neg", "exp", "log", "sqrt", "rsqrt", "tanh"]


def relu(self: Tensor) -> Tensor:
    """:func:`torch.relu`, elementwise: ``max(x, 0)``; NaN stays NaN. Differentiable.

    Args:
        self: a tensor of any shape and strides;
            integers, float16, bfloat16, float32, float64 (not bool).

    Returns:
        A tensor of ``self``'s shape (torch's strides) and dtype.

    Raises:
        NotImplementedError: a dtype outside the list above.

    Example::

        >>> myops.relu(torch.tensor([-1., 0., 2.]))
        tensor([0., 0., 2.])
    """
    r = _fast_path(_fast.relu, self)
    return _ops.relu.default(self) if r is NotImplemented else r


def gelu(self: Tensor, approximate: str = "none") -> Tensor:
    """:func:`torch.nn.functional.gelu`, elementwise. Differentiable.

    Args:
        self: a float16, bfloat16, float32 or float64 tensor.
        approximate: ``'none'`` (the erf form) or ``'tanh'`` (the tanh approximation).

    Returns:
        A tensor of ``self``'s shape (torch's strides) and dtype.

    Raises:
        NotImplementedError: a non-floating dtype.
        RuntimeError: another ``approximate``.

    Example::

        >>> myops.gelu(torch.tensor([-1., 0., 1.]))
        tensor([-0.1587,  0.0000,  0.8413])
        >>> myops.gelu(torch.tensor([-1., 0., 1.]), approximate="tanh")
        tensor([-0.1588,  0.0000,  0.8412])
    """
    r = _fast_path(_fast.gelu, self) if approximate == "none" else _fast_path(_fast.gelu, self, approximate)
    return _ops.gelu.default(self, approximate=approximate) if r is NotImplemented else r


def silu(self: Tensor) -> Tensor:
    """:func:`torch.nn.functional.silu`, elementwise: ``x * sigmoid(x)``. Differentiable.

    Args:
        self: a float16, bfloat16, float32 or float64 tensor.

    Returns:
        A tensor of ``self``'s shape (torch's strides) and dtype.

    Raises:
        NotImplementedError: a non-floating dtype.

    Example::

        >>> myops.silu(torch.tensor([-1., 0., 1.]))
        tensor([-0.2689,  0.0000,  0.7311])
    """
    r = _fast_path(_fast.silu, self)
    return _ops.silu.default(self) if r is NotImplemented else r


def sigmoid(self: Tensor) -> Tensor:
    """:func:`torch.sigmoid`, elementwise: ``1 / (1 + exp(-x))``. Differentiable.

    Args:
        self: a tensor of any shape and strides;
            every myops dtype (bool, integers, float16, bfloat16, float32, float64).

    Returns:
        A tensor of ``self``'s shape (torch's strides), the input's floating dtype; bool and
        integer inputs give the default float dtype.

    Raises:
        NotImplementedError: a dtype outside the list above.

    Example::

        >>> myops.sigmoid(torch.tensor([0, 2]))
        tensor([0.5000, 0.8808])
    """
    r = _fast_path(_fast.sigmoid, self)
    return _ops.sigmoid.default(self) if r is NotImplemented else r


def cast(self: Tensor, dtype: torch.dtype) -> Tensor:
    """``self.to(dtype)`` as a new tensor (always a copy, even to the same dtype), keeping the
    layout as ``.to`` does (``torch.ops.aten._to_copy``). Differentiable between floating dtypes.

    Args:
        self: a tensor of any myops dtype (bool, integers, float16, bfloat16, float32, float64).
        dtype: the result dtype, one of those.

    Returns:
        A tensor of ``self``'s shape and ``.to``'s strides, of dtype ``dtype``; float to integer
        truncates toward zero, as torch.

    Raises:
        NotImplementedError: a ``self`` dtype outside the list above.
        RuntimeError: a ``dtype`` outside it.

    Example::

        >>> myops.cast(torch.tensor([1.5, -2.7]), torch.int32)
        tensor([ 1, -2], dtype=torch.int32)
    """
    r = _fast_path(_fast.cast, self, dtype)
    return _ops.cast.default(self, dtype) if r is NotImplemented else r


def abs(self: Tensor) -> Tensor:
    """:func:`torch.abs`, elementwise: ``|x|``; -0.0 gives 0.0, NaN stays NaN (its bits kept).
    Differentiable.

    Args:
        self: a tensor of any shape and strides;
            integers, float16, bfloat16, float32, float64 (not bool).

    Returns:
        A tensor of ``self``'s shape (torch's strides), the input's dtype.

    Raises:
        NotImplementedError: a dtype outside the list above.

    Example::

        >>> myops.abs(torch.tensor([-2, 0, 3]))
        tensor([2, 0, 3])
    """
    r = _fast_path(_fast.abs, self)
    return _ops.abs.default(self) if r is NotImplemented else r


def neg(self: Tensor) -> Tensor:
    """:func:`torch.neg`, elementwise: ``-x`` (integers wrap around, as in torch).
    Differentiable.

    Args:
        self: a tensor of any shape and strides;
            integers, float16, bfloat16, float32, float64 (not bool).

    Returns:
        A tensor of ``self``'s shape (torch's strides), the input's dtype.

    Raises:
        NotImplementedError: a dtype outside the list above.

    Example::

        >>> myops.neg(torch.tensor([-2., 0., 3.]))
        tensor([ 2., -0., -3.])
    """
    r = _fast_path(_fast.neg, self)
    return _ops.neg.default(self) if r is NotImplemented else r


def exp(self: Tensor) -> Tensor:
    """:func:`torch.exp`, elementwise: ``e ** x``. Differentiable.

    Args:
        self: a tensor of any shape and strides;
            every myops dtype (bool, integers, float16, bfloat16, float32, float64).

    Returns:
        A tensor of ``self``'s shape (torch's strides), the input's floating dtype; bool and
        integer inputs give the default float dtype.

    Raises:
        NotImplementedError: a dtype outside the list above.

    Example::

        >>> myops.exp(torch.tensor([0., 1.]))
        tensor([1.0000, 2.7183])
    """
    r = _fast_path(_fast.exp, self)
    return _ops.exp.default(self) if r is NotImplemented else r


def log(self: Tensor) -> Tensor:
    """:func:`torch.log`, elementwise: the natural logarithm, ``-inf`` at 0 and NaN below 0.
    Differentiable.

    Args:
        self: a tensor of any shape and strides;
            every myops dtype (bool, integers, float16, bfloat16, float32, float64).

    Returns:
        A tensor of ``self``'s shape (torch's strides), the input's floating dtype; bool and
        integer inputs give the default float dtype.

    Raises:
        NotImplementedError: a dtype outside the list above.

    Example::

        >>> myops.log(torch.tensor([1., 4.]))
        tensor([0.0000, 1.3863])
    """
    r = _fast_path(_fast.log, self)
    return _ops.log.default(self) if r is NotImplemented else r


def sqrt(self: Tensor) -> Tensor:
    """:func:`torch.sqrt`, elementwise: the square root, NaN below 0 (-0.0 gives -0.0).
    Differentiable.

    Args:
        self: a tensor of any shape and strides;
            every myops dtype (bool, integers, float16, bfloat16, float32, float64).

    Returns:
        A tensor of ``self``'s shape (torch's strides), the input's floating dtype; bool and
        integer inputs give the default float dtype.

    Raises:
        NotImplementedError: a dtype outside the list above.

    Example::

        >>> myops.sqrt(torch.tensor([4, 9]))
        tensor([2., 3.])
    """
    r = _fast_path(_fast.sqrt, self)
    return _ops.sqrt.default(self) if r is NotImplemented else r


def rsqrt(self: Tensor) -> Tensor:
    """:func:`torch.rsqrt`, elementwise: ``1 / sqrt(x)``: ``inf`` at 0, NaN below 0. Differentiable.

    Args:
        self: a tensor of any shape and strides;
            every myops dtype (bool, integers, float16, bfloat16, float32, float64).

    Returns:
        A tensor of ``self``'s shape (torch's strides), the input's floating dtype; bool and
        integer inputs give the default float dtype.

    Raises:
        NotImplementedError: a dtype outside the list above.

    Example::

        >>> myops.rsqrt(torch.tensor([4., 0.25]))
        tensor([0.5000, 2.0000])
    """
    r = _fast_path(_fast.rsqrt, self)
    return _ops.rsqrt.default(self) if r is NotImplemented else r


def tanh(self: Tensor) -> Tensor:
    """:func:`torch.tanh`, elementwise: the hyperbolic tangent. Differentiable.

    Args:
        self: a tensor of any shape and strides;
            every myops dtype (bool, integers, float16, bfloat16, float32, float64).

    Returns:
        A tensor of ``self``'s shape (torch's strides), the input's floating dtype; bool and
        integer inputs give the default float dtype.

    Raises:
        NotImplementedError: a dtype outside the list above.

    Example::

        >>> myops.tanh(torch.tensor([0., 1.]))
        tensor([0.0000, 0.7616])
    """
    r = _fast_path(_fast.tanh, self)
    return _ops.tanh.default(self) if r is NotImplemented else r
