"""nonzero family benchmarks: myops.nonzero vs torch.nonzero and myops.nonzero_static vs
torch.nonzero_static, 10^3 to 10^8 elements, bool and float32, 1% and 50% nonzero, 1-D and 4-D.

    python benchmarks/runner.py --family nonzero --device cpu --quick
"""

import torch

import myops
from runner import Case

# the targets (docs/performance.md, "Targets")
TARGET = {"cuda": 1.5, "cpu": 1.0}


def _input(numel, dtype, density, device, ndim):
    g = torch.Generator(device="cpu").manual_seed(numel + ndim)
    keep = torch.rand(numel, generator=g) < density
    if dtype == torch.bool:
        x = keep
    else:
        x = (torch.rand(numel, generator=g) + 0.5).to(dtype) * keep
    if ndim == 4:
        x = x.view(numel // 1000, 10, 10, 10)  # short inner rows: the odometer's worst case
    return x.to(device)


def cases(device: str, quick: bool):
    dev = "cuda" if device.startswith("cuda") else "cpu"
    top = 7 if quick else 8
    if dev == "cpu" and quick:
        top = 6
    out = []
    for exp in range(3, top + 1):
        numel = 10**exp
        for ndim in [1, 4] if exp >= 4 else [1]:
            for dtype in (torch.bool, torch.float32):
                for density in (0.01, 0.5):
                    x = _input(numel, dtype, density, device, ndim)
                    nnz = int(torch.count_nonzero(x))
                    dt = "bool" if dtype == torch.bool else "f32"
                    shape = "x".join(str(s) for s in x.shape)
                    sub = f"[{shape}] {dt} {int(density * 100)}%"
                    moved = x.numel() * x.element_size() + nnz * x.dim() * 8
                    # headline: the largest 1-D input, bool at 50% (every form) and float32 at 1%
                    head = exp == top and ndim == 1 and (dtype, density) in ((torch.bool, 0.5), (torch.float32, 0.01))
                    out.append(
                        Case(
                            label="nonzero",
                            sub_label=sub,
                            myops=lambda x=x: myops.nonzero(x),
                            torch={"torch.nonzero": lambda x=x: torch.nonzero(x)},
                            bytes=moved,
                            numel=x.numel(),
                            memory=True,
                            target=TARGET[dev],
                            headline=head,
                        )
                    )
                    size = max(1, nnz)  # the size a user would pass: the expected count
                    static_bytes = x.numel() * x.element_size() + size * x.dim() * 8
                    ref = {"torch.nonzero_static": lambda x=x, s=size: torch.nonzero_static(x, size=s)}
                    # nonzero_bounded: the same pass plus its count; issue 27 asks for it within 5%
                    # of nonzero_static (its first reference column is myops.nonzero_static)
                    for label, fn, baselines, target in (
                        ("nonzero_static", myops.nonzero_static, ref, TARGET[dev]),
                        (
                            "nonzero_bounded",
                            myops.nonzero_bounded,
                            {"myops.nonzero_static": lambda x=x, s=size: myops.nonzero_static(x, size=s), **ref},
                            0.95,
                        ),
                    ):
                        out.append(
                            Case(
                                label=label,
                                sub_label=sub + f" size={size}",
                                myops=lambda x=x, s=size, fn=fn: fn(x, size=s),
                                torch=baselines,
                                bytes=static_bytes,
                                numel=x.numel(),
                                memory=True,
                                target=target,
                                headline=head and dtype == torch.bool,
                            )
                        )
    return out
