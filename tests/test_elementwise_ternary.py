"""Elementwise family, three operands: where, addcmul and clamp (tensor and number bounds, one-sided,
the Scalar overload) against torch: dtypes, broadcasting, layouts, NaN bounds, gradients at ties."""

import itertools
import warnings

import pytest
import torch

import myops
from helpers import (
    DEVICES,
    FLOAT_DTYPES,
    INT_DTYPES,
    LAYOUTS,
    assert_like_torch,
    assert_same,
    outcome,
    rand,
    same_error,
    with_layout,
)
from elementwise_helpers import (
    C,
    H,
    N,
    W,
    TERNARY,
    assert_exact,
    compare,
    sample,
    ternary_inputs,
)

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


_TORCH_2_14 = tuple(int(p) for p in torch.__version__.split(".")[:2]) >= (2, 14)


# ---- clamp's gradient at ties --------------------------------------------------------------------


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


# ---- where with a uint8 condition, clamp by numbers and one-sided --------------------------------


def test_where_uint8_condition_warns_and_works():
    c = torch.tensor([1, 0, 2, 0], dtype=torch.uint8)
    x, y = torch.randn(4), torch.randn(4)
    with pytest.warns(UserWarning, match="uint8 condition"):
        r = myops.where(c, x, y)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert_same(r, torch.where(c, x, y))
        assert_same(myops.where(c[:1].reshape(()), x, y), torch.where(c[:1].reshape(()), x, y))


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


def test_errors_name_the_op_called():
    # a number beside a tensor bound becomes a 0-d bound of the promoted dtype; where that dtype is
    # refused the error is clamp's, naming the argument at fault, as with two tensor bounds (#56)
    x = torch.randn(3, dtype=torch.complex64)
    m = torch.tensor([1, 2, 3], dtype=torch.int8)
    for call in (lambda: myops.clamp(x, min=m, max=1), lambda: myops.clamp(x, 0, m), lambda: myops.clamp(m, x, 1)):
        with pytest.raises(NotImplementedError) as info:
            call()
        assert str(info.value).startswith("myops.clamp:") and "where" not in str(info.value), info.value
    with pytest.raises(NotImplementedError, match="^myops.clamp: argument 'self'"):
        myops.clamp(x, min=m, max=m)
    # an error clamp's checks do not raise is the number's own: its overflow
    with pytest.raises(RuntimeError, match="without overflow"):
        myops.clamp(torch.arange(3, dtype=torch.int8), m, 1000)
    # maximum / minimum beside a number run as clamp, and their errors name them, as beside a tensor
    for op, call in (("maximum", lambda: myops.maximum(x, 1)), ("minimum", lambda: myops.minimum(1, x))):
        with pytest.raises(RuntimeError, match=f"^myops.{op}: not implemented for complex"):
            call()
    with pytest.raises(RuntimeError, match="without overflow"):
        myops.maximum(torch.arange(3, dtype=torch.int8), 1000)


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


# ---- clamp: a number with a 0-d tensor bound, a NaN number bound ---------------------------------


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
    # the number overload's gradient at a bound: none from torch 2.14, 1 before (the torch
    # myops is built against; the loop above compares it with torch)
    at_bound = 0.0 if _TORCH_2_14 else 1.0
    assert _grads(myops.clamp, x, 0, t(6.0))[1].tolist() == [1.0, at_bound, 0.0, 0.0]
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
