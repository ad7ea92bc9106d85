"""Fake (meta) kernels: output shape, dtype and strides without computing anything, so every
op works under torch.compile, torch.export and FakeTensor. This is the module the C++ library
names for them (``set_python_module("myops._fake")``, csrc/core/schema.h): importing it imports
every family's fake kernels and registers them here, as torch requires. Each family's fakes sit
at the end of its own module (``_nonzero.py``, ``_nms.py``, ``_roi_align.py``,
``_detection_decode.py``, ``_bounded_layers.py``, ``_max_pool2d_add.py``, ``_diagonal.py``); the
elementwise ones are below. The checks and shape rules are the kernels' own: each family's control op
(torch.ops.myops._<family>_meta, csrc/<family>/schema.cpp) runs its C++ rules on the fake
tensors' (symbolic) sizes (``_rules`` in _common.py), as _ew_out_strides does for the
elementwise layout. The elementwise dtype rules are said here, from the op table."""

from typing import Set

import torch
from torch.library import register_fake

from . import _bounded_layers, _detection_decode, _diagonal, _max_pool2d_add, _nms, _nonzero, _roi_align  # noqa: F401
from ._common import _FAKE_KERNELS
from ._table import DTYPES, EW_OPS

for _qualname, _fn in _FAKE_KERNELS:  # each family's fake kernels (_fake_kernel, _common.py)
    register_fake(_qualname, _fn)


# ---- elementwise ----------------------------------------------------------------------------

# The op table (csrc/include/myops/op_table.h): the dtype sets, and the ops whose fake kernel is
# generic (_register_generic_fakes, at the end of this section)
_EW_ALL = DTYPES["All"]
_EW_CUSTOM: Set[str] = set()  # the ops with a fake kernel of their own (below)


def _ew_fake(qualname):
    _EW_CUSTOM.add(qualname)
    return register_fake("myops::" + qualname)


def _ew_dtype(t, allowed, op, arg, not_implemented=True):
    # NotImplementedError as the C++ check (core/checks.h), RuntimeError for where's condition
    (torch._check_not_implemented if not_implemented else torch._check)(
        t.dtype in allowed,
        lambda: (
            f"myops.{op}: argument '{arg}' must have dtype in {{{', '.join(str(d) for d in allowed)}}}, got {t.dtype}"
        ),
    )


def _ew_device(op, ts, names):
    # a 0-d CPU tensor may accompany tensors on another device (as in the C++ kernels)
    main = [(t, n) for t, n in zip(ts, names) if not (t.dim() == 0 and t.device.type == "cpu")]
    if not main:
        return ts[0].device
    t0, n0 = main[0]
    for t, n in main[1:]:
        torch._check(
            t.device == t0.device,
            lambda: (
                f"myops.{op}: expected all tensors on the same device, got '{n0}' on {t0.device} "
                f"and '{n}' on {t.device}"
            ),
        )
    return t0.device


def _ew_broadcast(op, ts, names):
    nd = max(t.dim() for t in ts)
    out = [1] * nd
    for t in ts:
        off = nd - t.dim()
        for i, b in enumerate(t.shape):
            a = out[off + i]
            if b == 1:
                continue
            if a == 1:
                out[off + i] = b
                continue
            got = ", ".join(f"'{n}' {list(x.shape)}" for x, n in zip(ts, names))
            torch._check(a == b, lambda: f"myops.{op}: shapes do not broadcast: {got}")
    return out


# The layout rules are the kernels' own (csrc/core/output_strides.h), read through control ops
# on the (symbolic) sizes and strides. torch's own rules differ: FakeTensor's empty_like follows
# torch._prims_common's, which orders size-1 and empty dims otherwise.
def _ew_preserve_strides(t):
    """Strides of ``t.to(other_dtype)`` (memory_format=preserve), as the kernels give them."""
    return torch.ops.myops._ew_preserve_strides(t.shape, t.stride())


def _ew_out_strides(shape, ops):
    """The output strides the kernels give (TensorIterator's rule) for inputs broadcast to
    `shape`; `ops` is a list of (sizes, strides) of the inputs."""
    return torch.ops.myops._ew_out_strides(
        shape, [s for sizes, _ in ops for s in sizes], [s for _, st in ops for s in st], [len(sz) for sz, _ in ops]
    )


def _ew_result_type(*ts):
    """at::result_type over tensors: dimensioned operands outrank 0-d ones of the same category."""
    dim = zero = None
    for t in ts:
        if t.dim() == 0:
            zero = t.dtype if zero is None else torch.promote_types(zero, t.dtype)
        else:
            dim = t.dtype if dim is None else torch.promote_types(dim, t.dtype)
    if dim is None:
        return zero
    if zero is None:
        return dim
    if dim.is_floating_point:
        return dim
    if dim == torch.bool or zero.is_floating_point:
        return torch.promote_types(dim, zero)
    return dim


def _ew_out(op, ins, in_dtypes, out_dtype, names, cast_first=None):
    device = _ew_device(op, ins, names)
    shape = _ew_broadcast(op, ins, names)
    if cast_first is None:
        cast_first = device.type == "cpu"
    ops = []
    for t, dt in zip(ins, in_dtypes):
        folded = t.device.type == "cpu" and t.numel() == 1
        if cast_first and not folded and t.dtype != dt:
            ops.append((list(t.shape), _ew_preserve_strides(t)))
        else:
            ops.append((list(t.shape), list(t.stride())))
    return torch.empty_strided(shape, _ew_out_strides(shape, ops), dtype=out_dtype, device=device)


def _ew_unary(op, self, out_dtype):
    return _ew_out(op, [self], [out_dtype], out_dtype, ["self"], cast_first=self.device.type == "cpu")


@_ew_fake("gelu")
def _gelu_fake(self, *, approximate="none"):
    _ew_dtype(self, EW_OPS["gelu"].accepted, "gelu", "self")
    torch._check(
        approximate in ("none", "tanh"),
        lambda: f"myops.gelu: argument 'approximate' must be 'none' or 'tanh', got '{approximate}'",
    )
    return _ew_unary("gelu", self, self.dtype)


@_ew_fake("cast")
def _cast_fake(self, dtype):
    _ew_dtype(self, _EW_ALL, "cast", "self")
    torch._check(dtype in _EW_ALL, lambda: f"myops.cast: argument 'dtype' must be one of {_EW_ALL}, got {dtype}")
    return torch.empty_strided(self.shape, _ew_preserve_strides(self), dtype=dtype, device=self.device)


def _ew_binary_dtype(op, self, other):
    _ew_dtype(self, _EW_ALL, op, "self")
    _ew_dtype(other, _EW_ALL, op, "other")
    return _ew_result_type(self, other)


def _ew_check_alpha(op, dt, alpha):
    torch._check(
        not isinstance(alpha, bool) or dt == torch.bool,
        lambda: f"myops.{op}: argument 'alpha' may be a bool only for a bool result, got result dtype {dt}",
    )
    torch._check(
        dt.is_floating_point or not isinstance(alpha, float),
        lambda: (
            f"myops.{op}: argument 'alpha' must not be a floating point number for integral inputs "
            f"(result dtype {dt}), got {alpha}"
        ),
    )


def _ew_binary(op, self, other, dt):
    return _ew_out(op, [self, other], [dt, dt], dt, ["self", "other"])


@_ew_fake("add")
def _add_fake(self, other, *, alpha=1):
    dt = _ew_binary_dtype("add", self, other)
    _ew_check_alpha("add", dt, alpha)
    return _ew_binary("add", self, other, dt)


@_ew_fake("sub")
def _sub_fake(self, other, *, alpha=1):
    dt = _ew_binary_dtype("sub", self, other)
    torch._check(
        self.dtype != torch.bool and other.dtype != torch.bool,
        lambda: (
            f"myops.sub: arguments 'self' and 'other' must not be bool tensors (use logical_xor / "
            f"logical_not), got {self.dtype} and {other.dtype}"
        ),
    )
    _ew_check_alpha("sub", dt, alpha)
    return _ew_binary("sub", self, other, dt)


def _ew_not_complex(op, self, other):
    torch._check(
        not self.dtype.is_complex and not other.dtype.is_complex,
        lambda: (
            f"myops.{op}: not implemented for complex tensors (arguments 'self' and 'other'), got "
            f"{self.dtype} and {other.dtype}"
        ),
    )


@_ew_fake("maximum")
def _maximum_fake(self, other):
    _ew_not_complex("maximum", self, other)
    return _ew_binary("maximum", self, other, _ew_binary_dtype("maximum", self, other))


@_ew_fake("minimum")
def _minimum_fake(self, other):
    _ew_not_complex("minimum", self, other)
    return _ew_binary("minimum", self, other, _ew_binary_dtype("minimum", self, other))


@_ew_fake("where")
def _where_fake(condition, self, other):
    _ew_dtype(condition, (torch.bool, torch.uint8), "where", "condition", not_implemented=False)
    _ew_dtype(self, _EW_ALL, "where", "self")
    _ew_dtype(other, _EW_ALL, "where", "other")
    dt = _ew_result_type(self, other)
    return _ew_out(
        "where", [condition, self, other], [torch.bool, dt, dt], dt, ["condition", "self", "other"], cast_first=True
    )


def _ew_ternary(op, a, b, c, names):
    for t, n in zip((a, b, c), names):
        _ew_dtype(t, _EW_ALL, op, n)
    dt = _ew_result_type(a, b, c)
    if dt == torch.bool:
        raise NotImplementedError(f"myops.{op}: not implemented for a bool result")
    return _ew_out(op, [a, b, c], [dt, dt, dt], dt, names)


@_ew_fake("addcmul")
def _addcmul_fake(self, tensor1, tensor2, *, value=1):
    return _ew_ternary("addcmul", self, tensor1, tensor2, ["self", "tensor1", "tensor2"])


@_ew_fake("clamp")
def _clamp_fake(self, min, max):
    return _ew_ternary("clamp", self, min, max, ["self", "min", "max"])


@_ew_fake("clamp.Scalar")
def _clamp_scalar_fake(self, min=None, max=None):
    # elementwise/elementwise_ops.h: the numbers (a missing one +-inf or the integer limit) become
    # 0-d CPU tensors of the result dtype
    if min is None and max is None:
        raise RuntimeError("myops.clamp: at least one of 'min' and 'max' must not be None")
    dt = self.dtype
    for v in (min, max):
        if v is not None and not dt.is_floating_point:  # a floating self keeps its dtype
            dt = torch.result_type(torch.empty((), dtype=dt, device="meta"), v)
    w = torch.empty((), dtype=dt)
    return _ew_ternary("clamp", self, w, w, ["self", "min", "max"])


def _generic_unary_fake(op):
    # rule Same: the operand's dtype, one of the kernel's; IntToFloat: any dtype, an integral
    # one giving the default float dtype
    def fake(self):
        _ew_dtype(self, op.accepted, op.fn, "self")
        same = op.rule == "Same" or self.dtype.is_floating_point
        return _ew_unary(op.fn, self, self.dtype if same else torch.get_default_dtype())

    return fake


def _generic_binary_fake(op):
    # rule Promote: torch.result_type; PromoteIntToFloat: an integral result is the default float
    def fake(self, other):
        _ew_dtype(self, op.accepted, op.fn, "self")
        _ew_dtype(other, op.accepted, op.fn, "other")
        dt = _ew_result_type(self, other)
        if op.rule == "PromoteIntToFloat" and not dt.is_floating_point:
            dt = torch.get_default_dtype()
        return _ew_binary(op.fn, self, other, dt)

    return fake


def _ew_number_dtype(op, t, tname, number, nname, allowed=_EW_ALL):
    # elementwise/elementwise_ops.h, number_dtype: at::result_type(tensor, number), a real number
    _ew_dtype(t, allowed, op, tname)
    torch._check_not_implemented(
        not isinstance(number, complex),
        lambda: f"myops.{op}: argument '{nname}' must be a real number (no complex results), got {number}",
    )
    return torch.result_type(t, number)


def _ew_with_number(op, t, number, number_first, dt):
    # the number is a 0-d CPU operand (folded into the kernel), first or second as in the call
    w = torch.empty((), dtype=torch.float64 if isinstance(number, float) else torch.int64)
    ins, names = ([w, t], ["self", "other"]) if number_first else ([t, w], ["self", "other"])
    return _ew_out(op, ins, [dt, dt], dt, names)


def _generic_number_fake(op, number_first, alpha):
    # rule PromoteNumber: at::result_type(tensor, number); PromoteNumberIntToFloat: an integral
    # result is the default float dtype; sub refuses bool operands; alpha checked as add's
    def compute(t, number, alpha_v):
        if op.name == "sub":
            torch._check_not_implemented(
                t.dtype != torch.bool and not isinstance(number, bool),
                lambda: "myops.sub: arguments 'self' and 'other' must not be bool",
            )
        names = ("other", "self") if number_first else ("self", "other")
        dt = _ew_number_dtype(op.name, t, names[0], number, names[1], op.accepted)
        if alpha:
            _ew_check_alpha(op.name, dt, alpha_v)
        if op.rule == "PromoteNumberIntToFloat" and not dt.is_floating_point:
            dt = torch.get_default_dtype()
        return _ew_with_number(op.name, t, number, number_first, dt)

    if number_first and alpha:
        return lambda self, other, *, alpha=1: compute(other, self, alpha)
    if number_first:
        return lambda self, other: compute(other, self, 1)
    if alpha:
        return lambda self, other, alpha=1: compute(self, other, alpha)
    return lambda self, other: compute(self, other, 1)


def _where_number_fake(number_first):
    def fake(condition, a, b):
        t, number = (b, a) if number_first else (a, b)
        _ew_dtype(condition, (torch.bool, torch.uint8), "where", "condition", not_implemented=False)
        dt = _ew_number_dtype(
            "where", t, "other" if number_first else "self", number, "self" if number_first else "other"
        )
        w = torch.empty((), dtype=dt)
        ins = [condition, w, t] if number_first else [condition, t, w]
        return _ew_out("where", ins, [torch.bool, dt, dt], dt, ["condition", "self", "other"], cast_first=True)

    return fake


_ew_fake("where.ScalarSelf")(_where_number_fake(True))
_ew_fake("where.ScalarOther")(_where_number_fake(False))


@_ew_fake("where.Scalar")
def _where_scalar_fake(condition, self, other):
    _ew_dtype(condition, (torch.bool, torch.uint8), "where", "condition", not_implemented=False)
    torch._check_not_implemented(
        not isinstance(self, complex) and not isinstance(other, complex),
        lambda: "myops.where: arguments 'self' and 'other' must be real numbers",
    )
    dt = torch.result_type(self, other)
    w = torch.empty((), dtype=dt)
    return _ew_out(
        "where", [condition, w, w], [torch.bool, dt, dt], dt, ["condition", "self", "other"], cast_first=True
    )


_GENERIC_FAKES = {
    "unary": _generic_unary_fake,
    "binary": _generic_binary_fake,
    "scalar": lambda op: _generic_number_fake(op, False, False),
    "scalar_alpha": lambda op: _generic_number_fake(op, False, True),
    "rscalar": lambda op: _generic_number_fake(op, True, False),
    "rscalar_alpha": lambda op: _generic_number_fake(op, True, True),
}


def _register_generic_fakes():
    for op in EW_OPS.values():
        if op.qualname in _EW_CUSTOM:
            continue
        if op.sig not in _GENERIC_FAKES:
            raise RuntimeError(
                f"myops: the op table's {op.qualname} needs a fake kernel of its own (signature {op.sig})"
            )
        register_fake("myops::" + op.qualname)(_GENERIC_FAKES[op.sig](op))


_register_generic_fakes()
