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

Number = Union[bool, int, float]


def _ew_wrap(x: Union[Tensor, Number], like: Tensor) -> Tensor:
    """A Python number as a 0-d CPU tensor (folded into the kernel as a scalar on any device)
    that keeps PyTorch's promotion for Python scalars: ``torch.result_type(like, x)``. Beside a
    dimensioned tensor the number keeps its natural dtype (int64 / float64 / bool) whenever
    that promotes the same way, so the kernel sees its exact value, as PyTorch's kernels do;
    otherwise it is stored in the result dtype."""
    if isinstance(x, Tensor):
        return x
    if not isinstance(x, (bool, int, float)):
        raise TypeError(f"myops: expected a Tensor or a real Python number, got {type(x).__name__}")
    natural = torch.bool if isinstance(x, bool) else torch.int64 if isinstance(x, int) else torch.float64
    t = torch.tensor(x, dtype=natural)
    rt = torch.result_type(like, x)
    if rt == natural or (like.dim() > 0 and torch.result_type(like, t) == rt):
        return t
    return t.to(rt)


def _ew_pair(self: Union[Tensor, Number], other: Union[Tensor, Number], commutative: bool = False):
    """Tensor operands for a binary op; a Python number as `self` of a commutative op is moved
    second, as Python's reflected operators (``2 * x`` is ``x.__rmul__(2)``) do in PyTorch."""
    if isinstance(self, Tensor):
        return self, _ew_wrap(other, self)
    if isinstance(other, Tensor):
        if commutative:
            return other, _ew_wrap(self, other)
        return _ew_wrap(self, other), other
    raise TypeError("myops: at least one of 'self' and 'other' must be a Tensor")


def relu(self: Tensor) -> Tensor:
    """``torch.relu``: max(x, 0); NaN stays NaN. Integer and float dtypes (not bool)."""
    return _ops.relu.default(self)


def gelu(self: Tensor, approximate: str = "none") -> Tensor:
    """``torch.nn.functional.gelu`` with ``approximate`` 'none' (erf) or 'tanh'; float dtypes."""
    return _ops.gelu.default(self, approximate=approximate)


def silu(self: Tensor) -> Tensor:
    """``torch.nn.functional.silu``: x * sigmoid(x); float dtypes."""
    return _ops.silu.default(self)


def sigmoid(self: Tensor) -> Tensor:
    """``torch.sigmoid``; integer and bool inputs give the default float dtype."""
    return _ops.sigmoid.default(self)


def mul_scalar(self: Tensor, other: Number) -> Tensor:
    """``self * other`` for a Python number ``other``; dtype ``torch.result_type(self, other)``."""
    return _ops.mul_scalar.default(self, other)


def cast(self: Tensor, dtype: torch.dtype) -> Tensor:
    """``self.to(dtype)`` as a new tensor (always a copy), keeping the layout as ``.to`` does."""
    return _ops.cast.default(self, dtype)


def add(self: Union[Tensor, Number], other: Union[Tensor, Number], *, alpha: Number = 1) -> Tensor:
    """``torch.add(self, other, alpha=alpha)`` with broadcasting and type promotion; either
    operand may be a Python number."""
    a, b = _ew_pair(self, other, commutative=isinstance(alpha, int) and not isinstance(alpha, bool) and alpha == 1)
    return _ops.add.default(a, b, alpha=alpha)


def sub(self: Union[Tensor, Number], other: Union[Tensor, Number], *, alpha: Number = 1) -> Tensor:
    """``torch.sub(self, other, alpha=alpha)`` with broadcasting and type promotion."""
    a, b = _ew_pair(self, other)
    return _ops.sub.default(a, b, alpha=alpha)


def mul(self: Union[Tensor, Number], other: Union[Tensor, Number]) -> Tensor:
    """``torch.mul`` with broadcasting and type promotion."""
    a, b = _ew_pair(self, other, commutative=True)
    return _ops.mul.default(a, b)


def div(self: Union[Tensor, Number], other: Union[Tensor, Number]) -> Tensor:
    """``torch.div`` (true division: integer inputs give the default float dtype)."""
    a, b = _ew_pair(self, other)
    return _ops.div.default(a, b)


def maximum(self: Union[Tensor, Number], other: Union[Tensor, Number]) -> Tensor:
    """``torch.maximum``: elementwise max, NaN in either operand gives NaN."""
    a, b = _ew_pair(self, other, commutative=True)
    return _ops.maximum.default(a, b)


def minimum(self: Union[Tensor, Number], other: Union[Tensor, Number]) -> Tensor:
    """``torch.minimum``: elementwise min, NaN in either operand gives NaN."""
    a, b = _ew_pair(self, other, commutative=True)
    return _ops.minimum.default(a, b)


def where_tensor(condition: Tensor, self: Union[Tensor, Number], other: Union[Tensor, Number]) -> Tensor:
    """``torch.where(condition, self, other)`` (the three-argument form of ``myops.where``);
    ``condition`` must be bool."""
    a, b = _ew_pair(self, other)
    return _ops.where.default(condition, a, b)


def addcmul(self: Tensor, tensor1: Tensor, tensor2: Tensor, *, value: Number = 1) -> Tensor:
    """``torch.addcmul``: self + value * tensor1 * tensor2, broadcasting all three."""
    return _ops.addcmul.default(self, tensor1, tensor2, value=value)


def clamp(self: Tensor, min: Union[Tensor, Number], max: Union[Tensor, Number]) -> Tensor:
    """``torch.clamp(self, min, max)`` with tensor (or number) bounds: min(max(self, min), max);
    NaN in any operand gives NaN."""
    return _ops.clamp.default(self, _ew_wrap(min, self), _ew_wrap(max, self))


__all__ += [
    "relu", "gelu", "silu", "sigmoid", "mul_scalar", "cast",
    "add", "sub", "mul", "div", "maximum", "minimum",
    "where_tensor", "addcmul", "clamp",
]


# =============================================================================================
# max_pool2d_add
# =============================================================================================

# (max_pool2d_add wrappers go here)


# =============================================================================================
# diagonal
# =============================================================================================

# (diagonal wrappers go here)
