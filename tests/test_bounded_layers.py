"""linear_bounded / conv_bounded: torch's layers over the first `count` rows of a padded batch
(issue 28: the static detector's RoI heads on their real rows only)."""

import re

import pytest
import torch
import torch.nn.functional as F

import myops
from helpers import DEVICES, assert_same, with_layout

DTYPES = [torch.float32, torch.float64, torch.bfloat16]
R = 37
COUNTS = [0, 1, 17, R - 1, R, R + 5, -3]  # past R and below 0: clamped


def count_of(c, device="cpu"):
    return torch.tensor(c, dtype=torch.int64, device=device)


def reference(layer, x, c):
    """The op's definition: on the CPU the layer on the real rows (the same call, the same bits);
    on CUDA, which never reads the count on the host, the layer on every row. The rows at or
    past the count are 0; the result is contiguous."""
    real = max(0, min(c, x.shape[0]))
    head = layer(x[:real]) if x.device.type == "cpu" else layer(x)[:real]
    out = torch.zeros((x.shape[0],) + tuple(head.shape[1:]), dtype=head.dtype, device=x.device)
    out[:real] = head
    return out


def check(op, layer, x, c, *args):
    """op(x, *args, count) against the reference; the inputs untouched."""
    before = [a.clone() for a in (x,) + args if isinstance(a, torch.Tensor)]
    got = op(x, *args, count_of(c, x.device))
    assert_same(got, reference(layer, x, c))
    for a, b in zip(before, [a for a in (x,) + args if isinstance(a, torch.Tensor)]):
        assert_same(a, b, check_stride=False)  # (a clone of a sliced view is dense)


def rand(shape, dtype, device):
    return torch.randn(shape, dtype=torch.float64, device=device).to(dtype)


# ---- linear_bounded ---------------------------------------------------------------------------


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("bias", [True, False])
@pytest.mark.parametrize("c", COUNTS)
def test_linear_matches_torch(device, dtype, bias, c):
    x, w = rand((R, 29), dtype, device), rand((13, 29), dtype, device)
    b = rand((13,), dtype, device) if bias else None
    check(
        lambda x, w, b, count: torch.ops.myops.linear_bounded(x, w, b, count),
        lambda rows: F.linear(rows, w, b),
        x,
        c,
        w,
        b,
    )


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("layout", ["transposed", "sliced", "expanded", "misaligned"])
def test_linear_layouts(device, layout):
    x = with_layout(rand((R, 64), torch.float32, device), layout)
    w = with_layout(rand((24, 64), torch.float32, device), "transposed")
    b = rand((24,), torch.float32, device)
    for c in (0, 20, R):
        check(lambda x, count: myops.linear_bounded(x, w, b, count), lambda rows: F.linear(rows, w, b), x, c)


def test_linear_box_head_shapes():
    # torchvision's TwoMLPHead fc6 (12544 -> 1024) at a detector's sizes: 1000 rows, 196 real
    x, w, b = (
        rand((1000, 12544), torch.float32, "cpu"),
        rand((1024, 12544), torch.float32, "cpu") * 0.01,
        rand((1024,), torch.float32, "cpu"),
    )
    check(lambda x, count: myops.linear_bounded(x, w, b, count), lambda rows: F.linear(rows, w, b), x, 196)


# ---- conv_bounded -----------------------------------------------------------------------------

CONVS = {  # name: (input shape, weight shape, keyword arguments)
    "conv2d": ((9, 4, 11, 10), (6, 4, 3, 3), dict(stride=1, padding=1)),
    "conv2d_strided_groups": ((9, 4, 11, 10), (6, 2, 3, 2), dict(stride=2, padding=(1, 0), dilation=(1, 2), groups=2)),
    "conv_transpose2d": ((9, 4, 7, 6), (4, 3, 2, 2), dict(stride=2, transposed=True)),
    "conv_transpose2d_padded": (
        (9, 4, 7, 6),
        (4, 2, 3, 3),
        dict(stride=2, padding=1, output_padding=1, transposed=True, groups=2),
    ),
    "conv1d": ((9, 3, 20), (5, 3, 4), dict(stride=3, padding=2)),
    "conv3d": ((5, 2, 6, 5, 4), (3, 2, 3, 3, 3), dict(padding=1)),
}


def torch_conv(w, b, kw):
    n = w.dim() - 2
    args = {
        k: (v,) * n if isinstance(v, int) else v
        for k, v in dict(stride=1, padding=0, dilation=1, output_padding=0).items()
    }
    args.update({k: (v,) * n if isinstance(v, int) else v for k, v in kw.items() if k not in ("transposed", "groups")})
    return lambda rows: torch.convolution(
        rows,
        w,
        b,
        args["stride"],
        args["padding"],
        args["dilation"],
        kw.get("transposed", False),
        args["output_padding"],
        kw.get("groups", 1),
    )


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", CONVS)
@pytest.mark.parametrize("bias", [True, False])
def test_conv_matches_torch(device, dtype, name, bias):
    xs, ws, kw = CONVS[name]
    x, w = rand(xs, dtype, device), rand(ws, dtype, device)
    out_channels = ws[1] * kw.get("groups", 1) if kw.get("transposed") else ws[0]
    b = rand((out_channels,), dtype, device) if bias else None
    for c in (0, 1, 4, xs[0], xs[0] + 2, -1):
        check(lambda x, count: myops.conv_bounded(x, w, b, count, **kw), torch_conv(w, b, kw), x, c)


def test_conv_is_the_modules_forward():
    # what the static detector's heads call: the bounded form of nn.Conv2d / nn.ConvTranspose2d
    # modules equals the modules on the real rows, bit for bit
    torch.manual_seed(0)
    conv = torch.nn.Conv2d(8, 8, 3, padding=1).eval()
    up = torch.nn.ConvTranspose2d(8, 4, 2, 2).eval()
    x = torch.randn(100, 8, 14, 14)
    for m in (conv, up):
        got = myops.conv_bounded(
            x,
            m.weight.detach(),
            m.bias.detach(),
            count_of(23),
            stride=m.stride,
            padding=m.padding,
            dilation=m.dilation,
            transposed=m.transposed,
            output_padding=m.output_padding,
            groups=m.groups,
        )
        with torch.no_grad():
            exp = m(x[:23])
        assert_same(got[:23], exp)
        assert (got[23:] == 0).all()


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("layout", ["channels_last", "sliced", "transposed"])
def test_conv_layouts(device, layout):
    x = with_layout(rand((9, 4, 11, 10), torch.float32, device), layout)
    w = with_layout(rand((6, 4, 3, 3), torch.float32, device), "channels_last")
    kw = dict(padding=1)
    for c in (0, 5, 9):
        check(lambda x, count: myops.conv_bounded(x, w, None, count, **kw), torch_conv(w, None, kw), x, c)


# ---- errors -----------------------------------------------------------------------------------


def _linear(device, x=None, count=None, bias=True):
    x = torch.randn(5, 3, device=device) if x is None else x
    w, b = torch.randn(4, 3, device=device), torch.randn(4, device=device) if bias else None
    return torch.ops.myops.linear_bounded(x, w, b, count_of(2, device) if count is None else count)


def _conv(device, x=None, count=None):
    x = torch.randn(5, 3, 6, 6, device=device) if x is None else x
    return torch.ops.myops.conv_bounded(
        x,
        torch.randn(4, 3, 3, 3, device=device),
        None,
        [1, 1],
        [0, 0],
        [1, 1],
        False,
        [0, 0],
        1,
        count_of(2, device) if count is None else count,
    )


ERRORS = [
    ("linear_bounded", dict(x=torch.randn(5)), ValueError, "argument 'input' must be a 2-D [R, K] tensor"),
    ("linear_bounded", dict(x=torch.randn(2, 5, 3)), ValueError, "argument 'input' must be a 2-D [R, K] tensor"),
    ("linear_bounded", dict(count=torch.tensor([2])), ValueError, "argument 'count' must be a 0-d tensor"),
    (
        "linear_bounded",
        dict(count=torch.tensor(2, dtype=torch.int32)),
        RuntimeError,
        "argument 'count' must have dtype int64, got",
    ),
    ("conv_bounded", dict(x=torch.randn(3, 6)), ValueError, "argument 'input' must be a batched [R, C, *spatial]"),
    ("conv_bounded", dict(count=torch.tensor(2.0)), RuntimeError, "argument 'count' must have dtype int64"),
]


@pytest.mark.parametrize("device", ["cpu", "meta"])  # meta: the fake kernels' checks, the same errors
@pytest.mark.parametrize("op, kw, exc, msg", ERRORS, ids=[f"{e[0]}: {e[3]}" for e in ERRORS])
def test_errors(device, op, kw, exc, msg):
    kw = {k: v.to(device) for k, v in kw.items()}
    with pytest.raises(exc, match=f"myops.{op}: " + re.escape(msg)):
        (_linear if op == "linear_bounded" else _conv)(device, **kw)


def test_count_on_another_device():
    for call in (_linear, _conv):
        with pytest.raises(
            RuntimeError, match="expected all tensors on the same device, got 'input' on cpu and 'count' on meta"
        ):
            call("cpu", count=count_of(2, "meta"))


def test_the_layers_own_errors():
    # weight / bias shapes and dtypes: torch's own checks (at::linear, at::convolution)
    with pytest.raises(RuntimeError):
        torch.ops.myops.linear_bounded(torch.randn(5, 3), torch.randn(4, 2), None, count_of(0))
    with pytest.raises(RuntimeError):
        torch.ops.myops.linear_bounded(torch.randn(5, 3), torch.randn(4, 3, dtype=torch.float64), None, count_of(2))
    with pytest.raises(RuntimeError):
        _conv("cpu", x=torch.randn(5, 2, 6, 6))


def test_no_gradient():
    """Inference only: with an input that requires grad (grad mode on) the result has a grad_fn
    whose backward raises (the forward must run: a model's Parameters require grad, and
    AOTInductor calls the op with them while it compiles)."""
    x, w, b = torch.randn(5, 3), torch.randn(4, 3), torch.randn(4)
    expected = myops.linear_bounded(x, w, b, count_of(3))
    for t in (x, w, b):
        t.requires_grad_()
        got = myops.linear_bounded(x, w, b, count_of(3))
        assert got.requires_grad
        assert_same(got.detach(), expected)
        with pytest.raises(RuntimeError, match="derivative for myops::linear_bounded is not implemented"):
            got.sum().backward()
        with torch.no_grad():
            assert not myops.linear_bounded(x, w, b, count_of(3)).requires_grad
        t.requires_grad_(False)
    w = torch.randn(4, 3, 3, 3, requires_grad=True)
    got = myops.conv_bounded(torch.randn(5, 3, 6, 6), w, None, count_of(3))
    with pytest.raises(RuntimeError, match="derivative for myops::conv_bounded is not implemented"):
        got.sum().backward()
    with torch.inference_mode():
        assert not myops.conv_bounded(torch.randn(5, 3, 6, 6), w, None, count_of(3)).requires_grad


# ---- tracing ----------------------------------------------------------------------------------


@pytest.mark.parametrize("device", DEVICES)
def test_opcheck(device):
    x, w, b = (
        rand((R, 29), torch.float32, device),
        rand((13, 29), torch.float32, device),
        rand((13,), torch.float32, device),
    )
    for c in (0, 9, R):
        torch.library.opcheck(torch.ops.myops.linear_bounded.default, (x, w, b, count_of(c, device)))
        torch.library.opcheck(
            torch.ops.myops.linear_bounded.default, (x.t().contiguous().t(), w, None, count_of(c, device))
        )
    for name, (xs, ws, kw) in CONVS.items():
        x, w = rand(xs, torch.float32, device), rand(ws, torch.float32, device)
        n = w.dim() - 2
        full = dict(stride=1, padding=0, dilation=1, transposed=False, output_padding=0, groups=1)
        full.update(kw)
        args = [
            list(full[k]) if not isinstance(full[k], int) else [full[k]] * n for k in ("stride", "padding", "dilation")
        ]
        op = full["output_padding"]
        torch.library.opcheck(
            torch.ops.myops.conv_bounded.default,
            (
                x,
                w,
                None,
                *args,
                full["transposed"],
                [op] * n if isinstance(op, int) else list(op),
                full["groups"],
                count_of(3, device),
            ),
        )


def test_export_static_shapes():
    class Head(torch.nn.Module):
        def forward(self, x, w, b, count):
            return myops.linear_bounded(x, w, b, count)

    args = (torch.randn(30, 8), torch.randn(5, 8), torch.randn(5), count_of(11))
    ep = torch.export.export(Head(), args)
    targets = [str(n.target) for n in ep.graph.nodes if n.op == "call_function"]
    assert targets == ["myops.linear_bounded.default"]
    assert not ep.range_constraints  # no symbol at all, backed or unbacked
    assert_same(ep.module()(*args), Head()(*args))
