"""Compilers and other callers: torch.compile, torch.export, TorchScript, the C++ dispatcher."""
import pytest
import torch

import myops
from helpers import DEVICES, assert_same


class AllOps(torch.nn.Module):
    """Uses every myops op once."""

    def forward(self, x, other, mask):
        h = myops.relu(x)
        h = myops.add(h, myops.gelu(x), alpha=0.5)
        h = myops.sub(h, myops.silu(x))
        h = myops.mul(h, myops.sigmoid(x))
        h = myops.div(h, myops.add(myops.cast(x.abs(), torch.float32), 1.0))
        h = myops.maximum(h, myops.minimum(x, myops.mul_scalar(x, 0.25)))
        h = myops.addcmul(h, x, x, value=0.1)
        h = myops.clamp(h, -x.abs(), x.abs() + 1)
        h = myops.where(mask, h, x)
        pooled = myops.max_pool2d_add(h, other)
        diag = myops.diagonal(pooled, 1, -2, -1)
        idx = myops.nonzero(mask)
        fixed = myops.nonzero_static(mask, size=20)
        return pooled, diag, idx, fixed


def inputs(device, n=2, c=3, hw=9):
    x = torch.randn(n, c, hw, hw, device=device)
    other = torch.randn(n, 1, (hw + 1) // 2, (hw + 1) // 2, device=device)
    mask = torch.rand(n, c, hw, hw, device=device) > 0.7
    return x, other, mask


def assert_all_same(actual, expected):
    assert len(actual) == len(expected)
    for a, e in zip(actual, expected):
        assert_same(a, e, check_stride=False)


@pytest.mark.parametrize("device", DEVICES)
def test_compile_fullgraph_dynamic(device):
    torch._dynamo.reset()
    model = AllOps()
    args = inputs(device)
    expected = model(*args)
    with torch._dynamo.config.patch(capture_dynamic_output_shape_ops=True):
        compiled = torch.compile(model, fullgraph=True, dynamic=True)
        assert_all_same(compiled(*args), expected)
        args2 = inputs(device, n=3, hw=11)  # new shapes: no recompile needed with dynamic=True
        assert_all_same(compiled(*args2), model(*args2))
        with myops.replace_torch_ops():
            assert_all_same(compiled(*args), expected)


class Dense(torch.nn.Module):
    def forward(self, x, other):
        h = myops.add(myops.relu(x), myops.sigmoid(x))
        p = myops.max_pool2d_add(h, other)
        return myops.diagonal(p, 0, -2, -1)


@pytest.mark.parametrize("device", DEVICES)
def test_export(device):
    x, other, _ = inputs(device)
    ep = torch.export.export(Dense(), (x, other))
    targets = {str(n.target) for n in ep.graph.nodes if n.op == "call_function"}
    assert {"myops.max_pool2d_add.default", "myops.diagonal.default"} <= targets, targets
    assert_same(ep.module()(x, other), Dense()(x, other))


@torch.jit.script
def scripted(x: torch.Tensor, other: torch.Tensor) -> torch.Tensor:
    p = torch.ops.myops.max_pool2d_add(torch.ops.myops.relu(x), other)
    d = torch.ops.myops.diagonal(p, 0, -2, -1)
    return torch.ops.myops.nonzero(torch.ops.myops.add(d, d) > 0)


@pytest.mark.parametrize("device", DEVICES)
def test_torchscript(device):
    x, other, _ = inputs(device)
    p = torch.nn.functional.max_pool2d(x.relu(), 3, 2, 1) + other
    d = torch.diagonal(p, 0, -2, -1)
    assert_same(scripted(x, other), torch.nonzero(d + d > 0))
