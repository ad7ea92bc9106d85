"""The elementwise op table (csrc/include/myops/op_table.h) and the supported dtype sets
(csrc/core/dtypes.h) as the library hands them to Python (torch.ops.myops._ew_table(),
torch.ops.myops._dtypes()): the fake kernels and the test tables read them instead of
restating the op list, arities and dtype rules."""

from typing import Dict, NamedTuple, Tuple

import torch


def _dtype_sets() -> Dict[str, Tuple[torch.dtype, ...]]:
    sets = {}
    for row in torch.ops.myops._dtypes():
        column, names = row.split("|")
        sets[column] = tuple(getattr(torch, n) for n in names.split(","))
    return sets


# the DTYPES column: the storage dtypes a kernel runs on (csrc/core/dtypes.h, the one list of
# the supported dtypes; "All" is every dtype myops supports)
DTYPES: Dict[str, Tuple[torch.dtype, ...]] = _dtype_sets()
_ALL = DTYPES["All"]

# The DOMAIN column, by schema name (kept here until csrc/include/myops/op_table.h carries it):
# the ops defined on positive operands only (pow: a positive base), NaN elsewhere. Tests and
# benchmarks draw their inputs there (NaN takes paths in torch's kernels that a model never meets).
_POSITIVE_DOMAIN = ("log", "sqrt", "rsqrt", "pow")


class EwOp(NamedTuple):
    fn: str  # myops.<fn>, myops._C.<fn>
    name: str  # the schema name
    overload: str  # "" for the default overload
    kind: str  # the kernel (EwKind)
    arity: int  # tensor operands of the kernel
    dtypes: Tuple[torch.dtype, ...]  # the kernel's dtypes (DTYPES column)
    rule: str  # the result dtype rule (RULE column)
    sig: str  # the C++ signature (SIG column): unary, binary, ternary, alpha, value, ...
    aten: str  # the aten overload the drop-in can stand in for ("" none)
    dropin_default: bool  # routed by myops.enable() when no ops are named
    # "generic": the op has no code of its own (front end, autograd, drop-in generated from the
    # table); "own": it has (the SIG column's <sig>_own variants, and the signatures with no
    # generic entry)
    entry: str

    @property
    def qualname(self) -> str:
        return f"{self.name}.{self.overload}" if self.overload else self.name

    @property
    def packet(self):
        """torch.ops.myops.<name>.<overload or default>"""
        return getattr(getattr(torch.ops.myops, self.name), self.overload or "default")

    @property
    def domain(self) -> str:
        """Where the op is defined on its first operand: "positive" or "all"."""
        return "positive" if self.name in _POSITIVE_DOMAIN else "all"

    @property
    def accepted(self) -> Tuple[torch.dtype, ...]:
        """The operand dtypes the op takes: the kernel's, or every myops dtype for the rules that
        convert integral operands to a float result first (IntToFloat, PromoteIntToFloat)."""
        return _ALL if self.rule in ("IntToFloat", "PromoteIntToFloat", "PromoteNumberIntToFloat") else self.dtypes


def _load() -> Dict[str, EwOp]:
    ops = {}
    for row in torch.ops.myops._ew_table():
        fn, name, overload, kind, arity, dtypes, rule, sig, entry, aten, default = row.split("|")
        # <sig>_own (myops/op_signatures.h) is signature <sig> for an op with code of its own
        sig = sig[: -len("_own")] if sig.endswith("_own") else sig
        ops[fn] = EwOp(fn, name, overload, kind, int(arity), DTYPES[dtypes], rule, sig, aten, default == "1", entry)
    return ops


# fn -> EwOp, in table order
EW_OPS: Dict[str, EwOp] = _load()
