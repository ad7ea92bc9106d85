"""myops.diagonal and myops.diagonal_backward against torch.diagonal / aten.diagonal_backward."""

import itertools
import math
import random

import pytest
import torch
from helpers import ALL_DTYPES, DEVICES, LAYOUTS, assert_same, cuda_only, rand, same_error, with_layout

import myops

COMPLEX_DTYPES = [torch.complex64, torch.complex128]
DIAG_DTYPES = ALL_DTYPES + COMPLEX_DTYPES


def reference(x, offset=0, dim1=0, dim2=1):
    return torch.diagonal(x, offset, dim1, dim2)


def contiguous_strides(shape):
    strides, s = [], 1
    for n in reversed(shape):
        strides.append(s)
        s *= max(n, 1)
    return tuple(reversed(strides))


def check(x, offset=0, dim1=0, dim2=1):
    """myops.diagonal(x) equals torch.diagonal(x) bit for bit, is a fresh contiguous tensor with
    row-major strides, and leaves x untouched."""
    before = x.clone()
    out = myops.diagonal(x, offset, dim1, dim2)
    exp = reference(x, offset, dim1, dim2)
    assert_same(out, exp, check_stride=False)
    assert out.is_contiguous()
    assert out.stride() == contiguous_strides(out.shape)
    if out.numel():
        assert out.data_ptr() != exp.data_ptr()
        assert out.untyped_storage().data_ptr() != x.untyped_storage().data_ptr()
    assert_same(x, before, check_stride=False)
    return out


def rand_rank_shape(ndim, max_numel=4096):
    """A random shape of `ndim` dims with sizes 1..5 and at most ~max_numel elements."""
    shape = [random.randint(1, 5) for _ in range(ndim)]
    while math.prod(shape) > max_numel:
        i = max(range(ndim), key=lambda d: shape[d])
        shape[i] -= 1
    return shape


# ---- values -----------------------------------------------------------------------------------


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", DIAG_DTYPES, ids=str)
def test_dtypes(device, dtype):
    x = rand((5, 7, 6), dtype, device)
    for offset, dim1, dim2 in [(0, 0, 1), (2, 0, 2), (-3, 2, 1), (1, -1, -3), (-1, 1, 0)]:
        check(x, offset, dim1, dim2)
    # odd sizes that exercise every copy path: a contiguous inner run, a transpose-like gather
    check(rand((3, 9, 9, 13), dtype, device), 1, 1, 2)
    check(rand((21, 21, 19), dtype, device), -2, 0, 1)
    check(rand((4, 33, 35), dtype, device), 3, -2, -1)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("ndim", range(2, 13))
def test_ranks(device, ndim):
    for _ in range(4):
        shape = rand_rank_shape(ndim)
        x = rand(shape, random.choice([torch.float32, torch.int16, torch.float64, torch.uint8]), device)
        dim1, dim2 = random.sample(range(-ndim, ndim), 2)
        if dim1 % ndim == dim2 % ndim:
            dim2 = (dim1 + 1) % ndim
        offset = random.randint(-shape[dim1 % ndim] - 1, shape[dim2 % ndim] + 1)
        check(x, offset, dim1, dim2)
        # and through an arbitrary permutation of the input's memory layout
        perm = list(range(ndim))
        random.shuffle(perm)
        xp = x.permute(perm).contiguous().permute([perm.index(d) for d in range(ndim)])
        check(xp, offset, dim1, dim2)


@pytest.mark.parametrize("device", DEVICES)
def test_every_dim_pair_and_offset_4d(device):
    x = rand((3, 4, 5, 6), torch.float32, device)
    xt = with_layout(x, "transposed")
    for dim1, dim2 in itertools.permutations(range(-4, 4), 2):
        if dim1 % 4 == dim2 % 4:
            continue
        n1, n2 = x.shape[dim1], x.shape[dim2]
        for offset in range(-n1 - 1, n2 + 2):
            check(x, offset, dim1, dim2)
        check(xt, random.randint(-n1 - 1, n2 + 1), dim1, dim2)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16, torch.complex128, torch.bool], ids=str)
def test_layouts(device, layout, dtype):
    for shape in [(6, 5, 4, 7), (2, 17, 17, 9), (4, 24, 19, 19)]:
        x = with_layout(rand(shape, dtype, device), layout)
        for dim1, dim2 in [(0, 1), (2, 3), (-1, -2), (1, 3), (0, 2)]:
            n1, n2 = shape[dim1], shape[dim2]
            check(x, random.randint(-n1 - 1, n2 + 1), dim1, dim2)
            check(x, 0, dim1, dim2)


@pytest.mark.parametrize("device", DEVICES)
def test_more_strides(device):
    base = rand((8, 9, 10), torch.float32, device)
    cases = [
        base.permute(2, 0, 1),
        base[::2, 1::3, 2:],  # steps and a storage offset
        rand((1, 9, 1), torch.float32, device).expand(7, 9, 8),  # stride 0 on a diagonal dim
        rand((1, 1, 5), torch.float32, device).expand(6, 6, 5),  # stride 0 on both: diag stride 0
        rand((6, 1, 6), torch.float32, device).expand(6, 4, 6),  # stride 0 on a kept dim
        torch.as_strided(base, (5, 5, 4), (3, 7, 1), 11),  # overlapping input
        rand((3, 40, 40), torch.float64, device).transpose(1, 2),
        rand((8, 5, 5, 3), torch.complex64, device).contiguous(memory_format=torch.channels_last),
    ]
    for x in cases:
        nd = x.dim()
        for dim1, dim2 in itertools.permutations(range(nd), 2):
            check(x, random.randint(-x.shape[dim1] - 1, x.shape[dim2] + 1), dim1, dim2)
            check(x, 0, dim1, dim2)


@pytest.mark.parametrize("device", DEVICES)
def test_transpose_like(device):
    """The diagonal over the leading dims of [.., n, n, C]: the output's inner dim is strided in
    the input and the next one contiguous (tiled path on CPU), with ragged tile edges."""
    for shape, dims in [
        ((37, 37, 19), (0, 1)),
        ((3, 33, 33, 17), (1, 2)),
        ((70, 65, 130), (0, 1)),
        ((2, 64, 64, 64), (1, 2)),
        ((16, 16, 8), (0, 1)),
        ((20, 18, 9), (1, 0)),
    ]:
        for dtype in [torch.float32, torch.int8, torch.complex128, torch.float16]:
            x = rand(shape, dtype, device)
            check(x, 0, *dims)
            check(x, 2, *dims)
            check(x, -3, *dims)
            check(x[..., 1:], 1, *dims)  # inner run not a multiple of 16 bytes, misaligned


@pytest.mark.parametrize("device", DEVICES)
def test_empty_and_size_one(device):
    shapes = [
        (0, 3),
        (3, 0),
        (0, 0),
        (2, 0, 4),
        (1, 1),
        (1, 5),
        (5, 1),
        (1, 1, 1, 1),
        (4, 1, 3, 0),
        (1, 6, 1),
        (3, 1, 3),
    ]
    for shape in shapes:
        x = rand(shape, torch.float32, device)
        nd = len(shape)
        for dim1, dim2 in itertools.permutations(range(nd), 2):
            for offset in (-2, -1, 0, 1, 2, 10**12, -(10**12)):
                check(x, offset, dim1, dim2)


@pytest.mark.parametrize("device", DEVICES)
def test_huge_offsets(device):
    x = rand((3, 4), torch.float32, device)
    for offset in (2**62, -(2**62), 2**63 - 1, -(2**63)):
        out = check(x, offset)
        assert out.shape == (0,)


@pytest.mark.parametrize("device", DEVICES)
def test_many_unmergeable_dims(device):
    """18 dims that cannot be merged: no rank limit on CPU, the CUDA fallback path."""
    ndim = 18
    x = rand([2] * ndim, torch.float32, device)
    perm = list(range(ndim))
    random.shuffle(perm)
    xp = x.permute(perm)
    check(xp, 0, 3, 11)
    check(xp, -1, -1, 0)
    check(xp[..., :1], 1, 0, 5)
    g = rand([2] * 17, torch.float32, device).permute(random.sample(range(17), 17))
    assert_same(
        myops.diagonal_backward(g, [2] * ndim, 0, 2, 7), torch.ops.aten.diagonal_backward(g, [2] * ndim, 0, 2, 7)
    )


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16, torch.float32, torch.float64], ids=str)
def test_nan_payloads_preserved(device, dtype):
    itype = {2: torch.int16, 4: torch.int32, 8: torch.int64}[dtype.itemsize]
    bits = torch.randint(-(2**15), 2**15, (6, 6), device=device).to(itype)
    # force every value to a NaN with a random payload, with either sign
    nbits = dtype.itemsize * 8
    mant = {torch.float16: 10, torch.bfloat16: 7, torch.float32: 23, torch.float64: 52}[dtype]
    exp_mask = ((1 << (nbits - 1 - mant)) - 1) << mant
    bits = bits | torch.tensor(exp_mask, dtype=itype) | 1
    x = bits.view(dtype)
    assert torch.isnan(x).all()
    out = myops.diagonal(x, 1)
    assert torch.equal(out.view(itype), torch.diagonal(x, 1).contiguous().view(itype))
    grad = myops.diagonal_backward(x.diagonal(), x.shape, 0, 0, 1)
    assert torch.equal(grad.diagonal().contiguous().view(itype), x.diagonal().contiguous().view(itype))


@pytest.mark.parametrize("device", DEVICES)
def test_conj_and_neg_views(device):
    x = rand((4, 5, 3), torch.complex64, device)
    check(x.conj(), 1, 0, 1)
    check(x.conj().imag, 0, 2, 1)  # a negative-bit view
    check(x.real, -1, 0, 2)  # strided view of a complex tensor


# ---- backward ---------------------------------------------------------------------------------


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", DIAG_DTYPES, ids=str)
def test_backward_op(device, dtype):
    for sizes, offset, dim1, dim2 in [
        ([5, 6], 1, 0, 1),
        ([4, 3, 5], -2, 2, 0),
        ([3, 7, 7, 2], 0, -3, -2),
        ([2, 3, 4, 5, 6], 3, 4, 1),
        ([4, 4], 9, 0, 1),
        ([0, 3, 3], 0, 1, 2),
        ([2, 20, 20, 9], 1, 1, 2),
        # large enough for the CPU's blocked (zero + scatter per block) path
        ([64, 40, 40], 0, -2, -1),
        ([8, 4, 50, 50], -1, 3, 2),
        ([16, 70, 3, 70], 2, 1, 3),
    ]:
        shape = torch.empty(sizes, device="meta").diagonal(offset, dim1, dim2).shape
        for g in (
            rand(shape, dtype, device),
            with_layout(rand(shape, dtype, device), "transposed"),
            rand(shape[:-1] + (1,), dtype, device).expand(shape),
        ):
            before = g.clone()
            out = myops.diagonal_backward(g, sizes, offset, dim1, dim2)
            exp = torch.ops.aten.diagonal_backward(g, sizes, offset, dim1, dim2)
            assert_same(out, exp, check_stride=False)
            assert out.is_contiguous() and out.stride() == contiguous_strides(out.shape)
            assert_same(g, before, check_stride=False)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("layout", ["contiguous", "transposed", "sliced", "channels_last"])
def test_autograd_matches_torch(device, layout):
    x0 = rand((4, 6, 5, 3), torch.float32, device)
    for offset, dim1, dim2 in [(0, 1, 2), (1, -1, 0), (-2, 2, 1)]:
        x = with_layout(x0.clone(), layout).requires_grad_()
        xr = x.detach().clone().requires_grad_()
        out = myops.diagonal(x, offset, dim1, dim2)
        exp = torch.diagonal(xr, offset, dim1, dim2)
        g = rand(out.shape, torch.float32, device)
        out.backward(g)
        exp.backward(g)
        assert_same(x.grad, xr.grad, check_stride=False)


@pytest.mark.parametrize("device", DEVICES)
def test_gradcheck(device):
    x = torch.randn(3, 4, 5, dtype=torch.float64, device=device, requires_grad=True)
    for offset, dim1, dim2 in [(0, 0, 1), (1, 2, 0), (-2, -1, -2)]:
        assert torch.autograd.gradcheck(lambda t: myops.diagonal(t, offset, dim1, dim2), (x,))
        assert torch.autograd.gradgradcheck(lambda t: myops.diagonal(t, offset, dim1, dim2), (x,))
    xc = torch.randn(4, 3, dtype=torch.complex128, device=device, requires_grad=True)
    assert torch.autograd.gradcheck(lambda t: myops.diagonal(t, -1), (xc,))
    g = torch.randn(5, 3, dtype=torch.float64, device=device, requires_grad=True)
    assert torch.autograd.gradcheck(lambda t: myops.diagonal_backward(t, [3, 4, 5], 1, 0, 1), (g,))


# ---- errors -----------------------------------------------------------------------------------


@pytest.mark.parametrize("device", DEVICES)
def test_errors(device):
    x = rand((3, 4, 5), torch.float32, device)
    with pytest.raises(IndexError, match=r"myops.diagonal: argument 'self' must have at least 2 dims, got a 1-D"):
        myops.diagonal(rand((5,), torch.float32, device))
    with pytest.raises(IndexError, match=r"myops.diagonal: argument 'self' must have at least 2 dims, got a 0-D"):
        myops.diagonal(torch.tensor(1.0, device=device))
    with pytest.raises(IndexError, match=r"myops.diagonal: argument 'dim1' must be in the range \[-3, 2\].*got 3"):
        myops.diagonal(x, 0, 3, 1)
    with pytest.raises(IndexError, match=r"myops.diagonal: argument 'dim2' must be in the range \[-3, 2\].*got -4"):
        myops.diagonal(x, 0, 0, -4)
    for dim1, dim2 in [(1, 1), (0, -3), (-1, 2)]:
        with pytest.raises(RuntimeError, match=r"myops.diagonal: argument 'dim2' must refer to a different dim"):
            myops.diagonal(x, 0, dim1, dim2)
    g = rand((5, 3), torch.float32, device)
    with pytest.raises(
        RuntimeError,
        match=r"myops.diagonal_backward: argument 'grad' must have the shape of the diagonal \[5, 3\], got \[3, 5\]",
    ):
        myops.diagonal_backward(g.t(), [3, 4, 5], 0, 0, 1)
    with pytest.raises(RuntimeError, match=r"myops.diagonal_backward: argument 'input_sizes' must be non-negative"):
        myops.diagonal_backward(g, [3, -4, 5], 0, 0, 1)
    with pytest.raises(IndexError, match=r"myops.diagonal_backward: argument 'input_sizes' must have at least 2 dims"):
        myops.diagonal_backward(g, [3], 0, 0, 1)
    with pytest.raises(RuntimeError, match=r"myops.diagonal_backward: argument 'dim2' must refer to a different dim"):
        myops.diagonal_backward(g, [3, 4, 5], 0, 1, -2)


# ---- registration: opcheck, fake kernels, compile --------------------------------------------


@pytest.mark.parametrize("device", DEVICES)
def test_opcheck(device):
    x = torch.randn(3, 4, 5, device=device, requires_grad=True)
    for args in [(x, 0, 0, 1), (x, 1, 2, 0), (x, -2, -1, -2), (x.transpose(0, 2), 0, 1, 2), (x, 9, 0, 1)]:
        torch.library.opcheck(torch.ops.myops.diagonal.default, args)
    g = torch.randn(5, 3, device=device, requires_grad=True)
    torch.library.opcheck(torch.ops.myops.diagonal_backward.default, (g, [3, 4, 5], 1, 0, 1))
    torch.library.opcheck(torch.ops.myops.diagonal_backward.default, (g.t(), [6, 5, 3], -1, 0, 1))


@pytest.mark.parametrize("device", DEVICES)
def test_fake_errors_match(device):
    from torch._subclasses.fake_tensor import FakeTensorMode

    with FakeTensorMode():
        x = torch.empty(3, 4, 5, device=device)
        assert myops.diagonal(x, 1, 2, 0).shape == (4, 2)
        assert myops.diagonal(x, -1, 2, 0).shape == (4, 3)
        assert myops.diagonal(x, -9, 2, 0).shape == (4, 0)
        with pytest.raises(RuntimeError, match=r"myops.diagonal: argument 'dim2' must refer to a different dim"):
            myops.diagonal(x, 0, 1, -2)
        with pytest.raises(IndexError, match=r"myops.diagonal: argument 'self' must have at least 2 dims"):
            myops.diagonal(torch.empty(3, device=device))
        with pytest.raises(RuntimeError, match=r"myops.diagonal_backward: argument 'grad' must have the shape"):
            myops.diagonal_backward(torch.empty(3, 5, device=device), [3, 4, 5], 0, 0, 1)


@pytest.mark.parametrize("device", DEVICES)
def test_compile(device):
    def f(x):
        return myops.diagonal(x, 1, -1, 0) * 2

    x = torch.randn(5, 3, 6, device=device)
    compiled = torch.compile(f, backend="aot_eager", fullgraph=True, dynamic=True)
    assert_same(compiled(x), torch.diagonal(x, 1, -1, 0) * 2, check_stride=False)
    x2 = torch.randn(7, 2, 4, device=device)
    assert_same(compiled(x2), torch.diagonal(x2, 1, -1, 0) * 2, check_stride=False)


@cuda_only
def test_cuda_streams_and_devices():
    """Runs on the current (non-default) stream and on the tensor's device, not device 0."""
    dev = torch.device("cuda", torch.cuda.device_count() - 1)
    x = rand((64, 33, 33), torch.float32, dev)
    s = torch.cuda.Stream(device=dev)
    s.wait_stream(torch.cuda.current_stream(dev))  # x is written on the current stream
    with torch.cuda.device(dev), torch.cuda.stream(s):
        out = myops.diagonal(x, 1, -2, -1)
        g = myops.diagonal_backward(out, x.shape, 1, -2, -1)
    s.synchronize()
    assert out.device == dev and g.device == dev
    assert_same(out, torch.diagonal(x, 1, -2, -1), check_stride=False)
    assert_same(g, torch.ops.aten.diagonal_backward(out, x.shape, 1, -2, -1))


@pytest.mark.parametrize("dims", [(0, 2), (-3, 1), (5, 0)])
def test_diagonal_dim_out_of_range_is_index_error(dims):
    x = torch.randn(3, 3)
    same_error(lambda: myops.diagonal(x, 0, *dims), lambda: torch.diagonal(x, 0, *dims), match="range")
    with pytest.raises(IndexError, match="range"):
        torch.ops.myops.diagonal(x, 0, *dims)
