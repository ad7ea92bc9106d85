"""myops.max_pool2d_add vs F.max_pool2d(...) + other: bitwise forward parity (NaN, inf, ties,
-0.0, every layout and broadcast form of `other`, mixed dtypes), output layout, errors,
gradients, opcheck."""

import itertools
import struct
import warnings

import pytest
import torch
import torch.nn.functional as F
from hypothesis import given, settings, strategies as st

import myops
from helpers import (
    DEVICES,
    FLOAT_DTYPES,
    INT_DTYPES,
    assert_like_torch,
    assert_same,
    cuda_only,
    outcome,
    rand,
    with_layout,
)

op = torch.ops.myops.max_pool2d_add.default


def reference(x, other, k=(3, 3), s=(2, 2), p=(1, 1), ceil_mode=False):
    return F.max_pool2d(x, k, s, p, ceil_mode=ceil_mode) + other


def pooled_shape(x, k=(3, 3), s=(2, 2), p=(1, 1), ceil_mode=False):
    return F.max_pool2d(torch.empty(x.shape, device="meta"), k, s, p, ceil_mode=ceil_mode).shape


def same_up_to_nan_payload(actual, expected, check_stride=True):
    """assert_same, except that NaNs only need to be NaN where torch's are: torch's own NaN bit
    patterns after half/bfloat16 conversions depend on whether an element went through its
    vectorized body or its scalar tail (e.g. bfloat16 0xffff vs 0x7fc0)."""
    assert_same(actual, expected, check_stride=check_stride, bitwise=False)
    nan = actual.isnan()
    assert torch.equal(nan, expected.isnan())
    fill = torch.tensor(7.0, dtype=actual.dtype, device=actual.device)
    assert_same(torch.where(nan, fill, actual).contiguous(), torch.where(nan, fill, expected).contiguous())


def check(x, other, k=(3, 3), s=(2, 2), p=(1, 1), ceil_mode=False):
    """Runs both, compares bitwise (and strides where they are meaningful: every pooled dim > 1,
    else torch's add may pick any stride for size-1 dims), and checks the inputs are untouched.
    NaN payloads are compared too when no half/bfloat16 conversion is involved."""
    x_before, o_before = x.clone(), other.clone()
    expected = reference(x, other, k, s, p, ceil_mode)
    actual = myops.max_pool2d_add(x, other, k, s, p, ceil_mode)
    strides = all(d > 1 for d in expected.shape)
    exact_nan = x.dtype in (torch.float32, torch.float64) and other.dtype in (torch.float32, torch.float64)
    if exact_nan:
        assert_same(actual, expected, check_stride=strides)
    else:
        same_up_to_nan_payload(actual, expected, check_stride=strides)
    assert_same(x, x_before, check_stride=False)
    assert_same(other, o_before, check_stride=False)
    return actual


def rand_other(x, shape_kind="n1hw", dtype=None, k=(3, 3), s=(2, 2), p=(1, 1), ceil_mode=False):
    N, C, Ho, Wo = ([1] if x.dim() == 3 else []) + list(pooled_shape(x, k, s, p, ceil_mode))
    shape = {
        "n1hw": [N, 1, Ho, Wo],
        "1c11": [1, C, 1, 1],
        "c11": [C, 1, 1],
        "wo": [Wo],
        "0d": [],
        "full": [N, C, Ho, Wo],
        "nc1w": [N, C, 1, Wo],
    }[shape_kind]
    if x.dim() == 3 and len(shape) == 4:
        shape = shape[1:]
    return rand(shape, dtype or x.dtype, x.device)


# ---- parity on random data ---------------------------------------------------------------------


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
@pytest.mark.parametrize("layout", ["contiguous", "channels_last", "transposed", "sliced", "misaligned", "expanded"])
def test_random(device, dtype, layout):
    x = with_layout(rand([2, 5, 13, 18], dtype, device), layout)
    check(x, rand_other(x, "n1hw"))
    check(x, rand_other(x, "1c11"))


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", [torch.float32, torch.float16])
@pytest.mark.parametrize("channels_last", [False, True])
def test_headline_shape_slice(device, dtype, channels_last):
    # The headline case [32, 64, 112, 112] + [32, 1, 56, 56], cut down in N and C.
    x = rand([2, 16, 112, 112], dtype, device)
    if channels_last:
        x = x.contiguous(memory_format=torch.channels_last)
    out = check(x, rand([2, 1, 56, 56], dtype, device))
    assert out.is_contiguous(memory_format=torch.channels_last if channels_last else torch.contiguous_format)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("ceil_mode", [False, True])
def test_spatial_sizes(device, ceil_mode):
    sizes = [1, 2, 3, 5, 112, 113]
    for H, W in itertools.product(sizes, sizes):
        x = rand([1, 3, H, W], torch.float32, device)
        check(x, rand_other(x, "n1hw", ceil_mode=ceil_mode), ceil_mode=ceil_mode)
    for H, W in [(1, 1), (2, 5), (5, 113), (113, 3)]:
        x = rand([2, 9, H, W], torch.float32, device).contiguous(memory_format=torch.channels_last)
        check(x, rand_other(x, "1c11", ceil_mode=ceil_mode), ceil_mode=ceil_mode)


POOL_PARAMS = [
    # kernel, stride, padding, ceil_mode
    ((3, 3), (2, 2), (1, 1), False),
    ((3, 3), (2, 2), (1, 1), True),
    ((3, 3), (2, 2), (0, 0), True),
    ((2, 2), (2, 2), (0, 0), False),
    ((2, 2), (2, 2), (1, 1), True),
    ((3, 3), (1, 1), (1, 1), False),
    ((1, 1), (1, 1), (0, 0), False),
    ((4, 4), (3, 3), (2, 2), True),
    ((5, 5), (2, 2), (2, 2), False),
    ((3, 2), (2, 1), (1, 0), False),
    ((2, 3), (1, 3), (0, 1), True),
    ((3, 3), (3, 3), (0, 0), False),
    ((7, 1), (1, 2), (3, 0), True),
]


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("k,s,p,ceil_mode", POOL_PARAMS)
@pytest.mark.parametrize("channels_last", [False, True])
def test_pool_params(device, k, s, p, ceil_mode, channels_last):
    x = rand([2, 6, 11, 20], torch.float32, device)
    if channels_last:
        x = x.contiguous(memory_format=torch.channels_last)
    check(x, rand_other(x, "n1hw", k=k, s=s, p=p, ceil_mode=ceil_mode), k, s, p, ceil_mode)
    check(x, rand_other(x, "full", k=k, s=s, p=p, ceil_mode=ceil_mode), k, s, p, ceil_mode)


# ---- special values ----------------------------------------------------------------------------


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
@pytest.mark.parametrize("channels_last", [False, True])
def test_all_negative(device, dtype, channels_last):
    # zero padding would turn every border output into `0 + other`
    x = (-(torch.rand([2, 4, 9, 24], device=device) + 0.5)).to(dtype)
    if channels_last:
        x = x.contiguous(memory_format=torch.channels_last)
    check(x, rand_other(x, "n1hw"))
    check(x, rand_other(x, "n1hw", ceil_mode=True), ceil_mode=True)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16])
@pytest.mark.parametrize("channels_last", [False, True])
def test_nan_at_each_window_position(device, dtype, channels_last):
    # 3x3/s2/p1 window of output (oh, ow) covers rows 2*oh-1..2*oh+1, cols 2*ow-1..2*ow+1;
    # put one NaN at each of its 9 positions (interior windows, several per row so that the
    # vectorized paths see it in every lane) and one at the borders.
    for i, j in itertools.product(range(3), range(3)):
        x = rand([2, 3, 15, 41], dtype, device)
        for oh, ow in [(1, 1), (3, 7), (5, 12), (6, 19)]:
            x[:, :, 2 * oh - 1 + i, 2 * ow - 1 + j] = float("nan")
        x[0, 0, 0, 0] = float("nan")
        x[1, 2, 14, 40] = float("nan")
        if channels_last:
            x = x.contiguous(memory_format=torch.channels_last)
        out = check(x, rand_other(x, "n1hw"))
        assert out.isnan().any()


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
@pytest.mark.parametrize("channels_last", [False, True])
def test_several_nans_and_infs(device, dtype, channels_last):
    x = rand([2, 7, 17, 33], dtype, device)
    u = torch.rand(x.shape, device=device)
    x[u < 0.05] = float("nan")
    x[(u >= 0.05) & (u < 0.12)] = float("inf")
    x[(u >= 0.12) & (u < 0.3)] = float("-inf")
    x[:, :, 4:8, 4:12] = float("-inf")  # whole windows of -inf
    if channels_last:
        x = x.contiguous(memory_format=torch.channels_last)
    check(x, rand_other(x, "n1hw"))
    check(x, rand_other(x, "full", ceil_mode=True), ceil_mode=True)
    # inf and nan in other too
    o = rand_other(x, "n1hw")
    o.view(-1)[::7] = float("inf")
    o.view(-1)[::11] = float("-inf")
    check(x, o)


def _nan_with_payload(payload):
    return struct.unpack("<f", struct.pack("<I", 0x7FC00000 | payload))[0]


def test_nan_payload_last_nan_wins_cpu():
    # torch keeps the last NaN of the row-major scan; on the CPU the add keeps its payload.
    x = torch.randn(1, 2, 9, 17)
    xi = x.view(torch.int32)
    pay = torch.randint(1, 1 << 20, x.shape, dtype=torch.int32)
    mask = torch.rand(x.shape) < 0.3
    xi[mask] = (0x7FC00000 | pay)[mask]
    o = torch.randn(1, 1, 5, 9)
    check(x, o)
    check(x.contiguous(memory_format=torch.channels_last), o)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
@pytest.mark.parametrize("channels_last", [False, True])
def test_ties_and_signed_zeros(device, dtype, channels_last):
    # Few distinct values: many ties; -0.0 vs +0.0 must resolve like torch (first in the
    # window's row-major order). other = -0.0 keeps the pooled zero's sign in the result.
    vals = torch.tensor([-0.0, 0.0, -1.0, 1.0, 0.0, -0.0], device=device, dtype=dtype)
    for _ in range(3):
        x = vals[torch.randint(0, len(vals), (2, 6, 14, 37), device=device)]
        if channels_last:
            x = x.contiguous(memory_format=torch.channels_last)
        o = torch.full(pooled_shape(x), -0.0, device=device, dtype=dtype)
        check(x, o)
        zeros_only = torch.where(x.abs() == 1, torch.zeros_like(x), x)
        check(zeros_only, o)


# ---- other: broadcast forms, layouts, dtypes ---------------------------------------------------


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("kind", ["n1hw", "1c11", "c11", "wo", "0d", "full", "nc1w"])
@pytest.mark.parametrize("channels_last", [False, True])
def test_other_broadcast_forms(device, kind, channels_last):
    x = rand([3, 5, 12, 19], torch.float32, device)
    if channels_last:
        x = x.contiguous(memory_format=torch.channels_last)
    o = rand_other(x, kind)
    check(x, o)
    if o.dim() >= 1:
        # non-contiguous other: sliced along its first dim
        check(x, with_layout(o, "sliced"))
    if o.dim() >= 2:
        check(x, with_layout(o, "transposed"))


@pytest.mark.parametrize("device", DEVICES)
def test_other_stride_zero(device):
    x = rand([2, 4, 10, 10], torch.float32, device)
    Ho, Wo = pooled_shape(x)[-2:]
    base = rand([1, 4, Ho, 1], torch.float32, device)
    check(x, base.expand(2, 4, Ho, Wo))  # stride-0 view, full shape
    check(x, rand([Wo], torch.float32, device).expand(Ho, Wo))
    check(x, torch.tensor(1.5, device=device).expand(2, 1, Ho, Wo))


# ---- other broadcasts the pooled result up (#56): the result has torch's add's shape -------------

# (self shape, other shape, kernel, stride, padding, ceil_mode): each pooled dim of 1 that other
# repeats (N, C, Ho, Wo), leading dims (of one image or several), an unbatched self
EXPANDING = [
    ([1, 10, 1], [2, 1, 8, 1], 3, (1, 2), (0, 1), False),  # the case
    ([3, 7, 9], [2, 3, 4, 5], 3, 2, 1, False),
    ([1, 4, 9, 9], [3, 4, 5, 5], 3, 2, 1, False),
    ([2, 1, 9, 9], [2, 6, 5, 5], 3, 2, 1, False),
    ([2, 3, 3, 9], [2, 3, 4, 5], 3, 2, 1, False),  # Ho = 2 against 4: does not broadcast
    ([2, 3, 2, 9], [2, 3, 4, 5], 3, 2, 1, False),  # Ho 1 -> 4
    ([2, 3, 9, 2], [1, 3, 5, 6], 3, 2, 1, True),  # Wo 1 -> 6
    ([2, 3, 1, 1], [2, 3, 3, 4], 2, 2, 1, True),  # one window for every output
    ([2, 3, 9, 9], [4, 2, 3, 5, 5], 3, 2, 1, False),  # leading dim, several images
    ([1, 3, 9, 9], [2, 5, 1, 3, 1, 5], 3, 2, 1, False),  # leading dims, one image
    ([3, 9, 9], [2, 4, 3, 1, 5], 3, 2, 1, False),
    ([2, 1, 7, 7], [0, 2, 5, 1, 1], 3, 2, 1, False),  # an empty result
]


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("case", EXPANDING, ids=str)
@pytest.mark.parametrize("layout", ["contiguous", "channels_last", "transposed"])
def test_other_expands_result(device, case, layout):
    shape, oshape, k, s, p, ceil_mode = case
    x = rand(shape, torch.float32, device)
    if layout == "channels_last" and x.dim() == 4:
        x = x.contiguous(memory_format=torch.channels_last)
    o = with_layout(rand(oshape, torch.float32, device), layout if layout != "channels_last" else "contiguous")
    kw = {"kernel_size": k, "stride": s, "padding": p, "ceil_mode": ceil_mode}
    expected, err = outcome(lambda: F.max_pool2d(x, **kw) + o)
    if err is not None:  # the case's other does not broadcast: the same exception type
        with pytest.raises(type(err), match="must broadcast with the pooled shape"):
            myops.max_pool2d_add(x, o, **kw)
        return
    actual = myops.max_pool2d_add(x, o, **kw)
    assert_same(actual, expected)  # strides too, as torch's add chooses them
    # the fake kernel (C++ rule) gives the same shape and strides
    with torch._subclasses.FakeTensorMode() as mode:
        fake = myops.max_pool2d_add(mode.from_tensor(x), mode.from_tensor(o), **kw)
    assert fake.shape == expected.shape and fake.stride() == expected.stride()


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", [torch.float16, torch.float64])
def test_other_expands_result_dtypes_and_specials(device, dtype):
    # NaN and -inf windows, ties, a wider other, a non-contiguous other whose leading dims do not
    # fold into one (self repeated for each of them)
    x = rand([2, 3, 7, 8], dtype, device)
    x[0, 1, :3, :3] = float("nan")
    x[1, 2] = float("-inf")
    o = rand([3, 1, 2, 1, 4, 4], torch.float32, device).expand(3, 5, 2, 3, 4, 4)
    check(x, o)
    check(x.contiguous(memory_format=torch.channels_last), o.transpose(0, 3))


@pytest.mark.parametrize("device", DEVICES)
def test_other_expands_result_gradients(device):
    # the result [2, 2, 2, 3, 2] repeats the pooled [2, 1, 3, 2] over a leading dim and C
    x = _distinct([2, 1, 5, 4], device).requires_grad_()
    o = torch.randn(2, 2, 2, 3, 1, device=device, dtype=torch.float64, requires_grad=True)
    fn = lambda x, o: myops.max_pool2d_add(x, o, 3, 2, 1)  # noqa: E731
    assert torch.autograd.gradcheck(fn, (x, o))
    assert torch.autograd.gradgradcheck(fn, (x, o))  # (opcheck: test_opcheck's last sample)
    # the gradients sum over the copies as torch's autograd sums them: bit for bit in float32
    xf, of = x.detach().float().requires_grad_(), o.detach().float().requires_grad_()
    xr, orf = xf.detach().clone().requires_grad_(), of.detach().clone().requires_grad_()
    g = torch.randn(2, 2, 2, 3, 2, device=device)
    myops.max_pool2d_add(xf, of).backward(g)
    (F.max_pool2d(xr, 3, 2, 1) + orf).backward(g)
    assert_same(xf.grad, xr.grad)
    assert_same(of.grad, orf.grad)


# ---- integer self (#56): the dtypes torch's max_pool2d takes on the device ----------------------


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", INT_DTYPES + [torch.bool, torch.uint16], ids=str)
def test_integer_self(device, dtype):
    # channels_last [11, 13] planes in 1-byte integers: torch's CPU kernel refuses H * W > 127
    big = rand([1, 2, 11, 13], dtype, device).contiguous(memory_format=torch.channels_last)
    assert_like_torch(lambda: myops.max_pool2d_add(big, 1), lambda: F.max_pool2d(big, 3, 2, 1) + 1)
    x = rand([2, 5, 9, 14], dtype, device)
    if dtype not in (torch.bool, torch.uint16):
        info = torch.iinfo(dtype)
        x.view(-1)[::7] = info.max  # the add wraps around as torch's does
        x.view(-1)[3::7] = info.min
    Ho, Wo = pooled_shape(x)[-2:]
    others = [
        rand([2, 1, Ho, Wo], dtype, device),
        rand([5, 1, 1], torch.int64, device),
        rand([2, 1, Ho, Wo], torch.int8, device),
        rand([Ho, Wo], torch.bool, device),
        rand([5, 1, 1], torch.float16, device),
        rand([2, 5, Ho, Wo], torch.float32, device),
        torch.tensor(2.5, dtype=torch.float64, device=device),
        torch.tensor(-3, dtype=torch.int16, device=device),
        3,
        -1.5,
        rand([3, 2, 5, Ho, Wo], dtype, device),  # the result expanded
    ]
    for xl in (x, x.contiguous(memory_format=torch.channels_last), x[0]):
        for o in others:
            if isinstance(o, torch.Tensor) and xl.dim() == 3 and o.dim() == 4 and o.shape[1] == 1:
                o = o[0]
            assert_like_torch(lambda: myops.max_pool2d_add(xl, o), lambda: F.max_pool2d(xl, 3, 2, 1) + o)
    for k, s, p, c in POOL_PARAMS[::3]:
        assert_like_torch(
            lambda: myops.max_pool2d_add(x, 1, k, s, p, c), lambda: F.max_pool2d(x, k, s, p, ceil_mode=c) + 1
        )


MIXED = [
    (torch.float16, torch.float32),
    (torch.bfloat16, torch.float32),
    (torch.float32, torch.float64),
    (torch.float16, torch.bfloat16),
    (torch.bfloat16, torch.float16),
    (torch.float64, torch.float32),
    (torch.float32, torch.float16),
    (torch.float16, torch.float64),
    (torch.bfloat16, torch.float64),
]


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("self_dtype,other_dtype", MIXED)
def test_mixed_dtypes(device, self_dtype, other_dtype):
    x = rand([2, 3, 11, 14], self_dtype, device)
    x.view(-1)[::13] = float("nan")
    o = rand_other(x, "n1hw", dtype=other_dtype)
    out = check(x, o)
    assert out.dtype == torch.result_type(x, o)
    check(x.contiguous(memory_format=torch.channels_last), o)
    # a 0-d other does not promote a dimensioned self of the same category
    o0 = torch.tensor(0.1, dtype=other_dtype, device=device)
    out = check(x, o0)
    assert out.dtype == torch.result_type(x, o0)


# ---- shapes ------------------------------------------------------------------------------------


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_unbatched(device, dtype):
    x = rand([5, 13, 9], dtype, device)
    for kind in ["c11", "wo", "0d", "full", "n1hw"]:
        out = check(x, rand_other(x, kind))
        assert out.dim() == 3
    check(with_layout(x, "transposed"), rand_other(x, "full", ceil_mode=True), ceil_mode=True)


@pytest.mark.parametrize("device", DEVICES)
def test_empty_batch(device):
    x = rand([0, 3, 10, 10], torch.float32, device)
    for o in [rand([0, 1, 5, 5], torch.float32, device), rand([1, 3, 1, 1], torch.float32, device)]:
        out = myops.max_pool2d_add(x, o)
        assert_same(out, reference(x, o), check_stride=False)
        assert out.shape == (0, 3, 5, 5)
    xc = x.contiguous(memory_format=torch.channels_last)
    assert myops.max_pool2d_add(xc, o).shape == (0, 3, 5, 5)


@pytest.mark.parametrize("device", DEVICES)
def test_wrapper_arguments(device):
    x = rand([2, 3, 10, 11], torch.float32, device)
    o = rand([3, 1, 1], torch.float32, device)
    # ints expand to pairs; stride=None means kernel_size (like F.max_pool2d)
    assert_same(myops.max_pool2d_add(x, o, 3, 2, 1), reference(x, o, 3, 2, 1))
    assert_same(myops.max_pool2d_add(x, o, 2, None, 0), reference(x, o, 2, 2, 0))
    assert_same(myops.max_pool2d_add(x, o), reference(x, o))  # defaults 3x3 / s2 / p1
    assert_same(op(x, o, [3], [2], [1]), reference(x, o))


# ---- errors ------------------------------------------------------------------------------------


@pytest.mark.parametrize("device", DEVICES)
def test_errors(device):
    x = rand([2, 3, 8, 8], torch.float32, device)
    o = rand([1], torch.float32, device)
    with pytest.raises(RuntimeError, match=r"max_pool2d_add: argument 'self' must be a 3-D .* got 2-D"):
        op(rand([8, 8], torch.float32, device), o)
    with pytest.raises(RuntimeError, match=r"max_pool2d_add: argument 'self' must be a 3-D .* got 5-D"):
        op(rand([1, 2, 3, 8, 8], torch.float32, device), o)
    with pytest.raises(RuntimeError, match=r"argument 'padding' must be at most half of kernel_size"):
        op(x, o, [3, 3], [2, 2], [2, 1])
    with pytest.raises(RuntimeError, match=r"argument 'padding' must be non-negative"):
        op(x, o, [3, 3], [2, 2], [-1, 0])
    with pytest.raises(RuntimeError, match=r"argument 'self' .* pooled output .* at least 1 x 1"):
        op(rand([1, 2, 2, 8], torch.float32, device), o, [3, 3], [1, 1], [0, 0])
    with pytest.raises(RuntimeError, match=r"argument 'other' of shape \[3, 4\] must broadcast with the pooled shape"):
        op(x, rand([3, 4], torch.float32, device))
    with pytest.raises(RuntimeError, match=r"argument 'other' .* must broadcast .* size 2 against 3 at dimension -3"):
        op(x, rand([2, 2, 4, 4], torch.float32, device)[:, None])
    with pytest.raises(RuntimeError, match=r"argument 'kernel_size' must be positive"):
        op(x, o, [0, 3], [2, 2], [0, 0])
    with pytest.raises(RuntimeError, match=r"argument 'stride' must be positive"):
        op(x, o, [3, 3], [0, 2], [1, 1])
    with pytest.raises(RuntimeError, match=r"argument 'kernel_size' must be a single int or a list of two ints"):
        op(x, o, [3, 3, 3], [2, 2], [1, 1])
    with pytest.raises(NotImplementedError, match=r"argument 'self' must have dtype in"):
        op(x.to(torch.bool), o)
    with pytest.raises(RuntimeError, match=r"argument 'other' must have dtype in"):
        op(x, o.to(torch.complex64))
    with pytest.raises(RuntimeError, match=r"argument 'self' must have non-zero C, H and W"):
        op(rand([2, 0, 8, 8], torch.float32, device), o)
    with pytest.raises(
        RuntimeError, match=r"max_pool2d_add_backward: argument 'grad_output' must have the pooled shape"
    ):
        torch.ops.myops.max_pool2d_add_backward(
            rand([2, 3, 3, 3], torch.float32, device), x, [3, 3], [2, 2], [1, 1], False
        )


@cuda_only
def test_errors_mixed_devices():
    x = rand([2, 3, 8, 8], torch.float32, "cuda")
    with pytest.raises(RuntimeError, match=r"max_pool2d_add: expected all tensors on the same device"):
        op(x, torch.ones(1))
    with pytest.raises(RuntimeError, match=r"max_pool2d_add: expected all tensors on the same device"):
        op(x.cpu(), torch.ones(1, device="cuda"))


@cuda_only
def test_cuda_other_device_and_stream():
    """Runs on the current (non-default) stream and on the tensors' device (the last GPU: not
    device 0 when there are two)."""
    dev = torch.device("cuda", torch.cuda.device_count() - 1)
    x = rand([2, 3, 30, 30], torch.float32, dev).requires_grad_()
    o = rand([2, 1, 15, 15], torch.float32, dev)
    s = torch.cuda.Stream(device=dev)
    s.wait_stream(torch.cuda.current_stream(dev))  # x and o are written on the current stream
    with torch.cuda.stream(s):
        out = myops.max_pool2d_add(x, o)
        (g,) = torch.autograd.grad(out.sum(), x)
    s.synchronize()
    assert out.device == dev and g.device == dev
    xr = x.detach().requires_grad_()
    ref = reference(xr, o)
    assert_same(out, ref)
    assert_same(g, torch.autograd.grad(ref.sum(), xr)[0])


# ---- gradients ---------------------------------------------------------------------------------


def _distinct(shape, device, dtype=torch.float64):
    """Values without ties (gradcheck's finite differences need a unique argmax)."""
    n = 1
    for d in shape:
        n *= d
    return (torch.randperm(n, device=device).to(dtype) / n - 0.5).reshape(shape)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("k,s,p,ceil_mode", [((3, 3), (2, 2), (1, 1), False), ((2, 3), (1, 2), (1, 1), True)])
def test_gradcheck(device, k, s, p, ceil_mode):
    x = _distinct([2, 3, 7, 8], device).requires_grad_()
    Ho, Wo = pooled_shape(x, k, s, p, ceil_mode)[-2:]
    for oshape in [[2, 1, Ho, Wo], [1, 3, 1, 1]]:
        o = torch.randn(oshape, device=device, dtype=torch.float64, requires_grad=True)
        assert torch.autograd.gradcheck(lambda a, b: op(a, b, k, s, p, ceil_mode), (x, o))
    xc = x.detach().contiguous(memory_format=torch.channels_last).requires_grad_()
    o = torch.randn([], device=device, dtype=torch.float64, requires_grad=True)
    assert torch.autograd.gradcheck(lambda a, b: op(a, b, k, s, p, ceil_mode), (xc, o))


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
@pytest.mark.parametrize("channels_last", [False, True])
def test_backward_matches_torch(device, dtype, channels_last):
    # ties, NaN and -inf windows: the gradient goes where torch's max_pool2d indices point
    vals = torch.tensor([-1.0, 0.0, 1.0, 2.0, float("-inf"), float("nan")], device=device)
    x = vals[torch.randint(0, 4, (2, 5, 11, 14), device=device)].to(dtype)
    x[0, 0, 3:6, 3:9] = float("-inf")
    x[1, 1, 2, ::3] = float("nan")
    if channels_last:
        x = x.contiguous(memory_format=torch.channels_last)
    for other_shape, ceil_mode in [([2, 1, 6, 7], False), ([5, 1, 1], True)]:
        o = rand(other_shape, dtype, device)
        g = rand(pooled_shape(x, ceil_mode=ceil_mode), dtype, device)
        xa, oa = x.clone().requires_grad_(), o.clone().requires_grad_()
        xb, ob = x.clone().requires_grad_(), o.clone().requires_grad_()
        myops.max_pool2d_add(xa, oa, ceil_mode=ceil_mode).backward(g)
        reference(xb, ob, ceil_mode=ceil_mode).backward(g)
        # float32/64: the gradient goes to the same elements and is summed in the same order
        # as torch's max_pool2d backward on each device (row-major windows), so bitwise; half
        # and bfloat16 intermediate rounding may differ from torch's on the CPU.
        exact = dtype in (torch.float32, torch.float64)
        if exact:
            assert_same(xa.grad, xb.grad, check_stride=False)
            assert_same(oa.grad, ob.grad, check_stride=False)
        else:
            torch.testing.assert_close(xa.grad, xb.grad, equal_nan=True)
            torch.testing.assert_close(oa.grad, ob.grad, equal_nan=True)


@pytest.mark.parametrize("device", DEVICES)
def test_backward_mixed_dtype_and_expanded_grad(device):
    x = _distinct([2, 3, 9, 9], device, torch.float16).requires_grad_()
    o = torch.randn([1, 3, 1, 1], device=device, dtype=torch.float32, requires_grad=True)
    myops.max_pool2d_add(x, o).sum().backward()  # grad_output is an expanded (stride-0) float32
    xb, ob = x.detach().clone().requires_grad_(), o.detach().clone().requires_grad_()
    reference(xb, ob).sum().backward()
    assert_same(x.grad, xb.grad, check_stride=False)
    assert_same(o.grad, ob.grad, check_stride=False)


# ---- opcheck -----------------------------------------------------------------------------------


@pytest.mark.parametrize("device", DEVICES)
def test_opcheck(device):
    samples = [
        (
            _distinct([2, 3, 7, 6], device, torch.float32),
            torch.randn(2, 1, 4, 3, device=device),
            [3, 3],
            [2, 2],
            [1, 1],
            False,
        ),
        (
            _distinct([3, 5, 5], device, torch.float64),
            torch.randn(3, 1, 1, device=device, dtype=torch.float64),
            [2, 2],
            [1, 2],
            [1, 0],
            True,
        ),
        (
            _distinct([1, 4, 6, 6], device, torch.float32).contiguous(memory_format=torch.channels_last),
            torch.randn(4, 1, 1, device=device, dtype=torch.float64),
            [3, 3],
            [2, 2],
            [1, 1],
            False,
        ),
        (  # other repeats the pooled result (#56)
            _distinct([2, 1, 5, 4], device, torch.float32),
            torch.randn(2, 2, 2, 3, 1, device=device),
            [3, 3],
            [2, 2],
            [1, 1],
            False,
        ),
    ]
    for x, o, k, s, p, c in samples:
        x.requires_grad_()
        o.requires_grad_()
        torch.library.opcheck(op, (x, o, k, s, p, c))
        g = torch.randn(pooled_shape(x, k, s, p, c), device=device, dtype=torch.result_type(x, o))
        torch.library.opcheck(torch.ops.myops.max_pool2d_add_backward.default, (g, x.detach(), k, s, p, c))


@pytest.mark.parametrize("device", DEVICES)
def test_torch_compile_fullgraph(device):
    # the fake kernel's shape, dtype and channels_last strides carry through a traced graph
    def f(x, o):
        return myops.max_pool2d_add(x, o) * 2

    x = rand([2, 3, 9, 9], torch.float32, device).contiguous(memory_format=torch.channels_last)
    o = rand([3, 1, 1], torch.float16, device)
    compiled = torch.compile(f, fullgraph=True, backend="aot_eager")
    assert_same(compiled(x, o), reference(x, o) * 2)


_BASELINE_SCRIPT = r"""
import torch, torch.nn.functional as F, myops
torch.manual_seed(0)
for dtype in [torch.float32, torch.float64, torch.float16, torch.bfloat16]:
    for cl in [False, True]:
        for k, s, p, c in [(3, 2, 1, False), (3, 2, 1, True), (2, 2, 0, False), (3, 1, 1, False)]:
            x = (torch.randn(2, 5, 13, 37) * 4).to(dtype)
            x.view(-1)[::17] = float("-inf")
            if cl:
                x = x.contiguous(memory_format=torch.channels_last)
            ref = F.max_pool2d(x, k, s, p, ceil_mode=c)
            o = torch.randn(ref.shape[0], 1, ref.shape[2], ref.shape[3]).to(dtype)
            out = myops.max_pool2d_add(x, o, k, s, p, c)
            assert torch.equal(out, ref + o) and out.stride() == (ref + o).stride(), (dtype, cl, k, s, p, c)
import sys
sys.path.insert(0, sys.argv[1])
from helpers import check_pool_number_other
check_pool_number_other("cpu")
print("ok")
"""


def test_cpu_baseline_build():
    # The CPU kernels are built twice (baseline and AVX2, picked at run time); the suite above
    # runs the AVX2 build on an AVX2 machine, this runs the baseline build.
    import os
    import subprocess
    import sys

    env = dict(os.environ, MYOPS_CPU_BASELINE="1")
    res = subprocess.run(
        [sys.executable, "-c", _BASELINE_SCRIPT, os.path.dirname(__file__)], env=env, capture_output=True, text=True
    )
    assert res.returncode == 0 and res.stdout.strip() == "ok", res.stderr[-2000:]


# ---- other a Python number at torch's edges (issue #47) ------------------------------------------


@pytest.mark.parametrize("device", DEVICES)
def test_number_other_edges(device):
    """other a Python int in [2^63, 2^64) (a uint64 to c10) is added as torch adds it (converted
    once to float, or double for float64); past that, torch's OverflowError, but only after the
    pooling's own errors (wrong rank, bad kernel / padding), as in F.max_pool2d(self) + other
    (helpers.check_pool_number_other)."""
    from helpers import check_pool_number_other

    check_pool_number_other(device)
    with pytest.raises(RuntimeError, match="3-D"):
        myops.max_pool2d_add(torch.randn(2, 3, device=device), 2**64)
    with pytest.raises(OverflowError):
        myops.max_pool2d_add(torch.randn(1, 2, 5, 5, device=device), 2**64)
    with pytest.raises(TypeError):
        myops.max_pool2d_add([1.0, 2.0], 2**64)


_POOL_NUMBERS = st.one_of(
    st.sampled_from(
        [
            2**63,
            -(2**63),
            2**64,
            -(2**64),
            2**63 - 1,
            2**64 - 1,
            -(2**63) - 1,
            2**63 + 2**39 + 1,
            2**63 + 2**40,
            2**63 + 2**39,
        ]
    ),
    st.integers(-(2**66), 2**66),
    st.floats(allow_nan=True, allow_infinity=True),
    st.booleans(),
)


@settings(max_examples=300, deadline=None, derandomize=True)
@given(
    other=_POOL_NUMBERS,
    dtype=st.sampled_from(FLOAT_DTYPES),
    rank=st.integers(1, 5),
    kernel=st.sampled_from([(3, 2, 1), (2, 2, 0), (7, 1, 0), (3, 2, 2)]),
    scale=st.sampled_from([1.0, 2.0**41]),
    seed=st.integers(0, 2**16),
)
def test_number_other_properties(other, dtype, rank, kernel, scale, seed):
    """Hypothesis: a random Python number other (huge ints, floats, bools) on inputs of every rank
    and pooling arguments that torch may refuse: torch's result, or its exception type first."""
    g = torch.Generator().manual_seed(seed)
    x = (torch.randn([2, 3, 6, 5, 4][5 - rank :], generator=g) * scale).to(dtype)
    k, s, p = kernel
    assert_like_torch(lambda: myops.max_pool2d_add(x, other, k, s, p), lambda: F.max_pool2d(x, k, s, p) + other)


# ---- second derivative, autograd kernel, `other` of any dtype or a number ------------------------


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
        r = torch.ops.myops.max_pool2d_add_backward(g, x, [3, 3], [2, 2], [1, 1], False)
    assert r.requires_grad


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


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("other", [0.1, -3, True])
def test_max_pool2d_add_number_other_in_its_precision(device, other):
    """A Python number `other` keeps its own precision (float64 for a float), as torch's add
    with a number does, and is made on the device without a host copy."""
    x = torch.randn(2, 3, 9, 9, dtype=torch.float64, device=device)
    assert_same(myops.max_pool2d_add(x, other), torch.nn.functional.max_pool2d(x, 3, 2, 1) + other)


# ---- bad arguments raise what torch raises -------------------------------------------------------


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
        torch.ops.myops.max_pool2d_add(
            x, torch.zeros(1), [kw["kernel_size"]] * 2, [kw["stride"]] * 2, [kw["padding"]] * 2
        )


def test_max_pool2d_add_empty_stride_means_kernel():
    x = torch.randn(2, 3, 9, 9)
    o = torch.randn(3, 1, 1)
    expected = F.max_pool2d(x, 3, padding=1) + o
    assert_same(myops.max_pool2d_add(x, o, [3, 3], []), expected)
    assert_same(torch.ops.myops.max_pool2d_add(x, o, [3, 3], []), expected)


@cuda_only
@pytest.mark.parametrize(
    "variant", sorted(e.split(":")[1] for e in torch.ops.myops._cuda_variants() if e.startswith("max_pool2d_add:"))
)
@pytest.mark.parametrize("dtype", FLOAT_DTYPES, ids=str)
def test_max_pool2d_add_variants_cuda(variant, dtype):
    # every variant of the 3x3 / 2 / 1 kernel (csrc/core/variants.h): pack-filling channels,
    # odd and even output widths, both layouts, an unaligned input, other broadcast or full, or
    # repeating the pooled result (the generic kernel)
    old = torch.ops.myops._set_cuda_variant(f"max_pool2d_add:{variant}")
    try:
        for shape in [(2, 16, 13, 11), (1, 8, 6, 10), (1, 5, 9, 9)]:
            x = rand(shape, dtype, "cuda")
            x[0, 1, 3, 3] = float("nan")
            for xl in (x, x.contiguous(memory_format=torch.channels_last)):
                buf = torch.empty(xl.numel() + 1, dtype=dtype, device="cuda")[1:]
                unaligned = buf.as_strided(xl.shape, xl.stride()).copy_(xl)  # the same layout, offset
                for xin in (xl, unaligned):
                    check(xin, rand_other(xin, "n1hw"))
                    check(xin, rand_other(xin, "1c11"))
                    check(xin, rand((3,) + tuple(pooled_shape(xin)), dtype, "cuda"))  # the result expands
    finally:
        torch.ops.myops._set_cuda_variant(old)
