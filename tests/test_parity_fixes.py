"""Regression tests for the parity holes of issue #15 (found by fuzzing against torch): one
test (or parametrized family) per item, each comparing with torch on the same inputs."""

import itertools
import warnings

import pytest
import torch
import torch.nn.functional as F

import myops
from helpers import DEVICES, FLOAT_DTYPES, assert_same

ops = torch.ops.myops


_TORCH_2_14 = tuple(int(p) for p in torch.__version__.split(".")[:2]) >= (2, 14)


def i8(v):
    return torch.tensor(v, dtype=torch.int8)


def same_error(fn_myops, fn_torch, match=None):
    """Both calls raise, with the same exception type (myops' message may be its own)."""
    with pytest.raises(Exception) as et:
        fn_torch()
    with pytest.raises(et.type, match=match):
        fn_myops()


# ---- 1. Python int scalars that do not fit the tensor's dtype ---------------------------------


@pytest.mark.parametrize(
    "fm, ft",
    [
        (
            lambda: myops.clamp(torch.tensor([0, 100, 200], dtype=torch.uint8), -1, 300),
            lambda: torch.clamp(torch.tensor([0, 100, 200], dtype=torch.uint8), -1, 300),
        ),
        (lambda: myops.clamp(i8([5, -5]), -129, 3), lambda: torch.clamp(i8([5, -5]), -129, 3)),
        (lambda: myops.clamp(i8(5), 0, 1000), lambda: torch.clamp(i8(5), 0, 1000)),
        (
            lambda: myops.where(torch.tensor([True, False]), i8([1, 2]), 1000),
            lambda: torch.where(torch.tensor([True, False]), i8([1, 2]), 1000),
        ),
        (
            lambda: myops.where(torch.tensor([True, False]), -1000, i8([1, 2])),
            lambda: torch.where(torch.tensor([True, False]), -1000, i8([1, 2])),
        ),
        (
            lambda: myops.where(torch.tensor([True, False]), i8(1), 1000),
            lambda: torch.where(torch.tensor([True, False]), i8(1), 1000),
        ),
        (lambda: myops.maximum(i8([5, -5]), -129), lambda: torch.clamp(i8([5, -5]), min=-129)),
        (
            lambda: myops.minimum(torch.tensor([1, 2], dtype=torch.int16), 2**15),
            lambda: torch.clamp(torch.tensor([1, 2], dtype=torch.int16), max=2**15),
        ),
        (
            lambda: myops.clamp(torch.ones(2, dtype=torch.float16), 0, 1e6),
            lambda: torch.clamp(torch.ones(2, dtype=torch.float16), 0, 1e6),
        ),
        (
            lambda: myops.clamp(torch.ones(2, dtype=torch.bfloat16), -1e39, 0),
            lambda: torch.clamp(torch.ones(2, dtype=torch.bfloat16), -1e39, 0),
        ),
    ],
)
def test_scalar_overflow_raises_like_torch(fm, ft):
    same_error(fm, ft, match="without overflow")


@pytest.mark.parametrize(
    "fm, ft",
    [
        # arithmetic with a Python int wraps in torch (the number is a wrapped int64 tensor)
        (lambda: myops.add(i8([1, 2]), 1000), lambda: torch.add(i8([1, 2]), 1000)),
        (lambda: myops.sub(1000, i8([1, 2])), lambda: torch.sub(1000, i8([1, 2]))),
        (lambda: myops.mul(i8(2), 1000), lambda: torch.mul(i8(2), 1000)),
        (lambda: myops.mul(1000, i8([2, 3])), lambda: torch.mul(1000, i8([2, 3]))),
        (lambda: myops.add(i8([1, 2]), 2**63 - 1), lambda: torch.add(i8([1, 2]), 2**63 - 1)),
        (
            lambda: myops.clamp(torch.tensor([1, 2], dtype=torch.uint8), -1, 200),
            lambda: torch.clamp(torch.tensor([1, 2], dtype=torch.uint8), -1, 200),
        ),
        # integer tensors divided by an int: the number is converted to float, not to int8 first
        (lambda: myops.div(i8(3), 1000), lambda: torch.div(i8(3), 1000)),
        (lambda: myops.div(i8([3, -7]), 1000), lambda: torch.div(i8([3, -7]), 1000)),
        (
            lambda: myops.div(torch.tensor(5, dtype=torch.int16), 2**31),
            lambda: torch.div(torch.tensor(5, dtype=torch.int16), 2**31),
        ),
        (lambda: myops.div(1000, i8(3)), lambda: torch.div(1000, i8(3))),
        (
            lambda: myops.div(torch.tensor(7, dtype=torch.uint8), 2.5),
            lambda: torch.div(torch.tensor(7, dtype=torch.uint8), 2.5),
        ),
        # a 0-d tensor beside a number keeps its dtype (the number is weak)
        (
            lambda: myops.add(torch.tensor(1.5, dtype=torch.float16), 0.1),
            lambda: torch.add(torch.tensor(1.5, dtype=torch.float16), 0.1),
        ),
        (
            lambda: myops.mul(torch.tensor(1.5, dtype=torch.bfloat16), 0.1),
            lambda: torch.mul(torch.tensor(1.5, dtype=torch.bfloat16), 0.1),
        ),
        (
            lambda: myops.where(torch.tensor([True, False]), i8(1), 100),
            lambda: torch.where(torch.tensor([True, False]), i8(1), 100),
        ),
        (lambda: myops.where(torch.tensor(True), 1000, 2), lambda: torch.where(torch.tensor(True), 1000, 2)),
        (
            lambda: myops.where(torch.tensor([True, False]), 1.5, 2),
            lambda: torch.where(torch.tensor([True, False]), 1.5, 2),
        ),
        # where lets a float16 overflow to inf (no check for floats, as torch)
        (
            lambda: myops.where(torch.tensor([True, False]), torch.ones(2, dtype=torch.float16), 1e6),
            lambda: torch.where(torch.tensor([True, False]), torch.ones(2, dtype=torch.float16), 1e6),
        ),
        (lambda: myops.clamp(i8([1, 2, 3]), 0.5, 2), lambda: torch.clamp(i8([1, 2, 3]), 0.5, 2)),
        (
            lambda: myops.clamp(torch.tensor([0.1, 5.0]), torch.tensor([1.0, 1.0]), 3),
            lambda: torch.clamp(torch.tensor([0.1, 5.0]), torch.tensor([1.0, 1.0]), torch.tensor(3.0)),
        ),
    ],
)
def test_scalar_values_like_torch(fm, ft):
    assert_same(fm(), ft())


# ---- 2. add / sub with alpha on half / bfloat16 ------------------------------------------------


def _alpha_inputs(kind, n, dtype):
    a = torch.randn(n).to(dtype)
    b = torch.randn(n).to(dtype)
    if kind == "contiguous":
        return a, b
    if kind == "strided":
        return torch.randn(2 * n).to(dtype)[::2], b
    if kind == "scalar_second":
        return a, b[:1].reshape(())
    if kind == "scalar_first":
        return a[:1].reshape(()), b
    if kind == "one_element":
        return a, b[:1]
    if kind == "2d_transposed":
        m = max(1, n // 37)
        return torch.randn(37, m).to(dtype), torch.randn(m, 37).to(dtype).t()
    if kind == "2d_sliced":
        m = max(1, n // 37)
        return torch.randn(m, 40).to(dtype)[:, :37], torch.randn(m, 37).to(dtype)
    raise AssertionError(kind)


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
@pytest.mark.parametrize("n", [1, 7, 31, 32, 33, 63, 100, 1000, 40001, 70003])
@pytest.mark.parametrize(
    "kind", ["contiguous", "strided", "scalar_second", "scalar_first", "one_element", "2d_transposed", "2d_sliced"]
)
def test_alpha_half_bfloat16_bit_exact(dtype, n, kind):
    a, b = _alpha_inputs(kind, n, dtype)
    for alpha in (0.3, -0.7, 3.7, 2, 1e-3):
        assert_same(myops.add(a, b, alpha=alpha), torch.add(a, b, alpha=alpha))
        assert_same(myops.sub(a, b, alpha=alpha), torch.sub(a, b, alpha=alpha))
        assert_same(ops.add(a, b, alpha=alpha), torch.add(a, b, alpha=alpha))


def test_alpha_cancellation_case():
    # nearly cancelling sums: where an alpha kept in float was hundreds of ulp off
    a = torch.linspace(-3, 3, 4099).to(torch.float16)
    b = (-a.float() / 0.3).to(torch.float16)
    for n in (4099, 17):
        assert_same(myops.add(a[:n], b[:n], alpha=0.3), torch.add(a[:n], b[:n], alpha=0.3))


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_alpha_float_bit_exact(dtype):
    for n in (7, 100, 70001):
        a, b = torch.randn(n, dtype=dtype), torch.randn(n, dtype=dtype)
        assert_same(myops.add(a, b, alpha=0.3), torch.add(a, b, alpha=0.3))
        assert_same(myops.sub(a[::2], b[::2], alpha=0.3), torch.sub(a[::2], b[::2], alpha=0.3))


# ---- 4. sigmoid / silu backward ----------------------------------------------------------------


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


# ---- 3. second derivative of max_pool2d_add ----------------------------------------------------


@pytest.mark.parametrize(
    "kw",
    [
        {},
        {"kernel_size": 2, "stride": None, "padding": 0, "ceil_mode": True},
        {"kernel_size": (3, 2), "stride": (1, 2), "padding": (1, 0)},
    ],
)
@pytest.mark.parametrize("layout", ["contiguous", "channels_last", "unbatched"])
def test_max_pool2d_add_gradgradcheck(kw, layout):
    x = torch.randn(2, 3, 7, 6, dtype=torch.float64)
    if layout == "channels_last":
        x = x.contiguous(memory_format=torch.channels_last)
    if layout == "unbatched":
        x = x[0]
    x.requires_grad_()
    y = myops.max_pool2d_add(x, torch.zeros(1, dtype=torch.float64), **kw)
    o = torch.randn(y.shape[-3:-2] + (1, 1), dtype=torch.float64, requires_grad=True)
    fn = lambda x, o: myops.max_pool2d_add(x, o, **kw)  # noqa: E731
    assert torch.autograd.gradcheck(fn, (x, o))
    assert torch.autograd.gradgradcheck(fn, (x, o))


@pytest.mark.parametrize("other_dtype", [torch.float32, torch.float64])
def test_max_pool2d_add_double_backward_matches_torch(other_dtype):
    x = torch.randn(2, 3, 9, 8)
    x[0, 0, :3, :3] = 1.0  # ties inside windows
    x.requires_grad_()
    o = torch.randn(1, 3, 1, 1, dtype=other_dtype, requires_grad=True)
    gy = torch.randn(2, 3, 5, 4, dtype=other_dtype, requires_grad=True)
    v = torch.randn(2, 3, 9, 8)

    def run(fn):
        y = fn(x, o)
        (gx,) = torch.autograd.grad(y, x, gy, create_graph=True)
        assert gx.requires_grad  # the graph keeps the path to the incoming gradient
        return torch.autograd.grad((gx * v).sum(), gy)[0]

    a = run(myops.max_pool2d_add)
    b = run(lambda x, o: F.max_pool2d(x, 3, 2, 1) + o)
    assert_same(a, b)


def test_max_pool2d_add_backward_has_autograd_kernel():
    x = torch.randn(1, 2, 6, 6)
    g = torch.randn(1, 2, 3, 3, requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # torch warns when an op has no autograd kernel
        r = ops.max_pool2d_add_backward(g, x, [3, 3], [2, 2], [1, 1], False)
    assert r.requires_grad


# ---- 7. clamp gradient at ties ----------------------------------------------------------------


def _clamp_grads(fn, z, lo, hi):
    z, lo, hi = (t.clone().requires_grad_() for t in (z, lo, hi))
    out = fn(z, lo, hi)
    return (out,) + torch.autograd.grad(out, (z, lo, hi), torch.ones_like(out))


def test_clamp_tie_gradients_reported_case():
    z = torch.tensor([0.0, -0.0, 1.0, 1.0])
    lo = torch.tensor([0.0, 0.0, 1.0, 0.5])
    hi = torch.tensor([0.0, 1.0, 1.0, 1.0])
    got = _clamp_grads(myops.clamp, z, lo, hi)
    for a, b in zip(got, _clamp_grads(torch.clamp, z, lo, hi)):
        assert_same(a, b)
    if _TORCH_2_14:  # the formula changed in torch 2.14: ties are split
        _, gz, glo, ghi = got
        assert gz.tolist() == [1.0, 0.5, 1.0, 0.5]
        assert glo.tolist() == [0.0, 0.5, 0.0, 0.0]
        assert ghi.tolist() == [0.0, 0.0, 0.0, 0.5]


def test_clamp_gradients_every_order_and_nan():
    vals = [0.0, 1.0, 2.0, float("nan")]
    rows = list(itertools.product(vals, repeat=3))
    z, lo, hi = (torch.tensor([r[i] for r in rows]) for i in range(3))
    for a, b in zip(_clamp_grads(myops.clamp, z, lo, hi), _clamp_grads(torch.clamp, z, lo, hi)):
        assert_same(a, b)


def test_clamp_gradients_broadcast():
    z = torch.randint(-2, 3, (4, 5)).float()
    lo = torch.randint(-2, 3, (5,)).float()
    hi = torch.randint(-2, 3, (4, 1)).float()
    for a, b in zip(_clamp_grads(myops.clamp, z, lo, hi), _clamp_grads(torch.clamp, z, lo, hi)):
        assert_same(a, b)


# ---- 6. output strides of non-dense inputs ---------------------------------------------------


def _strided_inputs():
    base = torch.randn(4, 6)
    yield base[:, ::2].t()  # (3, 4) with strides (2, 6)
    yield torch.randn(30).as_strided((3, 4), (1, 2))  # overlapping
    yield torch.randn(30).as_strided((3, 4), (2, 1))
    yield torch.randn(30).as_strided((3, 4), (1, 1))
    yield torch.randn(30).as_strided((2, 3, 4), (1, 8, 2))
    yield torch.randn(2, 5, 6).permute(2, 0, 1)[::2]
    yield torch.randn(60).as_strided((3, 4), (0, 3))


@pytest.mark.parametrize("idx", range(7))
def test_output_strides_like_torch(idx):
    x = list(_strided_inputs())[idx]
    y = torch.randn(30).as_strided(x.shape, (1,) * x.dim()) if x.dim() else x
    assert_same(myops.cast(x, torch.float64), x.to(torch.float64))
    assert_same(myops.cast(x, torch.int32), x.to(torch.int32))
    u8 = (x * 10).to(torch.uint8)
    sm, st_ = myops.sigmoid(u8), torch.sigmoid(u8)  # transcendental: a few ulp, same layout
    assert sm.dtype == st_.dtype and sm.shape == st_.shape and (sm.numel() <= 1 or sm.stride() == st_.stride())
    torch.testing.assert_close(sm, st_, rtol=2e-6, atol=2e-6)
    assert_same(myops.relu(x), torch.relu(x))
    assert_same(myops.add(x, y), torch.add(x, y))
    assert_same(myops.mul(y, x), torch.mul(y, x))
    assert_same(myops.mul(x, u8), torch.mul(x, u8))
    assert_same(myops.div(u8, x), torch.div(u8, x))
    assert_same(myops.where(x > 0, x, y), torch.where(x > 0, x, y))
    assert_same(myops.where(x > 0, u8, x), torch.where(x > 0, u8, x))
    assert_same(myops.clamp(x, y, x.abs()), torch.clamp(x, y, x.abs()))
    assert_same(myops.addcmul(x, y, u8), torch.addcmul(x, y, u8))


# ---- 8. gaps where torch works -----------------------------------------------------------------


def test_more_than_16_merged_dims():
    x = torch.randn([2] * 18).permute(*range(17, -1, -1))
    y = torch.randn([2] * 18)
    for fm, ft in ((myops.add, torch.add), (myops.maximum, torch.maximum)):
        assert_same(fm(x, y), ft(x, y))
    assert_same(myops.where(x > 0, x, y), torch.where(x > 0, x, y))
    assert_same(myops.cast(x[..., ::2], torch.float16), x[..., ::2].to(torch.float16))


def test_where_uint8_condition_warns_and_works():
    c = torch.tensor([1, 0, 2, 0], dtype=torch.uint8)
    x, y = torch.randn(4), torch.randn(4)
    with pytest.warns(UserWarning, match="uint8 condition"):
        r = myops.where(c, x, y)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert_same(r, torch.where(c, x, y))
        assert_same(myops.where(c[:1].reshape(()), x, y), torch.where(c[:1].reshape(()), x, y))


@pytest.mark.parametrize("dtype", [torch.complex64, torch.complex128])
def test_nonzero_complex(dtype):
    x = torch.tensor([[1j, 0, 1], [0, 0, 2 + 0j]], dtype=dtype)
    x[0, 1] = complex(0.0, -0.0)
    assert_same(myops.nonzero(x), torch.nonzero(x))
    assert_same(myops.argwhere(x), torch.argwhere(x))
    for a, b in zip(myops.where(x), torch.where(x)):
        assert_same(a, b)
    assert_same(myops.nonzero_static(x, size=5), torch.nonzero_static(x, size=5))


@pytest.mark.parametrize("other", ["int64", "int8", "bool", "uint8_0d", "python_int", "python_float"])
def test_max_pool2d_add_non_float_other(other):
    x = torch.randn(2, 3, 8, 8)
    o = {
        "int64": lambda: torch.randint(-5, 5, (1, 3, 1, 1)),
        "int8": lambda: torch.randint(-5, 5, (4, 4), dtype=torch.int8),
        "bool": lambda: torch.rand(2, 1, 4, 4) < 0.5,
        "uint8_0d": lambda: torch.tensor(7, dtype=torch.uint8),
        "python_int": lambda: 3,
        "python_float": lambda: 0.25,
    }[other]()
    assert_same(myops.max_pool2d_add(x, o), F.max_pool2d(x, 3, 2, 1) + o)


@pytest.mark.parametrize("side", ["max", "min"])
@pytest.mark.parametrize("bound", ["tensor", "number"])
def test_clamp_one_sided(side, bound):
    z = torch.tensor([0.0, 1.0, 2.0, float("nan"), 1.0, -3.0])
    t = torch.tensor([1.0, 1.0, 1.0, 1.0, float("nan"), 1.0]) if bound == "tensor" else 1.0
    kw = {side: t}
    zm = z.clone().requires_grad_()
    zt = z.clone().requires_grad_()
    rm = myops.clamp(zm, **kw)
    rt = torch.clamp(zt, **kw)
    assert_same(rm, rt)
    # torch's gradient: a tensor bound splits ties (torch >= 2.14), a number bound gives none at
    # the bound (torch >= 2.14); the bound's own gradient too
    assert_same(torch.autograd.grad(rm.sum(), zm)[0], torch.autograd.grad(rt.sum(), zt)[0])
    if bound == "tensor":
        tm, tt = t.clone().requires_grad_(), t.clone().requires_grad_()
        gm = torch.autograd.grad(myops.clamp(z, **{side: tm}).sum(), tm)[0]
        assert_same(gm, torch.autograd.grad(torch.clamp(z, **{side: tt}).sum(), tt)[0])


_NUMS = [-2.0, 0.0, 1.0, 2.5, float("inf"), -float("inf"), float("nan")]


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
def test_clamp_number_bounds_gradient(device, dtype):
    """Every pair of number bounds (ties, crossed, inf, NaN, one missing) against torch.clamp:
    values and torch's Scalar-bound gradient (self only; none at a bound on torch >= 2.14)."""
    base = torch.tensor(_NUMS + [0.5, -1.0, 3.0], dtype=dtype, device=device)
    x = torch.cat([base, torch.randn(37, device=device).to(dtype) * 3])
    for lo, hi in itertools.product(_NUMS + [None], repeat=2):
        if lo is None and hi is None:
            continue
        xm, xt = x.clone().requires_grad_(), x.clone().requires_grad_()
        rm, rt = myops.clamp(xm, lo, hi), torch.clamp(xt, lo, hi)
        assert_same(rm, rt)
        g = torch.randn_like(rt)
        assert_same(torch.autograd.grad(rm, xm, g)[0], torch.autograd.grad(rt, xt, g)[0])


@pytest.mark.parametrize(
    "x, lo, hi",
    [
        (lambda: torch.arange(-5, 6, dtype=torch.int32), 1.5, None),  # int with a float: float32
        (lambda: torch.arange(-5, 6, dtype=torch.int8), -3, 4),
        (lambda: torch.tensor(3, dtype=torch.int16), None, 2.0),  # 0-d
        (lambda: torch.randn(4, 5).half().t(), -0.5, 0.25),  # transposed float16
        (lambda: torch.randn(17, dtype=torch.bfloat16)[1:], None, 0.0),  # misaligned
        (lambda: torch.randn(2, 3, 4, 4).contiguous(memory_format=torch.channels_last), -1, 1),
        (lambda: torch.randn(3, 1).expand(3, 4), 0.0, 0.5),
        (lambda: torch.empty(0, 3), 0.0, 1.0),
        (lambda: torch.arange(-5, 6, dtype=torch.uint8), 3, None),  # missing max: uint8's limit
        (lambda: torch.arange(-5, 6, dtype=torch.int64), None, 2),  # missing min: int64's limit
        (lambda: torch.tensor([True, False]), 0.5, None),  # bool with a float: float32
    ],
)
@pytest.mark.parametrize("device", DEVICES)
def test_clamp_scalar_overload_like_torch(x, lo, hi, device):
    """torch.ops.myops.clamp.Scalar == torch.clamp with number bounds: dtype, strides, values."""
    x = x().to(device)
    assert_same(torch.ops.myops.clamp.Scalar(x, lo, hi), torch.clamp(x, lo, hi))
    assert_same(myops.clamp(x, lo, hi), torch.clamp(x, lo, hi))


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("n", [7, 64, 1001])
def test_clamp_number_bounds_nan_bits(device, n):
    """torch's Scalar clamp keeps a NaN input's bits (sign and payload) and makes every element
    a quiet NaN when a bound is NaN; clamp.Tensor's vector path does neither."""
    bits = torch.randint(-(2**31), 2**31 - 1, (n,), dtype=torch.int64)
    payload = ((bits & 0x803FFFFF) | 0x7FC00000).to(torch.int32).view(torch.float32)
    x = torch.where(torch.rand(n) < 0.3, payload, torch.randn(n) * 2).to(device)
    for lo, hi in [(-1.0, 1.0), (-1.0, None), (None, 0.5), (float("nan"), 1.0), (None, float("nan"))]:
        assert_same(myops.clamp(x, lo, hi), torch.clamp(x, lo, hi))
        assert_same(myops.clamp(x[1:], lo, hi), torch.clamp(x[1:], lo, hi))


@pytest.mark.parametrize("device", DEVICES)
def test_maximum_minimum_number_form_is_clamp(device):
    """myops.maximum(x, number) is torch.clamp(x, min=number): NaN bits and gradient too."""
    n = 67
    bits = torch.randint(-(2**31), 2**31 - 1, (n,), dtype=torch.int64)
    payload = ((bits & 0x803FFFFF) | 0x7FC00000).to(torch.int32).view(torch.float32)
    x = torch.where(torch.rand(n) < 0.2, payload, torch.randint(-3, 4, (n,)).float()).to(device)
    for s in [0.0, -1, 2.5, float("nan")]:
        for mine, ref in [
            (lambda t: myops.maximum(t, s), lambda t: torch.clamp(t, min=s)),
            (lambda t: myops.maximum(s, t), lambda t: torch.clamp(t, min=s)),
            (lambda t: myops.minimum(t, s), lambda t: torch.clamp(t, max=s)),
            (lambda t: myops.minimum(s, t), lambda t: torch.clamp(t, max=s)),
        ]:
            xm, xt = x.clone().requires_grad_(), x.clone().requires_grad_()
            rm, rt = mine(xm), ref(xt)
            assert_same(rm, rt)
            assert_same(torch.autograd.grad(rm.sum(), xm)[0], torch.autograd.grad(rt.sum(), xt)[0])


def test_clamp_scalar_overload_errors():
    x = torch.arange(4, dtype=torch.int8)
    same_error(
        lambda: torch.ops.myops.clamp.Scalar(x, -200, 3), lambda: torch.clamp(x, -200, 3), match="without overflow"
    )
    with pytest.raises(RuntimeError, match="myops.clamp: at least one of 'min' and 'max'"):
        torch.ops.myops.clamp.Scalar(x)
    with pytest.raises(TypeError, match="real Python number"):
        myops.clamp(x, "0", 1)
    b = torch.tensor([True, False])
    same_error(lambda: torch.ops.myops.clamp.Scalar(b, None, False), lambda: torch.clamp(b, max=False), match="bool")
    same_error(lambda: myops.clamp(b, True, False), lambda: torch.clamp(b, True, False), match="bool")


@pytest.mark.parametrize("device", DEVICES)
def test_clamp_scalar_overload_gradgradcheck_and_opcheck(device):
    x = torch.randn(3, 4, dtype=torch.float64, device=device) * 2
    x = torch.where((x + 0.5).abs() < 0.05, x + 0.1, x)
    x = torch.where((x - 1.0).abs() < 0.05, x + 0.1, x).requires_grad_()
    for lo, hi in [(-0.5, 1.0), (None, 1.0), (-0.5, None)]:
        assert torch.autograd.gradcheck(lambda t: myops.clamp(t, lo, hi), (x,))
        assert torch.autograd.gradgradcheck(lambda t: myops.clamp(t, lo, hi), (x,))
        torch.library.opcheck(torch.ops.myops.clamp.Scalar, (x, lo, hi))
        torch.library.opcheck(torch.ops.myops.clamp.Scalar, (x.detach().float(), lo, hi))
    torch.library.opcheck(torch.ops.myops.clamp.Scalar, (torch.arange(6, device=device), 2, None))


def test_clamp_without_bounds_raises():
    same_error(lambda: myops.clamp(torch.ones(2)), lambda: torch.clamp(torch.ones(2)), match="min")


# ---- 9. bad input raises what torch raises -----------------------------------------------------


@pytest.mark.parametrize("dims", [(0, 2), (-3, 1), (5, 0)])
def test_diagonal_dim_out_of_range_is_index_error(dims):
    x = torch.randn(3, 3)
    same_error(lambda: myops.diagonal(x, 0, *dims), lambda: torch.diagonal(x, 0, *dims), match="range")
    with pytest.raises(IndexError, match="range"):
        ops.diagonal(x, 0, *dims)


def test_mul_scalar_non_number_is_type_error():
    with pytest.raises(TypeError, match="other"):
        myops.mul_scalar(torch.ones(2), "x")
    with pytest.raises(TypeError):
        myops.add(torch.ones(2), "x")


@pytest.mark.parametrize(
    "a, b",
    [
        (torch.tensor([True]), torch.tensor([False])),
        (torch.tensor([True]), torch.tensor([1])),
        (torch.tensor([1]), torch.tensor([True])),
        (torch.tensor([True]), 1),
    ],
)
def test_sub_bool_refused(a, b):
    same_error(lambda: myops.sub(a, b), lambda: torch.sub(a, b), match="bool")


def test_max_pool2d_add_none_other():
    with pytest.raises(TypeError, match="other"):
        myops.max_pool2d_add(torch.randn(1, 1, 4, 4), None)


@pytest.mark.parametrize("arg", ["kernel_size", "stride", "padding"])
@pytest.mark.parametrize("value", [2**62, 2**31])
def test_max_pool2d_add_absurd_parameters(arg, value):
    x = torch.randn(1, 2, 8, 8)
    kw = {"kernel_size": 3, "stride": 2, "padding": 1}
    kw[arg] = value
    with pytest.raises(RuntimeError):  # torch <= 2.12 says "integer out of range"
        F.max_pool2d(x, **kw)
    with pytest.raises(RuntimeError, match="without overflow"):
        myops.max_pool2d_add(x, torch.zeros(1), **kw)
    with pytest.raises(RuntimeError, match="without overflow"):
        ops.max_pool2d_add(x, torch.zeros(1), [kw["kernel_size"]] * 2, [kw["stride"]] * 2, [kw["padding"]] * 2)


def test_max_pool2d_add_empty_stride_means_kernel():
    x = torch.randn(2, 3, 9, 9)
    o = torch.randn(3, 1, 1)
    expected = F.max_pool2d(x, 3, padding=1) + o
    assert_same(myops.max_pool2d_add(x, o, [3, 3], []), expected)
    assert_same(ops.max_pool2d_add(x, o, [3, 3], []), expected)


@pytest.mark.parametrize("name", ["maximum", "minimum"])
def test_maximum_minimum_gradients_nan_and_ties(name):
    n = float("nan")
    a = torch.tensor([n, 1.0, n, 1.0, 2.0, -0.0])
    b = torch.tensor([1.0, n, n, 1.0, 1.0, 0.0])
    out = []
    for fn in (getattr(myops, name), getattr(torch, name)):
        x, y = a.clone().requires_grad_(), b.clone().requires_grad_()
        r = fn(x, y)
        out.append((r,) + torch.autograd.grad(r, (x, y), torch.arange(1.0, 7.0)))
    for m, t in zip(*out):
        assert_same(m, t)


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


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", [torch.float16, torch.float32])
def test_div_divisor_gradient_in_torch_order(device, dtype):
    """d(a/b)/db as torch computes it, -g * ((a / b) / b): b * b overflows in half for |b| > 255.9."""
    a = (torch.randn(64, dtype=torch.float64) * 4).to(dtype).to(device)
    b = torch.cat([torch.rand(32, dtype=torch.float64) * 600 + 200, torch.randn(32, dtype=torch.float64) + 3]).to(dtype)
    b = b.to(device)
    g = torch.randn(64, dtype=torch.float64).to(dtype).to(device)
    bm, bt = b.clone().requires_grad_(), b.clone().requires_grad_()
    (gm,) = torch.autograd.grad(myops.div(a, bm), bm, g)
    (gt,) = torch.autograd.grad(torch.div(a, bt), bt, g)
    assert_same(gm, gt)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("other", [0.1, -3, True])
def test_max_pool2d_add_number_other_in_its_precision(device, other):
    """A Python number `other` keeps its own precision (float64 for a float), as torch's add
    with a number does, and is made on the device without a host copy."""
    x = torch.randn(2, 3, 9, 9, dtype=torch.float64, device=device)
    assert_same(myops.max_pool2d_add(x, other), torch.nn.functional.max_pool2d(x, 3, 2, 1) + other)
