"""nms family benchmarks: myops.nms / nms_static / batched_nms vs torchvision.ops at 10^3 to 10^5
boxes (float32, detector-like: clustered, heavily overlapping boxes with distinct scores).

    python benchmarks/runner.py --family nms --device cpu --quick
"""

import torch

import myops
from runner import Case

# issue 27: at least as fast as torchvision on the CPU
TARGET = {"cuda": 1.0, "cpu": 1.0}


def _boxes(n, device):
    g = torch.Generator(device="cpu").manual_seed(n)
    centers = torch.rand(max(1, n // 20), 2, generator=g) * 1000  # ~20 candidates per object
    c = centers[torch.randint(0, centers.shape[0], (n,), generator=g)] + torch.randn(n, 2, generator=g) * 8
    wh = 30 + torch.rand(n, 2, generator=g) * 60
    boxes = torch.cat([c - wh / 2, c + wh / 2], 1)
    scores = torch.rand(n, generator=g)
    idxs = torch.randint(0, 10, (n,), generator=g)
    return boxes.to(device), scores.to(device), idxs.to(device)


def cases(device: str, quick: bool):
    import torchvision

    tv = torchvision.ops
    dev = "cuda" if device.startswith("cuda") else "cpu"
    out = []
    for n in (1000, 10000, 100000):
        b, s, i = _boxes(n, device)
        kept = int(tv.nms(b, s, 0.5).numel())
        sub = f"{n} boxes f32 ({kept} kept)"
        common = dict(bytes=n * 5 * 4 + kept * 8, numel=n, target=TARGET[dev], headline=n == 10000)
        out.append(
            Case(
                label="nms",
                sub_label=sub,
                myops=lambda b=b, s=s: myops.nms(b, s, 0.5),
                torch={"torchvision.ops.nms": lambda b=b, s=s: tv.nms(b, s, 0.5)},
                **common,
            )
        )
        out.append(
            Case(
                label="nms_static",
                sub_label=sub + f" size={kept}",
                myops=lambda b=b, s=s, k=kept: myops.nms_static(b, s, 0.5, size=k),
                torch={"torchvision.ops.nms": lambda b=b, s=s: tv.nms(b, s, 0.5)},
                **common,
            )
        )
        out.append(
            Case(
                label="batched_nms",
                sub_label=f"{n} boxes f32 10 classes",
                myops=lambda b=b, s=s, i=i: myops.batched_nms(b, s, i, 0.5),
                torch={"torchvision.ops.batched_nms": lambda b=b, s=s, i=i: tv.batched_nms(b, s, i, 0.5)},
                **common,
            )
        )
    return out
