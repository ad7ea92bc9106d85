"""nonzero family: myops.nonzero / argwhere / where(cond) / nonzero_static against torch."""

import pytest
import torch

import myops
from helpers import ALL_DTYPES, DEVICES, assert_like_torch, assert_same, cuda_graph, cuda_only, rand, with_layout

NONZERO_LAYOUTS = ["contiguous", "transposed", "sliced", "expanded", "misaligned", "channels_last"]


def sparse(shape, dtype, device, density):
    """Random values of `dtype` of which about `density` are nonzero (never all equal)."""
    x = rand(shape, dtype, device)
    if dtype != torch.bool:
        # make the kept values nonzero so `density` is what it says
        one = torch.ones((), dtype=dtype, device=device)
        x = torch.where(x == 0, one, x)
    keep = torch.rand(shape, device=device) < density
    return torch.where(keep, x, torch.zeros((), dtype=dtype, device=device))


def check_nonzero(x):
    assert_same(myops.nonzero(x), torch.nonzero(x))
    assert_same(myops.argwhere(x), torch.argwhere(x))
    for a, e in zip(myops.nonzero(x, as_tuple=True), torch.nonzero(x, as_tuple=True), strict=True):
        assert_same(a, e)
    for a, e in zip(myops.where(x), torch.where(x), strict=True):
        assert_same(a, e)


def check_static(x, size, fill_value=-1):
    assert_same(
        myops.nonzero_static(x, size=size, fill_value=fill_value),
        torch.nonzero_static(x, size=size, fill_value=fill_value),
    )


# ---- nonzero: parity --------------------------------------------------------------------------


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=str)
@pytest.mark.parametrize("shape", [(), (1,), (7,), (33, 17), (4, 5, 6), (2, 3, 1, 5, 4)], ids=str)
def test_nonzero_dtypes(device, dtype, shape):
    x = sparse(shape, dtype, device, 0.4)
    check_nonzero(x)
    check_static(x, 5)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("rank", range(11))
def test_nonzero_ranks(device, rank):
    # 2..3 per dim keeps 10-D at ~10^4 elements; odd inner sizes exercise vector tails
    shape = tuple(2 + (d % 2) for d in range(rank))
    x = sparse(shape, torch.float32, device, 0.5)
    check_nonzero(x)
    check_static(x, 7, fill_value=-3)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", [torch.bool, torch.uint8, torch.float32, torch.float16], ids=str)
@pytest.mark.parametrize("density", [0.001, 0.01, 0.1, 0.5, 0.9, 0.999])
def test_nonzero_densities(device, dtype, density):
    # large enough for several CPU chunks (both the sparse and the dense write paths)
    x = sparse((300, 1001), dtype, device, density)
    check_nonzero(x)
    check_nonzero(x.flatten())


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("fill", ["zeros", "ones"])
@pytest.mark.parametrize("shape", [(1,), (513,), (70000,), (31, 9, 7)], ids=str)
def test_nonzero_all_zero_all_nonzero(device, fill, shape):
    x = torch.zeros(shape, device=device) if fill == "zeros" else torch.ones(shape, device=device)
    check_nonzero(x)
    check_nonzero(x.bool())


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("shape", [(0,), (0, 3), (3, 0), (2, 0, 4)], ids=str)
def test_nonzero_empty(device, shape):
    x = torch.ones(shape, device=device)
    check_nonzero(x)
    check_static(x, 0)
    check_static(x, 3, fill_value=9)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("value", [0.0, -0.0, 2.5, float("nan")])
def test_nonzero_zero_dim(device, value):
    x = torch.tensor(value, device=device)
    check_nonzero(x)
    check_static(x, 0)
    check_static(x, 2)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.float16, torch.bfloat16], ids=str)
def test_nonzero_nan_and_negative_zero(device, dtype):
    x = sparse((5, 37), dtype, device, 0.5)
    x[0, ::3] = -0.0
    x[1, ::2] = float("nan")
    x[2, :] = -0.0
    x[3, 1::2] = float("-inf")
    check_nonzero(x)
    a = myops.nonzero(x)
    assert not (a[:, 0] == 2).any()  # the all -0.0 row is all zero
    assert (a[:, 0] == 1).sum() >= 19  # every NaN counts
    check_static(x, 40)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("layout", NONZERO_LAYOUTS)
@pytest.mark.parametrize("dtype", [torch.bool, torch.int32, torch.float32, torch.bfloat16], ids=str)
def test_nonzero_layouts(device, layout, dtype):
    for shape in [(6, 5, 4, 3), (9, 130), (301,)]:
        x = with_layout(sparse(shape, dtype, device, 0.3), layout)
        check_nonzero(x)
        check_static(x, 50, fill_value=-2)


@pytest.mark.parametrize("device", DEVICES)
def test_nonzero_strided_views(device):
    base = sparse((40, 30, 20), torch.float32, device, 0.5)
    for x in [
        base.permute(2, 0, 1),
        base[::3, 1:, ::2],
        base[:, 5],
        base.transpose(0, 1)[2:7],
        base[:1].expand(5, 30, 20),
        base[:, :1, :].expand(40, 7, 20).transpose(1, 2),
        torch.ones((), device=device).expand(3, 4),
    ]:
        check_nonzero(x)
        check_static(x, 100)


@pytest.mark.parametrize("device", DEVICES)
def test_nonzero_many_dims(device):
    # more dims than MYOPS_MAX_DIMS (16), every dim reversed so that none coalesces with its
    # neighbour: 18 dims after merging (the CUDA path copies such an input to contiguous first)
    shape = (2,) * 18
    x = sparse(shape, torch.float32, device, 0.5).permute(tuple(range(17, -1, -1)))
    expected = torch.nonzero(x.cpu())
    out = myops.nonzero(x)
    assert out.device == x.device
    assert torch.equal(out.cpu(), expected)
    if device == "cpu":
        assert_same(out, torch.nonzero(x))
    else:
        assert out.stride() == (1, max(out.shape[0], 1))
    s = myops.nonzero_static(x, size=out.shape[0] + 3, fill_value=-5)
    assert torch.equal(s.cpu(), torch.nonzero_static(x.cpu(), size=out.shape[0] + 3, fill_value=-5))


@pytest.mark.parametrize("device", DEVICES)
def test_nonzero_large_1d(device):
    # 3 * 10^6 elements: several CPU chunks; above the CUDA worst-case cap (exact two-pass path)
    for density in [0.02, 0.6]:
        x = torch.rand(3_000_000, device=device) < density
        check_nonzero(x)
        x2 = x.view(1000, 3000)
        check_nonzero(x2)
        check_static(x2, 100_000, fill_value=-1)


# ---- nonzero_static ---------------------------------------------------------------------------


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", [torch.bool, torch.int64, torch.float16, torch.float64], ids=str)
@pytest.mark.parametrize("shape", [(50,), (7, 9), (3, 4, 5)], ids=str)
def test_nonzero_static_sizes(device, dtype, shape):
    x = sparse(shape, dtype, device, 0.5)
    nnz = int(torch.count_nonzero(x))
    for size in [0, 1, nnz // 2, nnz, nnz + 1, 2 * nnz + 5]:
        for fill_value in [-1, 0, 123456789012]:
            check_static(x, size, fill_value)


@pytest.mark.parametrize("device", DEVICES)
def test_nonzero_static_multichunk(device):
    x = torch.rand(400, 1000, device=device) < 0.3
    nnz = int(x.sum())
    for size in [10, nnz // 3, nnz - 1, nnz, nnz + 1000]:
        check_static(x, size, fill_value=-7)


# ---- errors -----------------------------------------------------------------------------------


@pytest.mark.parametrize("device", DEVICES)
def test_nonzero_bad_inputs(device):
    x = torch.ones(3, device=device)
    with pytest.raises(RuntimeError, match=r"myops\.nonzero_static: argument 'size' must be >= 0, got -1"):
        myops.nonzero_static(x, size=-1)
    c = torch.ones(3, dtype=torch.uint16, device=device)  # complex is supported (nonzero of re or im)
    with pytest.raises(RuntimeError, match=r"myops\.nonzero: argument 'self' must have dtype in .*got UInt16"):
        myops.nonzero(c)
    with pytest.raises(RuntimeError, match=r"myops\.nonzero_static: argument 'self' must have dtype"):
        myops.nonzero_static(c, size=2)
    with pytest.raises(TypeError, match="both 'self' and 'other'"):
        myops.where(x > 0, x)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize(
    "kw",
    [
        dict(fill_value=1.5),
        dict(fill_value=True),
        dict(fill_value=2**63),
        dict(fill_value=-(2**63) - 1),
        dict(fill_value=2**64),
        dict(fill_value=None),
        dict(fill_value="1"),
        dict(fill_value=1 + 0j),
        dict(fill_value=-(2**63)),
        dict(fill_value=2**63 - 1),
        dict(fill_value=torch.tensor(5)),
        dict(size=1.5),
        dict(size=True),
        dict(size=2**63),
        dict(size=None),
        dict(size=-1),
        dict(size=torch.tensor(2)),
    ],
    ids=repr,
)
def test_nonzero_static_argument_types_like_torch(device, kw):
    """size / fill_value as torch's argument parser takes an int: TypeError for a float, a bool
    or another non-int, ValueError for an int outside int64; int64's extremes work."""
    x = torch.tensor([0.0, 1.0, 0.0, 2.0], device=device)
    args = dict(size=4, fill_value=-1) | kw
    assert_like_torch(lambda: myops.nonzero_static(x, **args), lambda: torch.nonzero_static(x, **args))
    # nonzero_bounded takes its arguments the same way (its indices are nonzero_static's)
    assert_like_torch(lambda: myops.nonzero_bounded(x, **args)[0], lambda: torch.nonzero_static(x, **args))


@cuda_only
def test_nonzero_too_many_dims_cuda():
    x = torch.ones((1,) * 65, device="cuda")
    with pytest.raises(RuntimeError, match=r"myops\.nonzero: argument 'self' must have at most 64 dims"):
        myops.nonzero(x)


def test_inputs_not_modified():
    x = sparse((50, 60), torch.float32, "cpu", 0.5)
    before = x.clone()
    myops.nonzero(x)
    myops.nonzero_static(x, size=10)
    assert torch.equal(x, before)


# ---- opcheck / torch.compile ------------------------------------------------------------------


@pytest.mark.parametrize("device", DEVICES)
def test_opcheck_nonzero(device):
    for x in [
        sparse((4, 5), torch.float32, device, 0.5),
        sparse((9,), torch.bool, device, 0.5),
        sparse((3, 4), torch.int16, device, 0.5).t(),
    ]:
        torch.library.opcheck(torch.ops.myops.nonzero.default, (x,))


@pytest.mark.parametrize("device", DEVICES)
def test_opcheck_nonzero_static(device):
    for x, size in [
        (sparse((4, 5), torch.float32, device, 0.5), 6),
        (sparse((9,), torch.bool, device, 0.5), 20),
        (sparse((3, 4), torch.int64, device, 0.5).t(), 0),
    ]:
        torch.library.opcheck(torch.ops.myops.nonzero_static.default, (x,), {"size": size, "fill_value": -4})


@pytest.mark.parametrize("device", DEVICES)
def test_compile_nonzero(device):
    torch._dynamo.reset()

    def f(x):
        return myops.nonzero(x * 2) + 1

    with torch._dynamo.config.patch(capture_dynamic_output_shape_ops=True):
        cf = torch.compile(f, fullgraph=True)
        for shape in [(6, 7), (3, 4)]:
            x = sparse(shape, torch.float32, device, 0.5)
            assert torch.equal(cf(x), torch.nonzero(x * 2) + 1)


@pytest.mark.parametrize("device", DEVICES)
def test_compile_nonzero_static(device):
    torch._dynamo.reset()

    def f(x):
        return myops.nonzero_static(x > 0, size=10, fill_value=-1) * 3

    cf = torch.compile(f, fullgraph=True)
    x = torch.randn(5, 4, device=device)
    assert torch.equal(cf(x), torch.nonzero_static(x > 0, size=10, fill_value=-1) * 3)


# ---- CUDA only --------------------------------------------------------------------------------


@cuda_only
@cuda_graph
def test_nonzero_static_cuda_graph():
    x = torch.zeros(64, 33, device="cuda")
    static_out = None
    torch.cuda.synchronize()
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        for _ in range(2):  # warm up (CUB / allocator) outside the capture
            myops.nonzero_static(x, size=300, fill_value=-1)
    torch.cuda.current_stream().wait_stream(s)
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        static_out = myops.nonzero_static(x, size=300, fill_value=-1)
    for density in [0.01, 0.1, 0.5]:
        x.copy_(sparse((64, 33), torch.float32, "cuda", density))
        g.replay()
        torch.cuda.synchronize()
        assert_same(static_out, torch.nonzero_static(x, size=300, fill_value=-1))


@cuda_only
def test_nonzero_static_no_sync():
    x = sparse((1000, 37), torch.float32, "cuda", 0.3)
    expected = torch.nonzero_static(x, size=500, fill_value=-1)
    torch.cuda.synchronize()
    prev = torch.cuda.get_sync_debug_mode()
    torch.cuda.set_sync_debug_mode("error")
    try:
        out = myops.nonzero_static(x, size=500, fill_value=-1)
        out2 = myops.nonzero_static(x.t(), size=20000, fill_value=3)
        out3 = myops.nonzero_static(x[:0], size=5, fill_value=3)
    finally:
        torch.cuda.set_sync_debug_mode(prev)
    assert_same(out, expected)
    assert_same(out2, torch.nonzero_static(x.t(), size=20000, fill_value=3))
    assert_same(out3, torch.nonzero_static(x[:0], size=5, fill_value=3))


@cuda_only
def test_nonzero_cuda_other_device_and_stream():
    dev = f"cuda:{torch.cuda.device_count() - 1}"
    x = sparse((123, 45), torch.float32, dev, 0.4)
    s = torch.cuda.Stream(device=dev)
    s.wait_stream(torch.cuda.current_stream(dev))  # x is written on the current stream
    with torch.cuda.stream(s):
        out = myops.nonzero(x)
        st = myops.nonzero_static(x, size=3000)
    s.synchronize()
    assert_same(out, torch.nonzero(x))
    assert_same(st, torch.nonzero_static(x, size=3000))


@cuda_only
def test_nonzero_cuda_result_owns_exact_memory():
    x = torch.rand(1 << 20, device="cuda") < 0.01
    out = myops.nonzero(x.view(1024, 1024))
    nnz = out.shape[0]
    assert out.untyped_storage().nbytes() == nnz * 2 * 8
    torch.cuda.synchronize()


# ---- nonzero_bounded, masked_select_bounded, mask_rows_bounded (issue 27) ---------------------


def check_bounded(x, size, fill_value=-1):
    """indices == nonzero_static's result (values, shape, strides), count == the true nnz as a
    0-d int64 on x's device."""
    indices, count = myops.nonzero_bounded(x, size=size, fill_value=fill_value)
    assert_same(indices, torch.nonzero_static(x, size=size, fill_value=fill_value))
    assert count.dim() == 0 and count.dtype == torch.int64 and count.device == x.device
    assert int(count) == torch.count_nonzero(x).item() if x.dim() else int(count) == int(bool(x != 0))


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=str)
@pytest.mark.parametrize("shape", [(), (0,), (1,), (7,), (33, 17), (4, 5, 6), (2, 0, 3)], ids=str)
def test_nonzero_bounded_dtypes(device, dtype, shape):
    x = sparse(shape, dtype, device, 0.4)
    nnz = int(torch.count_nonzero(x)) if x.dim() else int(bool(x != 0))
    for size in (0, 1, max(nnz - 1, 0), nnz, nnz + 5):  # below, at and above the true count
        check_bounded(x, size)
    check_bounded(x, 3, fill_value=-9)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("layout", NONZERO_LAYOUTS)
def test_nonzero_bounded_layouts(device, layout):
    x = with_layout(sparse((13, 21), torch.float32, device, 0.3), layout)
    check_bounded(x, 40)
    check_bounded(x, 500)


@pytest.mark.parametrize("device", DEVICES)
def test_nonzero_bounded_nan_negative_zero_complex(device):
    x = torch.tensor([0.0, -0.0, float("nan"), 1.0, 0.0], device=device)
    check_bounded(x, 4)
    c = torch.tensor([0, 1j, 0, 2 + 0j], device=device)
    check_bounded(c, 3)


@pytest.mark.parametrize("device", DEVICES)
def test_nonzero_bounded_bad_inputs(device):
    x = torch.ones(3, device=device)
    with pytest.raises(RuntimeError, match="'size' must be >= 0"):
        myops.nonzero_bounded(x, size=-1)
    with pytest.raises(RuntimeError, match="argument 'self' must have dtype"):
        myops.nonzero_bounded(torch.ones(3, dtype=torch.uint16, device=device), size=2)


@pytest.mark.parametrize("device", DEVICES)
def test_opcheck_nonzero_bounded(device):
    for x in (sparse((9, 11), torch.float32, device, 0.3), torch.zeros(0, 3, device=device)):
        torch.library.opcheck(torch.ops.myops.nonzero_bounded.default, (x,), {"size": 20})


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", [torch.float32, torch.int64, torch.bool], ids=str)
@pytest.mark.parametrize(
    "shapes", [((6, 7), (6, 7)), ((6, 7), (7,)), ((1, 7), (5, 1)), ((0, 3), (0, 3)), ((), ())], ids=str
)
def test_masked_select_bounded(device, dtype, shapes):
    x = rand(shapes[0], dtype, device)
    mask = torch.rand(shapes[1], device=device) < 0.4
    ref = torch.masked_select(x, mask)
    for size in (0, 2, ref.numel(), ref.numel() + 4):
        values, count = myops.masked_select_bounded(x, mask, size=size, fill_value=7)
        assert values.shape == (size,) and values.dtype == dtype and int(count) == ref.numel()
        m = min(size, ref.numel())
        assert torch.equal(values[:m], ref[:m])
        assert (values[m:] == torch.tensor(7).to(dtype)).all()


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("shape", [(9,), (9, 4), (9, 2, 3), (0, 4)], ids=str)
def test_mask_rows_bounded(device, shape):
    x = torch.randn(shape, device=device, dtype=torch.float64, requires_grad=True)
    mask = torch.rand(shape[0], device=device) < 0.5
    ref = x[mask]
    for size in (0, 1, ref.shape[0], ref.shape[0] + 3):
        rows, count = myops.mask_rows_bounded(x, mask, size=size, fill_value=-1.5)
        assert rows.shape == (size,) + tuple(shape[1:]) and int(count) == ref.shape[0]
        m = min(size, ref.shape[0])
        assert torch.equal(rows[:m], ref[:m]) and (rows[m:] == -1.5).all()
    if shape[0]:
        rows, _ = myops.mask_rows_bounded(x, mask, size=4)
        torch.autograd.gradcheck(lambda t: myops.mask_rows_bounded(t, mask, size=4)[0], (x,))


@pytest.mark.parametrize("device", DEVICES)
def test_bounded_select_bad_inputs(device):
    x = torch.ones(4, 3, device=device)
    with pytest.raises(RuntimeError, match="'mask' must have dtype torch.bool"):
        myops.masked_select_bounded(x, torch.ones(4, 3, device=device), size=2)
    with pytest.raises(RuntimeError, match="'mask' must be 1-D with 4"):
        myops.mask_rows_bounded(x, torch.ones(3, dtype=torch.bool, device=device), size=2)
    with pytest.raises(RuntimeError, match="'size' must be >= 0"):
        myops.mask_rows_bounded(x, torch.ones(4, dtype=torch.bool, device=device), size=-2)


def test_bounded_export_has_no_unbacked_symbols():
    class M(torch.nn.Module):
        def forward(self, x, mask):
            i, c = myops.nonzero_bounded(x, size=8)
            v, c2 = myops.masked_select_bounded(x, mask, size=5)
            r, c3 = myops.mask_rows_bounded(x, mask[:, 0], size=4)
            return i, c, v, c2, r, c3

    args = (sparse((6, 5), torch.float32, "cpu", 0.4), torch.rand(6, 5) < 0.5)
    ep = torch.export.export(M(), args, strict=False)
    for node in ep.graph.nodes:
        vals = node.meta.get("val")
        for v in vals if isinstance(vals, (tuple, list)) else [vals]:
            if isinstance(v, torch.Tensor):
                assert all(isinstance(s, int) for s in v.shape), (node, v.shape)
    for a, e in zip(ep.module()(*args), M()(*args), strict=True):
        assert torch.equal(a, e)


@pytest.mark.parametrize("device", DEVICES)
def test_compile_nonzero_bounded(device):
    def f(x, mask):
        i, c = myops.nonzero_bounded(x, size=10)
        v, c2 = myops.masked_select_bounded(x, mask, size=6)
        return i, c, v, c2

    x = sparse((7, 6), torch.float32, device, 0.3)
    mask = torch.rand(7, 6, device=device) < 0.5
    for a, e in zip(torch.compile(f, fullgraph=True)(x, mask), f(x, mask), strict=True):
        assert torch.equal(a, e)


@pytest.mark.slow
def test_nonzero_bounded_over_2_31_elements():
    # 2^31 + 5 bool elements (2 GB): 64-bit positions in the select pass, count above int32
    n = (1 << 31) + 5
    x = torch.zeros(n, dtype=torch.bool)
    pos = torch.tensor([0, 12345, (1 << 31) - 1, 1 << 31, n - 1])
    x[pos] = True
    indices, count = myops.nonzero_bounded(x, size=8)
    assert int(count) == 5
    assert torch.equal(indices[:5, 0], pos) and (indices[5:] == -1).all()
    del x
    y = torch.ones(n, dtype=torch.bool)
    _, count = myops.nonzero_bounded(y, size=1)
    assert int(count) == n


@cuda_only
@cuda_graph
def test_nonzero_bounded_cuda_graph_and_no_sync():
    x = torch.zeros(64, 33, device="cuda")
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        for _ in range(2):
            myops.nonzero_bounded(x, size=300)
    torch.cuda.current_stream().wait_stream(s)
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        out, count = myops.nonzero_bounded(x, size=300)
    for density in [0.01, 0.1, 0.5]:
        x.copy_(sparse((64, 33), torch.float32, "cuda", density))
        g.replay()
        torch.cuda.synchronize()
        assert_same(out, torch.nonzero_static(x, size=300))
        assert int(count) == int(torch.count_nonzero(x))
    prev = torch.cuda.get_sync_debug_mode()
    torch.cuda.set_sync_debug_mode("error")
    mask = x > 0  # x's values have either sign: about half of its nonzeros
    try:
        out, count = myops.nonzero_bounded(x, size=50)
        v, c2 = myops.masked_select_bounded(x, mask, size=50)
    finally:
        torch.cuda.set_sync_debug_mode(prev)
    assert_same(out, torch.nonzero_static(x, size=50))
    assert int(count) == int(torch.count_nonzero(x))
    # the selection counts the mask's True elements (not x's nonzeros: the first GPU run compared
    # the two and failed, 1078 nonzeros against 521 positive ones)
    assert int(c2) == int(mask.sum())
    assert_same(v[: int(c2)], torch.masked_select(x, mask)[:50])


@pytest.mark.parametrize("device", DEVICES)
def test_opcheck_bounded_select(device):
    x = torch.randn(6, 5, device=device, dtype=torch.float64, requires_grad=True)
    mask = torch.rand(6, 5, device=device) < 0.5
    torch.library.opcheck(torch.ops.myops.masked_select_bounded.default, (x, mask), {"size": 9, "fill_value": 2.0})
    torch.library.opcheck(torch.ops.myops.mask_rows_bounded.default, (x, mask[:, 0]), {"size": 4})


@pytest.mark.parametrize("dtype", [torch.complex64, torch.complex128])
def test_nonzero_complex(dtype):
    x = torch.tensor([[1j, 0, 1], [0, 0, 2 + 0j]], dtype=dtype)
    x[0, 1] = complex(0.0, -0.0)
    assert_same(myops.nonzero(x), torch.nonzero(x))
    assert_same(myops.argwhere(x), torch.argwhere(x))
    for a, b in zip(myops.where(x), torch.where(x)):
        assert_same(a, b)
    assert_same(myops.nonzero_static(x, size=5), torch.nonzero_static(x, size=5))


# ---- every CUDA kernel variant (csrc/core/variants.h; the CPU emulation tests them in depth) ----


def _variants(*ops):
    names = [e.split(":") for e in torch.ops.myops._cuda_variants()]
    return sorted({v for o, v in names if o in ops})


@cuda_only
@pytest.mark.parametrize("variant", _variants("nonzero", "nonzero_static"))
def test_nonzero_variants_cuda(variant):
    # one tile and many (the look-back's tiles: 8192 elements), a misaligned and a strided input,
    # past the 16 MiB cap, nonzero_static's tail and drop, nonzero_bounded's count
    old = torch.ops.myops._set_cuda_variant(f"nonzero:{variant},nonzero_static:{variant}")
    try:
        big = torch.rand(1100, 1000, device="cuda") < 0.4
        for x in (
            torch.rand(37, device="cuda") < 0.5,
            sparse((9, 13), torch.float16, "cuda", 0.3),
            big,
            big.view(-1)[3 : 3 + 999 * 1100].view(999, 1100),
            big.t(),
            sparse((5, 4, 3, 700), torch.float32, "cuda", 0.02),
        ):
            check_nonzero(x)
            nnz = int(torch.count_nonzero(x))
            for size in (0, nnz // 2, nnz, nnz + 4099):
                check_static(x, size, fill_value=-3)
            idx, count = myops.nonzero_bounded(x, size=nnz // 2)
            assert int(count) == nnz and torch.equal(idx, torch.nonzero_static(x, size=nnz // 2))
    finally:
        torch.ops.myops._set_cuda_variant(old)
