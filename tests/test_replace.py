"""The drop-in at the dispatcher: myops.enable() / disable() / replace_torch_ops() override
torch's own CPU/CUDA kernels of aten ops from C++ (csrc/dropin/aten_override.cpp).

Every routed call must give torch's result bit for bit (values, dtype, shape, strides), every
other call must reach torch's kernel, bad input must raise torch's own error, the dispatcher's
tables must change only at the first enable (and at the explicit unregister, which leaves
torch's kernels exactly as they were)."""

import contextlib
import itertools
import os
import re
import subprocess
import sys
import threading

import pytest
import torch
import torch.nn.functional as F
import torchvision  # noqa: F401  (loads torchvision::nms before the drop-in registers it)

import myops
from helpers import ALL_DTYPES, DEVICES, assert_same, cuda_only, outcome, rand, with_layout
from myops._table import EW_OPS
from myops.replace import ALL_OPS, DEFAULT_OPS, HAND_BACK_REASONS

# The op table's routable elementwise ops (its DROPIN column): the aten overload each stands in
# for, and the ones off by default (not bit-exact: a few ulp from torch, docs/exactness.md)
_ROUTED = [op for op in EW_OPS.values() if op.aten]
APPROXIMATE = {op.fn for op in _ROUTED if not op.dropin_default}

# Every aten overload the override registers, by myops op name.
OVERLOADS = {
    "nonzero": "aten::nonzero",
    "nonzero_static": "aten::nonzero_static",
    **{op.fn: "aten::" + op.aten for op in _ROUTED},
    "nms": "torchvision::nms",  # on the BackendSelect key (see aten_override.cpp)
}


def routing_now():
    """The ops routed now for this thread's calls: process-wide and by its open scopes."""
    return sorted(set(torch.ops.myops._override_enabled()) | set(torch.ops.myops._override_scoped()))


@pytest.fixture(autouse=True)
def nothing_left_enabled():
    """Each test starts and ends with nothing routed."""
    assert routing_now() == []
    yield
    myops.disable()
    assert routing_now() == [], "a test left an op routed"


def routing(mode, only=None):
    """The two forms of the drop-in: process-wide and thread-scoped."""
    return myops.enable(only) if mode == "enable" else myops.replace_torch_ops(only)


MODES = ["enable", "replace_torch_ops"]


def x4(device, dtype=torch.float32):
    return torch.randn(2, 3, 5, 7, device=device, dtype=dtype)


def assert_tree_same(actual, expected):
    if isinstance(expected, (tuple, list)):
        assert type(actual) is type(expected) and len(actual) == len(expected)
        for a, e in zip(actual, expected):
            assert_same(a, e)
    else:
        assert_same(actual, expected)


def _boxes(x):
    """50 (x1, y1, x2, y2) boxes made from x's values."""
    b = x.flatten()[:200].view(50, 4)
    return torch.cat([b[:, :2], b[:, :2] + b[:, 2:].abs()], 1)


# (op counted, call) — each call is evaluated once with and once without routing
CALLS = [
    ("nonzero", lambda x, y: torch.nonzero(x > 0.3)),
    ("nonzero", lambda x, y: (x > 0.3).nonzero()),
    ("nonzero", lambda x, y: torch.nonzero(x > 0.3, as_tuple=True)),
    ("nonzero", lambda x, y: torch.argwhere(x < 0)),  # composite: aten::nonzero underneath
    ("nonzero", lambda x, y: torch.where(x > 0)),  # ditto
    ("nonzero_static", lambda x, y: torch.nonzero_static(x > 0, size=17, fill_value=-5)),
    ("where", lambda x, y: torch.where(x > 0, x, y)),
    ("where", lambda x, y: torch.where(condition=x > 0, input=x, other=y)),
    ("where", lambda x, y: torch.where(x > 0, x, 0.0)),
    ("where", lambda x, y: torch.where(x > 0, 1, y.double())),
    ("relu", lambda x, y: torch.relu(x)),
    ("relu", lambda x, y: F.relu(x)),
    ("relu", lambda x, y: x.relu()),
    ("gelu", lambda x, y: F.gelu(x)),
    ("gelu", lambda x, y: F.gelu(x, approximate="tanh")),
    ("silu", lambda x, y: F.silu(x)),
    ("sigmoid", lambda x, y: torch.sigmoid(x)),
    ("abs", lambda x, y: torch.abs(x)),
    ("abs", lambda x, y: x.int().abs()),
    ("neg", lambda x, y: -x),
    ("neg", lambda x, y: torch.neg(x.half())),
    ("exp", lambda x, y: torch.exp(x)),
    ("log", lambda x, y: torch.log(x.abs())),
    ("sqrt", lambda x, y: torch.sqrt(x.abs())),
    ("sqrt", lambda x, y: torch.sqrt(x.int().abs())),
    ("rsqrt", lambda x, y: torch.rsqrt(x.double().abs() + 0.1)),
    ("tanh", lambda x, y: torch.tanh(x)),
    ("pow", lambda x, y: torch.pow(x.abs(), y)),
    ("pow_scalar", lambda x, y: torch.pow(x.abs(), 2.5)),
    ("pow_scalar", lambda x, y: x**3),
    ("add", lambda x, y: x + y),
    ("add", lambda x, y: torch.add(x, y[:1])),
    ("add", lambda x, y: x + 1.5),
    ("add", lambda x, y: 1.5 + x),
    ("add", lambda x, y: x.int() + y[0, 0].long()),
    ("add", lambda x, y: torch.add(x.long(), y.long(), alpha=3)),
    ("add", lambda x, y: torch.add(x, y, alpha=1.0)),
    ("sub", lambda x, y: torch.sub(x.short(), y.short(), alpha=2)),
    ("sub", lambda x, y: x - y),
    ("sub", lambda x, y: 2 - x.half()),
    # aten's Scalar overloads (C++ callers, decompositions): torch.ops.aten
    ("add_scalar", lambda x, y: torch.ops.aten.add.Scalar(x, 2.5)),
    ("add_scalar", lambda x, y: torch.ops.aten.add.Scalar(x.long(), 3, 2)),
    ("sub_scalar", lambda x, y: torch.ops.aten.sub.Scalar(x.half(), 0.1)),
    ("mul_scalar", lambda x, y: torch.ops.aten.mul.Scalar(x.bfloat16(), 0.1)),
    ("mul_scalar", lambda x, y: torch.ops.aten.mul.Scalar(x.int(), 1000)),
    ("div_scalar", lambda x, y: torch.ops.aten.div.Scalar(x, 3)),
    ("div_scalar", lambda x, y: torch.ops.aten.div.Scalar(x.int(), 2)),
    ("mul", lambda x, y: x * y[..., :1]),
    ("mul", lambda x, y: torch.mul(x, 3)),
    ("mul", lambda x, y: x.bfloat16() * 0.1),
    ("div", lambda x, y: x / (y.abs() + 1)),
    ("div", lambda x, y: x.int() / (y.int().abs() + 1)),
    ("maximum", lambda x, y: torch.maximum(x, y)),
    ("minimum", lambda x, y: torch.minimum(x, y.mT.contiguous().mT)),
    ("addcmul", lambda x, y: torch.addcmul(x, y, y, value=0.5)),
    ("addcmul", lambda x, y: torch.addcmul(x, y, x[:1])),
    ("clamp", lambda x, y: torch.clamp(x, -y.abs(), y.abs())),
    ("clamp", lambda x, y: x.clamp(y[0], y[1])),
    ("nms", lambda x, y: torchvision.ops.nms(_boxes(x), y.flatten()[:50], 0.3)),
    (
        "nms",
        lambda x, y: torchvision.ops.batched_nms(_boxes(x), y.flatten()[:50], (y.flatten()[50:100] > 0).long(), 0.3),
    ),
]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("name,call", CALLS, ids=[f"{n}-{i}" for i, (n, _) in enumerate(CALLS)])
def test_routed_equals_torch(mode, device, name, call):
    x, y = x4(device), x4(device)
    x0, y0 = x.clone(), y.clone()
    expected = call(x, y)
    only = DEFAULT_OPS | {name}
    with routing(mode, only) as stats:
        actual = call(x, y)
    assert stats.routed[name] >= 1, stats
    assert stats.handed_back == {}, stats
    if name in APPROXIMATE:
        # transcendental ops: within a few ulp of torch (docs/exactness.md), not bit-exact: off by default
        assert name not in DEFAULT_OPS
        torch.testing.assert_close(actual, expected, rtol=4e-7, atol=1e-6)
        assert actual.dtype == expected.dtype and actual.stride() == expected.stride()
    else:
        assert_tree_same(actual, expected)
    assert_same(x, x0)  # inputs untouched
    assert_same(y, y0)


def test_default_ops():
    assert set(ALL_OPS) == set(OVERLOADS)
    assert DEFAULT_OPS == set(ALL_OPS) - APPROXIMATE


# ---- exactness sweep: dtypes x layouts x broadcasting ------------------------------------------

BINARY = {
    "add": lambda a, b: a + b,
    "sub": lambda a, b: a - b,
    "mul": lambda a, b: a * b,
    "div": lambda a, b: a / b,
    "maximum": torch.maximum,
    "minimum": torch.minimum,
}
SHAPES = [((3, 4, 5, 6), (3, 4, 5, 6)), ((3, 4, 5, 6), (1, 4, 1, 1)), ((5, 6), (6,)), ((), (4, 5)), ((0, 3), (3,))]
LAYOUTS = ["contiguous", "transposed", "sliced", "expanded", "channels_last", "misaligned"]


def run_both(f):
    """f() with torch's kernels, then f() with every op routed; returns both results and the
    routing's stats. Errors are returned (type, message) to be compared."""

    def attempt():
        try:
            return f()
        except Exception as e:  # compared below: routing must raise what torch raises
            return (type(e), str(e))

    expected = attempt()
    with myops.replace_torch_ops(ALL_OPS) as stats:
        actual = attempt()
    return actual, expected, stats


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("op", sorted(BINARY))
def test_binary_sweep_bit_exact(device, op):
    f = BINARY[op]
    routed = calls = 0
    scalar = (lambda v: torch.tensor(v, device=device)) if op in ("maximum", "minimum") else (lambda v: v)
    for (dt1, dt2), (s1, s2), layout in zip(
        itertools.product(ALL_DTYPES, ALL_DTYPES), itertools.cycle(SHAPES), itertools.cycle(LAYOUTS)
    ):
        a = with_layout(rand(s1, dt1, device), layout)
        b = with_layout(rand(s2, dt2, device), "transposed")
        for lhs, rhs in [(a, b), (b, a), (a, scalar(3)), (a, scalar(-1.25)), (a, scalar(True))]:
            calls += 1
            actual, expected, stats = run_both(lambda: f(lhs, rhs))
            if isinstance(expected, tuple):
                assert actual == expected
            else:
                assert_same(actual, expected)
            routed += stats.routed[op]
    # most combinations are served by myops (the rest: bool sub, ...)
    assert routed > 0.6 * calls


@pytest.mark.parametrize("device", DEVICES)
def test_ternary_unary_nonzero_sweep_bit_exact(device):
    routed = {}
    for dt1, dt2 in itertools.product(ALL_DTYPES, ALL_DTYPES):
        layout = LAYOUTS[(ALL_DTYPES.index(dt1) + ALL_DTYPES.index(dt2)) % len(LAYOUTS)]
        c = with_layout(rand((3, 4, 5, 6), torch.bool, device), layout)
        x = with_layout(rand((3, 4, 5, 6), dt1, device), "transposed")
        y = rand((4, 1, 6), dt2, device)
        z = with_layout(rand((3, 4, 5, 6), dt1, device), layout)
        calls = [
            ("where", lambda: torch.where(c, x, y)),
            ("where", lambda: torch.where(c, 2, x)),
            ("addcmul", lambda: torch.addcmul(x, y, z)),
            ("addcmul", lambda: torch.addcmul(x, y, y, value=3)),
            ("clamp", lambda: torch.clamp(x, y, z)),
        ]
        if dt2 == ALL_DTYPES[0]:  # the unary ops once per dtype
            calls += [
                ("nonzero", lambda: torch.nonzero(z)),
                ("nonzero", lambda: torch.nonzero(z[:0])),
                ("nonzero", lambda: torch.nonzero(z[0, 0, 0, 0])),
                ("nonzero_static", lambda: torch.nonzero_static(z, size=50, fill_value=-2)),
                ("relu", lambda: torch.relu(z)),
                ("relu", lambda: torch.relu(z[1, 2, 3, 1])),
            ]
        for name, f in calls:
            actual, expected, stats = run_both(f)
            if isinstance(expected, tuple):
                assert actual == expected, name
            else:
                assert_same(actual, expected)
            routed[name] = routed.get(name, 0) + stats.routed[name]
    assert min(routed.values()) > 5, routed


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.float16, torch.bfloat16])
def test_special_values(device, dtype):
    """NaN, ±inf, ±0, denormals: torch's values and signs of zero; NaN where torch has NaN
    (the NaN payload bits are not compared: myops' relu (bfloat16) and clamp (float64) return
    another NaN pattern than torch's vector kernels)."""
    sp = torch.tensor([float("nan"), float("inf"), -float("inf"), 0.0, -0.0, 1e-45, 3.4e38, -1.0, 2.0])
    a = sp.to(device=device, dtype=dtype)[:, None]
    b = sp.to(device=device, dtype=dtype)[None, :]
    calls = [
        lambda: a + b,
        lambda: a - b,
        lambda: a * b,
        lambda: a / b,
        lambda: torch.maximum(a, b),
        lambda: torch.minimum(a, b),
        lambda: torch.relu(a),
        lambda: torch.clamp(a.expand(9, 9), b, b.t()),
        lambda: torch.addcmul(a, b, b),
        lambda: torch.where(a > b, a, b),
        lambda: torch.nonzero(a * b),
    ]
    for f in calls:
        actual, expected, stats = run_both(f)
        assert stats.total >= 1 and not stats.handed_back, stats
        nan = expected.isnan() if expected.is_floating_point() else torch.zeros_like(expected, dtype=torch.bool)
        assert_same(actual.isnan() if actual.is_floating_point() else torch.zeros_like(actual, dtype=torch.bool), nan)
        assert_same(actual.masked_fill(nan, 0), expected.masked_fill(nan, 0))
        assert actual.stride() == expected.stride()


@cuda_only
def test_cuda_with_cpu_scalars():
    """CPU scalars beside CUDA tensors (Python numbers, 0-d CPU tensors) are routed as torch
    takes them; a CPU divisor too (torch's CUDA div multiplies by its reciprocal, and so does
    myops')."""
    x = torch.randn(5, 7, device="cuda")
    s = torch.tensor(2.5)
    calls = [
        lambda: x * 3.5,
        lambda: 1.5 - x,
        lambda: x + s,
        lambda: torch.where(x > 0, x, 0.5),
        lambda: torch.maximum(x, s),
        lambda: x / 3,
        lambda: x / s,
    ]
    expected = [f() for f in calls]
    with myops.replace_torch_ops() as stats:
        actual = [f() for f in calls]
    for a, e in zip(actual, expected):
        assert_same(a, e)
    assert all(stats.routed[k] == 1 for k in ("mul", "add", "where", "maximum")), stats
    assert stats.routed["div"] == 2 and not stats.handed_back.get("div"), stats


# ---- what stays torch's ----------------------------------------------------------------------


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("device", DEVICES)
def test_other_forms_are_torch(mode, device):
    x, y = x4(device), x4(device)
    out = torch.empty_like(x)
    expected = {
        "out": torch.add(x, y),
        "floor": torch.div(x, y, rounding_mode="floor"),
        "clamp_scalar": torch.clamp(x, min=-0.5),
        "clamp_one_sided": torch.clamp(x, min=y),
        "alpha": torch.add(x, y, alpha=0.3),
        "alpha_half": torch.add(x.half(), y.half(), alpha=2),
        "sub_bool": None,
        "complex": torch.nonzero(torch.ones(3, 4, dtype=torch.complex64, device=device)),
        "relu_bool": None,
        "where_uint8": torch.where((x > 0).byte(), x, y),  # deprecated by torch, still served
    }
    with routing(mode) as stats:
        r = torch.add(x, y, out=out)  # out= overload: not overridden
        got = {
            "out": out,
            "floor": torch.div(x, y, rounding_mode="floor"),  # div.Tensor_mode: not overridden
            "clamp_scalar": torch.clamp(x, min=-0.5),  # clamp (Scalar): not overridden
            "clamp_one_sided": torch.clamp(x, min=y),  # handed back
            "alpha": torch.add(x, y, alpha=0.3),  # handed back
            "alpha_half": torch.add(x.half(), y.half(), alpha=2),  # handed back
            "complex": torch.nonzero(torch.ones(3, 4, dtype=torch.complex64, device=device)),  # handed back
            "where_uint8": torch.where((x > 0).byte(), x, y),  # handed back
        }
        with pytest.raises(RuntimeError, match="Subtraction, the `-` operator, with two bool tensors"):
            torch.sub(x > 0, y > 0)  # myops refuses bool too: handed back, torch raises
        with pytest.raises(RuntimeError, match="Boolean inputs not supported for relu"):
            torch.relu(x > 0)  # not a myops dtype for relu: handed back
    assert r is out
    for k, v in got.items():
        assert_same(v, expected[k])
    assert stats.routed == {}, stats
    assert stats.handed_back == {"clamp": 1, "add": 2, "nonzero": 1, "sub": 1, "relu": 1, "where": 1}, stats


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("device", DEVICES)
def test_inplace_stays_torch(mode, device):
    x, y = x4(device), x4(device)
    ref = x.clone().relu_().add_(y).mul_(y).sub_(y).div_(y.abs() + 1)
    with torch.no_grad(), routing(mode) as stats:
        assert x.relu_() is x
        F.relu(x, inplace=True)
        x += y
        x *= y
        x.sub_(y)
        x /= torch.add(y.abs(), 1)  # this abs and this add are functional: routed
    assert stats.routed == {"abs": 1, "add": 1} and stats.handed_back == {}, stats
    assert_same(x, ref)


OVERLAP_MSG = (
    "unsupported operation: some elements of the input tensor and the written-to tensor refer to a single "
    "memory location. Please clone"
)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("device", DEVICES)
def test_inplace_overlap_raises_like_torch(mode, device):
    """In-place calls whose input overlaps the output raise torch's error (issue #15 item 5)."""
    a = torch.randn(6, 6, device=device)
    a0 = a.clone()
    with routing(mode):
        with pytest.raises(RuntimeError, match=OVERLAP_MSG):
            a[1:].add_(a[:-1])
        with pytest.raises(RuntimeError, match=OVERLAP_MSG):
            a[1:].mul_(a[:-1])
        with pytest.raises(RuntimeError, match=OVERLAP_MSG):
            a[1:].sub_(a[:-1])
        with pytest.raises(RuntimeError, match=OVERLAP_MSG):
            a.add_(a.t())
        with pytest.raises(RuntimeError, match=OVERLAP_MSG):
            torch.add(a[:-1], a[1:], out=a[1:])
    assert_same(a, a0)  # nothing was written
    b = a.clone()
    with routing(mode):
        b.add_(b)  # the same tensor in and out is fine, as in torch
    assert_same(b, a0 + a0)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("device", DEVICES)
def test_bad_input_raises_like_torch(mode, device):
    x = torch.randn(3, 4, device=device)
    y = torch.randn(5, device=device)
    calls = [
        lambda: x + y,
        lambda: torch.where(x > 0, x, y),
        lambda: torch.add(x.long(), x.long(), alpha=0.5),
        lambda: torch.maximum(x, y),
        lambda: torch.clamp(x, y, y),
        lambda: torch.addcmul(x, y, x),
    ]
    for f in calls:
        with pytest.raises(Exception) as torch_err:
            f()
        with routing(mode):
            with pytest.raises(type(torch_err.value)) as err:
                f()
        assert str(err.value) == str(torch_err.value)
    with routing(mode):
        with pytest.raises(TypeError):
            torch.nonzero(x, bogus=1)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("device", DEVICES)
def test_numbers_past_int64_and_empty_inputs_like_torch(mode, device):
    """alpha / value / number operands at and past the int64 edges, on empty and non-empty
    inputs: routed or handed back, the result (or the exception type and message) is torch's."""
    big = [2**63 - 1, 2**63, 2**64 - 1, -(2**63), 2**31 - 1, 2**15, 1e39]
    calls = []
    for dtype, shape in itertools.product(ALL_DTYPES, [(0,), (2, 3)]):
        x = rand(shape, dtype, device)
        c = rand(shape, torch.bool, device)
        for v in big:
            calls += [
                lambda x=x, v=v: torch.add(x, x, alpha=v),
                lambda x=x, v=v: torch.sub(x, x, alpha=v),
                lambda x=x, v=v: torch.addcmul(x, x, x, value=v),
                lambda x=x, v=v: torch.add(x, v),
                lambda x=x, v=v: torch.mul(v, x),
                lambda x=x, v=v: torch.div(x, v),
                lambda x=x, c=c, v=v: torch.where(c, x, v),
                lambda x=x, v=v: torch.clamp(x, min=7, max=v),
            ]
    for f in calls:
        expected, e_err = outcome(f)
        with routing(mode):
            actual, a_err = outcome(f)
        if e_err is None:
            assert a_err is None, f"{a_err!r} where torch returned"
            assert_same(actual, expected)
        else:
            assert type(a_err) is type(e_err) and str(a_err) == str(e_err)
    # the reported cases
    a = torch.ones(3, device=device)
    with routing(mode):
        assert_same(torch.add(a, a, alpha=2**63), torch.full((3,), 1 + 2.0**63, device=device))
        e = torch.ones(0, dtype=torch.int16, device=device)
        with pytest.raises(RuntimeError, match="value cannot be converted to type int16_t without overflow"):
            torch.sub(e, e, alpha=2**31 - 1)
        # addcmul's value: torch's CPU kernel converts it to int16 (overflow), its CUDA one to
        # CUDA's accumulate type, int64 (it fits: the empty result)
        if device == "cpu":
            with pytest.raises(RuntimeError, match="value cannot be converted to type int16_t without overflow"):
                torch.addcmul(e, e, e, value=2**31 - 1)
        else:
            assert_same(torch.addcmul(e, e, e, value=2**31 - 1), e)


# ---- registration, scopes, threads, counters --------------------------------------------------


def dispatch_tables():
    return {name: torch._C._dispatch_dump_table(op) for name, op in OVERLOADS.items()}


def overridden(tables):
    """The ops whose kernel in `tables` (dispatch_tables()) is the drop-in's."""
    out = set()
    for name, table in tables.items():
        key = "BackendSelect:" if OVERLOADS[name].startswith("torchvision::") else "CPU:"
        lines = [line for line in table.splitlines() if line.startswith(key)]
        assert len(lines) == 1, (name, lines)
        out |= {name} if "aten_override.cpp" in lines[0] else set()
    return out


def test_kernels_registered_once_and_unregister_restores_torch_exactly():
    myops.replace.unregister()
    before = dispatch_tables()
    assert overridden(before) == set() and torch.ops.myops._override_registered() == []
    # the first enable registers every op's kernels, whichever it routes
    myops.enable({"where"})
    registered = dispatch_tables()
    assert overridden(registered) == set(ALL_OPS)
    assert sorted(torch.ops.myops._override_registered()) == sorted(ALL_OPS)
    # from then on nothing changes the dispatcher: disable, enable, scopes, nested scopes
    myops.disable()
    assert dispatch_tables() == registered
    with myops.replace_torch_ops(ALL_OPS):
        with myops.replace_torch_ops("add"):
            assert dispatch_tables() == registered
        myops.enable(ALL_OPS)
        assert dispatch_tables() == registered
        # the explicit unregister is refused while anything routes
        with pytest.raises(RuntimeError, match="disable it and close every block first"):
            myops.replace.unregister()
        myops.disable()
        with pytest.raises(RuntimeError, match="close every block"):
            myops.replace.unregister()  # this thread's open block
    assert dispatch_tables() == registered
    # another thread's open block is routing too
    entered, leave = threading.Event(), threading.Event()

    def hold_a_block():
        with myops.replace_torch_ops():
            entered.set()
            leave.wait(10)

    t = threading.Thread(target=hold_a_block)
    t.start()
    try:
        assert entered.wait(10)
        with pytest.raises(RuntimeError, match="close every block"):
            myops.replace.unregister()
    finally:
        leave.set()
        t.join()
    myops.replace.unregister()
    assert dispatch_tables() == before
    assert torch.ops.myops._override_registered() == []
    # and a later scope registers them again
    with myops.replace_torch_ops("relu"):
        assert dispatch_tables() == registered


def test_enable_only_and_context_manager():
    x = torch.randn(10)
    stats = myops.enable({"where"})
    try:
        assert myops.replace.enabled_ops() == ["where"]
        assert sorted(torch.ops.myops._override_registered()) == sorted(ALL_OPS)
        torch.where(x > 0, x, -x)
        torch.relu(x)  # not enabled: torch's kernel, not even counted
        assert myops.enable("relu") is stats  # adds an op, same stats
        torch.relu(x)
    finally:
        assert myops.disable() is stats
    assert myops.disable() is None
    assert stats.routed == {"where": 1, "relu": 1}
    torch.relu(x)
    assert stats.routed == {"where": 1, "relu": 1}  # frozen at disable
    with myops.enable() as stats2:
        assert stats2 is not stats
        torch.nonzero(x)
    assert myops.replace.enabled_ops() == []
    assert stats2.routed == {"nonzero": 1}
    with pytest.raises(ValueError, match="unknown op"):
        myops.enable({"nonzero", "frobnicate"})
    with pytest.raises(ValueError, match="unknown op"):
        myops.replace_torch_ops("frobnicate")


def test_scopes_nest_and_release():
    x = torch.randn(10)
    with myops.replace_torch_ops({"add"}) as outer:
        with myops.replace_torch_ops({"mul", "add"}) as inner:
            x + x
            x * x
            assert torch.ops.myops._override_scoped() == ["add", "mul"]
        assert torch.ops.myops._override_scoped() == ["add"]
        x + x
        x * x  # mul's scope ended
    assert torch.ops.myops._override_scoped() == []
    assert inner.routed == {"add": 1, "mul": 1}
    assert outer.routed == {"add": 2, "mul": 1}  # the outer block's thread counted both
    # a process-wide enable keeps its kernels while a scope that shares them ends
    myops.enable({"add"})
    with myops.replace_torch_ops({"add", "mul"}):
        assert routing_now() == ["add", "mul"]
    assert routing_now() == ["add"]
    myops.disable()


def run_in_thread(fn):
    out = {}

    def body():
        try:
            out["result"] = fn()
        except Exception as e:  # re-raised in the caller's thread
            out["error"] = e

    t = threading.Thread(target=body)
    t.start()
    t.join()
    if "error" in out:
        raise out["error"]
    return out["result"]


def thread_counts():
    v = torch.ops.myops._override_stats(True)
    return {n: v[2 * i] for i, n in enumerate(ALL_OPS) if v[2 * i]}


def test_replace_torch_ops_is_thread_local_and_enable_is_not():
    x, y = torch.randn(100), torch.randn(100)

    def other_thread():
        r = x + y
        return thread_counts(), r

    with myops.replace_torch_ops() as stats:
        counts, r = run_in_thread(other_thread)
        assert counts == {}  # the other thread ran torch's kernel
        x + y
    assert stats.routed == {"add": 1}
    assert_same(r, torch.add(x, y))

    with myops.enable() as stats:
        counts, r = run_in_thread(other_thread)
        assert counts == {"add": 1}  # process-wide: every thread routes
    assert stats.routed == {"add": 1}
    assert_same(r, torch.add(x, y))


def test_open_block_stats_are_read_in_their_thread():
    with myops.replace_torch_ops() as stats:
        with pytest.raises(RuntimeError, match="read them in that thread"):
            run_in_thread(lambda: stats.routed)
    assert stats.routed == {}  # closed: frozen, readable anywhere
    assert run_in_thread(lambda: stats.routed) == {}


def test_counters_from_many_threads():
    x = torch.randn(64)
    n_threads, n_calls = 4, 50
    with myops.enable({"mul"}) as stats:
        ts = [threading.Thread(target=lambda: [x * x for _ in range(n_calls)]) for _ in range(n_threads)]
        for t in ts:
            t.start()
        for t in ts:
            t.join()
    assert stats.routed == {"mul": n_threads * n_calls}


# ---- autograd, TorchScript, torch.compile -----------------------------------------------------


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("device", DEVICES)
def test_autograd_formulas_stay_aten(mode, device):
    """The override sits below Autograd: ATen's formulas run, the forward and backward ops they
    call are routed, and gradients are torch's bit for bit."""
    x0, w0, b0 = x4(device), x4(device), torch.randn(7, device=device)

    def step():
        x, w, b = (t.clone().requires_grad_() for t in (x0, w0, b0))
        y = torch.where(x > 0, x * w + b, x / (w.abs() + 1)).relu()
        z = torch.clamp(y, -w.abs(), w.abs()) - torch.maximum(x, w)
        z.sum().backward()
        return z.detach(), x.grad, w.grad, b.grad

    expected = step()
    with routing(mode) as stats:
        actual = step()
    for a, e in zip(actual, expected):
        assert_same(a, e)
    if device == "cpu" or mode == "enable":
        # forward: mul, add, div, ...; backward: ATen's formulas call mul, div, where, ...
        assert stats.routed["mul"] >= 2 and stats.routed["where"] >= 2 and stats.routed["div"] >= 2, stats
    else:
        # autograd runs a CUDA backward on its own thread: outside this thread's block
        assert stats.routed["mul"] >= 1 and stats.routed["where"] >= 1 and stats.routed["div"] >= 1, stats


@torch.jit.script
def scripted_fn(x: torch.Tensor, y: torch.Tensor):
    keep = torch.nonzero(x > 0)
    return keep, torch.relu(x * y + 1.0)


@pytest.mark.parametrize("device", DEVICES)
def test_torchscript_calls_are_routed(device):
    x, y = x4(device), x4(device)
    # the profiling executor's GPU fuser would merge mul / add / relu into one fused kernel
    # after a warm-up (so whether they reach aten would depend on the tests run before):
    # the plain interpreter calls each aten op
    with torch.jit.optimized_execution(False):
        expected = scripted_fn(x, y)
        with myops.enable() as stats:
            actual = scripted_fn(x, y)
    assert_tree_same(actual, expected)
    # TorchScript calls aten::add.Scalar for `+ 1.0` (routed by add_scalar)
    assert stats.routed == {"nonzero": 1, "mul": 1, "add_scalar": 1, "relu": 1}, stats


def pointwise_and_nonzero(x, y):
    idx = torch.nonzero(x > 0.5)
    z = torch.where(x > y, x * y, x - y) + 1.0
    return idx, z.relu(), torch.maximum(z, y) / 2


@pytest.mark.parametrize("device", DEVICES)
def test_compile_fullgraph_under_enable(device):
    """fullgraph=True: no Python handler in the way, Dynamo sees plain aten ops; nonzero runs
    as a fallback kernel, which the override routes."""
    torch._dynamo.reset()
    x, y = x4(device), x4(device)
    expected = pointwise_and_nonzero(x, y)
    with torch._dynamo.config.patch(capture_dynamic_output_shape_ops=True), myops.enable() as stats:
        compiled = torch.compile(pointwise_and_nonzero, fullgraph=True)
        actual = compiled(x, y)
        again = compiled(x, y)
    assert stats.routed["nonzero"] >= 2, stats
    for got in (actual, again):
        assert_same(got[0], expected[0])
        # Inductor's generated pointwise code is its own: same values as eager here
        torch.testing.assert_close(got[1], expected[1], rtol=0, atol=0)
        torch.testing.assert_close(got[2], expected[2], rtol=0, atol=0)


# ---- every mode users run in: grad, no_grad, inference_mode, autocast ----------------------------
# The aten routes sit on the backend keys and torchvision::nms's on BackendSelect, which every
# mode reaches: inference_mode skips the Autograd keys, autocast runs its casts above (for nms,
# torchvision's autocast kernel casts to float and calls nms again). Each routed op's first call
# of CALLS runs in each mode, with and without routing: the same result, and the call counted as
# routed.

ONE_CALL = dict(reversed(CALLS))  # the first call of each op
AUTOCAST_DTYPE = {"cpu": torch.bfloat16, "cuda": torch.float16}
AUTOGRAD_MODES = ["grad", "no_grad", "inference_mode", "inference_tensors", "autocast"]


def in_mode(mode, device):
    if mode == "no_grad":
        return torch.no_grad()
    if mode in ("inference_mode", "inference_tensors"):
        return torch.inference_mode()
    if mode == "autocast":
        return torch.autocast(device, dtype=AUTOCAST_DTYPE[device])
    return contextlib.nullcontext()


def assert_reasons_account(stats):
    """Every call handed back is counted with its reason."""
    reasons = stats.reasons
    assert {n: sum(c.values()) for n, c in reasons.items()} == dict(stats.handed_back), stats
    assert all(set(c) <= set(HAND_BACK_REASONS) for c in reasons.values()), stats


def test_every_routed_op_is_in_the_mode_matrix():
    assert set(ONE_CALL) == set(ALL_OPS)


def _detach(out):
    return tuple(t.detach() for t in out) if isinstance(out, tuple) else out.detach()


@pytest.mark.parametrize("form", MODES)
@pytest.mark.parametrize("mode", AUTOGRAD_MODES)
@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("name", sorted(ONE_CALL))
def test_routed_in_every_mode(form, mode, device, name):
    call = ONE_CALL[name]
    x, y = x4(device), x4(device)
    if mode == "inference_tensors":
        with torch.inference_mode():
            x, y = x.clone(), y.clone()
        assert x.is_inference()
    if mode == "grad":
        x.requires_grad_()
    with in_mode(mode, device):
        expected = call(x, y)
    with routing(form, DEFAULT_OPS | {name}) as stats, in_mode(mode, device):
        actual = call(x, y)
    assert stats.routed[name] >= 1, stats
    assert stats.handed_back == {} and stats.reasons == {}, stats
    if name in APPROXIMATE:
        torch.testing.assert_close(actual, expected, rtol=4e-7, atol=1e-6)
    else:
        assert_tree_same(_detach(actual), _detach(expected))
    if mode == "grad" and isinstance(expected, torch.Tensor) and expected.requires_grad:
        # gradients: ATen's formulas (their ops routed too), equal to torch's
        assert actual.requires_grad and actual.grad_fn is not None
        g = torch.randn_like(expected)
        (want,) = torch.autograd.grad(expected, x, g)
        with routing(form) as back:
            (got,) = torch.autograd.grad(actual, x, g)
        if name in APPROXIMATE:
            torch.testing.assert_close(got, want, rtol=1e-5, atol=1e-6)
        else:
            assert_same(got, want)
        assert_reasons_account(back)


def yolo_like_nms(prediction, conf_thres=0.25, iou_thres=0.45, max_det=300, max_nms=30000, max_wh=7680):
    """The post-processing of YOLOv8-style detectors, as Ultralytics' non_max_suppression runs it
    (single label): prediction [N, 4 + classes, anchors] (xywh, class scores); per image the
    candidates above the threshold, the best class of each, boxes offset by class, one
    torchvision nms, at most max_det rows [x1, y1, x2, y2, score, class]."""
    prediction = prediction.transpose(-1, -2)
    nc = prediction.shape[-1] - 4
    candidates = prediction[..., 4 : 4 + nc].amax(-1) > conf_thres
    xy, wh = prediction[..., :2], prediction[..., 2:4]
    boxes_all = torch.cat([xy - wh / 2, xy + wh / 2], -1)
    output = []
    for xi in range(prediction.shape[0]):
        x = prediction[xi][candidates[xi]]
        box = boxes_all[xi][candidates[xi]]
        conf, j = x[:, 4:].max(1, keepdim=True)
        det = torch.cat([box, conf, j.float()], 1)[conf.view(-1) > conf_thres]
        if not det.shape[0]:
            output.append(det)
            continue
        if det.shape[0] > max_nms:
            det = det[det[:, 4].argsort(descending=True)[:max_nms]]
        keep = torchvision.ops.nms(det[:, :4] + det[:, 5:6] * max_wh, det[:, 4], iou_thres)
        output.append(det[keep[:max_det]])
    return output


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("n", [1, 4])
def test_yolo_like_postprocess_under_inference_mode(device, n):
    """What a YOLO predictor runs: the model's raw output post-processed with torchvision's nms
    inside torch.inference_mode(). nms is routed, once per image, and the detections are
    identical."""
    anchors, nc = 2100, 80
    pred = torch.cat(
        [
            torch.rand(n, 2, anchors, device=device) * 640,
            torch.rand(n, 2, anchors, device=device) * 60 + 4,
            torch.rand(n, nc, anchors, device=device) ** 4,
        ],
        1,
    )
    with torch.inference_mode():
        expected = yolo_like_nms(pred)
        with myops.enable() as stats:
            actual = yolo_like_nms(pred)
    assert all(e.shape[0] > 10 for e in expected)  # the test has detections to compare
    for a, e in zip(actual, expected, strict=True):
        assert_same(a, e)
    assert stats.routed["nms"] == n, stats
    assert stats.routed["nonzero"] >= n, stats
    # torch's CUDA kernel divides by a host number as a product with its reciprocal, which the
    # drop-in leaves to torch: there `wh / 2` may be handed back (div, "arguments"); nothing else
    # is (the first GPU run failed here: it expected no hand-back on CUDA either)
    allowed = {"div"} if device == "cuda" else set()
    assert set(stats.handed_back) <= allowed, stats
    assert all(stats.reasons[op] == {"arguments": k} for op, k in stats.handed_back.items()), stats


@pytest.mark.parametrize("device", DEVICES)
def test_autocast_pipeline(device):
    """A reduced-precision pipeline under autocast: a convolution's half / bfloat16 output goes
    through routed elementwise ops, then nms (torchvision's autocast kernel casts the boxes to
    float, then calls the routed kernel)."""
    dtype = AUTOCAST_DTYPE[device]
    x = torch.randn(2, 8, 16, 16, device=device)
    w = torch.randn(8, 8, 3, 3, device=device)

    def run():
        y = F.conv2d(x, w, padding=1)
        assert y.dtype == dtype
        z = torch.relu(y) * y + 1
        boxes = _boxes(z.float()).to(dtype)
        return z, torchvision.ops.nms(boxes, z.flatten()[:50], 0.5)

    with torch.autocast(device, dtype=dtype), torch.inference_mode():
        expected = run()
        with myops.enable() as stats:
            actual = run()
    assert_tree_same(actual, expected)
    assert stats.routed["nms"] == 1 and stats.routed["relu"] == 1 and stats.routed["mul"] == 1, stats
    assert stats.handed_back == {}, stats


@pytest.mark.parametrize("device", DEVICES)
def test_hand_backs_are_counted_with_their_reason(device):
    """A call myops does not take is handed back to torch, counted with why."""
    c = torch.randn(5, dtype=torch.complex64, device=device)
    b, s = _boxes(x4(device)), torch.rand(50, device=device)
    # boxes and scores of two dtypes: myops' nms refuses them (hands them back), and torchvision
    # decides. Its CPU kernel raises; its CUDA kernel has no dtype check (it sorts the scores,
    # then reads the boxes in that order) and returns the kept boxes: the drop-in must do the same
    with torch.inference_mode():
        try:
            expected = torchvision.ops.nms(b, s.double(), 0.5)
        except RuntimeError as e:
            expected = e
    assert isinstance(expected, RuntimeError) == (device == "cpu"), expected
    with torch.inference_mode(), myops.enable() as stats:
        torch.add(c, c)  # complex: the arguments are not myops'
        torch.add(torch.ones(3, device=device), torch.ones(3, device=device), alpha=0.5)  # float alpha
        if isinstance(expected, RuntimeError):
            with pytest.raises(RuntimeError, match=re.escape(str(expected).splitlines()[0])):
                torchvision.ops.nms(b, s.double(), 0.5)
        else:
            assert_same(torchvision.ops.nms(b, s.double(), 0.5), expected)
    assert stats.reasons == {"add": {"arguments": 2}, "nms": {"refused": 1}}, stats
    assert stats.handed_back == {"add": 2, "nms": 1}, stats
    assert_reasons_account(stats)


def test_nms_routed_when_torchvision_is_imported_after_enable():
    """enable() loads torchvision's ops before overriding nms, so a program that imports
    torchvision later (as a detector package does) still gets nms routed."""
    code = (
        "import sys, torch, myops\n"
        "assert 'torchvision' not in sys.modules\n"
        "myops.enable()\n"
        "import torchvision\n"
        "b = torch.rand(30, 4); b[:, 2:] += b[:, :2]\n"
        "with torch.inference_mode():\n"
        "    keep = torchvision.ops.nms(b, torch.rand(30), 0.5)\n"
        "stats = myops.disable()\n"
        "assert stats.routed['nms'] == 1, stats\n"
    )
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    subprocess.run([sys.executable, "-c", code], check=True, env=env, timeout=300)
