"""Elementwise family, layouts: the output-strides rule the kernels and fake kernels share
(csrc/core/output_strides.h) against torch, under export / make_fx / compile with dynamic
shapes, non-dense inputs, more than 16 merged dims, rows split between threads, streamed outputs."""

import pytest
import torch
from hypothesis import given, settings, strategies as st

import myops
from helpers import (
    DEVICES,
    assert_same,
    rand,
)
from elementwise_helpers import (
    assert_exact,
    assert_ulp,
)

ops = torch.ops.myops


# ---- the layout rules the fake kernels read (csrc/core/output_strides.h) ---------------------------


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


# ---- output strides of non-dense inputs, many merged dims ----------------------------------------


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


def test_more_than_16_merged_dims():
    x = torch.randn([2] * 18).permute(*range(17, -1, -1))
    y = torch.randn([2] * 18)
    for fm, ft in ((myops.add, torch.add), (myops.maximum, torch.maximum)):
        assert_same(fm(x, y), ft(x, y))
    assert_same(myops.where(x > 0, x, y), torch.where(x > 0, x, y))
    assert_same(myops.cast(x[..., ::2], torch.float16), x[..., ::2].to(torch.float16))


# ---- big rows split between threads, streamed outputs --------------------------------------------


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
    # up to the vector alignment) on one thread, or where the operands exceed the L3 (32 MiB on
    # the CI's EPYC): misaligned, broadcast and transcendental cases.
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
