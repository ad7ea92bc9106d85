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
