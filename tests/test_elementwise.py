"""Parity of the elementwise ops (unary, binary, ternary) with PyTorch on every device."""

import math

import pytest
import torch
from hypothesis import given, settings, strategies as st
import torch.nn.functional as F

import myops
from myops._table import EW_OPS
from helpers import (
    ALL_DTYPES,
    DEVICES,
    FLOAT_DTYPES,
    INT_DTYPES,
    LAYOUTS,
    assert_bits_nan_anywhere,
    assert_like_torch,
    assert_same,
    check_add_alpha_scalar_tail,
    check_gelu_edges,
    check_gradient_edges,
    check_like_torch_with_grad,
    check_number_first,
    check_signed_zero_ties,
    cuda_only,
    gelu_edge_values,
    number_first_calls,
    outcome,
    rand,
    with_layout,
)

ops = torch.ops.myops

# ---- comparison helpers -------------------------------------------------------------------------


def _ordered(t):
    """Floats mapped to integers that are consecutive for consecutive floats (ulp distance)."""
    itype = {2: torch.int16, 4: torch.int32, 8: torch.int64}[t.element_size()]
    i = t.contiguous().view(itype).to(torch.int64)
    mask = (1 << (8 * t.element_size() - 1)) - 1
    return torch.where(i < 0, -(i & mask), i)


def check_meta(actual, expected):
    assert actual.dtype == expected.dtype, f"dtype {actual.dtype} != {expected.dtype}"
    assert actual.shape == expected.shape, f"shape {tuple(actual.shape)} != {tuple(expected.shape)}"
    assert actual.device == expected.device
    if actual.numel() > 1:
        assert actual.stride() == expected.stride(), f"stride {actual.stride()} != {expected.stride()}"


def assert_exact(actual, expected):
    """Bit-identical values (signed zeros included); NaN where PyTorch has NaN (PyTorch's own
    CPU kernels give NaNs of different payloads in their vector and scalar paths)."""
    check_meta(actual, expected)
    a, e = actual.detach().cpu(), expected.detach().cpu()
    if not a.dtype.is_floating_point:
        assert torch.equal(a, e), f"max diff {(a.double() - e.double()).abs().max()}"
        return
    assert_bits_nan_anywhere(a, e)


def assert_ulp(actual, expected, ulps=None, atol=0.0):
    """Within `ulps` units in the last place (default: 4 for float32/64, 1 for half/bfloat16)
    or, where `atol` > 0, within atol * max(1, |expected|); NaN and infinities exactly where
    PyTorch has them."""
    check_meta(actual, expected)
    a, e = actual.detach().cpu(), expected.detach().cpu()
    if not a.dtype.is_floating_point:
        assert torch.equal(a, e)
        return
    if ulps is None:
        ulps = 1 if a.dtype in (torch.float16, torch.bfloat16) else 4
    nan = e.isnan()
    assert torch.equal(a.isnan(), nan), "NaN positions differ"
    d = (_ordered(a) - _ordered(e)).abs()
    ok = (d <= ulps) | nan
    if atol:
        ok |= (a.double() - e.double()).abs() <= atol * e.double().abs().clamp(min=1)
    assert ok.all(), f"max {int(d[~ok].max())} ulp (allowed {ulps}), e.g. {a[~ok][:4]} vs {e[~ok][:4]}"


def sample(shape, dtype, device, special=True, low=-10, high=10):
    """Random values; float tensors with >= 8 elements get NaN, +inf and -inf at random places."""
    x = rand(shape, dtype, device, low=low, high=high)
    if special and dtype.is_floating_point and x.numel() >= 8:
        flat = x.view(-1)
        idx = torch.randperm(x.numel(), device=device)[:3]
        flat[idx] = torch.tensor([float("nan"), float("inf"), -float("inf")], dtype=dtype, device=device)
    return x


def in_float(ref):
    """PyTorch's result computed on float32 copies of half/bfloat16 operands, rounded back.
    For add with alpha: PyTorch's CPU vector path computes fma(alpha, b, a) in float, but its
    scalar tail multiplies alpha * b in half first; myops always does the former."""

    def fn(*args):
        out = ref(*args)
        if out.dtype not in (torch.float16, torch.bfloat16):
            return out
        # cast to the result dtype (as PyTorch does first), then compute in float
        up = [
            a.to(out.dtype).float()
            if isinstance(a, torch.Tensor)
            else torch.tensor(a, dtype=out.dtype).item()
            if isinstance(a, float)
            else a
            for a in args
        ]
        return ref(*up).to(out.dtype)

    return fn


def gelu_ref(approximate):
    def fn(x):
        # torch's own result, edges included: on the CPU, where it runs oneDNN, NaN at +inf (and
        # inf from 2^127 on); myops follows (helpers.check_gelu_edges)
        return F.gelu(x, approximate=approximate)

    return fn


# ---- op tables ------------------------------------------------------------------------------------


def aten_ref(op):
    """torch's own op for a row of the op table (the aten overload the drop-in stands in for,
    else the aten op of the same name)."""
    name, _, overload = (op.aten or op.name).partition(".")
    return getattr(getattr(torch.ops.aten, name), overload or "default")


# The op table's plain ops (myops._table: csrc/include/myops/op_table.h): the myops op, torch's,
# the dtypes the op takes, and whether it is exact (the drop-in routes exactly the exact ones by
# default); the other forms follow by hand.
TABLE_UNARY = {
    op.fn: (getattr(myops, op.fn), aten_ref(op), list(op.accepted), op.dropin_default)
    for op in EW_OPS.values()
    if op.sig == "unary"
}

UNARY = {
    # name: (myops, torch, dtypes, exact)
    **TABLE_UNARY,
    "gelu": (myops.gelu, gelu_ref("none"), FLOAT_DTYPES, False),
    "gelu_tanh": (lambda x: myops.gelu(x, "tanh"), gelu_ref("tanh"), FLOAT_DTYPES, False),
    # pow.Scalar: torch special-cases some exponents (2, 3, -1, -2, 0.5), computing x * x, 1 / x,
    # ...: within 1 ulp (2 in bfloat16 for 0.3), measured
    "pow_scalar": (lambda x: myops.pow(x, 2.5), lambda x: torch.pow(x, 2.5), FLOAT_DTYPES, False),
    "pow_scalar_3": (lambda x: myops.pow(x, 3), lambda x: torch.pow(x, 3), FLOAT_DTYPES, False),
    "mul_scalar": (lambda x: myops.mul_scalar(x, 3), lambda x: torch.mul(x, 3), ALL_DTYPES, True),
    "mul_scalar_float": (lambda x: myops.mul_scalar(x, -1.75), lambda x: torch.mul(x, -1.75), ALL_DTYPES, True),
}

BINARY = {
    "add": (myops.add, torch.add, ALL_DTYPES, True),
    "add_alpha": (
        lambda a, b: myops.add(a, b, alpha=3),
        lambda a, b: torch.add(a, b, alpha=3),
        ALL_DTYPES[1:],
        # float16 / bfloat16 are bit-exact (tests/test_parity_fixes.py); float32 within an ulp:
        # PyTorch's own float32 loops fuse a + 3 * b in some loops and not in others
        False,
    ),
    "sub": (myops.sub, torch.sub, ALL_DTYPES[1:], True),
    "mul": (myops.mul, torch.mul, ALL_DTYPES, True),
    "div": (myops.div, torch.div, ALL_DTYPES, False),
    "maximum": (myops.maximum, torch.maximum, ALL_DTYPES, True),
    "minimum": (myops.minimum, torch.minimum, ALL_DTYPES, True),
}

TERNARY = {
    "where": (lambda c, a, b: ops.where(c, a, b), torch.where, ALL_DTYPES, True),
    "addcmul": (
        lambda a, b, c: myops.addcmul(a, b, c, value=2),
        lambda a, b, c: torch.addcmul(a, b, c, value=2),
        ALL_DTYPES[1:],
        False,
    ),
    "clamp": (myops.clamp, torch.clamp, ALL_DTYPES[1:], True),
}


def compare(exact, actual, expected):
    if exact:
        assert_exact(actual, expected)
    elif actual.device.type == "cpu":
        # PyTorch's CPU vector kernels evaluate erf / tanh / exp with their own polynomial
        # approximations (about 1e-7 absolute error): accept a few float32 eps besides the ulps
        assert_ulp(actual, expected, atol=3e-6)
    else:
        assert_ulp(actual, expected)


def ternary_inputs(name, shapes, dtype, device):
    if name == "where":
        c = rand(shapes[0], torch.bool, device)
        return c, sample(shapes[1], dtype, device), sample(shapes[2], dtype, device)
    if name == "clamp":
        x = sample(shapes[0], dtype, device)
        lo = sample(shapes[1], dtype, device, special=False, low=-8, high=0)
        hi = sample(shapes[2], dtype, device, special=False, low=0, high=8)
        if dtype.is_floating_point:
            lo = lo.abs().neg() - 0.5
            hi = hi.abs() + 0.5
        return x, lo, hi
    return tuple(sample(s, dtype, device) for s in shapes)


SIZES = [(), (0,), (1,), (7,), (4097,), (2**20 + 3,)]

# ---- unary ----------------------------------------------------------------------------------------


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("name", list(UNARY))
def test_unary_dtypes(name, device):
    fn, ref, dtypes, exact = UNARY[name]
    for dtype in dtypes:
        for shape in [(), (0,), (1,), (7,), (4097,)]:
            x = sample(shape, dtype, device)
            compare(exact, fn(x), ref(x))


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16])
@pytest.mark.parametrize("name", list(UNARY))
def test_unary_large(name, dtype, device):
    fn, ref, _, exact = UNARY[name]
    x = sample((2**20 + 3,), dtype, device)
    compare(exact, fn(x), ref(x))
    # misaligned start: x[1:]
    compare(exact, fn(x[1:]), ref(x[1:]))


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("name", list(UNARY))
def test_unary_layouts(name, layout, device):
    fn, ref, _, exact = UNARY[name]
    for dtype in (torch.float32, torch.float16):
        x = with_layout(sample((6, 5, 4, 9), dtype, device), layout)
        compare(exact, fn(x), ref(x))


def test_relu_signed_zero_and_nan():
    x = torch.tensor([-0.0, 0.0, float("nan"), -float("inf"), float("inf"), -1.0, 2.0])
    assert_exact(myops.relu(x), torch.relu(x))


# ---- cast -----------------------------------------------------------------------------------------


def cast_source(dtype, to, shape, device):
    if dtype.is_floating_point and not to.is_floating_point and to != torch.bool:
        # float -> int is undefined outside the target's range (and for NaN): stay inside
        info = torch.iinfo(to)
        lo, hi = max(info.min, -100), min(info.max, 100)
        return (torch.rand(shape, device=device, dtype=torch.float64) * (hi - lo) + lo).to(dtype)
    return sample(shape, dtype, device)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("src", ALL_DTYPES)
def test_cast_all_pairs(src, device):
    for to in ALL_DTYPES:
        for shape in [(), (7,), (4097,)]:
            x = cast_source(src, to, shape, device)
            y = myops.cast(x, to)
            assert_exact(y, x.to(to))
            if to == src and x.numel():
                assert y.data_ptr() != x.data_ptr()  # always a new tensor


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize(
    "pair",
    [
        (torch.float32, torch.float16),
        (torch.float32, torch.bfloat16),
        (torch.float16, torch.float32),
        (torch.int32, torch.float64),
    ],
)
def test_cast_layouts(pair, layout, device):
    src, to = pair
    x = with_layout(sample((6, 5, 4, 9), src, device), layout)
    assert_exact(myops.cast(x, to), x.to(to))
    big = sample((2**20 + 3,), src, device)
    assert_exact(myops.cast(big[1:], to), big[1:].to(to))


# ---- binary ---------------------------------------------------------------------------------------

N, C, H, W = 2, 3, 5, 8
BROADCAST_FORMS = {
    "same": (N, C, H, W),
    "per_channel": (1, C, 1, 1),
    "n1hw": (N, 1, H, W),
    "last_dim": (W,),
    "zero_dim": (),
    "one_elem": (1,),
}


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("name", list(BINARY))
def test_binary_dtypes(name, device):
    fn, ref, dtypes, exact = BINARY[name]
    for dtype in dtypes:
        for shape in [(), (0,), (1,), (7,), (4097,)]:
            a, b = sample(shape, dtype, device), sample(shape, dtype, device)
            compare(exact, fn(a, b), ref(a, b))


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16])
@pytest.mark.parametrize("name", list(BINARY))
def test_binary_large(name, dtype, device):
    fn, ref, _, exact = BINARY[name]
    a, b = sample((2**20 + 3,), dtype, device), sample((2**20 + 3,), dtype, device)
    compare(exact, fn(a, b), ref(a, b))
    compare(exact, fn(a[1:], b[:-1]), ref(a[1:], b[:-1]))  # one operand misaligned
    compare(exact, fn(a[1:], b[1:]), ref(a[1:], b[1:]))  # both misaligned the same way


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("form", list(BROADCAST_FORMS))
@pytest.mark.parametrize("name", list(BINARY))
def test_binary_broadcast(name, form, device):
    fn, ref, dtypes, exact = BINARY[name]
    for dtype in (torch.float32, torch.float16, torch.int32):
        if dtype not in dtypes:
            continue
        a = sample((N, C, H, W), dtype, device)
        b = sample(BROADCAST_FORMS[form], dtype, device)
        compare(exact, fn(a, b), ref(a, b))
        compare(exact, fn(b, a), ref(b, a))
        cl = a.contiguous(memory_format=torch.channels_last)
        compare(exact, fn(cl, b), ref(cl, b))


def _wrapped(s, like):
    # torch.maximum / minimum take no Python numbers: their reference is the number as a 0-d
    # tensor of torch.result_type(like, s), which is how PyTorch promotes a wrapped number
    return torch.tensor(s, dtype=torch.result_type(like, s), device=like.device)


def _natural(s, like):
    # a Python number as PyTorch's wrapped number: its own value (int64 / float64 / bool), in
    # the dtype torch.result_type(like, s) when the natural dtype would promote differently; a
    # CPU 0-d tensor, as a number is (torch's CUDA kernels treat a CPU scalar specially)
    dt = torch.bool if isinstance(s, bool) else torch.int64 if isinstance(s, int) else torch.float64
    t = torch.tensor(s, dtype=dt)
    rt = torch.result_type(like, s)
    return t if torch.result_type(like, t) == rt else t.to(rt)


SCALAR_REF = {
    # name: (ref(tensor, s), ref(s, tensor))
    "add": (lambda a, s: torch.add(a, s), lambda s, a: s + a),
    "add_alpha": (lambda a, s: torch.add(a, s, alpha=3), None),
    "sub": (lambda a, s: torch.sub(a, s), lambda s, a: torch.sub(_natural(s, a), a)),
    # a number first: Python's s * a (tensor.__rmul__, the number in the opmath type), not
    # torch.mul(s, a), which on the CPU rounds it to a float16 / bfloat16 result first
    "mul": (lambda a, s: torch.mul(a, s), lambda s, a: s * a),
    "div": (lambda a, s: torch.div(a, s), lambda s, a: torch.div(_natural(s, a), a)),
    "maximum": (lambda a, s: torch.maximum(a, _wrapped(s, a)), lambda s, a: torch.maximum(_wrapped(s, a), a)),
    "minimum": (lambda a, s: torch.minimum(a, _wrapped(s, a)), lambda s, a: torch.minimum(_wrapped(s, a), a)),
}


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("name", list(BINARY))
def test_binary_python_scalar(name, device):
    fn, ref, dtypes, exact = BINARY[name]
    fwd, rev = SCALAR_REF[name]
    for dtype in (torch.float32, torch.float16, torch.bfloat16, torch.int64, torch.int8, torch.uint8):
        if dtype not in dtypes:
            continue
        a = sample((N, C, H, W), dtype, device)
        for s in (2, -3, 0.1, 2.5, True):
            if name.startswith("sub") and isinstance(s, bool):
                continue
            compare(exact, fn(a, s), fwd(a, s))
            if rev is not None:
                compare(exact, fn(s, a), rev(s, a))
    # a 0-d tensor keeps its priority rules: float32 0-d with a float16 tensor stays float16
    h = sample((7,), torch.float16, device)
    z = torch.tensor(1.5, device=device)
    compare(exact, fn(h, z), ref(h, z))


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("name", list(BINARY))
def test_binary_layouts(name, layout, device):
    fn, ref, _, exact = BINARY[name]
    a = with_layout(sample((6, 5, 4, 9), torch.float32, device), layout)
    b = sample((6, 5, 4, 9), torch.float32, device)
    compare(exact, fn(a, b), ref(a, b))
    compare(exact, fn(b, a), ref(b, a))
    b2 = with_layout(b, layout)
    compare(exact, fn(a, b2), ref(a, b2))


MIXED = [
    (torch.float16, torch.float32),
    (torch.bfloat16, torch.float16),
    (torch.int32, torch.float32),
    (torch.int64, torch.float16),
    (torch.int8, torch.int64),
    (torch.uint8, torch.int8),
    (torch.bool, torch.int32),
    (torch.bool, torch.float32),
    (torch.float32, torch.float64),
]


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("name", list(BINARY))
def test_binary_mixed_dtypes(name, device):
    fn, ref, _, exact = BINARY[name]
    for da, db in MIXED:
        if name.startswith("sub") and torch.bool in (da, db):
            continue
        for sa, sb in [((5, 7), (5, 7)), ((5, 7), (7,)), ((5, 7), ()), ((), (5, 7))]:
            a, b = sample(sa, da, device), sample(sb, db, device)
            compare(exact, fn(a, b), ref(a, b))
        # transposed half operand with a float one (cast + layout choice)
        a = sample((7, 5), da, device).t()
        b = sample((5, 7), db, device)
        compare(exact, fn(a, b), ref(a, b))
        a = sample((9, 7), da, device)[::2]
        compare(exact, fn(a, b), ref(a, b))


def test_add_bool_and_alpha():
    a, b = rand((33,), torch.bool, "cpu"), rand((33,), torch.bool, "cpu")
    assert_exact(myops.add(a, b), torch.add(a, b))
    assert_exact(myops.add(a, b, alpha=True), torch.add(a, b, alpha=True))
    x, y = rand((33,), torch.int32, "cpu"), rand((33,), torch.int32, "cpu")
    assert_exact(myops.sub(x, y, alpha=-4), torch.sub(x, y, alpha=-4))
    u, v = rand((33,), torch.uint8, "cpu"), rand((33,), torch.uint8, "cpu")
    assert_exact(myops.sub(u, v), torch.sub(u, v))  # wraps like torch
    f, g = sample((33,), torch.float32, "cpu"), sample((33,), torch.float32, "cpu")
    assert_ulp(myops.add(f, g, alpha=0.3), torch.add(f, g, alpha=0.3), ulps=1)


def test_maximum_minimum_nan():
    nan, inf = float("nan"), float("inf")
    a = torch.tensor([nan, 1.0, nan, -inf, inf, 3.0, -2.0] * 5)
    b = torch.tensor([1.0, nan, nan, inf, -inf, -3.0, 2.0] * 5)
    for fn, ref in ((myops.maximum, torch.maximum), (myops.minimum, torch.minimum)):
        assert_exact(fn(a, b), ref(a, b))
        assert_exact(fn(a.half(), b.half()), ref(a.half(), b.half()))


@pytest.mark.parametrize("dtype", FLOAT_DTYPES, ids=str)
def test_signed_zero_ties(dtype):
    # -0.0 against +0.0: torch's CPU maximum / minimum / clamp (tensor bounds) return the second
    # operand in their vector loop and the first in their scalar loop (a row's tail, rows of
    # other layouts); myops follows that loop structure element by element, directly and under
    # the drop-in (elementwise/cpu/elementwise_torch_order.h, VecTiesOf). Every length 0..80: the split moves
    # with n mod 16 (float32), 8 (float64), 32 (half / bfloat16). test_cpu_build runs it in
    # every CPU build.
    check_signed_zero_ties(dtype)


@pytest.mark.parametrize("dtype", FLOAT_DTYPES, ids=str)
def test_add_alpha_scalar_tail(dtype):
    # add / sub with alpha beside a stride-0 second operand (0-d, [1], a number, a broadcast
    # column): torch fuses a + alpha * b everywhere but in part of such a row's scalar tail, where
    # its compiler hoisted alpha * b (rounded once); myops follows it element by element
    # (elementwise/cpu/elementwise_torch_order.h, AddScalarTail). Every length 0..80, the layouts that decide
    # it; half / bfloat16 take torch's own two orders. test_cpu_build runs it in every CPU build.
    check_add_alpha_scalar_tail(dtype)


@pytest.mark.parametrize("dtype", FLOAT_DTYPES, ids=str)
def test_gelu_edges(dtype):
    # torch's CPU gelu (erf form) runs oneDNN for a contiguous input of more than one element
    # (float32; bfloat16 / float16 where oneDNN supports them): +inf gives NaN there, -inf a
    # positive NaN, 2^127 and above inf; its own kernel (one element, stepped, oneDNN off, the
    # tanh form) gives inf at +inf. myops follows the path torch takes (OneDnnGeluEdges).
    check_gelu_edges(dtype)


def torch_gelu_path(t):
    """Which kernel torch's CPU gelu (erf form) runs on t, by torch's and oneDNN's own tests
    (csrc/elementwise/elementwise_ops.h, TorchCpuGelu): "jit" (oneDNN's JIT kernel: its edge values),
    "ref" (oneDNN's reference kernel: contiguous to torch, but a stride of 0, which oneDNN calls
    not dense) or "own" (torch's kernel). Whether oneDNN takes the dtype is probed on a fresh
    1-D tensor, the one layout of its class."""
    if not torch.backends.mkldnn.is_available() or not torch.backends.mkldnn.enabled:
        return "own"
    if not t.is_contiguous() or t.numel() <= 1:
        return "own"
    probe = torch.full((2,), math.inf, dtype=t.dtype)
    if not F.gelu(probe).isnan().all():
        return "own"
    return "ref" if 0 in t.stride() else "jit"


def safe_torch_gelu(t, path):
    """torch's gelu of t without calling its oneDNN kernel on t's layout: torch's oneDNN gelu
    crashes on some layouts it calls contiguous whose size-1 dims carry odd strides (a segfault
    on as_strided(randn(4000), (1, 5, 1, 5, 19, 4), (0, 380, 7, 76, 4, 1)); issue 47), and
    oneDNN's primitive cache hands a layout the kernel of an earlier one that differs only in a
    size-1 dim's stride. So: oneDNN's JIT kernel on a 1-D contiguous copy ("jit"), else torch's
    own kernel (oneDNN off) on t itself, whose edge values are oneDNN's reference kernel's
    (outside NaN bits, which are not promised). The strides are torch's in either case (the
    output is allocated before the path is chosen)."""
    with torch.backends.mkldnn.flags(enabled=False):
        own = F.gelu(t)
    if path != "jit":
        return own
    flat = F.gelu(t.reshape(-1).clone())  # 1-D, stride 1: oneDNN's JIT kernel
    return torch.empty_strided(own.shape, own.stride(), dtype=own.dtype).copy_(flat.view(own.shape))


def check_gelu_layout(t, where):
    """myops.gelu (directly and through the drop-in) on t against torch's path for t's layout:
    bits at the edges, the suite's tolerance elsewhere, NaN where torch has NaN, torch's strides."""
    path = torch_gelu_path(t)
    want = safe_torch_gelu(t, path)
    edge = (t.isinf() & (~want.isnan() | (path == "jit"))) | ((t.abs() >= 2.0**127) & (path == "jit"))
    tol = {torch.float32: (1e-5, 3e-6), torch.float16: (2**-10, 2e-6), torch.bfloat16: (2**-7, 2e-6)}[t.dtype]
    for how in ("direct", "drop-in"):
        if how == "direct":
            got = myops.gelu(t)
        else:
            with myops.enable({"gelu"}):
                got = F.gelu(t)
        msg = f"{where} {t.dtype} {tuple(t.shape)} {t.stride()} ({path}, {how})"
        assert got.stride() == want.stride(), f"{msg}: strides {got.stride()} != {want.stride()}"
        assert torch.equal(got.isnan(), want.isnan()), f"{msg}: NaN positions differ"
        try:
            assert_same(got[edge], want[edge], check_stride=False)
        except AssertionError as e:
            raise AssertionError(
                f"{msg}: {e} at {t[edge].tolist()}: {got[edge].tolist()} vs {want[edge].tolist()}"
            ) from None
        ok = ~edge & ~want.isnan()
        torch.testing.assert_close(got[ok], want[ok], rtol=tol[0], atol=tol[1], msg=lambda s: f"{msg}: {s}")


def gelu_layout_input(dtype, size, stride, seed):
    """as_strided over random values with the edge values (helpers.gelu_edge_values) spread in."""
    g = torch.Generator().manual_seed(seed)
    span = 1 + sum((n - 1) * s for n, s in zip(size, stride))
    base = (torch.randn(span + 3, generator=g, dtype=torch.float64) * 8).to(dtype)
    edges = gelu_edge_values(dtype)
    k = min(len(edges), base.numel())
    base[torch.randperm(base.numel(), generator=g)[:k]] = edges[torch.randperm(len(edges), generator=g)[:k]]
    return torch.as_strided(base, size, stride, 1)


# hand-picked: size-1 dims with strides 0, 1, odd and large, beside ordinary layouts (the first is
# issue 47's: contiguous to torch, whose gelu gives gelu(inf) = inf there)
GELU_LAYOUTS = [
    ((38, 1), (1, 0)),
    ((38, 1), (1, 1)),
    ((38, 1), (1, 7)),
    ((1, 38), (0, 1)),
    ((1, 38), (99, 1)),
    ((2, 1, 19), (19, 0, 1)),
    ((2, 1, 19), (19, 3, 1)),
    ((1, 5, 1, 5, 19, 4), (0, 380, 7, 76, 4, 1)),
    ((1, 5, 1, 5, 19, 4), (1900, 380, 380, 76, 4, 1)),
    ((1, 1, 40), (0, 0, 1)),
    ((1, 1, 40), (5, 3, 1)),
    ((40,), (1,)),
    ((3, 1, 1, 7), (7, 0, 0, 1)),
    ((7, 3), (1, 7)),
    ((20,), (2,)),
    ((1, 1), (0, 0)),
    ((2,), (1,)),
    ((2,), (0,)),
    ((1,), (0,)),
    ((5, 1, 33), (33, 1000, 1)),
]


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16, torch.float16], ids=str)
@pytest.mark.parametrize("onednn", [True, False], ids=["onednn", "no-onednn"])
def test_gelu_onednn_layouts(dtype, onednn):
    # issue 47: torch runs oneDNN's JIT kernel (NaN at +inf) only where its own test (contiguous,
    # more than one element) and oneDNN's (no stride of 0, a size-1 dim's included) both hold;
    # myops follows (TorchCpuGelu), directly and through the drop-in
    with torch.backends.mkldnn.flags(enabled=onednn):
        for i, (size, stride) in enumerate(GELU_LAYOUTS):
            check_gelu_layout(gelu_layout_input(dtype, size, stride, i), "hand-picked")


@st.composite
def gelu_layouts(draw):
    """Shapes of 1-6 dims; the size-1 dims get strides of 0, 1, odd or large; the rest are
    contiguous, or stepped / transposed now and then."""
    nd = draw(st.integers(1, 6))
    size = [draw(st.sampled_from([1, 1, 2, 3, 5, 17])) for _ in range(nd)]
    stride, acc = [0] * nd, 1
    for d in reversed(range(nd)):
        stride[d] = draw(st.sampled_from([0, 1, 3, 7, 1000])) if size[d] == 1 else acc
        acc *= size[d]
    if draw(st.booleans()) and nd > 1 and draw(st.integers(0, 3)) == 0:
        d = draw(st.integers(0, nd - 2))
        size[d], size[d + 1], stride[d], stride[d + 1] = size[d + 1], size[d], stride[d + 1], stride[d]
    if draw(st.integers(0, 4)) == 0:
        stride = [s * 2 for s in stride]
    return tuple(size), tuple(stride)


@settings(max_examples=150, deadline=None)
@given(
    layout=gelu_layouts(),
    dtype=st.sampled_from([torch.float32, torch.bfloat16, torch.float16]),
    seed=st.integers(0, 2**31),
)
def test_gelu_onednn_layouts_fuzz(layout, dtype, seed):
    check_gelu_layout(gelu_layout_input(dtype, *layout, seed), "hypothesis")


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16, torch.float16, torch.float64], ids=str)
def test_gelu_onednn_dims_limit(dtype):
    # torch's oneDNN gelu takes at most 12 dims (oneDNN's limit): on more it raises RuntimeError
    # ("dimensions are invalid"); myops too, where torch would run oneDNN. Elsewhere (oneDNN off,
    # the tanh form, float64, one element, not contiguous) both compute.
    x = torch.randn((2,) * 13).to(dtype)
    cases = [("erf", lambda f, t: f(t)), ("tanh", lambda f, t: f(t, approximate="tanh"))]
    for onednn in (True, False):
        with torch.backends.mkldnn.flags(enabled=onednn):
            for t in (x, x.transpose(0, 1), x[(0,) * 12][:1].reshape((1,) * 13)):
                for _, call in cases:
                    want, want_e = outcome(lambda: call(F.gelu, t))
                    got, got_e = outcome(lambda: call(myops.gelu, t))
                    where = (tuple(t.shape), t.stride(), onednn, got_e, want_e)
                    if want_e is not None:
                        assert type(got_e) is type(want_e), where
                        assert "dimensions are invalid" in str(got_e), where
                    else:
                        assert got_e is None, where
                        torch.testing.assert_close(got, want, equal_nan=True)


# ---- ternary --------------------------------------------------------------------------------------

TERNARY_SHAPES = [
    ((N, C, H, W), (N, C, H, W), (N, C, H, W)),
    ((N, C, H, W), (1, C, 1, 1), (N, 1, H, W)),
    ((1, C, 1, 1), (N, C, H, W), (W,)),
    ((H, W), (), (N, C, H, W)),
    ((N, 1, H, W), (N, C, H, W), ()),
    ((), (), ()),
    ((0, W), (1, W), (W,)),
]


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("name", list(TERNARY))
def test_ternary_dtypes(name, device):
    fn, ref, dtypes, exact = TERNARY[name]
    for dtype in dtypes:
        for shape in [(), (0,), (1,), (7,), (4097,)]:
            args = ternary_inputs(name, (shape, shape, shape), dtype, device)
            compare(exact, fn(*args), ref(*args))


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("name", list(TERNARY))
def test_ternary_broadcast(name, device):
    fn, ref, _, exact = TERNARY[name]
    for dtype in (torch.float32, torch.float16, torch.int64):
        for shapes in TERNARY_SHAPES:
            args = ternary_inputs(name, shapes, dtype, device)
            compare(exact, fn(*args), ref(*args))
        # channels_last first operand
        args = list(ternary_inputs(name, TERNARY_SHAPES[1], dtype, device))
        args[0] = args[0].contiguous(memory_format=torch.channels_last) if args[0].dim() == 4 else args[0]
        compare(exact, fn(*args), ref(*args))


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("name", list(TERNARY))
def test_ternary_layouts_and_large(name, layout, device):
    fn, ref, _, exact = TERNARY[name]
    shape = (6, 5, 4, 9)
    args = [with_layout(t, layout) for t in ternary_inputs(name, (shape,) * 3, torch.float32, device)]
    compare(exact, fn(*args), ref(*args))
    args2 = list(ternary_inputs(name, (shape,) * 3, torch.float32, device))
    args2[1] = with_layout(args2[1], layout)
    compare(exact, fn(*args2), ref(*args2))
    if layout == "misaligned":
        big = ternary_inputs(name, ((2**20 + 3,),) * 3, torch.float16, device)
        args3 = (big[0][1:], big[1][:-1], big[2][1:])
        compare(exact, fn(*args3), ref(*args3))


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("name", list(TERNARY))
def test_ternary_mixed_dtypes(name, device):
    fn, ref, _, exact = TERNARY[name]
    for dtypes in [
        (torch.float16, torch.float32, torch.float16),
        (torch.int32, torch.float32, torch.int64),
        (torch.int8, torch.int16, torch.uint8),
        (torch.bfloat16, torch.float64, torch.float32),
    ]:
        args = list(ternary_inputs(name, ((4, 7), (4, 7), (7,)), torch.float32, device))
        start = 1 if name == "where" else 0
        for i in range(start, 3):
            args[i] = args[i].to(dtypes[i])
        compare(exact, fn(*args), ref(*args))


def test_clamp_nan_bounds_and_crossed():
    nan = float("nan")
    x = torch.tensor([1.0, nan, 5.0, 1.0, 0.5, 7.0, -3.0] * 3)
    lo = torch.tensor([nan, 0.0, 6.0, 3.0, 0.0, 0.0, -1.0] * 3)
    hi = torch.tensor([2.0, 3.0, 4.0, nan, 1.0, 6.0, 1.0] * 3)
    assert_exact(myops.clamp(x, lo, hi), torch.clamp(x, lo, hi))
    assert_exact(myops.clamp(x, -1, 2.5), torch.clamp(x, -1, 2.5))
    i = torch.arange(-5, 6)
    assert_exact(myops.clamp(i, 1.5, 3), torch.clamp(i, torch.tensor(1.5), torch.tensor(3)))


def test_where_python_scalars():
    c = rand((5, 6), torch.bool, "cpu")
    x = sample((5, 6), torch.float16, "cpu")
    assert_exact(myops.where(c, x, 0.0), torch.where(c, x, 0.0))
    assert_exact(myops.where(c, 2, x), torch.where(c, 2, x))


# ---- bad input --------------------------------------------------------------------------------------


@pytest.mark.parametrize("device", DEVICES)
def test_bad_inputs(device):
    a = torch.randn(3, 4, device=device)
    b = torch.randn(5, 4, device=device)
    with pytest.raises(RuntimeError, match=r"myops.add: shapes do not broadcast: 'self' \[3, 4\], 'other' \[5, 4\]"):
        ops.add(a, b)
    with pytest.raises(RuntimeError, match=r"myops.where: shapes do not broadcast"):
        ops.where(a > 0, a, b)
    with pytest.raises(RuntimeError, match=r"myops.clamp: shapes do not broadcast: .*'max' \[5, 4\]"):
        ops.clamp(a, a, b)
    with pytest.raises(RuntimeError, match=r"myops.gelu: argument 'self' must have dtype in .*got Long"):
        ops.gelu(torch.arange(4, device=device))
    with pytest.raises(RuntimeError, match=r"myops.silu: argument 'self' must have dtype in .*got Int"):
        ops.silu(torch.arange(4, device=device, dtype=torch.int32))
    with pytest.raises(RuntimeError, match=r"myops.gelu: argument 'approximate' must be 'none' or 'tanh', got 'fast'"):
        ops.gelu(a, approximate="fast")
    with pytest.raises(RuntimeError, match=r"myops.relu: argument 'self' must have dtype in .*got Bool"):
        ops.relu(a > 0)
    with pytest.raises(RuntimeError, match=r"myops.mul: argument 'other' must have dtype in .*got ComplexFloat"):
        ops.mul(a, a.to(torch.complex64))
    with pytest.raises(RuntimeError, match=r"myops.cast: argument 'self' must have dtype in .*got UInt16"):
        ops.cast(torch.zeros(3, dtype=torch.uint16, device=device), torch.float32)
    with pytest.raises(
        RuntimeError, match=r"myops.where: argument 'condition' must have dtype in \{Bool, Byte\}, got Float"
    ):
        ops.where(a, a, a)
    with pytest.raises(RuntimeError, match=r"myops.sub: arguments 'self' and 'other' must not be bool"):
        ops.sub(a > 0, a > 1)
    with pytest.raises(RuntimeError, match=r"myops.add: argument 'alpha' must not be a floating point number"):
        ops.add(torch.arange(3, device=device), torch.arange(3, device=device), alpha=1.5)
    # bool operands promote (as torch.addcmul); a bool result is refused as torch refuses it
    assert_same(ops.addcmul(a, a > 0, a), torch.addcmul(a, a > 0, a))
    with pytest.raises(NotImplementedError, match=r"myops.addcmul: not implemented for a bool result"):
        ops.addcmul(a > 0, a > 0, a > 1)
    with pytest.raises(NotImplementedError, match=r"myops.clamp: not implemented for a bool result"):
        ops.clamp(a > 0, a > 0, a > 1)


@cuda_only
def test_different_devices():
    a = torch.randn(3, 4, device="cuda")
    with pytest.raises(
        RuntimeError,
        match=r"myops.add: expected all tensors on the same device, got 'self' on cuda:0 and 'other' on cpu",
    ):
        ops.add(a, torch.randn(3, 4))
    with pytest.raises(RuntimeError, match=r"myops.where: expected all tensors on the same device"):
        ops.where(torch.ones(4, dtype=torch.bool), a, a)
    # a 0-d CPU tensor is a scalar and may accompany CUDA tensors, as in PyTorch
    assert_exact(ops.add(a, torch.tensor(2.5)), a + torch.tensor(2.5))


def test_inputs_not_modified():
    a = sample((64, 33), torch.float32, "cpu")
    b = sample((33,), torch.float16, "cpu")
    a0, b0 = a.clone(), b.clone()
    ops.addcmul(a, b, a, value=3)
    ops.div(b, a)
    ops.cast(b, torch.float32)
    assert torch.equal(a.view(torch.int32), a0.view(torch.int32)) and torch.equal(
        b.view(torch.int16), b0.view(torch.int16)
    )


# ---- fake kernels, opcheck, autograd ----------------------------------------------------------------


def op_samples(device):
    """(op, args, kwargs) covering every op with small inputs."""
    x = torch.randn(2, 3, 4, device=device)
    y = torch.randn(3, 1, device=device)
    cl = torch.randn(2, 3, 2, 2, device=device).contiguous(memory_format=torch.channels_last)
    return (
        [
            (ops.relu, (x,), {}),
            (ops.gelu, (x,), {"approximate": "tanh"}),
            (ops.gelu, (cl,), {}),
            (ops.silu, (x.transpose(0, 2),), {}),
            (ops.sigmoid, (x,), {}),
            (ops.sigmoid, (torch.arange(5, device=device),), {}),
            (ops.mul.Scalar, (x, 2.5), {}),
            (ops.mul.Scalar, (torch.arange(5, device=device), 3), {}),
            (ops.mul_scalar, (x, 2.5), {}),  # the compatibility alias of mul.Scalar
            (ops.add.Scalar, (x.transpose(0, 2), 1.5, 2), {}),
            (ops.add.Scalar, (torch.arange(5, device=device, dtype=torch.int8), 300), {}),
            (ops.sub.Scalar, (x, 2), {"alpha": 0.5}),
            (ops.div.Scalar, (x, 3), {}),
            (ops.div.Scalar, (torch.arange(5, device=device), 2), {}),
            (ops.add.ScalarSelf, (2.5, x), {"alpha": 3}),
            (ops.sub.ScalarSelf, (2, x.transpose(1, 2)), {}),
            (ops.mul.ScalarSelf, (-1.5, x.half()), {}),
            (ops.div.ScalarSelf, (3, x.abs() + 1), {}),
            (ops.where.ScalarOther, (x > 0, x, 0.5), {}),
            (ops.where.ScalarSelf, (y > 0, 2, y.t()), {}),
            (ops.where.Scalar, (x > 0, 1.5, 2), {}),
            (ops.cast, (x, torch.float16), {}),
            (ops.cast, (x[:, ::2], torch.int32), {}),
            (ops.add.default, (x, y), {"alpha": 2}),
            (ops.add.default, (x.half(), torch.tensor(1.5)), {}),
            (ops.sub.default, (x, y.double()), {}),
            (ops.mul.default, (cl, cl[:1, :, :1]), {}),
            (ops.div.default, (torch.arange(1, 7, device=device), torch.arange(1, 7, device=device).flip(0)), {}),
            (ops.maximum, (x, y), {}),
            (ops.minimum, (x.transpose(1, 2), y.t()), {}),
            (ops.where.default, (x > 0, x, y), {}),
            (ops.addcmul, (x, y, x), {"value": 0.5}),
            (ops.clamp.default, (x, y - 1, torch.tensor(1.0, device=device)), {}),
            (ops.clamp.Scalar, (x, -0.5, None), {}),
            (ops.clamp.Scalar, (x.transpose(1, 2), -0.5, 0.5), {}),
            (ops.pow.default, (x.abs(), y), {}),
            (ops.pow.Scalar, (x.abs().transpose(0, 2), 2.5), {}),
        ]
        + [  # positive: in every unary op's domain (no NaN, which opcheck's comparisons reject)
            (op.packet, ((x.abs() + 0.5).transpose(0, 2),), {}) for op in EW_OPS.values() if op.sig == "unary"
        ]
        + [
            (op.packet, (torch.arange(6, device=device),), {})
            for op in EW_OPS.values()
            if op.sig == "unary" and torch.int64 in op.accepted
        ]
    )


def test_op_samples_cover_the_table():
    sampled = {
        getattr(op, "default", op) if isinstance(op, torch._ops.OpOverloadPacket) else op
        for op, _, _ in op_samples("cpu")
    }
    missing = [op.qualname for op in EW_OPS.values() if op.packet not in sampled]
    assert not missing, f"op_samples has no call of {missing}"


@pytest.mark.parametrize("device", DEVICES)
def test_opcheck(device):
    for op, args, kwargs in op_samples(device):
        torch.library.opcheck(op, args, kwargs)
        if all(not isinstance(a, torch.Tensor) or a.dtype.is_floating_point for a in args):
            args_g = tuple(a.detach().requires_grad_() if isinstance(a, torch.Tensor) and a.dim() else a for a in args)
            if op not in (ops.cast,):
                torch.library.opcheck(op, args_g, kwargs)


@pytest.mark.parametrize("device", DEVICES)
def test_fake_matches_real(device):
    from torch._subclasses.fake_tensor import FakeTensorMode

    cases = list(op_samples(device))
    a = torch.randn(4, 1, 3, 5, device=device)
    cases += [
        (ops.add, (a.half().contiguous(memory_format=torch.channels_last), a.permute(0, 2, 1, 3)), {}),
        (ops.mul, (torch.randn(6, 5, device=device)[::2].half(), torch.randn(5, device=device)), {}),
        (
            ops.where,
            (
                a > 0,
                torch.randn(4, 1, 3, 10, device=device).half()[..., ::2],
                a.double().permute(3, 1, 2, 0).contiguous().permute(3, 1, 2, 0),
            ),
            {},
        ),
        (ops.clamp, (a.expand(4, 2, 3, 5), a.half(), a.int()), {}),
    ]
    for op, args, kwargs in cases:
        real = op(*args, **kwargs)
        with FakeTensorMode() as mode:
            fargs = tuple(mode.from_tensor(t) if isinstance(t, torch.Tensor) else t for t in args)
            fake = op(*fargs, **kwargs)
        assert (fake.shape, fake.stride(), fake.dtype, fake.device) == (
            real.shape,
            real.stride(),
            real.dtype,
            real.device,
        ), op


# ---- the layout rules the fake kernels read (csrc/core/output_strides.h) -------------------------


@st.composite
def _layouts(draw, max_inputs=3):
    """A broadcast shape (size-0 and size-1 dims included) and 1 to max_inputs CPU float32 inputs
    that broadcast to it: each drops some leading dims, keeps some dims at size 1, and lies in a
    random dim order in its buffer, maybe every other element along a dim (not dense) or expanded
    (stride 0)."""
    shape = draw(st.lists(st.sampled_from([0, 1, 1, 2, 3, 4]), min_size=0, max_size=5))
    ins = []
    for _ in range(draw(st.integers(1, max_inputs))):
        nd = draw(st.integers(0, len(shape)))
        sizes = [s if draw(st.booleans()) or s == 1 else 1 for s in shape[len(shape) - nd :]]
        perm = draw(st.permutations(range(nd)))
        step = draw(st.sampled_from([1, 1, 2]))
        buf = [sizes[p] * (step if i == nd - 1 else 1) for i, p in enumerate(perm)]
        t = torch.randn(buf)
        if step > 1 and nd:
            t = t[..., ::step]
        t = t.permute([perm.index(d) for d in range(nd)]) if nd else t
        expand = [
            s if (t.shape[d] == 1 and draw(st.integers(0, 3)) == 0) else -1
            for d, s in enumerate(shape[len(shape) - nd :])
        ]
        ins.append(t.expand(expand) if nd else t)
    return ins


def _flat(ins):
    return ([s for t in ins for s in t.shape], [s for t in ins for s in t.stride()], [t.dim() for t in ins])


_BY_ARITY = {1: lambda a: ops.relu(a), 2: lambda a, b: ops.add(a, b), 3: lambda a, b, c: ops.addcmul(a, b, c)}


@settings(max_examples=400, deadline=None, derandomize=True)
@given(ins=_layouts())
def test_out_strides_rule_matches_kernels(ins):
    """The control op (the fake kernels' output-stride rule) on concrete ints gives the strides
    of the eager op's output, for random layouts (the kernels' planner reads the same rule)."""
    out = _BY_ARITY[len(ins)](*ins)
    assert ops._ew_out_strides(list(out.shape), *_flat(ins)) == list(out.stride()), [
        (tuple(t.shape), t.stride()) for t in ins
    ]


@settings(max_examples=300, deadline=None, derandomize=True)
@given(ins=_layouts(max_inputs=1))
def test_preserve_strides_rule_matches_torch(ins):
    """The control op for t.to(dtype)'s strides equals myops.cast's and torch's (empty_like with
    memory_format=preserve) for random layouts, empty and size-1 dims included."""
    (t,) = ins
    got = ops._ew_preserve_strides(list(t.shape), list(t.stride()))
    assert got == list(ops.cast(t, torch.float64).stride()) == list(t.to(torch.float64).stride()), (
        tuple(t.shape),
        t.stride(),
    )


def _dyn_layouts():
    """(name, op, make(n) -> inputs, the dim of size n per input or None): transposed, channels_last, broadcast
    size-1 dims, an operand cast first (the CPU casts before choosing the layout) and a cast of a
    non-dense tensor."""
    cl = lambda n: torch.randn(n, 3, 4, 5).contiguous(memory_format=torch.channels_last)  # noqa: E731
    return [
        ("transposed", ops.add.default, lambda n: (torch.randn(n, 3, 5).transpose(1, 2), torch.randn(n, 5, 3)), (0, 0)),
        ("channels_last", ops.mul.default, lambda n: (cl(n), cl(n)), (0, 0)),
        ("channels_last_unary", ops.sigmoid.default, lambda n: (cl(n),), (0,)),
        (
            "broadcast",
            ops.add.default,
            lambda n: (torch.randn(n, 1, 5, 3).permute(0, 3, 2, 1), torch.randn(1, 1, 5, 4)),
            (0, None),
        ),
        (
            "broadcast_ternary",
            ops.where.default,
            lambda n: (torch.randn(5, 1, n).permute(2, 1, 0) > 0, torch.randn(1, 4, 1), torch.randn(n, 4, 5)),
            (0, None, 0),
        ),
        ("cast_first", ops.add.default, lambda n: (cl(n).half(), torch.randn(n, 1, 5, 4).transpose(2, 3)), (0, 0)),
        ("cast_sliced", ops.cast.default, lambda n: (torch.randn(n, 6, 5).transpose(0, 2)[:, ::2],), (2,)),
    ]


class _Call(torch.nn.Module):
    def __init__(self, op, extra=()):
        super().__init__()
        self.op, self.extra = op, extra

    def forward(self, *ins):
        return self.op(*ins, *self.extra)


def _layout_cases():
    return [pytest.param(op, make, dyn, id=name) for name, op, make, dyn in _dyn_layouts()]


@pytest.mark.parametrize("op,make,dyn", _layout_cases())
def test_export_dynamic_layouts(op, make, dyn):
    """torch.export with a dynamic dim: the fake kernel's output strides are the eager op's (in
    the graph's metadata and when the exported program runs at another size), and the layout
    rules' control ops leave no node in the graph."""
    extra = (torch.float16,) if op is ops.cast.default else ()
    n = torch.export.Dim("n", min=2, max=64)
    ep = torch.export.export(
        _Call(op, extra), make(4), dynamic_shapes=(tuple(None if d is None else {d: n} for d in dyn),)
    )
    calls = [nd for nd in ep.graph.nodes if nd.op == "call_function"]
    assert [nd.target for nd in calls] == [op], ep.graph
    for size in (4, 7):
        ins = make(size)
        eager = op(*ins, *extra)
        got = ep.module()(*ins)
        assert (got.shape, got.stride(), got.dtype) == (eager.shape, eager.stride(), eager.dtype)
    val = calls[0].meta["val"]
    hint = [s.node.hint if isinstance(s, torch.SymInt) else s for s in val.stride()]
    assert hint == list(op(*make(4), *extra).stride())


@pytest.mark.parametrize("op,make,dyn", _layout_cases())
def test_make_fx_symbolic_layouts(op, make, dyn):
    """make_fx(tracing_mode='symbolic'): one node (the op), its symbolic output strides evaluate
    to the eager op's."""
    from torch.fx.experimental.proxy_tensor import make_fx

    extra = (torch.float16,) if op is ops.cast.default else ()
    ins = make(5)
    g = make_fx(lambda *a: op(*a, *extra), tracing_mode="symbolic")(*ins)
    calls = [nd for nd in g.graph.nodes if nd.op == "call_function"]
    assert [nd.target for nd in calls] == [op], g.graph
    val = calls[0].meta["val"]
    hint = [s.node.hint if isinstance(s, torch.SymInt) else s for s in val.stride()]
    assert hint == list(op(*ins, *extra).stride())


@pytest.mark.parametrize("op,make,dyn", _layout_cases())
def test_compile_dynamic_layouts(op, make, dyn):
    """torch.compile(dynamic=True): the op's result and a pointwise op that inductor generates on
    it (reading the result by the fake kernel's strides, and laying its own out like them) have
    the eager results' strides and values at two sizes."""
    torch._dynamo.reset()
    extra = (torch.float16,) if op is ops.cast.default else ()

    def f(*a):
        out = op(*a, *extra)
        return out, out * 3

    compiled = torch.compile(f, dynamic=True, fullgraph=True)
    # no compiled artifact from an earlier run: their cache keys do not cover the fake kernels
    with torch._inductor.config.patch(fx_graph_cache=False), torch._functorch.config.patch(enable_autograd_cache=False):
        for size in (4, 7):
            ins = make(size)
            for got, eager in zip(compiled(*ins), f(*ins)):
                assert (got.shape, got.stride(), got.dtype) == (eager.shape, eager.stride(), eager.dtype)
                assert_exact(got, eager)


GRAD_CASES = [
    # the op table's plain unary and binary ops, then the other forms
    *[(op.fn, getattr(myops, op.fn), op.arity) for op in EW_OPS.values() if op.sig in ("unary", "binary")],
    ("gelu", lambda x: myops.gelu(x), 1),
    ("gelu_tanh", lambda x: myops.gelu(x, "tanh"), 1),
    ("mul_scalar", lambda x: myops.mul_scalar(x, -2.5), 1),
    ("add.Scalar", lambda x: myops.add(x, 2.5, alpha=3), 1),
    ("sub.Scalar", lambda x: myops.sub(x, 1.5, alpha=2), 1),
    ("div.Scalar", lambda x: myops.div(x, -1.5), 1),
    ("add.ScalarSelf", lambda x: myops.add(2.5, x, alpha=3), 1),
    ("sub.ScalarSelf", lambda x: myops.sub(2, x, alpha=1.5), 1),
    ("mul.ScalarSelf", lambda x: myops.mul(-2.5, x), 1),
    ("div.ScalarSelf", lambda x: myops.div(1.5, x * x + 1), 1),
    ("where.ScalarOther", lambda x: myops.where(x > 0, x, 0.5), 1),
    ("where.ScalarSelf", lambda x: myops.where(x > 0, 0.5, x), 1),
    ("cast", lambda x: myops.cast(x, torch.float32).double(), 1),
    ("add", lambda a, b: myops.add(a, b, alpha=-1.5), 2),
    ("sub", lambda a, b: myops.sub(a, b, alpha=2), 2),
    ("where", None, 3),
    ("addcmul", lambda a, b, c: myops.addcmul(a, b, c, value=0.7), 3),
    ("clamp", myops.clamp, 3),
]


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("name,fn,nargs", GRAD_CASES, ids=[c[0] for c in GRAD_CASES])
def test_gradcheck(name, fn, nargs, device):
    shapes = [(3, 4), (4,), (3, 1)][:nargs]
    args = [torch.randn(s, dtype=torch.float64, device=device, requires_grad=True) for s in shapes]
    if name == "cast":
        # float64 -> float32 -> float64 loses precision: check on values exact in float32
        args = [torch.randint(-8, 8, (3, 4), device=device).double().div(4).requires_grad_()]
        fn = lambda x: myops.cast(x, torch.float64)  # noqa: E731 (same-dtype cast: exact)
    if name == "where":
        cond = torch.randn(3, 4, device=device) > 0
        fn = lambda a, b: ops.where(cond, a, b)  # noqa: E731
        args = args[:2]
    if name in ("relu", "abs"):
        args[0] = args[0].detach().masked_fill(args[0].detach().abs() < 0.1, 0.5).requires_grad_()
    if name in ("log", "sqrt", "rsqrt", "pow"):  # positive: their domain (pow: a positive base)
        args[0] = (args[0].detach().abs() + 0.5).requires_grad_()
    if name == "clamp":
        lo = torch.randn(4, dtype=torch.float64, device=device) - 1
        hi = lo + 1.5
        x = torch.randn(3, 4, dtype=torch.float64, device=device) * 2
        # keep x away from the bounds (the derivative jumps there)
        x = torch.where((x - lo).abs() < 0.05, x + 0.1, x)
        x = torch.where((x - hi).abs() < 0.05, x + 0.1, x)
        args = [x.requires_grad_(), lo.requires_grad_(), hi.requires_grad_()]
    if name in ("maximum", "minimum"):
        args[1] = (args[1].detach() + 0.3).requires_grad_()  # no ties
    assert torch.autograd.gradcheck(fn, tuple(args))


def test_cast_backward_dtype():
    x = torch.randn(5, dtype=torch.float64, requires_grad=True)
    y = myops.cast(x, torch.float16)
    y.sum().backward()
    assert x.grad.dtype == torch.float64 and torch.equal(x.grad, torch.ones(5, dtype=torch.float64))
    # integer results are not differentiable
    assert not myops.cast(x, torch.int32).requires_grad


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64], ids=str)
def test_sub_alpha_gradient(dtype):
    # sub's gradient of `other` is -grad * alpha, as torch computes it: for alpha = -2**63 the
    # negation does not exist in int64 (it wrapped to -2**63 and flipped the gradient's sign)
    a, b = torch.randn(6, dtype=dtype), torch.randn(3, 6, dtype=dtype)
    g = torch.randn(3, 6, dtype=dtype)
    for alpha in (-(2**63), 2**63 - 1, -3, 7, 0.3, -2.5):
        got = torch.autograd.grad(myops.sub(a.requires_grad_(), b.requires_grad_(), alpha=alpha), (a, b), g)
        want = torch.autograd.grad(torch.sub(a, b, alpha=alpha), (a, b), g)
        for x, y in zip(got, want):
            assert_same(x, y)
        if alpha == -(2**63):
            assert torch.equal(got[1] > 0, g > 0)  # -grad * alpha: grad's sign


def test_addcmul_gradient_order():
    # torch's order: grad_t1 = grad * (t2 * value), grad_t2 = grad * (t1 * value). (grad * value)
    # * t2 rounds differently (about 1 ulp), and in half it overflows where torch's does not.
    t1 = torch.full((4,), 0.25, dtype=torch.float16, requires_grad=True)
    t2 = torch.full((4,), 0.25, dtype=torch.float16, requires_grad=True)
    s = torch.zeros(4, dtype=torch.float16, requires_grad=True)
    g = torch.full((4,), -60000.0, dtype=torch.float16)  # g * 4 is -inf in half, g * (0.25 * 4) is not
    got = torch.autograd.grad(myops.addcmul(s, t1, t2, value=4), (s, t1, t2), g)
    want = torch.autograd.grad(torch.addcmul(s, t1, t2, value=4), (s, t1, t2), g)
    assert want[1].isfinite().all()
    for x, y in zip(got, want):
        assert_same(x, y)
    for value in (0.3, -1.7, 1, 3):  # random float32, broadcast: bit for bit
        s, t1, t2 = torch.randn(5, 1, 7), torch.randn(7), torch.randn(5, 4, 1)
        g = torch.randn(5, 4, 7)
        args = [x.requires_grad_() for x in (s, t1, t2)]
        got = torch.autograd.grad(myops.addcmul(*args, value=value), args, g)
        want = torch.autograd.grad(torch.addcmul(*args, value=value), args, g)
        for x, y in zip(got, want):
            assert_same(x, y)


# Run in a subprocess with MYOPS_CPU_ISA set: every build's results are compared with torch's at
# the level a CPU with that build runs (ATEN_CPU_CAPABILITY, see test_cpu_build): bit for bit on
# the exact ops, within the suite's tolerance on gelu, silu and sigmoid. Sizes cover the vector loops, their tails, broadcast and strided rows, and a
# streamed (> 16 MiB) output.
_BUILD_SCRIPT = r"""
import sys, torch, myops
import torch.nn.functional as F
want = sys.argv[1]
assert torch.ops.myops._cpu_isa() == want, (torch.ops.myops._cpu_isa(), want)
sys.path.insert(0, sys.argv[2])
from helpers import (check_add_alpha_scalar_tail, check_gelu_edges, check_gradient_edges, check_number_first,
                     check_signed_zero_ties)
torch.manual_seed(0)

def ulp_ok(got, ref, dt):
    # the suite's compare(): 4 ulp (float32/64) or 1 ulp (half/bfloat16), or 3e-6 * max(1, |ref|)
    assert torch.equal(got.isnan(), ref.isnan()), dt
    ok = got.isnan() | (got == ref)
    bits = {torch.float32: torch.int32, torch.float64: torch.int64, torch.float16: torch.int16,
            torch.bfloat16: torch.int16}[dt]
    def ordered(t):
        i = t.view(bits).long()
        return torch.where(i < 0, -(i & ((1 << (8 * t.element_size() - 1)) - 1)), i)
    ulps = 1 if dt in (torch.float16, torch.bfloat16) else 4
    ok |= (ordered(got) - ordered(ref)).abs() <= ulps
    ok |= (got.double() - ref.double()).abs() <= 3e-6 * ref.double().abs().clamp(min=1)
    assert ok.all(), (dt, got[~ok][:4], ref[~ok][:4])

specials = torch.tensor([float("nan"), float("inf"), -float("inf"), -0.0, 0.0, 1e-40, -1e-40, -100.0,
                         -88.5, -30.0, 30.0, 100.0])
for dt in (torch.float32, torch.float64, torch.float16, torch.bfloat16, torch.int32, torch.uint8):
    for n in (1, 37, 4 * 37 * 5, 70001):
        x = (torch.randn(n) * 8).to(dt)
        if dt.is_floating_point and n > 20:
            x[3:3 + len(specials)] = specials.to(dt)
        y = (torch.randn(n) * 8).to(dt)
        z = (torch.randn(n) * 8).to(dt)
        c = torch.rand(n) > 0.5
        x3, y2 = x[: n - n % 37].view(-1, 37), y[:37]
        exact = [
            (lambda: myops.add(x, y), lambda: torch.add(x, y)),
            (lambda: myops.add(x3, y2[None]), lambda: torch.add(x3, y2[None])),
            (lambda: myops.mul(x3.t(), y2[:, None]), lambda: torch.mul(x3.t(), y2[:, None])),
            (lambda: myops.maximum(x[1:], y[:-1]), lambda: torch.maximum(x[1:], y[:-1])),
            (lambda: myops.minimum(x, y), lambda: torch.minimum(x, y)),
            (lambda: myops.where(c, x, y), lambda: torch.where(c, x, y)),
            (lambda: myops.cast(x, torch.float16), lambda: x.to(torch.float16)),
            (lambda: myops.cast(x, torch.bfloat16), lambda: x.to(torch.bfloat16)),
            (lambda: myops.cast(x, torch.float32), lambda: x.to(torch.float32)),
            (lambda: myops.clamp(x, y, y + 3), lambda: torch.clamp(x, y, y + 3)),
        ]
        if dt != torch.uint8:
            exact.append((lambda: myops.sub(x, y), lambda: torch.sub(x, y)))
        if dt != torch.uint8:
            exact.append((lambda: myops.relu(x[1:]), lambda: torch.relu(x[1:])))
        for my, ref in exact:
            got, want_ = my(), ref()
            assert got.dtype == want_.dtype and got.stride() == want_.stride(), dt
            assert torch.equal(got, want_) or (got.is_floating_point() and torch.equal(got.isnan(), want_.isnan())
                                               and torch.equal(got.nan_to_num(), want_.nan_to_num())), (dt, n)
        if dt.is_floating_point:
            # add / sub with alpha and addcmul: fused (rounded once) in torch's AVX2 / AVX-512
            # loops, rounded after each operation in its default build (the baseline build's
            # peer); half / bfloat16 add with alpha in torch's own two orders. Bit for bit, with
            # a 0-d operand (a stride-0 row in torch's loop), broadcast and stepped rows.
            s0 = y[-1].clone()
            for my, ref in [(lambda: myops.add(x, y, alpha=3), lambda: torch.add(x, y, alpha=3)),
                            (lambda: myops.sub(x, y), lambda: torch.sub(x, y)),
                            (lambda: myops.sub(x[1:], y[:-1], alpha=0.3), lambda: torch.sub(x[1:], y[:-1], alpha=0.3)),
                            (lambda: myops.add(x3, y2[None], alpha=-1.7), lambda: torch.add(x3, y2[None], alpha=-1.7)),
                            (lambda: myops.add(s0, x, alpha=2.5), lambda: torch.add(s0, x, alpha=2.5)),
                            (lambda: myops.add(x3.t(), y2[:, None], alpha=3), lambda: torch.add(x3.t(), y2[:, None], alpha=3)),
                            (lambda: myops.addcmul(x, y, z, value=0.5), lambda: torch.addcmul(x, y, z, value=0.5)),
                            (lambda: myops.addcmul(x, y, z), lambda: torch.addcmul(x, y, z)),
                            (lambda: myops.addcmul(x[1:], y[:-1], s0, value=-1.7), lambda: torch.addcmul(x[1:], y[:-1], s0, value=-1.7)),
                            (lambda: myops.addcmul(x3, y2[None], x3.t()[:, :1].t(), value=0.3),
                             lambda: torch.addcmul(x3, y2[None], x3.t()[:, :1].t(), value=0.3))]:
                got, want_ = my(), ref()
                assert got.stride() == want_.stride() and torch.equal(got.nan_to_num(), want_.nan_to_num()), (dt, n)
            for got, ref in [(myops.gelu(x), F.gelu(x)),
                             (myops.gelu(x, approximate="tanh"), F.gelu(x, approximate="tanh")),
                             (myops.silu(x[1:]), F.silu(x[1:])), (myops.sigmoid(x), torch.sigmoid(x))]:
                ulp_ok(got, ref, dt)
    if dt == torch.float32:
        big = torch.randn((1 << 22) + 37)  # 16 MiB outputs: streamed stores
        assert torch.equal(myops.add(big[1:], big[:-1]), torch.add(big[1:], big[:-1]))
        ulp_ok(myops.sigmoid(big[3:]), torch.sigmoid(big[3:]), dt)

# docs/exactness.md: the stated bounds of gelu (both forms), silu and sigmoid against torch, on a
# 2e6-point grid over [-12, 12], through myops' vector loop and its scalar loop (contiguous and
# stepped input) against torch's two: (absolute, ulp for x >= -2, ulp everywhere or None)
BOUNDS = {
    torch.float32: {"gelu": (1.5e-6, 76, None), "gelu_tanh": (1.5e-6, 17, None), "silu": (2e-6, 4, 4),
                    "sigmoid": (1.5e-6, 4, 4)},
    torch.float64: {"gelu": (2e-15, 16, None), "gelu_tanh": (2e-15, 16, None), "silu": (2e-15, 2, 2),
                    "sigmoid": (2e-15, 2, 2)},
}
FNS = {"gelu": (myops.gelu, F.gelu), "gelu_tanh": (lambda t: myops.gelu(t, approximate="tanh"),
                                                   lambda t: F.gelu(t, approximate="tanh")),
       "silu": (myops.silu, F.silu), "sigmoid": (myops.sigmoid, torch.sigmoid)}
def ordered(t):
    i = t.contiguous().view({4: torch.int32, 8: torch.int64}[t.element_size()]).long()
    return torch.where(i < 0, -(i & ((1 << (8 * t.element_size() - 1)) - 1)), i)
for dt, bounds in BOUNDS.items():
    g = torch.linspace(-12, 12, 2_000_001, dtype=torch.float64).to(dt)
    big = torch.empty(2 * g.numel(), dtype=dt)
    big[::2] = g
    for name, (absolute, ulp_right, ulp_all) in bounds.items():
        fm, ft = FNS[name]
        for mine in (fm(g), fm(big[::2])):
            for theirs in (ft(g), ft(big[::2])):
                ulps = (ordered(mine) - ordered(theirs)).abs()
                assert (mine.double() - theirs.double()).abs().max().item() <= absolute, (dt, name)
                assert ulps[g >= -2].max().item() <= ulp_right, (dt, name, ulps[g >= -2].max().item())
                assert ulp_all is None or ulps.max().item() <= ulp_all, (dt, name, ulps.max().item())
# gelu (erf), float32: in the negative tail (x < -3) within 5e-7 of the exact value (float64)
g = torch.linspace(-12, 12, 2_000_001)
exact = g.double() * 0.5 * torch.special.erfc(-g.double() / 2 ** 0.5)
assert (myops.gelu(g).double() - exact)[g < -3].abs().max().item() < 5e-7

# -0.0 / +0.0 ties in maximum / minimum / clamp: broken as torch's loops break them at this level
# add / sub with alpha beside a stride-0 operand (torch's scalar tail), gelu's edges (oneDNN or not)
for dt in (torch.float32, torch.float64, torch.float16, torch.bfloat16):
    check_signed_zero_ties(dt)
    check_add_alpha_scalar_tail(dt)
    check_gelu_edges(dt)
# a number first beside float16 / bfloat16 (not rounded to them), gradients at torch's edges
for dt in (torch.float16, torch.bfloat16):
    check_number_first(dt)
for dt in (torch.float32, torch.float16):
    check_gradient_edges(dt)
print("ok")
"""


def _cpu_builds():
    """The CPU builds this machine can run (core/cpu_isa.h), best last."""
    import subprocess
    import sys

    order = ["baseline", "avx2", "avx512", "avx512_bf16"]
    best = subprocess.run(
        [sys.executable, "-c", "import torch, myops; print(torch.ops.myops._cpu_isa())"],
        capture_output=True,
        text=True,
        env=_env_without_isa(),
    ).stdout.strip()
    return order[: order.index(best) + 1] if best in order else ["baseline"]


def _env_without_isa(**extra):
    import os

    env = {k: v for k, v in os.environ.items() if k not in ("MYOPS_CPU_ISA", "MYOPS_CPU_BASELINE")}
    env.update(extra)
    return env


@pytest.mark.parametrize("isa", ["baseline", "avx2", "avx512", "avx512_bf16"])
def test_cpu_build(isa):
    # The CPU loops are built for the baseline, AVX2 and (floating dtypes) AVX-512, picked at run
    # time; MYOPS_CPU_ISA forces one. The suite above runs the best build this CPU has; this runs
    # each build the CPU can run against torch. A build is skipped only where the CPU lacks it.
    import subprocess
    import sys

    import os

    if isa not in _cpu_builds():
        pytest.skip(f"this CPU cannot run the {isa} build")
    # against torch at the level a CPU with that build runs it: torch's default kernels on a CPU
    # without AVX2 (the baseline build's peer), its AVX2 / AVX-512 ones otherwise
    peer = {"baseline": "default", "avx2": "avx2"}.get(isa, "avx512")
    res = subprocess.run(
        [sys.executable, "-c", _BUILD_SCRIPT, isa, os.path.dirname(__file__)],
        env=_env_without_isa(MYOPS_CPU_ISA=isa, ATEN_CPU_CAPABILITY=peer),
        capture_output=True,
        text=True,
    )
    assert res.returncode == 0 and res.stdout.strip() == "ok", res.stderr[-3000:]


def test_cpu_isa_switch():
    # MYOPS_CPU_BASELINE=1 is an alias of MYOPS_CPU_ISA=baseline; a bad value or a build the CPU
    # cannot run is a RuntimeError at the first CPU call, naming the variable; unset: the best.
    import subprocess
    import sys

    def isa_of(**env):
        code = (
            "import torch, myops\ntry:\n    print(torch.ops.myops._cpu_isa())\nexcept RuntimeError as e:\n"
            "    print('error:', e)\ntry:\n    myops.relu(torch.ones(3))\nexcept RuntimeError as e:\n"
            "    print('error:', e)\n"
        )
        res = subprocess.run([sys.executable, "-c", code], env=_env_without_isa(**env), capture_output=True, text=True)
        assert res.returncode == 0, res.stderr[-2000:]
        return res.stdout.strip().splitlines()

    builds = _cpu_builds()
    assert isa_of() == [builds[-1]]
    assert isa_of(MYOPS_CPU_BASELINE="1") == ["baseline"]
    assert isa_of(MYOPS_CPU_ISA="AVX2" if "avx2" in builds else "baseline") == [builds[min(1, len(builds) - 1)]]
    out = isa_of(MYOPS_CPU_ISA="sse9")
    assert len(out) == 2 and all(
        o.startswith("error:") and "MYOPS_CPU_ISA='sse9' is not a CPU build" in o for o in out
    ), out
    if builds[-1] != "avx512_bf16":
        out = isa_of(MYOPS_CPU_ISA="avx512_bf16")
        assert len(out) == 2 and all("which this CPU cannot run" in o for o in out), out


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16, torch.int32], ids=str)
def test_large_broadcast_rows(device, dtype):
    # Big enough to be split between threads at positions that fall inside rows, with short
    # and odd rows that the CPU loops walk row by row (a broadcast operand keeps dims apart).
    a = rand((701, 97), dtype, device)
    b = rand((97,), dtype, device)
    c = rand((5, 37, 23, 21), dtype, device).contiguous(memory_format=torch.channels_last)
    w = rand((1, 37, 1, 1), dtype, device)
    m = torch.rand(701, 1, device=device) > 0.5
    for got, want in [
        (myops.add(a, b), torch.add(a, b)),
        (myops.mul(c, w), torch.mul(c, w)),
        (myops.maximum(a.t(), b[:, None]), torch.maximum(a.t(), b[:, None])),
        (myops.where(m, a, b), torch.where(m, a, b)),
        (myops.clamp(c, w, w + 5), torch.clamp(c, w, w + 5)),
    ]:
        assert got.dtype == want.dtype and got.stride() == want.stride()
        assert torch.equal(got, want)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64], ids=str)
def test_streamed_outputs_cpu(dtype):
    # Outputs over 16 MiB are written with non-temporal stores on the CPU (after a scalar head
    # up to the vector alignment): misaligned, broadcast and transcendental cases.
    n = (1 << 22) + 37
    x = rand((n,), dtype, "cpu")
    y = rand((n,), dtype, "cpu")
    a = rand((16, 64, 56, 57), dtype, "cpu")
    b = rand((1, 64, 1, 1), dtype, "cpu")
    for got, want in [
        (myops.add(x[1:], y[:-1]), torch.add(x[1:], y[:-1])),
        (myops.mul(a, b), torch.mul(a, b)),
        (myops.maximum(a[:, :, 1:], b), torch.maximum(a[:, :, 1:], b)),
        (myops.relu(x[3:]), torch.relu(x[3:])),
    ]:
        assert got.stride() == want.stride() and torch.equal(got, want)
    assert_ulp(myops.sigmoid(x[1:]), torch.sigmoid(x[1:]), atol=3e-6)


# ---- number arguments: a number with a 0-d tensor bound, ints past int64, empty inputs -----------


def _grads(fn, x, *args):
    x = x.detach().clone().requires_grad_()
    y = fn(x, *args)
    return y, torch.autograd.grad(y.sum(), x)[0]


@pytest.mark.parametrize("device", DEVICES)
def test_clamp_number_and_0d_tensor_bound_take_the_number_overload(device):
    """torch.clamp(x, number, 0-d tensor) (either order) is its clamp(Tensor, Scalar?, Scalar?):
    the tensor is read as a number, weak in promotion, and only x has a gradient."""
    nan = float("nan")
    xf = torch.cat([torch.tensor([1.0, 6.0, 7.0, nan, 0.0, -3.0]), torch.randn(40) * 8]).to(device)
    t = lambda v, dt=torch.float32: torch.tensor(v, dtype=dt, device=device)  # noqa: E731
    cases = [
        (0, t(6.0)),
        (t(0.0), 6),
        (-2.5, t(3, torch.int16)),
        (t(2, torch.int64), 4.5),
        (1, t(True)),
        (0.5, t(3.0, torch.float64)),
        (t(-1.0, torch.float16), 2**63),
        (t(1.0), nan),
        (nan, t(2.0)),
    ]
    for lo, hi in cases:
        for dtype in (torch.float32, torch.float64, torch.float16, torch.bfloat16):
            x = xf.to(dtype)
            ref, err = outcome(lambda: _grads(torch.clamp, x, lo, hi))
            if err is not None:  # a bound past float16's range
                assert_like_torch(lambda: myops.clamp(x, lo, hi), lambda: torch.clamp(x, lo, hi))
                continue
            yt, gt = ref
            ym, gm = _grads(myops.clamp, x, lo, hi)
            assert_same(ym, yt, check_stride=False)
            assert_same(gm, gt)
        for dtype in INT_DTYPES + [torch.bool]:
            x = rand((13,), dtype, device)
            assert_like_torch(lambda: myops.clamp(x, lo, hi), lambda: torch.clamp(x, lo, hi))
    # the reported cases
    x = torch.tensor([1.0, 6.0, 7.0, nan], device=device)
    assert _grads(myops.clamp, x, 0, t(6.0))[1].tolist() == [1.0, 0.0, 0.0, 0.0]
    i16 = torch.arange(-3, 9, dtype=torch.int16, device=device)
    assert_same(myops.clamp(i16, 1.0, t(4.0, torch.float64)), torch.clamp(i16, 1.0, t(4.0, torch.float64)))
    assert myops.clamp(i16, 1.0, t(4.0, torch.float64)).dtype == torch.float32
    # a 0-d bound that needs a gradient is no number to torch (TypeError); myops takes it as a
    # tensor bound, as it takes a number beside a dimensioned bound
    g = t(6.0).requires_grad_()
    with pytest.raises(TypeError):
        torch.clamp(x, 0, g)
    assert_same(myops.clamp(x, 0, g), torch.clamp(x, t(0.0), g))


@pytest.mark.parametrize("device", DEVICES)
def test_clamp_nan_number_bound_fills_before_the_other_bound_is_converted(device):
    """torch fills with NaN when a number bound is NaN, and never converts the other bound then
    (one past the dtype's range raises nothing)."""
    nan = float("nan")
    for dtype in (torch.bool, torch.int32, torch.float16, torch.bfloat16, torch.float32):
        x = rand((6,), dtype, device)
        for lo, hi in [(nan, 1e300), (1e300, nan), (nan, 2**63), (-1e39, nan), (nan, 2**64 - 1)]:
            assert_like_torch(lambda: myops.clamp(x, lo, hi), lambda: torch.clamp(x, lo, hi))


# Python ints at and past the int64 / uint64 edges: torch reads [2^63, 2^64) as uint64 and
# raises OverflowError beyond; 2^63 + 2^39 + 1 rounds differently to float32 through float64
BIG_INTS = [2**63 - 1, 2**63, 2**63 + 2**39 + 1, 2**64 - 1, -(2**63), 2**64, -(2**63) - 1]


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=str)
def test_python_ints_past_int64_like_torch(device, dtype):
    x = rand((9,), dtype, device)
    x0 = rand((), dtype, device)
    c = rand((9,), torch.bool, device)
    for v in BIG_INTS:
        calls = [
            (lambda: myops.add(x, v), lambda: torch.add(x, v)),
            (lambda: myops.add(v, x0), lambda: torch.add(v, x0)),
            (lambda: myops.sub(x, v), lambda: torch.sub(x, v)),
            (lambda: myops.sub(v, x), lambda: torch.sub(v, x)),
            (lambda: myops.mul(x0, v), lambda: torch.mul(x0, v)),
            (lambda: myops.mul(v, x), lambda: torch.mul(v, x)),
            (lambda: myops.div(x, v), lambda: torch.div(x, v)),
            (lambda: myops.div(v, x), lambda: torch.div(v, x)),
            (lambda: myops.where(c, x, v), lambda: torch.where(c, x, v)),
            (lambda: myops.where(c, v, x0), lambda: torch.where(c, v, x0)),
            (lambda: myops.where(c, v, 2**63), lambda: torch.where(c, v, 2**63)),
            (lambda: myops.where(c, 1.5, v), lambda: torch.where(c, 1.5, v)),
            (lambda: myops.where(c, True, v), lambda: torch.where(c, True, v)),
            (lambda: myops.clamp(x, 7, v), lambda: torch.clamp(x, 7, v)),
            (lambda: myops.clamp(x, v), lambda: torch.clamp(x, v)),
            (lambda: myops.clamp(x, None, v), lambda: torch.clamp(x, None, v)),
            (lambda: myops.add(x, x, alpha=v), lambda: torch.add(x, x, alpha=v)),
            (lambda: myops.sub(x, x0, alpha=v), lambda: torch.sub(x, x0, alpha=v)),
            (lambda: myops.addcmul(x, x, x0, value=v), lambda: torch.addcmul(x, x, x0, value=v)),
        ]
        for fm, ft in calls:
            assert_like_torch(fm, ft)
    # the reported cases
    assert_same(myops.add(torch.ones(3), 2**63), torch.add(torch.ones(3), 2**63))
    for f in (myops.add, myops.sub, myops.mul, myops.div):
        with pytest.raises(OverflowError):
            f(torch.ones(3), 2**64)
    with pytest.raises(RuntimeError, match="value cannot be converted to type int16_t without overflow"):
        myops.add(torch.ones(3, dtype=torch.int16), torch.ones(3, dtype=torch.int16), alpha=2**63)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=str)
def test_alpha_and_value_range_checked_on_empty_inputs(device, dtype):
    """An alpha / value that does not fit the op's compute type raises as in torch, which
    converts it before looking at the number of elements."""
    values = [2**31 - 1, 2**15, 128, 256, -129, 1e6, 1e39, 2**63, 2**63 - 1, -(2**63), 1.5, True, float("inf")]
    for shape in [(0,), (3, 0), (4,)]:
        e = torch.ones(shape, dtype=dtype, device=device)
        for v in values:
            assert_like_torch(lambda: myops.add(e, e, alpha=v), lambda: torch.add(e, e, alpha=v))
            assert_like_torch(lambda: myops.sub(e, e, alpha=v), lambda: torch.sub(e, e, alpha=v))
            assert_like_torch(lambda: myops.addcmul(e, e, e, value=v), lambda: torch.addcmul(e, e, e, value=v))
            assert_like_torch(lambda: ops.add(e, e, alpha=v), lambda: torch.add(e, e, alpha=v))
    e = torch.ones(0, dtype=torch.int16, device=device)
    with pytest.raises(RuntimeError, match="value cannot be converted to type int16_t without overflow"):
        myops.sub(e, e, alpha=2**31 - 1)
    with pytest.raises(RuntimeError, match="value cannot be converted to type int16_t without overflow"):
        myops.addcmul(e, e, e, value=2**31 - 1)


# ---- exception types --------------------------------------------------------------------------------

UNSUPPORTED_DTYPES = [torch.complex64, torch.complex128, torch.uint16, torch.uint32, torch.uint64, torch.float8_e4m3fn]


def _every_op(x, c):
    """(name, myops call, torch call) for every elementwise op on x (c: a bool condition)."""
    return [
        ("relu", lambda: myops.relu(x), lambda: torch.relu(x)),
        ("gelu", lambda: myops.gelu(x), lambda: F.gelu(x)),
        ("silu", lambda: myops.silu(x), lambda: F.silu(x)),
        ("sigmoid", lambda: myops.sigmoid(x), lambda: torch.sigmoid(x)),
        ("cast", lambda: myops.cast(x, torch.float32), lambda: x.to(torch.float32, copy=True)),
        ("mul_scalar", lambda: myops.mul_scalar(x, 2), lambda: torch.mul(x, 2)),
        ("add", lambda: myops.add(x, x), lambda: torch.add(x, x)),
        ("add_alpha", lambda: myops.add(x, x, alpha=2), lambda: torch.add(x, x, alpha=2)),
        ("sub", lambda: myops.sub(x, x), lambda: torch.sub(x, x)),
        ("mul", lambda: myops.mul(x, x), lambda: torch.mul(x, x)),
        ("div", lambda: myops.div(x, x), lambda: torch.div(x, x)),
        ("maximum", lambda: myops.maximum(x, x), lambda: torch.maximum(x, x)),
        ("minimum", lambda: myops.minimum(x, x), lambda: torch.minimum(x, x)),
        ("where", lambda: myops.where(c, x, x), lambda: torch.where(c, x, x)),
        ("where_int", lambda: myops.where(c, x, 1), lambda: torch.where(c, x, 1)),
        ("where_float", lambda: myops.where(c, 1.5, x), lambda: torch.where(c, 1.5, x)),
        ("addcmul", lambda: myops.addcmul(x, x, x), lambda: torch.addcmul(x, x, x)),
        ("clamp", lambda: myops.clamp(x, x, x), lambda: torch.clamp(x, x, x)),
        ("clamp_numbers", lambda: myops.clamp(x, 0, 1), lambda: torch.clamp(x, 0, 1)),
        ("clamp_float", lambda: myops.clamp(x, 0.5), lambda: torch.clamp(x, 0.5)),
        ("clamp_mixed", lambda: myops.clamp(x, x, 1), lambda: torch.clamp(x, x, torch.tensor(1))),
    ]


@pytest.mark.parametrize("dtype", UNSUPPORTED_DTYPES + [torch.bool], ids=str)
def test_unsupported_dtypes_raise_torchs_exception_type(dtype):
    """Where torch raises, myops raises the same type (NotImplementedError for a dtype without a
    kernel, RuntimeError for complex maximum / minimum); where torch computes a dtype myops
    does not take, myops raises NotImplementedError. Never an internal TypeError."""
    x = torch.ones(4, dtype=torch.float32).to(dtype)
    c = torch.tensor([True, False, True, False])
    for name, fm, ft in _every_op(x, c):
        expected, e_err = outcome(ft)
        if e_err is None and dtype != torch.bool:
            with pytest.raises(NotImplementedError, match="myops"):
                fm()
        else:
            assert_like_torch(fm, ft)


# ---- pow (tensor-tensor and tensor-scalar), added through the op table ----------------------------
# Within 1 ulp of torch (float32 / float64 / float16), measured; bfloat16 within 2 (torch's own
# CPU pow goes through SLEEF and special-cases some exponents: 2, 3, -1, -2, computing x * x,
# 1 / x, ...). A number exponent is converted to the tensor's dtype first, as torch's CPU kernel
# does (a bfloat16 tensor ** -3.7 is ** -3.703125).


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", FLOAT_DTYPES, ids=str)
def test_pow_tensor(dtype, device):
    ulps = 2 if dtype == torch.bfloat16 else 1
    for sa, sb in [((5, 7), (5, 7)), ((5, 7), (7,)), ((6, 1, 4), (1, 5, 1)), ((4097,), (4097,)), ((5, 7), ())]:
        a = sample(sa, dtype, device, low=0, high=10)  # NaN, +-inf included
        b = sample(sb, dtype, device, low=-3, high=3)
        assert_ulp(myops.pow(a, b), torch.pow(a, b), ulps)
        # a negative base: NaN for non-integral exponents, as torch
        assert_ulp(myops.pow(-a, b.round()), torch.pow(-a, b.round()), ulps)
    a = sample((6, 5, 4, 9), dtype, device, low=0, high=4)
    for layout in LAYOUTS:
        x = with_layout(a, layout)
        assert_ulp(myops.pow(x, a), torch.pow(x, a), ulps)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", FLOAT_DTYPES, ids=str)
def test_pow_scalar(dtype, device):
    # float32: both sides are within 1 ulp of the exact power (SLEEF's vector pow, the C
    # library's in scalar tails), so up to 2 ulp apart: measured 2 for ** -3.7 on 2 of 300 random
    # samples, 1 for every other exponent; bfloat16: torch rounds x * x (** 2, 3, -2) in it
    ulps = 2 if dtype in (torch.float32, torch.bfloat16) else 1
    a = sample((4097,), dtype, device, low=-10, high=10)
    for e in (2.5, 2, 3, -1, -2, 0.5, -0.5, 0.3, 0, 1, -3.7):
        assert_ulp(myops.pow(a, e), torch.pow(a, e), ulps)
        assert_ulp(myops.pow(a[1:], e), torch.pow(a[1:], e), ulps)


@pytest.mark.parametrize("device", DEVICES)
def test_pow_float32_against_exact(device):
    """float32 pow within 1 ulp of the correctly rounded power (the float64 pow rounded) on the
    CPU: the AVX-512 build's double-precision form (elementwise/cpu/elementwise_simd_math.h, v_pow_f) and
    SLEEF's in the others; CUDA's powf within 2. Bases over every binade with exponents that keep
    the result in range, bases next to 1 with exponents up to 1e6 (where log2 x must not lose
    its low bits), bases at the edges of the reduction's 16 intervals, and randn operands."""
    ulps = 1 if device == "cpu" else 2
    g = torch.Generator().manual_seed(int(torch.randint(0, 2**31, ())))
    n = 1 << 16
    x = torch.randint(0x00800000, 0x7F800000, (n,), generator=g, dtype=torch.int32).view(torch.float32)
    y = (torch.rand(n, generator=g) * 2 - 1) * 120 / x.double().log2().abs().clamp(min=1e-9).float()
    near1 = 1 + (torch.rand(n, generator=g) - 0.5) * 2.0 ** -torch.randint(1, 24, (n,), generator=g).float()
    big = (torch.rand(n, generator=g) * 2 - 1) * 1e6
    edge = (0x3F330000 + torch.arange(17, dtype=torch.int32) * (1 << 19)).repeat_interleave(3)
    edge = (edge + torch.tensor([-1, 0, 1], dtype=torch.int32).repeat(17)).view(torch.float32)
    edge = torch.cat([edge * 2.0**k for k in (-100, -7, 0, 5, 90)])
    for base, exp in (
        (x, y),
        (near1, big),
        (edge, torch.randn(edge.numel(), generator=g) * 3),
        (torch.randn(n, generator=g).abs() + 1e-3, torch.randn(n, generator=g) * 4),
    ):
        base, exp = base.to(device), exp.to(device)
        want = torch.pow(base.double(), exp.double()).float()
        keep = want.isfinite() & (want.abs() >= torch.finfo(torch.float32).tiny)  # normal results
        assert_ulp(myops.pow(base, exp)[keep], want[keep], ulps)


@pytest.mark.parametrize("device", DEVICES)
def test_pow_bad_input(device):
    x = torch.arange(5, device=device)
    for call in (lambda m: m.pow(x, 2), lambda m: m.pow(x.float(), x)):
        assert type(outcome(lambda: call(myops))[1]) is NotImplementedError


# ---- number operands: the Scalar overloads (add.Scalar, where.ScalarOther, ...) ---------------------
# A Python number is aten's wrapped number: at::result_type(tensor, number) in C++ (the number never
# widens the tensor's dtype within its category), torch's conversion and range checks. A 0-d tensor
# is not a number: it promotes as a tensor.

NUMBERS = [0, 3, -7, 300, -129, 70000, 2**31, 2**62, 0.5, -2.75, 1e6, 1e39, float("inf"), float("nan"), True, False]
NUMBER_DTYPES = ALL_DTYPES + [torch.complex64]


def _number_calls(x, v, c):
    """(label, myops call, torch call) for every number form of every op with a number operand."""
    return [
        ("add", lambda: myops.add(x, v), lambda: torch.add(x, v)),
        ("add_alpha", lambda: myops.add(x, v, alpha=2), lambda: torch.add(x, v, alpha=2)),
        ("radd", lambda: myops.add(v, x), lambda: torch.add(v, x)),
        ("radd_alpha", lambda: myops.add(v, x, alpha=3), lambda: torch.add(v, x, alpha=3)),
        ("sub", lambda: myops.sub(x, v), lambda: torch.sub(x, v)),
        ("rsub", lambda: myops.sub(v, x), lambda: torch.sub(v, x)),
        ("rsub_alpha", lambda: myops.sub(v, x, alpha=-2), lambda: torch.sub(v, x, alpha=-2)),
        ("mul", lambda: myops.mul(x, v), lambda: torch.mul(x, v)),
        ("rmul", lambda: myops.mul(v, x), lambda: v * x),
        ("mul_scalar", lambda: myops.mul_scalar(x, v), lambda: torch.mul(x, v)),
        ("div", lambda: myops.div(x, v), lambda: torch.div(x, v)),
        ("rdiv", lambda: myops.div(v, x), lambda: torch.div(v, x)),
        ("where_other", lambda: myops.where(c, x, v), lambda: torch.where(c, x, v)),
        ("where_self", lambda: myops.where(c, v, x), lambda: torch.where(c, v, x)),
        ("where_both", lambda: myops.where(c, v, 5), lambda: torch.where(c, v, 5)),
        ("where_both_float", lambda: myops.where(c, -1.5, v), lambda: torch.where(c, -1.5, v)),
    ]


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", NUMBER_DTYPES, ids=str)
def test_number_operands_like_torch(dtype, device):
    """Every dtype, int / float / bool numbers on either side: the same values, dtype and strides
    as torch, or the same exception type (an overflow: torch's RuntimeError; a result dtype
    myops has no kernel for: NotImplementedError where torch computes it)."""
    c = rand((5, 7), torch.bool, device)
    for x in (rand((5, 7), dtype, device), rand((7, 5), dtype, device).t(), rand((), dtype, device)):
        for v in NUMBERS:
            for label, fm, ft in _number_calls(x, v, c if x.dim() else c[0, 0]):
                expected, e_err = outcome(ft)
                if e_err is None and expected.dtype not in ALL_DTYPES:
                    with pytest.raises(NotImplementedError):
                        fm()
                    continue
                try:
                    assert_like_torch(fm, ft)
                except AssertionError as e:
                    raise AssertionError(f"{label} {dtype} {tuple(x.shape)} {v!r}: {e}") from None


@pytest.mark.parametrize("device", DEVICES)
def test_number_is_not_a_0d_tensor(device):
    """A number is weak in promotion, a 0-d tensor is not: int8(3) + 1000 stays int8 (wrapping
    as in torch), int8(3) + tensor(1000) is int64; a float16 tensor with a float number stays
    float16, with a 0-d float64 tensor too (dimensioned), but a 0-d float16 with a 0-d float64 is
    float64."""
    x0 = torch.tensor(3, dtype=torch.int8, device=device)
    x = rand((6,), torch.int8, device)
    h0 = torch.tensor(1.5, dtype=torch.float16, device=device)
    cases = [
        (lambda: myops.add(x0, 1000), lambda: torch.add(x0, 1000)),
        (lambda: myops.add(x0, torch.tensor(1000)), lambda: torch.add(x0, torch.tensor(1000))),
        (lambda: myops.mul(x, 1000), lambda: torch.mul(x, 1000)),
        (lambda: myops.mul(x, torch.tensor(1000)), lambda: torch.mul(x, torch.tensor(1000))),
        (lambda: myops.div(x0, 1000), lambda: torch.div(x0, 1000)),
        (lambda: myops.sub(h0, 0.1), lambda: torch.sub(h0, 0.1)),
        (
            lambda: myops.sub(h0, torch.tensor(0.1, dtype=torch.float64)),
            lambda: torch.sub(h0, torch.tensor(0.1, dtype=torch.float64)),
        ),
        (lambda: myops.where(x0 > 0, x0, 1000), lambda: torch.where(x0 > 0, x0, 1000)),
        (lambda: myops.where(x0 > 0, x0, torch.tensor(1000)), lambda: torch.where(x0 > 0, x0, torch.tensor(1000))),
    ]
    for fm, ft in cases:
        assert_like_torch(fm, ft)
    assert myops.add(x0, 1000).dtype == torch.int8
    assert myops.add(x0, torch.tensor(1000)).dtype == torch.int64
    assert myops.sub(h0, torch.tensor(0.1, dtype=torch.float64)).dtype == torch.float64
    assert myops.sub(h0, 0.1).dtype == torch.float16


@pytest.mark.parametrize("device", DEVICES)
def test_number_overflow_errors(device):
    """A number that does not fit the result dtype where torch checks it (where's number; the
    alpha of add / sub) raises torch's RuntimeError with torch's message."""
    c = torch.tensor([True, False, True], device=device)
    for dtype, v, name in [
        (torch.int8, 300, "int8_t"),
        (torch.uint8, 256, "uint8_t"),
        (torch.int16, 2**15, "int16_t"),
        (torch.int32, 2**31, "int"),
        (torch.float32, 1e39, "float"),
    ]:
        x = torch.ones(3, dtype=dtype, device=device)
        msg = f"value cannot be converted to type {name} without overflow"
        with pytest.raises(RuntimeError, match=msg):
            torch.where(c, x, v)
        with pytest.raises(RuntimeError, match=msg):
            myops.where(c, x, v)
        with pytest.raises(RuntimeError, match=msg):
            myops.where(c, v, x)
        if not dtype.is_floating_point:
            with pytest.raises(RuntimeError, match=msg):
                myops.add(x, 1, alpha=v)
    with pytest.raises(OverflowError):
        myops.add(torch.ones(3, device=device), 2**64)
    with pytest.raises(TypeError):
        myops.add(torch.ones(3, device=device), "1")
    with pytest.raises(TypeError):
        myops.add(1, 2)


def test_python_functions_hold_no_promotion_code():
    """The result dtype of a number operand is computed in C++ (the Scalar overloads), not in
    python/myops/ops.py: the promotion helpers are gone."""
    from myops import ops as pyops

    for name in (
        "_scalar_result_type",
        "_check_fits",
        "_C10_NAMES",
        "_ew_lift",
        "_ew_drop",
        "_ew_wrap",
        "_uint64_number",
        "_number_as",
        "_category",
    ):
        assert not hasattr(pyops, name), name


@pytest.mark.parametrize("device", DEVICES)
def test_number_overloads_under_compile(device):
    """torch.compile traces the Python functions onto the Scalar overloads (fake kernels) and
    gives the eager result."""
    x = sample((4, 5), torch.float16, device)
    i = rand((4, 5), torch.int8, device)

    def f(x, i):
        return myops.add(x, 2.5), myops.sub(3, i), myops.div(i, 2), myops.mul(-1.5, x), myops.where(x > 0, x, 7)

    torch._dynamo.reset()
    got = torch.compile(f, fullgraph=True, backend="aot_eager")(x, i)
    for g, e in zip(got, f(x, i)):
        assert_same(g, e)


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
@pytest.mark.parametrize("op", ["abs", "neg"])
def test_abs_neg_16bit_every_pattern(op, dtype):
    """abs / neg on float16 / bfloat16 equal torch's bits on every one of the 2^16 storage
    patterns (NaN payloads, signalling NaNs and -0.0 included), through the vector rows
    (cpu: row16 with Sign16) and a scalar tail (a length that is no multiple of the vector)."""
    x = torch.arange(-32768, 32768, dtype=torch.int32).to(torch.int16).view(dtype)
    for t in (x, x[:70], x[1:]):
        got, want = getattr(myops, op)(t), getattr(torch, op)(t)
        assert torch.equal(got.view(torch.int16), want.view(torch.int16))


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_relu_16bit_every_pattern(dtype):
    """relu on float16 / bfloat16 equals torch's bits on every one of the 2^16 storage patterns
    (-0.0, -inf, denormals included; NaN where torch has NaN), through the vector rows (cpu:
    row16 with Relu16) and a scalar tail (a length that is no multiple of the vector)."""
    x = torch.arange(-32768, 32768, dtype=torch.int32).to(torch.int16).view(dtype)
    for t in (x, x[:70], x[1:]):
        assert_exact(myops.relu(t), torch.relu(t))


# ---- a number first on float16 / bfloat16, and gradients at torch's edges (issue #47) ----------


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=str)
def test_number_first_like_torch(dtype, device):
    """A Python number first (mul, add, sub, div, where, maximum, minimum; directly and through
    torch.ops.myops) is taken as torch takes it: beside a float16 / bfloat16 tensor never rounded
    to the storage type first (-1.2748 * bf16 -104 is 133, not 132; -2^63 * fp16 0 is -0, not
    NaN); values, dtype, strides, gradients and errors, on every dtype (helpers.check_number_first)."""
    b = torch.tensor([-104.0], dtype=torch.bfloat16, device=device)
    assert_same(myops.mul(-1.2747972618057282, b), -1.2747972618057282 * b)
    assert myops.mul(-1.2747972618057282, b).item() == 133.0
    h = torch.tensor(0.0, dtype=torch.float16, device=device)
    assert_same(myops.mul(-(2**63), h), -(2**63) * h)
    assert_same(torch.ops.myops.mul.ScalarSelf(-(2**63), h), torch.tensor(-0.0, dtype=torch.float16, device=device))
    check_number_first(dtype, device=device)


_HUGE = [2**63, -(2**63), 2**64, -(2**64), 2**63 - 1, -(2**63) + 1, 2**64 - 1, -(2**63) - 1, 2**65]
_NUMBERS = st.one_of(
    st.sampled_from(_HUGE),
    st.integers(-(2**66), 2**66),
    st.integers(-300, 300),
    st.floats(allow_nan=True, allow_infinity=True),
    st.floats(-1e5, 1e5),
    st.booleans(),
)


@settings(max_examples=400, deadline=None, derandomize=True)
@given(
    s=_NUMBERS,
    dtype=st.sampled_from([torch.float16, torch.bfloat16]),
    form=st.integers(0, len(number_first_calls(0, None)) - 1),
    shape=st.sampled_from([(), (1,), (37,), (5, 7)]),
    transposed=st.booleans(),
    seed=st.integers(0, 2**16),
)
def test_number_first_16bit_properties(s, dtype, form, shape, transposed, seed):
    """Hypothesis: a random number (huge ints at the int64 / uint64 edges, floats, bools) first,
    each number-first form, float16 / bfloat16 tensors of random values and layouts: as torch,
    gradients included."""
    g = torch.Generator().manual_seed(seed)
    x = (torch.randn(shape, generator=g, dtype=torch.float64) * 200).to(dtype)
    if transposed and x.dim() == 2:
        x = x.t()
    c = torch.rand(x.shape, generator=g) > 0.5
    label, fm, ft = number_first_calls(s, c)[form]
    if "sub" in label and isinstance(s, bool):
        return  # torch's sub refuses bool; myops raises NotImplementedError (test_number_operands_like_torch)
    check_like_torch_with_grad(f"{label}({s!r}, {dtype} {tuple(x.shape)})", fm, ft, x)


@settings(max_examples=200, deadline=None, derandomize=True)
@given(
    s=_NUMBERS,
    dtype=st.sampled_from([torch.float16, torch.bfloat16]),
    shape=st.sampled_from([(), (37,), (5, 7)]),
    seed=st.integers(0, 2**16),
)
def test_number_first_16bit_dropin_properties(s, dtype, shape, seed):
    """Hypothesis: the drop-in (myops.enable) gives torch's results for the Python forms with a
    number first: s * x and s + x (the number second to aten), torch.mul(s, x), s - x and
    torch.div(s, x) (a wrapped number first: torch's CPU kernels round it to the result dtype)."""
    g = torch.Generator().manual_seed(seed)
    x = (torch.randn(shape, generator=g, dtype=torch.float64) * 200).to(dtype)
    calls = [lambda: s * x, lambda: s + x, lambda: torch.mul(s, x), lambda: torch.add(s, x, alpha=2)]
    if not isinstance(s, bool):
        calls += [lambda: s - x, lambda: torch.div(s, x)]
    for call in calls:
        want, e_err = outcome(call)
        with myops.enable():
            got, a_err = outcome(call)
        if e_err is not None:
            assert type(a_err) is type(e_err), (e_err, a_err)
        else:
            assert a_err is None, a_err
            assert_same(got, want)


@pytest.mark.parametrize("dtype", FLOAT_DTYPES, ids=str)
def test_gradient_edges_like_torch(dtype):
    """Gradients at torch's edges (helpers.check_gradient_edges): sub with an int alpha of 0
    gives other -0 ((-grad) * 0, as torch's maybe_multiply), with a number first and with a
    broadcast one-element first operand too; an int alpha past int64 raises torch's overflow
    error in add's / sub's backward (where torch's maybe_multiply reads it as an int64), not in
    add.Scalar's (whose gradient has no alpha) nor addcmul's; clamp with bool self, float32 min
    and float16 max (and maximum / minimum) sums a broadcast bound's gradient in torch's order."""
    x = torch.tensor([1.5, -2.0], dtype=dtype)
    g = torch.ones(2, dtype=dtype)
    for fm in (lambda t: myops.sub(2.0, t, alpha=0), lambda t: myops.sub(torch.tensor([3.0], dtype=dtype), t, alpha=0)):
        t = x.clone().requires_grad_()
        (gx,) = torch.autograd.grad(fm(t), t, g)
        assert gx.signbit().all(), gx  # -0.0
    d = torch.tensor([1.0, 2.0], dtype=dtype)
    # no number form: torch's TypeError
    for call in (lambda m: m.addcmul(1.0, x, x), lambda m: m.addcmul(x, 2, x), lambda m: m.addcmul(x, x, True)):
        assert_like_torch(lambda: call(myops), lambda: call(torch))
    if dtype != torch.float16:  # float16: alpha 2^63 fails the forward's check (as torch's)
        for call in (
            lambda a, b: myops.add(a, b, alpha=2**63),
            lambda a, b: myops.sub(a, b, alpha=2**63),
            lambda a, b: myops.add(2.0, b, alpha=2**63),
        ):
            a, b = d.clone().requires_grad_(), d.clone().requires_grad_()
            out = call(a, b)
            with pytest.raises(RuntimeError, match="value cannot be converted to type int64_t without overflow"):
                torch.autograd.grad(out.sum(), b)
        a = d.clone().requires_grad_()
        torch.autograd.grad(myops.add(a, d, alpha=2**63).sum(), a)  # only self's gradient: no alpha, no error
        torch.autograd.grad(myops.addcmul(d, a, d, value=2**63).sum(), a)
    check_gradient_edges(dtype)
