"""Binary and ternary elementwise ops (the op table's other rows): ``add``, ``sub``, ``mul``,
``div``, ``maximum``, ``minimum``, ``pow``, ``addcmul``, ``clamp`` and ``where``'s three-argument
form. A Python number operand takes the op's Scalar overloads, whose result dtype and range
checks are computed in C++ (``at::result_type(tensor, number)``), never here."""

from typing import Any, Callable, Optional, Union, cast

import torch
from torch import Tensor

from ._build_config import BUILD_CONFIG
from ._common import _ONE, _REAL, Number, _check_operand, _fast, _fast_path, _ops

__all__ = ["mul_scalar", "add", "sub", "mul", "div", "maximum", "minimum", "addcmul", "clamp", "pow"]

# torch 2.14 changed clamp's gradients; the C++ autograd follows the torch it was built against
_CLAMP_GRAD_SPLITS_TIES = tuple(int(p) for p in BUILD_CONFIG["torch_version"].split(".")[:2]) >= (2, 14)


def _ew_number(name: str, self: Union[Tensor, Number], other: Union[Tensor, Number], **kw: Number) -> Tensor:
    """Binary op ``name`` with a Python number on either side, as aten takes it: the op's Scalar
    overload (``name.Scalar``: the number second; ``name.ScalarSelf``: the number first). The
    result dtype, the number's conversion and its range checks are the overloads' (C++:
    at::result_type(tensor, number), a number being a wrapped number)."""
    packet = getattr(_ops, name)
    for arg, v in (("self", self), ("other", other)):
        _check_operand(name, arg, v)
    if isinstance(self, Tensor):
        return packet.Scalar(self, other, **kw)
    if isinstance(other, Tensor):
        return packet.ScalarSelf(self, other, **kw)
    raise TypeError(
        f"myops.{name}: at least one of 'self' and 'other' must be a Tensor, got "
        f"{type(self).__name__} and {type(other).__name__}"
    )


def mul_scalar(self: Tensor, other: Number) -> Tensor:
    """``self * other`` for a Python number ``other``: ``torch.mul(self, other)``.

    Kept for compatibility: the same as ``myops.mul(self, other)``, i.e.
    ``torch.ops.myops.mul.Scalar`` (``torch.ops.myops.mul_scalar`` remains as an alias of it).

    Args:
        self: a tensor of any myops dtype.
        other: a Python bool, int or float.

    Returns:
        A tensor of dtype ``torch.result_type(self, other)``.

    Raises:
        TypeError: ``other`` a tensor or not a number.
        RuntimeError: a number that does not fit the result dtype.

    Example::

        >>> myops.mul_scalar(torch.tensor([1, 2]), 3)
        tensor([3, 6])
    """
    r = _fast_path(_fast.mul_scalar, self, other)
    if r is not NotImplemented:
        return r
    if isinstance(other, Tensor):
        raise TypeError("myops.mul_scalar: argument 'other' must be a Python number, got Tensor")
    _check_operand("mul_scalar", "other", other)
    return _ops.mul.Scalar(self, other)


def add(self: Union[Tensor, Number], other: Union[Tensor, Number], *, alpha: Number = 1) -> Tensor:
    """:func:`torch.add`: ``self + alpha * other``, broadcasting, with torch's type promotion.
    Differentiable.

    Args:
        self: a tensor or a Python number (``add.ScalarSelf``).
        other: a tensor or a Python number (``add.Scalar``).
        alpha: the multiplier of ``other`` (a number; an integer one for integer results).

    Returns:
        A tensor of the broadcast shape (torch's strides) and dtype
        ``torch.result_type(self, other)``.

    Raises:
        RuntimeError: shapes that do not broadcast, a number that does not fit the result dtype.
        NotImplementedError: a dtype myops does not take (complex, uint16, ...).
        TypeError: an operand that is neither a tensor nor a number, or no tensor at all.

    Example::

        >>> myops.add(torch.tensor([1, 2]), torch.tensor([0.5, 4.]), alpha=2)
        tensor([ 2., 10.])
        >>> myops.add(torch.tensor([1, 2]), 1)
        tensor([2, 3])
    """
    if isinstance(other, Tensor):
        r = _fast_path(_fast.add, self, other) if alpha is _ONE else _fast_path(_fast.add, self, other, alpha)
    else:
        r = (
            _fast_path(_fast.add_scalar, self, other)
            if alpha is _ONE
            else _fast_path(_fast.add_scalar, self, other, alpha)
        )
    if r is not NotImplemented:
        return r
    if isinstance(self, Tensor) and isinstance(other, Tensor):
        return _ops.add.default(self, other, alpha=alpha)
    return _ew_number("add", self, other, alpha=alpha)


def sub(self: Union[Tensor, Number], other: Union[Tensor, Number], *, alpha: Number = 1) -> Tensor:
    """:func:`torch.sub`: ``self - alpha * other``, broadcasting, with torch's type promotion.
    Differentiable. Bool operands are refused, as torch refuses them.

    Args:
        self: a tensor or a Python number (``sub.ScalarSelf``).
        other: a tensor or a Python number (``sub.Scalar``).
        alpha: the multiplier of ``other``.

    Returns:
        A tensor of the broadcast shape (torch's strides) and dtype
        ``torch.result_type(self, other)``.

    Raises:
        RuntimeError: shapes that do not broadcast, a number that does not fit the result dtype.
        NotImplementedError: a dtype myops does not take (complex, uint16, ...).
        TypeError: an operand that is neither a tensor nor a number, or no tensor at all.

    Example::

        >>> myops.sub(10, torch.tensor([1, 2]))
        tensor([9, 8])
    """
    if isinstance(other, Tensor):
        r = _fast_path(_fast.sub, self, other) if alpha is _ONE else _fast_path(_fast.sub, self, other, alpha)
    else:
        r = (
            _fast_path(_fast.sub_scalar, self, other)
            if alpha is _ONE
            else _fast_path(_fast.sub_scalar, self, other, alpha)
        )
    if r is not NotImplemented:
        return r
    if isinstance(self, Tensor) and isinstance(other, Tensor):
        return _ops.sub.default(self, other, alpha=alpha)
    return _ew_number("sub", self, other, alpha=alpha)


def mul(self: Union[Tensor, Number], other: Union[Tensor, Number]) -> Tensor:
    """:func:`torch.mul`: ``self * other``, broadcasting, with torch's type promotion.
    Differentiable.

    Args:
        self: a tensor or a Python number (``mul.ScalarSelf``).
        other: a tensor or a Python number (``mul.Scalar``).

    Returns:
        A tensor of the broadcast shape (torch's strides) and dtype
        ``torch.result_type(self, other)``.

    Raises:
        RuntimeError: shapes that do not broadcast, a number that does not fit the result dtype.
        NotImplementedError: a dtype myops does not take (complex, uint16, ...).
        TypeError: an operand that is neither a tensor nor a number, or no tensor at all.

    Example::

        >>> myops.mul(torch.tensor([1, 2]), 2.5)
        tensor([2.5000, 5.0000])
    """
    r = _fast_path(_fast.mul, self, other) if isinstance(other, Tensor) else _fast_path(_fast.mul_scalar, self, other)
    if r is not NotImplemented:
        return r
    if isinstance(self, Tensor) and isinstance(other, Tensor):
        return _ops.mul.default(self, other)
    return _ew_number("mul", self, other)


def div(self: Union[Tensor, Number], other: Union[Tensor, Number]) -> Tensor:
    """:func:`torch.div` (true division, ``rounding_mode=None``), broadcasting. Differentiable.

    Args:
        self: a tensor or a Python number (``div.ScalarSelf``).
        other: a tensor or a Python number (``div.Scalar``).

    Returns:
        A tensor of the broadcast shape (torch's strides), of the promoted floating dtype:
        integer and bool operands give the default float dtype.

    Raises:
        RuntimeError: shapes that do not broadcast, a number that does not fit the result dtype.
        NotImplementedError: a dtype myops does not take (complex, uint16, ...).
        TypeError: an operand that is neither a tensor nor a number, or no tensor at all.

    Example::

        >>> myops.div(torch.tensor([1, 2]), torch.tensor([4, 8]))
        tensor([0.2500, 0.2500])
    """
    r = _fast_path(_fast.div, self, other) if isinstance(other, Tensor) else _fast_path(_fast.div_scalar, self, other)
    if r is not NotImplemented:
        return r
    if isinstance(self, Tensor) and isinstance(other, Tensor):
        return _ops.div.default(self, other)
    return _ew_number("div", self, other)


def _with_number(
    op: Any, self: Union[Tensor, Number], other: Union[Tensor, Number], run: Callable[[], Tensor]
) -> Tensor:
    """maximum / minimum beside a number: `run`, its clamp. An error clamp raises is reported by
    the op's own checks where they object (they name the op and its argument, #56); one they do
    not raise (the number's overflow) as it came. A bool number beside a bool tensor (a bool
    result, which clamp does not take, nor torch's) is the op with the number as a 0-d bool
    tensor: torch.maximum / minimum's value, logical or / and (#56)."""
    t, v = (self, other) if isinstance(self, Tensor) else (other, self)
    if isinstance(v, bool) and isinstance(t, Tensor) and t.dtype == torch.bool:
        n = torch.full((), v, dtype=torch.bool, device=t.device)
        return op(t, n) if t is self else op(n, t)
    try:
        return run()
    except (RuntimeError, NotImplementedError) as e:
        refused = e
    try:
        args = [v if isinstance(v, Tensor) else torch.tensor(v) for v in (self, other)]
    except (RuntimeError, ValueError, OverflowError):
        raise refused from None  # a number no tensor holds (past int64): the conversion's error
    op(*args)
    raise refused


def maximum(self: Union[Tensor, Number], other: Union[Tensor, Number]) -> Tensor:
    """:func:`torch.maximum`: the elementwise max, NaN in either operand gives NaN.
    Differentiable (ties split the gradient, as torch).

    Args:
        self: a tensor, or a Python number beside a tensor ``other``.
        other: a tensor, or a Python number: then it is ``torch.clamp(self, min=other)``, values
            (NaN bits included) and gradient; a bool beside a bool tensor is taken as a 0-d bool
            tensor (clamp has no bool result).

    Returns:
        A tensor of the broadcast shape and dtype ``torch.result_type(self, other)``.

    Raises:
        RuntimeError: shapes that do not broadcast, a number that does not fit the result dtype.
        NotImplementedError: a dtype myops does not take (complex, uint16, ...).
        TypeError: an operand that is neither a tensor nor a number, or no tensor at all.

    Example::

        >>> myops.maximum(torch.tensor([0.5, 4.]), torch.tensor([1., float("nan")]))
        tensor([1., nan])
    """
    r = _fast_path(_fast.maximum, self, other)
    if r is not NotImplemented:
        return r
    if isinstance(self, Tensor) and isinstance(other, _REAL):
        return _with_number(_ops.maximum.default, self, other, lambda: clamp(self, min=other))
    if isinstance(other, Tensor) and isinstance(self, _REAL):
        return _with_number(_ops.maximum.default, self, other, lambda: clamp(other, min=self))
    return _ops.maximum.default(self, other)


def minimum(self: Union[Tensor, Number], other: Union[Tensor, Number]) -> Tensor:
    """:func:`torch.minimum`: the elementwise min, NaN in either operand gives NaN.
    Differentiable (ties split the gradient, as torch).

    Args:
        self: a tensor, or a Python number beside a tensor ``other``.
        other: a tensor, or a Python number: then it is ``torch.clamp(self, max=other)``, values
            (NaN bits included) and gradient; a bool beside a bool tensor is taken as a 0-d bool
            tensor (clamp has no bool result).

    Returns:
        A tensor of the broadcast shape and dtype ``torch.result_type(self, other)``.

    Raises:
        RuntimeError: shapes that do not broadcast, a number that does not fit the result dtype.
        NotImplementedError: a dtype myops does not take (complex, uint16, ...).
        TypeError: an operand that is neither a tensor nor a number, or no tensor at all.

    Example::

        >>> myops.minimum(torch.tensor([1, 2]), 1)
        tensor([1, 1])
    """
    r = _fast_path(_fast.minimum, self, other)
    if r is not NotImplemented:
        return r
    if isinstance(self, Tensor) and isinstance(other, _REAL):
        return _with_number(_ops.minimum.default, self, other, lambda: clamp(self, max=other))
    if isinstance(other, Tensor) and isinstance(self, _REAL):
        return _with_number(_ops.minimum.default, self, other, lambda: clamp(other, max=self))
    return _ops.minimum.default(self, other)


def _where_tensor(condition: Tensor, self: Union[Tensor, Number], other: Union[Tensor, Number]) -> Tensor:
    # the three-argument form of ``myops.where`` (defined with the nonzero family);
    # ``condition`` must be bool
    r = _fast_path(_fast.where, condition, self, other)
    if r is not NotImplemented:
        return r
    if not isinstance(condition, Tensor):
        raise TypeError(f"myops.where: argument 'condition' must be a Tensor, got {type(condition).__name__}")
    # the number forms are aten's: where.ScalarOther / ScalarSelf / Scalar (result dtype and
    # the number's checked conversion in C++)
    for arg, v in (("self", self), ("other", other)):
        _check_operand("where", arg, v)
    if isinstance(self, Tensor):
        if isinstance(other, Tensor):
            return _ops.where.default(condition, self, other)
        return _ops.where.ScalarOther(condition, self, other)
    if isinstance(other, Tensor):
        return _ops.where.ScalarSelf(condition, self, other)
    return _ops.where.Scalar(condition, self, other)


def addcmul(self: Tensor, tensor1: Tensor, tensor2: Tensor, *, value: Number = 1) -> Tensor:
    """:func:`torch.addcmul`: ``self + value * tensor1 * tensor2``, broadcasting all three.
    Differentiable.

    Args:
        self, tensor1, tensor2: tensors (no number form, as torch); not all bool.
        value: the multiplier of the product.

    Returns:
        A tensor of the broadcast shape and the promoted dtype of the three.

    Raises:
        TypeError: an operand that is not a tensor.
        RuntimeError: shapes that do not broadcast, a ``value`` that does not fit the result.
        NotImplementedError: a bool result, or a dtype myops does not take.

    Example::

        >>> myops.addcmul(torch.tensor([0.5, 4.]), torch.tensor([1, 2]), torch.tensor([0.5, 4.]), value=0.5)
        tensor([0.7500, 8.0000])
    """
    r = (
        _fast_path(_fast.addcmul, self, tensor1, tensor2)
        if value is _ONE
        else _fast_path(_fast.addcmul, self, tensor1, tensor2, value)
    )
    if r is not NotImplemented:
        return r
    for name, v in (("self", self), ("tensor1", tensor1), ("tensor2", tensor2)):
        if not isinstance(v, Tensor):  # torch's TypeError (no number form), not the schema's RuntimeError
            raise TypeError(f"myops.addcmul: argument '{name}' must be a Tensor, got {type(v).__name__}")
    return _ops.addcmul.default(self, tensor1, tensor2, value=value)


def clamp(
    self: Tensor, min: Optional[Union[Tensor, Number]] = None, max: Optional[Union[Tensor, Number]] = None
) -> Tensor:
    """:func:`torch.clamp`: ``min(max(self, min), max)``; NaN in any operand gives NaN.

    Gradients are torch's, for the torch myops was built against (they changed in torch 2.14):
    with number bounds (``torch.ops.myops.clamp.Scalar``) only ``self`` has one; with tensor
    bounds ties are split between ``self`` and the bound (torch >= 2.14). A number with a 0-d
    tensor bound that needs no gradient takes the number overload, as in torch; a number with any
    other tensor bound (torch: TypeError) is taken as a 0-d tensor bound.

    Args:
        self: a tensor.
        min: the lower bound, a tensor (broadcasting), a Python number or None.
        max: the upper bound, a tensor (broadcasting), a Python number or None.

    Returns:
        A tensor of the broadcast shape and the promoted dtype of ``self`` and the bounds.

    Raises:
        RuntimeError: both bounds None, shapes that do not broadcast, a number bound that does not
            fit the result dtype (torch's overflow error).
        TypeError: ``self`` not a tensor, a bound neither a tensor, None nor a real number.

    Example::

        >>> myops.clamp(torch.tensor([-2., 0.5, 3.]), -1, 1)
        tensor([-1.0000,  0.5000,  1.0000])
        >>> myops.clamp(torch.tensor([-2., 0.5, 3.]), max=torch.tensor(0.))
        tensor([-2.,  0.,  0.])
    """
    if isinstance(min, Tensor) or isinstance(max, Tensor):
        r = _fast_path(_fast.clamp, self, min, max)
    elif min is not None or max is not None:
        r = _fast_path(_fast.clamp_scalar, self, min, max)  # number bounds: clamp.Scalar
    else:
        r = NotImplemented
    if r is not NotImplemented:
        return r
    if min is None and max is None:
        raise RuntimeError("myops.clamp: at least one of 'min' and 'max' must not be None")
    if not isinstance(self, Tensor):
        raise TypeError(f"myops.clamp: argument 'self' must be a Tensor, got {type(self).__name__}")
    for name, v in (("min", min), ("max", max)):
        if v is not None and not isinstance(v, (Tensor, bool, int, float, torch.SymInt, torch.SymFloat, torch.SymBool)):
            raise TypeError(
                f"myops.clamp: argument '{name}' must be a Tensor, None or a real Python number, got {type(v).__name__}"
            )
    if min is not None and max is not None and isinstance(min, Tensor) != isinstance(max, Tensor):
        # a number and a 0-d tensor that needs no gradient: torch.clamp's overload for numbers,
        # the tensor read as one (as torch's argument parser does; a weak number in promotion)
        if isinstance(min, Tensor) and min.dim() == 0 and not min.requires_grad:
            min = min.item()
        elif isinstance(max, Tensor) and max.dim() == 0 and not max.requires_grad:
            max = max.item()
    if not isinstance(min, Tensor) and not isinstance(max, Tensor):
        # number bounds: torch.clamp's Scalar overload (its own gradient, self only)
        return _ops.clamp.Scalar(self, min, max)
    if min is None or max is None:
        bound = cast(Tensor, max if min is None else min)  # a tensor: number bounds returned above
        if _CLAMP_GRAD_SPLITS_TIES:  # torch >= 2.14: one tensor bound is maximum / minimum
            return minimum(self, bound) if min is None else maximum(self, bound)
        dt = torch.result_type(self, bound)
        if not dt.is_floating_point:  # no gradient: the values are maximum's / minimum's
            return minimum(self, bound) if min is None else maximum(self, bound)
        # torch <= 2.13: clamp_max.Tensor's gradient is clamp.Tensor's with min = -inf (and
        # clamp_min's with max = +inf, except for a bound of +inf itself, which gets none here)
        inf = torch.tensor(float("inf"), dtype=dt)
        return _ops.clamp.default(self, -inf, bound) if min is None else _ops.clamp.default(self, bound, inf)
    if isinstance(min, Tensor) and isinstance(max, Tensor):
        return _ops.clamp.default(self, min, max)
    # a number and a dimensioned tensor bound (or one that needs a gradient): clamp.Tensor, the
    # number a 0-d tensor bound of torch.result_type(self, bound, number), made by where.ScalarOther
    # (aten's promotion for a number beside the 0-d result type, its checked conversion)
    bound = cast(Tensor, min if isinstance(min, Tensor) else max)  # the other is a number
    like = torch.empty((), dtype=torch.result_type(self, bound))
    try:
        lo, hi = (
            v if isinstance(v, Tensor) else _ops.where.ScalarOther(torch.tensor(False), like, v) for v in (min, max)
        )
    except (RuntimeError, NotImplementedError) as e:
        refused = e
    else:
        return _ops.clamp.default(self, lo, hi)
    # the number's conversion was refused (a complex dtype, say): clamp's own checks name clamp and
    # the argument at fault; an error they do not raise (the number's overflow) is raised as it came
    _ops.clamp.default(self, bound, bound)
    raise refused


def pow(self: Tensor, exponent: Union[Tensor, Number]) -> Tensor:
    """:func:`torch.pow` on floating tensors. Differentiable. Defined on a positive base (a
    negative base with a fractional exponent gives NaN, as in torch).

    Args:
        self: a float16, bfloat16, float32 or float64 tensor.
        exponent: a floating tensor (broadcasting, type promotion) or a Python number
            (``pow.Scalar``: the result keeps ``self``'s dtype).

    Returns:
        A tensor of the broadcast shape and dtype ``torch.result_type(self, exponent)``.

    Raises:
        NotImplementedError: a non-floating ``self`` or tensor ``exponent``.
        RuntimeError: shapes that do not broadcast, an ``exponent`` that is not a number.
        TypeError: a ``self`` that is not a tensor (a number base).

    Example::

        >>> myops.pow(torch.tensor([2., 3.]), 2)
        tensor([4., 9.])
        >>> myops.pow(torch.tensor([4., 9.]), torch.tensor([0.5, 2.]))
        tensor([ 2., 81.])
    """
    if isinstance(exponent, Tensor):
        r = _fast_path(_fast.pow, self, exponent)
        if r is NotImplemented:
            _check_pow_base(self)
            r = _ops.pow.default(self, exponent)
        return r
    r = _fast_path(_fast.pow_scalar, self, exponent)
    if r is NotImplemented:
        _check_pow_base(self)
        r = _ops.pow.Scalar(self, exponent)
    return r


def _check_pow_base(self: object) -> None:
    """torch.pow(number, tensor) has no myops form: torch's TypeError for an argument of the
    wrong type, naming pow (the schema's own error named the schema, #56)."""
    if not isinstance(self, Tensor):
        raise TypeError(
            f"myops.pow: argument 'self' must be a Tensor (myops.pow takes no number base), got {type(self).__name__}"
        )
