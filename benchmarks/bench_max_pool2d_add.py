"""max_pool2d_add benchmarks: myops.max_pool2d_add vs F.max_pool2d(...) + other.

Bytes that must move = self read once + other read once (its own size, not broadcast) + the
result written once; the headline fp32 case [32,64,112,112] + [32,1,56,56] moves 128.85 MB.
Targets (docs/performance.md, headline fp32 NCHW): >= 2.0x on the CPU, >= 1.6x and >= 80% of the
bandwidth floor on CUDA.
"""

import torch
import torch.nn.functional as F

from runner import Case

import myops


def _case(
    device,
    shape,
    other_shape,
    dtype,
    channels_last,
    k=3,
    s=2,
    p=1,
    target=None,
    floor_target=None,
    tag="",
    headline=False,
):
    x = torch.randn(shape, device=device, dtype=torch.float32).to(dtype)
    if channels_last:
        x = x.contiguous(memory_format=torch.channels_last)
    o = torch.randn(other_shape, device=device, dtype=torch.float32).to(dtype)
    out = myops.max_pool2d_add(x, o, k, s, p)
    same = torch.equal(out, F.max_pool2d(x, k, s, p) + o)  # reported in the label, not raised
    nbytes = x.numel() * x.element_size() + o.numel() * o.element_size() + out.numel() * out.element_size()
    layout = "cl" if channels_last else "nchw"
    name = str(dtype).replace("torch.", "")
    sub = f"{list(shape)}+{list(other_shape)} k{k}s{s}p{p} {name} {layout}{tag}" + ("" if same else " RESULTS DIFFER")
    return Case(
        label="max_pool2d_add",
        sub_label=sub,
        myops=lambda: myops.max_pool2d_add(x, o, k, s, p),
        torch={"F.max_pool2d+add": lambda: F.max_pool2d(x, k, s, p) + o},
        bytes=nbytes,
        numel=out.numel(),
        memory=True,
        target=target,
        floor_target=floor_target,
        headline=headline,
    )


def cases(device: str, quick: bool):
    cuda = device.startswith("cuda")
    head_target = 1.6 if cuda else 2.0
    head_floor = 0.8 if cuda else None  # and >= 80% of the bandwidth floor on CUDA
    head = [32, 64, 112, 112]
    head_other = [32, 1, 56, 56]
    out = [
        _case(
            device,
            head,
            head_other,
            torch.float32,
            False,
            target=head_target,
            floor_target=head_floor,
            tag=" (headline)",
            headline=True,
        ),
        _case(device, head, head_other, torch.float32, True, headline=True),
        _case(device, head, head_other, torch.float16, False),
        _case(device, head, head_other, torch.float16, True),
    ]
    if quick:
        return out
    out += [
        # per-channel bias, deeper layer
        _case(device, [32, 256, 56, 56], [1, 256, 1, 1], torch.float32, False),
        _case(device, [32, 256, 56, 56], [1, 256, 1, 1], torch.float32, True),
        # generic path: 2x2 / stride 2, full-shape other
        _case(device, [16, 128, 64, 64], [16, 128, 32, 32], torch.float32, False, k=2, s=2, p=0),
        _case(device, [16, 128, 64, 64], [16, 128, 32, 32], torch.bfloat16, True, k=2, s=2, p=0),
        # latency: a tiny call
        _case(device, [1, 8, 16, 16], [1, 1, 8, 8], torch.float32, False),
    ]
    return out
