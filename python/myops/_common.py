"""What every family module of the Python API shares: the fast path, the op namespace and the
argument checks that torch's argument parser makes (its exception types).

The fast path: for the common call forms (plain tensors, default options) a wrapper first tries
the op's direct entry point in ``myops._C`` (csrc/python/fast.cpp), the same dispatcher call
without ``torch.ops``' Python-side argument matching, which costs more than a small op itself.
That entry point returns NotImplemented for anything else (tensor subclasses, FakeTensor, an
active ``__torch_function__`` mode), and under torch.compile the wrappers go straight to
``torch.ops.myops``, so both paths behave the same. :func:`_fast_path` is that rule, written once.
"""

from typing import Any, Callable, List, Tuple, Union

import torch
from torch import Tensor
from torch.utils._python_dispatch import _disable_current_modes

from . import _C as _fast  # noqa: F401  (the family modules import it from here)

# True while TorchDynamo traces a wrapper: the wrappers then call torch.ops.myops directly (the
# direct entry points are C functions it cannot trace). Other tracers pass FakeTensors or
# tensor subclasses, which the entry points hand back with NotImplemented.
_is_compiling = getattr(torch.compiler, "is_dynamo_compiling", torch.compiler.is_compiling)

_ops = torch.ops.myops
_ONE = 1  # `alpha is _ONE`: the default (CPython shares the small int 1), not True or 1.0

#: A Python number operand, as torch's argument parser takes one (SymInt / SymFloat too).
Number = Union[bool, int, float]

_INT64_MAX = 2**63 - 1
_REAL = (bool, int, float)
# what torch's argument parser takes for a Tensor-or-number operand
_OPERAND = (Tensor, bool, int, float, complex, torch.SymInt, torch.SymFloat, torch.SymBool)


def _fast_path(entry: Callable[..., Any], *args: Any) -> Any:
    """``entry(*args)``, an op's direct entry point ``myops._C.<fn>``, or NotImplemented while
    TorchDynamo traces (it cannot trace a C function). The entry point itself returns
    NotImplemented for any call form it does not take; the wrapper then calls
    ``torch.ops.myops``: the same dispatcher call."""
    if _is_compiling():
        return NotImplemented
    return entry(*args)


def _natural(x: Number) -> torch.dtype:
    """The dtype torch gives a Python number: bool, int64 (uint64 for an int in [2^63, 2^64),
    as c10::Scalar holds it) or float64."""
    if isinstance(x, bool):
        return torch.bool
    if isinstance(x, int):
        return torch.uint64 if x > _INT64_MAX else torch.int64
    return torch.float64


def _check_operand(op: str, name: str, v: object) -> None:
    """TypeError (torch's) for an operand that is neither a Tensor nor a number."""
    if not isinstance(v, _OPERAND):
        raise TypeError(f"myops.{op}: argument '{name}' must be a Tensor or a Python number, got {type(v).__name__}")


def _check_int_args(op: str, **args: object) -> None:
    """int arguments as torch's argument parser takes them: TypeError for a bool, a float or
    another non-int, ValueError for an int outside int64 (SymInts and tensors pass on)."""
    for name, v in args.items():
        if isinstance(v, int) and not isinstance(v, bool):
            if not -_INT64_MAX - 1 <= v <= _INT64_MAX:
                raise ValueError(
                    f"myops.{op}: argument '{name}' must fit int64 (Overflow when unpacking long long), got {v}"
                )
        elif isinstance(v, (bool, float, complex, str, type(None))):
            raise TypeError(f"myops.{op}: argument '{name}' must be int, not {type(v).__name__}")


# ---- what the fake kernels share (each family's at the end of its module; myops._fake) ----


def _info(t):
    """A tensor as the C++ checks read it (TensorInfo, csrc/core/checks.h)."""
    return t.shape, t.stride(), t.dtype, t.device


_NO_INFO = (None,) * 4  # an absent optional tensor


def _rules(family, *args):
    """Runs the control op myops::_<family>_meta (the family's C++ checks and shape rule) outside
    the tracing modes: no graph node, and a failed check raises the kernel's exception as it is
    (FakeTensorMode would turn a NotImplementedError into UnsupportedOperatorException)."""
    with _disable_current_modes():
        return getattr(torch.ops.myops, f"_{family}_meta")(*args)


# (op name, fake kernel) of every family module, in import order: registered by myops._fake
_FAKE_KERNELS: List[Tuple[str, Callable[..., Any]]] = []


def _fake_kernel(qualname: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Marks a family's fake kernel for ``qualname``. torch accepts a fake kernel of an op
    defined in C++ only from the Python module that the op's library names
    (``set_python_module("myops._fake")``, csrc/core/schema.h), so myops._fake registers them."""

    def collect(fn: Callable[..., Any]) -> Callable[..., Any]:
        _FAKE_KERNELS.append((qualname, fn))
        return fn

    return collect
