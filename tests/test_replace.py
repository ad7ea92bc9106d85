"""myops.replace_torch_ops(): torch calls routed to myops inside a block, exactly."""
import pytest
import torch
import torch.nn.functional as F

import myops
from helpers import DEVICES, assert_same


def x4(device, dtype=torch.float32):
    return torch.randn(2, 3, 5, 7, device=device, dtype=dtype)


APPROXIMATE = {"gelu", "silu", "sigmoid"}

# (myops op name, call) — each call is evaluated once with and once without the block
CALLS = [
    ("nonzero", lambda x, y: torch.nonzero(x > 0.3)),
    ("nonzero", lambda x, y: (x > 0.3).nonzero()),
    ("nonzero", lambda x, y: torch.nonzero(x > 0.3, as_tuple=True)),
    ("argwhere", lambda x, y: torch.argwhere(x < 0)),
    ("nonzero_static", lambda x, y: torch.nonzero_static(x > 0, size=17, fill_value=-5)),
    ("where", lambda x, y: torch.where(x > 0)),
    ("where", lambda x, y: torch.where(x > 0, x, y)),
    ("where", lambda x, y: torch.where(condition=x > 0, input=x, other=y)),
    ("where", lambda x, y: torch.where(x > 0, x, 0.0)),
    ("relu", lambda x, y: torch.relu(x)),
    ("relu", lambda x, y: F.relu(x)),
    ("relu", lambda x, y: x.relu()),
    ("gelu", lambda x, y: F.gelu(x)),
    ("gelu", lambda x, y: F.gelu(x, approximate="tanh")),
    ("silu", lambda x, y: F.silu(x)),
    ("sigmoid", lambda x, y: torch.sigmoid(x)),
    ("add", lambda x, y: x + y),
    ("add", lambda x, y: torch.add(x, y[:1], alpha=2)),
    ("add", lambda x, y: x + 1.5),
    ("add", lambda x, y: 1.5 + x),
    ("sub", lambda x, y: x - y),
    ("mul", lambda x, y: x * y[..., :1]),
    ("mul", lambda x, y: torch.mul(x, 3)),
    ("div", lambda x, y: x / (y.abs() + 1)),
    ("maximum", lambda x, y: torch.maximum(x, y)),
    ("minimum", lambda x, y: torch.minimum(x, y)),
    ("addcmul", lambda x, y: torch.addcmul(x, y, y, value=0.5)),
    ("clamp", lambda x, y: torch.clamp(x, -y.abs(), y.abs())),
]


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("name,call", CALLS, ids=[f"{n}-{i}" for i, (n, _) in enumerate(CALLS)])
def test_routed_equals_torch(device, name, call):
    x, y = x4(device), x4(device)
    x0, y0 = x.clone(), y.clone()
    expected = call(x, y)
    with myops.replace_torch_ops() as stats:
        actual = call(x, y)
    assert stats.routed[name] >= 1, stats
    if isinstance(expected, tuple):
        assert len(actual) == len(expected)
        for a, e in zip(actual, expected):
            assert_same(a, e)
    elif name in APPROXIMATE:
        # transcendental ops: within a few ulp of torch (DESIGN.md §2), not bit-exact
        torch.testing.assert_close(actual, expected, rtol=4e-7, atol=1e-6)
        assert actual.dtype == expected.dtype and actual.stride() == expected.stride()
    else:
        assert_same(actual, expected)
    assert_same(x, x0)  # inputs untouched
    assert_same(y, y0)


@pytest.mark.parametrize("device", DEVICES)
def test_inplace_honoured(device):
    x = x4(device)
    ref = x.clone().relu_()
    y = x4(device)
    ref_add = ref.clone().add_(y)
    with torch.no_grad(), myops.replace_torch_ops() as stats:
        out = x.relu_()
        assert out is x
        F.relu(x, inplace=True)
        x += y
    assert stats.routed["relu"] == 2 and stats.routed["add"] == 1, stats
    assert_same(x, ref_add)


@pytest.mark.parametrize("device", DEVICES)
def test_out_and_unsupported_forms_fall_through(device):
    x, y = x4(device), x4(device)
    out = torch.empty_like(x)
    with myops.replace_torch_ops() as stats:
        r = torch.add(x, y, out=out)  # out= is left to torch
        q = torch.div(x, y, rounding_mode="floor")  # a form myops does not implement
        c = torch.clamp(x, min=-0.5)  # scalar bounds: left to torch
        zo = torch.empty(0, 2, dtype=torch.long, device=device)
        z = torch.nonzero(torch.randn(3, 4, device=device), out=zo)  # out= is left to torch
    assert r is out
    assert_same(out, torch.add(x, y))
    assert_same(q, torch.div(x, y, rounding_mode="floor"))
    assert_same(c, torch.clamp(x, min=-0.5))
    assert z.shape[1] == 2
    assert stats.routed["add"] == 0 and stats.routed["div"] == 0 and stats.routed["clamp"] == 0
    assert stats.fallthrough["add"] == 1 and stats.fallthrough["div"] == 1
    assert stats.fallthrough["nonzero"] == 1


@pytest.mark.parametrize("device", DEVICES)
def test_bad_input_raises_like_torch(device):
    x = torch.randn(3, 4, device=device)
    y = torch.randn(5, device=device)
    with myops.replace_torch_ops():
        with pytest.raises(RuntimeError, match="size of tensor"):
            x + y
        with pytest.raises(RuntimeError):
            torch.where(x > 0, x, y)
        with pytest.raises(TypeError):
            torch.nonzero(x, bogus=1)


def test_only_and_global_enable():
    x = torch.randn(10)
    with myops.replace_torch_ops(only={"where"}) as stats:
        torch.where(x > 0)
        torch.relu(x)
    assert stats.routed == {"where": 1}
    stats = myops.enable()
    try:
        assert myops.enable() is stats
        torch.nonzero(x)
    finally:
        assert myops.disable() is stats
    assert myops.disable() is None
    assert stats.routed["nonzero"] == 1
    torch.nonzero(x)
    assert stats.routed["nonzero"] == 1
