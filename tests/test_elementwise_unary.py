"""Elementwise family, one operand: the op table's unary ops, gelu (both forms, oneDNN's layouts),
pow and mul by a number, cast, and their gradients, against torch."""

import math

import pytest
import torch
import torch.nn.functional as F
from hypothesis import given, settings, strategies as st

import myops
from helpers import (
    ALL_DTYPES,
    DEVICES,
    FLOAT_DTYPES,
    LAYOUTS,
    assert_same,
    gelu_edge_values,
    outcome,
    with_layout,
)
from elementwise_helpers import (
    UNARY,
    assert_exact,
    compare,
    sample,
)

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


def torch_gelu_path(t):
    """Which kernel torch's CPU gelu (erf form) runs on t, by torch's and oneDNN's own tests
    (csrc/elementwise/elementwise_front.h, TorchCpuGelu): "jit" (oneDNN's JIT kernel: its edge values),
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


# ---- sigmoid / silu backward, bit for bit --------------------------------------------------------


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
@pytest.mark.parametrize("name", ["sigmoid", "silu"])
@pytest.mark.parametrize("create_graph", [False, True])
def test_sigmoid_silu_backward_bit_exact(dtype, name, create_graph):
    mf = getattr(myops, name)
    tf = torch.sigmoid if name == "sigmoid" else F.silu
    x = (torch.randn(5000, dtype=torch.float64) * 6).to(dtype)
    x[:4] = torch.tensor([0.0, -0.0, 40.0, -40.0])
    x.requires_grad_()
    g = torch.randn(5000).to(dtype)
    (gm,) = torch.autograd.grad(mf(x), x, g, create_graph=create_graph)
    (gt,) = torch.autograd.grad(tf(x), x, g, create_graph=create_graph)
    if name == "sigmoid":
        # torch's formula applied to myops' own forward (myops' sigmoid is within a few ulp of
        # torch's, not always equal): sigmoid_backward(grad, result)
        gt = torch.ops.aten.sigmoid_backward(g, myops.sigmoid(x.detach()))
    assert_same(gm, gt)


def test_silu_backward_half_reported_case():
    x = torch.tensor([-1.2783], dtype=torch.float16, requires_grad=True)
    g = torch.tensor([1.282], dtype=torch.float16)
    (gm,) = torch.autograd.grad(myops.silu(x), x, g)
    (gt,) = torch.autograd.grad(F.silu(x), x, g)
    assert gm.item() != 0.0
    assert_same(gm, gt)


@pytest.mark.parametrize("name", ["sigmoid", "silu"])
def test_sigmoid_silu_gradgradcheck(name):
    x = torch.randn(6, 5, dtype=torch.float64, requires_grad=True)
    assert torch.autograd.gradgradcheck(getattr(myops, name), (x,))


# ---- relu's gradient at NaN ----------------------------------------------------------------------


@pytest.mark.parametrize("device", DEVICES)
def test_relu_gradient_passes_at_nan(device):
    """torch's relu backward (threshold_backward) zeroes the gradient where out <= 0 only: a NaN
    output lets the gradient through."""
    x = torch.tensor([float("nan"), -1.0, 0.0, 2.0], device=device)
    g = torch.tensor([3.0, 5.0, 7.0, 11.0], device=device)
    xm, xt = x.clone().requires_grad_(), x.clone().requires_grad_()
    (gm,) = torch.autograd.grad(myops.relu(xm), xm, g)
    (gt,) = torch.autograd.grad(torch.relu(xt), xt, g)
    assert_same(gm, gt)
    assert gm[0] == 3.0
