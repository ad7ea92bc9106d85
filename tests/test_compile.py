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


# ---- the fake kernels raise the kernels' own errors -------------------------------------------------
# Each family's fake kernel runs the C++ checks through a control op (at the end of python/myops/_<family>.py), so a
# bad call raises the same exception, with the same message, eagerly and under tracing.
def _t(*shape, dtype=torch.float32):
    return torch.zeros(shape, dtype=dtype)


BAD_CALLS = {
    "max_pool2d_add_kernel_size": lambda: myops.max_pool2d_add(_t(1, 2, 8, 8), _t(1), kernel_size=(0, 3)),
    "max_pool2d_add_dtype": lambda: myops.max_pool2d_add(_t(1, 2, 8, 8, dtype=torch.bool), _t(1)),
    "max_pool2d_add_other": lambda: myops.max_pool2d_add(_t(1, 2, 8, 8), _t(3, 1, 1)),
    "max_pool2d_add_too_small": lambda: torch.ops.myops.max_pool2d_add(_t(1, 2, 1, 1), _t(1), [3, 3], [2, 2], [0, 0]),
    "max_pool2d_add_backward_grad": lambda: torch.ops.myops.max_pool2d_add_backward(
        _t(1, 2, 3, 3), _t(1, 2, 8, 8), [3, 3], [2, 2], [1, 1], False
    ),
    "diagonal_same_dim": lambda: myops.diagonal(_t(3, 4), 0, 1, -1),
    "diagonal_dim_range": lambda: myops.diagonal(_t(3, 4), 0, 0, 2),
    "diagonal_backward_grad": lambda: torch.ops.myops.diagonal_backward(_t(2), [3, 4], 0, 0, 1),
    "nms_boxes": lambda: torch.ops.myops.nms(_t(4, 5), _t(4), 0.5),
    "nms_dtype": lambda: torch.ops.myops.nms(_t(4, 4, dtype=torch.float16), _t(4, dtype=torch.float16), 0.5),
    "batched_nms_idxs": lambda: torch.ops.myops.batched_nms(_t(4, 4), _t(4), _t(3), 0.5),
    "nms_static_size": lambda: torch.ops.myops.nms_static(_t(4, 4), _t(4), 0.5, size=-1),
    "multiclass_nms_scores": lambda: torch.ops.myops.multiclass_nms_static(
        _t(1, 5, 4), _t(1, 6, 2), score_threshold=0.1, iou_threshold=0.5, max_detections=3
    ),
    "roi_align_levels_rois": lambda: torch.ops.myops.roi_align_levels(
        [_t(1, 2, 8, 8)], _t(3, 4), torch.zeros(3, dtype=torch.int64), [1.0], 2, 2
    ),
    "heatmaps_to_keypoints_rois": lambda: torch.ops.myops.heatmaps_to_keypoints(
        _t(2, 3, 5, 5), _t(3, 4), torch.tensor(1)
    ),
    "paste_masks_image_size": lambda: torch.ops.myops.paste_masks(
        _t(2, 1, 4, 4), torch.zeros(2, 1, 4, dtype=torch.int64), torch.tensor([1, 1]), [8, 8]
    ),
    "linear_bounded_count": lambda: torch.ops.myops.linear_bounded(_t(3, 4), _t(2, 4), None, torch.tensor(1.0)),
    "conv_bounded_input": lambda: torch.ops.myops.conv_bounded(
        _t(3, 4), _t(2, 4, 1), None, [1], [0], [1], False, [0], 1, torch.tensor(1)
    ),
    "nonzero_static_size": lambda: torch.ops.myops.nonzero_static(_t(3), size=-2),
    "nonzero_dtype": lambda: torch.ops.myops.nonzero(_t(3, dtype=torch.uint16)),
    # the elementwise rules (csrc/elementwise/elementwise_rules.h, one fake kernel for every op)
    "relu_dtype": lambda: torch.ops.myops.relu(_t(3, dtype=torch.uint16)),
    "gelu_approximate": lambda: torch.ops.myops.gelu(_t(3), approximate="fast"),
    "cast_dtype": lambda: torch.ops.myops.cast(_t(3), torch.complex64),
    "add_broadcast": lambda: torch.ops.myops.add(_t(2, 3), _t(4)),
    "add_alpha": lambda: torch.ops.myops.add(_t(3, dtype=torch.int32), _t(3, dtype=torch.int32), alpha=0.5),
    "add_scalar_complex": lambda: torch.ops.myops.add.Scalar(_t(3), 1j),
    "mul_scalar_self_dtype": lambda: torch.ops.myops.mul.ScalarSelf(2, _t(3, dtype=torch.uint16)),
    "maximum_complex": lambda: torch.ops.myops.maximum(_t(3, dtype=torch.complex64), _t(3, dtype=torch.complex64)),
    "pow_exponent_dtype": lambda: torch.ops.myops.pow(_t(3), _t(3, dtype=torch.int32)),
    "where_condition": lambda: torch.ops.myops.where(_t(3), _t(3), _t(3)),
    "where_scalar_complex": lambda: torch.ops.myops.where.Scalar(_t(3, dtype=torch.bool), 1j, 2),
    "clamp_bool_result": lambda: torch.ops.myops.clamp(*[_t(3, dtype=torch.bool)] * 3),
    "clamp_scalar_none": lambda: torch.ops.myops.clamp.Scalar(_t(3), None, None),
}


@pytest.mark.parametrize("name", sorted(BAD_CALLS))
def test_fake_kernels_raise_the_kernels_errors(name):
    from torch._subclasses.fake_tensor import FakeTensorMode

    call = BAD_CALLS[name]
    with pytest.raises(Exception) as eager:
        call()
    with FakeTensorMode(), pytest.raises(Exception) as fake:
        call()
    assert type(fake.value) is type(eager.value)
    assert str(fake.value).splitlines()[0] == str(eager.value).splitlines()[0]
    assert str(eager.value).startswith("myops.")
