"""How a call reaches the kernels: the wrappers' direct entry points (myops._C.<op>, used for
plain tensors and default options) against torch.ops.myops.<op>, and the C++ autograd kernels
(no graph without gradients; formulas, double backward)."""

import pytest
import torch
from torch.overrides import TorchFunctionMode

import myops
from helpers import DEVICES
from myops import _C

ops = torch.ops.myops


def fast_cases(device):
    """(entry point name, args, the same call through torch.ops) for every direct entry point,
    on random, non-contiguous and broadcasting inputs."""
    x = torch.randn(5, 7, device=device)
    y = torch.randn(7, device=device)
    t = torch.randn(7, 5, device=device).t()  # transposed
    m = torch.rand(5, 7, device=device) > 0.5
    h = torch.randn(2, 3, 9, 9, device=device).contiguous(memory_format=torch.channels_last)
    return [
        ("relu", (t,), lambda: ops.relu(t)),
        ("gelu", (x[1:],), lambda: ops.gelu(x[1:])),
        ("gelu", (t, "tanh"), lambda: ops.gelu(t, approximate="tanh")),
        ("gelu", (x, "none"), lambda: ops.gelu(x)),
        ("silu", (x,), lambda: ops.silu(x)),
        ("sigmoid", (m,), lambda: ops.sigmoid(m)),
        ("cast", (t, torch.float16), lambda: ops.cast(t, torch.float16)),
        ("mul_scalar", (x, 2.5), lambda: ops.mul_scalar(x, 2.5)),
        ("mul_scalar", (x, -3), lambda: ops.mul_scalar(x, -3)),
        ("mul_scalar", (m, True), lambda: ops.mul_scalar(m, True)),
        ("add", (x, y), lambda: ops.add(x, y)),
        ("add", (x, torch.tensor(2)), lambda: ops.add(x, torch.tensor(2))),
        ("sub", (t, x.double()), lambda: ops.sub(t, x.double())),
        ("add", (x, y, 2.5), lambda: ops.add(x, y, alpha=2.5)),
        ("add", (x.half(), t.half(), -3), lambda: ops.add(x.half(), t.half(), alpha=-3)),
        ("sub", (m.int(), x.int(), 7), lambda: ops.sub(m.int(), x.int(), alpha=7)),
        ("sub", (x.bfloat16(), y.bfloat16(), 0.3), lambda: ops.sub(x.bfloat16(), y.bfloat16(), alpha=0.3)),
        ("mul", (h, h[:1]), lambda: ops.mul(h, h[:1])),
        ("div", (x, t), lambda: ops.div(x, t)),
        ("maximum", (x, y.half()), lambda: ops.maximum(x, y.half())),
        ("minimum", (t, y), lambda: ops.minimum(t, y)),
        ("where", (m, x, y), lambda: ops.where(m, x, y)),
        ("addcmul", (x, t, y), lambda: ops.addcmul(x, t, y)),
        ("addcmul", (x, t, y, 0.5), lambda: ops.addcmul(x, t, y, value=0.5)),
        ("addcmul", (x.half(), t.half(), y.half(), -2), lambda: ops.addcmul(x.half(), t.half(), y.half(), value=-2)),
        ("clamp", (x, y - 1, y + 1), lambda: ops.clamp(x, y - 1, y + 1)),
        ("nonzero", (m,), lambda: ops.nonzero(m)),
        ("nonzero_static", (m, 9, -7), lambda: ops.nonzero_static(m, size=9, fill_value=-7)),
        ("max_pool2d_add", (h, h[:, :1, :5, :5]), lambda: ops.max_pool2d_add(h, h[:, :1, :5, :5])),
        ("diagonal", (h, 1, -1, 2), lambda: ops.diagonal(h, 1, -1, 2)),
    ]


@pytest.mark.parametrize("device", DEVICES)
def test_fast_entry_points_equal_torch_ops(device):
    for name, args, ref in fast_cases(device):
        got, want = getattr(_C, name)(*args), ref()
        assert got is not NotImplemented, name
        assert (got.shape, got.stride(), got.dtype, got.device) == (
            want.shape,
            want.stride(),
            want.dtype,
            want.device,
        ), name
        assert torch.equal(got, want), name


class Sub(torch.Tensor):
    pass


def test_fast_entry_points_decline_what_they_do_not_handle():
    x = torch.randn(4, 4)
    s = x.as_subclass(Sub)
    assert _C.relu(s) is NotImplemented
    assert _C.add(x, s) is NotImplemented
    assert _C.add(x, 2.0) is NotImplemented  # a Python number: the wrapper takes _C.add_scalar (add.Scalar)
    assert _C.add(x) is NotImplemented  # wrong number of arguments
    assert _C.diagonal(x, 0, 0, True) is NotImplemented  # a bool is not an int
    assert _C.diagonal(x, 0, 0, 2**70) is NotImplemented  # nor an int past int64
    assert _C.mul_scalar(x, 1 + 2j) is NotImplemented
    assert _C.cast(x, "float16") is NotImplemented
    assert _C.add(x, x, "2") is NotImplemented  # alpha / value: a bool, int or float only
    assert _C.sub(x, x, 2**70) is NotImplemented
    assert _C.addcmul(x, x, x, torch.tensor(2.0)) is NotImplemented
    assert _C.add(x, x, 1, 1) is NotImplemented
    assert _C.gelu(x, None) is NotImplemented  # approximate: a str only

    class Mode(TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            return func(*args, **(kwargs or {}))

    with Mode():
        assert _C.relu(x) is NotImplemented
    # the wrappers then take torch.ops.myops, with the same result
    assert torch.equal(myops.relu(s), torch.relu(x))
    assert torch.equal(myops.add(x, 2.0), x + 2.0)
    with Mode():
        assert torch.equal(myops.relu(x), torch.relu(x))


@pytest.mark.parametrize("device", DEVICES)
def test_fast_entry_points_raise_the_kernels_errors(device):
    x = torch.randn(3, device=device)
    with pytest.raises(RuntimeError, match=r"myops.add: shapes do not broadcast"):
        _C.add(x, torch.randn(4, device=device))
    with pytest.raises(RuntimeError, match=r"myops.add: shapes do not broadcast"):
        myops.add(x, torch.randn(4, device=device))
    with pytest.raises(RuntimeError, match=r"myops.diagonal"):
        myops.diagonal(x, 0, 0, 0)
    with pytest.raises(RuntimeError, match=r"myops.where: argument 'condition'"):
        myops.where(x, x, x)
    with pytest.raises(RuntimeError, match=r"myops.gelu: argument 'approximate' must be 'none' or 'tanh', got 'fast'"):
        _C.gelu(x, "fast")
    xi = torch.arange(3, device=device)
    with pytest.raises(
        RuntimeError,
        match=r"myops.add: argument 'alpha' must not be a floating point number "
        r"for integral inputs \(result dtype Long\), got 0.5",
    ):
        _C.add(xi, xi, 0.5)  # torch.add raises RuntimeError here too


# ---- autograd (csrc/*/autograd.cpp) ----------------------------------------------------------


def test_no_graph_without_gradients():
    x = torch.randn(6, requires_grad=True)
    y = torch.randn(6)
    assert myops.add(x, y).grad_fn is not None
    assert myops.add(y, y).grad_fn is None and not myops.add(y, y).requires_grad
    with torch.no_grad():
        out = myops.mul(x, y)
        assert out.grad_fn is None and not out.requires_grad
    with torch.inference_mode():
        out = myops.gelu(x)
        assert out.grad_fn is None and out.is_inference()
    # integral results are never differentiable
    assert not myops.cast(x, torch.int64).requires_grad
    assert not myops.nonzero(x).requires_grad
    # the inputs are left as they were
    assert x.grad is None


# ---- the inference-only ops (csrc/core/not_differentiable.cpp) --------------------------------


def _inference_only_ops():
    """The ops csrc/core/not_differentiable.cpp registers with autograd's not-implemented fallback."""
    import re
    from pathlib import Path

    src = Path(__file__).resolve().parent.parent / "csrc" / "core" / "not_differentiable.cpp"
    if not src.exists():
        pytest.skip("no csrc/ beside the tests (not a source tree)")
    loop = re.search(
        r"for \(const char\* op : \{(.*?)\}\)\s*\{\s*m\.impl\(op, torch::autograd::autogradNotImplemented",
        src.read_text(),
        re.S,
    )
    return re.findall(r'"(\w+)"', loop.group(1))


def _inference_only_call(name, device):
    """(the call on the given inputs, the inputs: small, random, on the device) for each op."""
    f = lambda *s: torch.randn(*s, device=device)  # noqa: E731
    count = torch.tensor(2, device=device)
    if name == "roi_align_levels":
        rois = torch.tensor([[0, 1.0, 2.0, 9.0, 11.0], [0, 0.0, 0.0, 5.0, 5.0], [0, 3.0, 1.0, 7.0, 6.0]], device=device)
        levels = torch.tensor([0, 1, -1], device=device)
        return lambda a, b, r: myops.roi_align_levels([a, b], r, levels, 2, [1.0, 0.5]), [
            f(1, 2, 12, 12),
            f(1, 2, 6, 6),
            rois,
        ]
    if name == "linear_bounded":
        return lambda x, w, b: myops.linear_bounded(x, w, b, count), [f(3, 4), f(5, 4), f(5)]
    if name == "conv_bounded":
        return lambda x, w: myops.conv_bounded(x, w, None, count, padding=1), [f(3, 2, 5, 5), f(4, 2, 3, 3)]
    if name == "multiclass_nms_static":
        xy = torch.rand(1, 20, 2, device=device) * 20
        boxes = torch.cat([xy, xy + 1 + torch.rand(1, 20, 2, device=device) * 10], 2)
        return lambda b, s: myops.multiclass_nms_static(
            b, s, score_threshold=0.2, iou_threshold=0.5, max_detections=8
        ), [boxes, torch.rand(1, 20, 3, device=device)]
    if name == "heatmaps_to_keypoints":
        rois = torch.tensor([[0.0, 0.0, 8.0, 8.0], [2.0, 1.0, 9.0, 12.0], [0, 0, 0, 0]], device=device)
        return lambda m, r: myops.heatmaps_to_keypoints(m, r, count), [f(3, 2, 6, 6), rois]
    if name == "paste_masks":
        boxes = torch.tensor([[[1, 1, 5, 4], [0, 2, 3, 7]]], device=device)
        return lambda m: myops.paste_masks(m, boxes, count.reshape(1), [8, 9]), [torch.rand(1, 2, 4, 4, device=device)]
    raise AssertionError(f"no case for the inference-only op {name}: add one here")


@pytest.mark.parametrize("name", _inference_only_ops())
def test_inference_only_ops(name):
    """Each op without a derivative does what its docstring says: with an input that requires
    grad (grad mode on) the forward runs and gives the same values, and a backward through the
    result raises (torch's rule; the forward must run for torch.export and AOTInductor, which call
    the ops with a model's Parameters)."""
    call, inputs = _inference_only_call(name, "cpu")
    expected = call(*inputs)
    expected = expected if isinstance(expected, tuple) else (expected,)
    for i, t in enumerate(inputs):
        if not t.is_floating_point():
            continue
        args = [a.detach().requires_grad_(j == i) for j, a in enumerate(inputs)]
        got = call(*args)
        got = got if isinstance(got, tuple) else (got,)
        for g, e in zip(got, expected):
            assert torch.equal(g.detach(), e) and g.requires_grad == g.is_floating_point()
        with pytest.raises(RuntimeError, match=f"derivative for myops::{name} is not implemented"):
            torch.autograd.backward([g.sum() for g in got if g.requires_grad])
        with torch.no_grad():
            assert not any(o.requires_grad for o in (lambda r: r if isinstance(r, tuple) else (r,))(call(*args)))
        assert args[i].grad is None
    doc = " ".join(getattr(myops, name).__doc__.split())
    assert (
        "Inference only: the forward runs when an input requires grad, and a backward through the result raises" in doc
    )
    assert "requires grad (with grad mode on)" not in doc  # the old, false promise of a forward error


@pytest.mark.parametrize("device", DEVICES)
def test_backward_matches_torch(device):
    a = torch.randn(3, 4, dtype=torch.float64, device=device, requires_grad=True)
    b = torch.randn(4, dtype=torch.float64, device=device, requires_grad=True)
    g = torch.randn(3, 4, dtype=torch.float64, device=device)
    pairs = [
        (lambda: myops.add(a, b, alpha=-2), lambda: torch.add(a, b, alpha=-2)),
        (lambda: myops.sub(a, b, alpha=0.5), lambda: torch.sub(a, b, alpha=0.5)),
        (lambda: myops.mul(a, b), lambda: a * b),
        (lambda: myops.div(a, b), lambda: a / b),
        (lambda: myops.maximum(a, b), lambda: torch.maximum(a, b)),
        (lambda: myops.addcmul(a, a, b, value=0.3), lambda: torch.addcmul(a, a, b, value=0.3)),
        (lambda: myops.silu(a), lambda: torch.nn.functional.silu(a)),
        (lambda: myops.sigmoid(a), lambda: torch.sigmoid(a)),
    ]
    for mine, ref in pairs:
        ga = torch.autograd.grad(mine(), (a, b), g, allow_unused=True)
        gr = torch.autograd.grad(ref(), (a, b), g, allow_unused=True)
        for x, y in zip(ga, gr):
            assert (x is None and y is None) or torch.allclose(x, y, rtol=1e-12, atol=1e-12)


GRADGRAD = [
    ("relu", lambda x: myops.relu(x), 1),
    ("gelu", lambda x: myops.gelu(x), 1),
    ("silu", myops.silu, 1),
    ("sigmoid", myops.sigmoid, 1),
    ("mul_scalar", lambda x: myops.mul_scalar(x, 1.5), 1),
    ("add", lambda a, b: myops.add(a, b, alpha=2), 2),
    ("sub", myops.sub, 2),
    ("mul", myops.mul, 2),
    ("div", myops.div, 2),
    ("maximum", myops.maximum, 2),
    ("addcmul", lambda a, b, c: myops.addcmul(a, b, c, value=-0.5), 3),
    ("clamp", myops.clamp, 3),
]


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("name,fn,nargs", GRADGRAD, ids=[c[0] for c in GRADGRAD])
def test_gradgradcheck(name, fn, nargs, device):
    shapes = [(3, 4), (4,), (3, 1)][:nargs]
    args = [torch.randn(s, dtype=torch.float64, device=device) for s in shapes]
    if name == "relu":
        args[0] = args[0].masked_fill(args[0].abs() < 0.1, 0.5)
    if name == "maximum":
        args[1] = args[1] + 0.3  # no ties
    if name == "clamp":
        lo = torch.randn(4, dtype=torch.float64, device=device) - 1
        x = torch.randn(3, 4, dtype=torch.float64, device=device) * 2
        x = torch.where((x - lo).abs() < 0.05, x + 0.1, x)
        x = torch.where((x - lo - 1.5).abs() < 0.05, x + 0.1, x)
        args = [x, lo, lo + 1.5]
    args = [a.requires_grad_() for a in args]
    assert torch.autograd.gradgradcheck(fn, tuple(args))
