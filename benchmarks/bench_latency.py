"""Small-call latency of every op family at 10^3 and 10^4 elements against torch.

Detectors call `where`, `nonzero` and small elementwise ops on a few thousand elements, where
the time is call overhead (Python binding, dispatcher, autograd, output allocation), not
memory traffic. Target (docs/performance.md): any op at 10^3 elements takes no more than torch's time
(ratio >= 1.0); 10^4 elements are reported against the same mark. Every call goes through
the public `myops.<op>` wrapper, as a user writes it, against the torch call it replaces.
"""

import torch
import torch.nn.functional as F

import myops
from runner import Case

SIZES = (1000, 10000)


def _pool_shape(numel):
    # [1, C, H, W] whose pooled output (3x3 / stride 2 / pad 1) has `numel` elements
    return (1, 10, 20, 20) if numel == 1000 else (1, 16, 50, 50)


def _diag_shape(numel):
    # [B, n, n] whose diagonal has `numel` elements
    return (40, 25, 25) if numel == 1000 else (100, 100, 100)


def cases(device, quick):
    out = []
    for n in SIZES:
        g = torch.Generator(device="cpu").manual_seed(n)
        x = torch.randn(n, generator=g).to(device)
        y = torch.randn(n, generator=g).to(device)
        mask = x > 0
        tag = f"[{n}]"
        f32 = 4

        def add(label, sub, my, ref, nbytes, numel=n):
            out.append(
                Case(
                    label=label,
                    sub_label=f"{tag} {sub}".strip() if sub else tag,
                    myops=my,
                    torch={"torch": ref},
                    bytes=nbytes,
                    numel=numel,
                    target=1.0,
                    series=f"latency {label}",
                    headline=n == SIZES[0],
                )
            )

        nnz = int(mask.sum())
        add("nonzero", "bool", lambda m=mask: myops.nonzero(m), lambda m=mask: torch.nonzero(m), n + nnz * 8)
        add(
            "nonzero_static",
            "bool",
            lambda m=mask, s=nnz: myops.nonzero_static(m, size=s),
            lambda m=mask, s=nnz: torch.nonzero_static(m, size=s),
            n + nnz * 8,
        )
        add("where(cond)", "bool", lambda m=mask: myops.where(m), lambda m=mask: torch.where(m), n + nnz * 8)
        add(
            "where",
            "bool,f32,f32",
            lambda m=mask, x=x, y=y: myops.where(m, x, y),
            lambda m=mask, x=x, y=y: torch.where(m, x, y),
            n + 3 * n * f32,
        )
        add("add", "f32", lambda x=x, y=y: myops.add(x, y), lambda x=x, y=y: torch.add(x, y), 3 * n * f32)
        add("mul", "f32 * 0-d", lambda x=x: myops.mul(x, _half), lambda x=x: torch.mul(x, _half), 2 * n * f32)
        add("relu", "f32", lambda x=x: myops.relu(x), lambda x=x: torch.relu(x), 2 * n * f32)
        add("gelu", "f32", lambda x=x: myops.gelu(x), lambda x=x: F.gelu(x), 2 * n * f32)
        add("sigmoid", "f32", lambda x=x: myops.sigmoid(x), lambda x=x: torch.sigmoid(x), 2 * n * f32)
        add(
            "cast", "f32->f16", lambda x=x: myops.cast(x, torch.float16), lambda x=x: x.to(torch.float16), n * (f32 + 2)
        )
        add(
            "addcmul",
            "f32",
            lambda x=x, y=y: myops.addcmul(x, y, x),
            lambda x=x, y=y: torch.addcmul(x, y, x),
            3 * n * f32,
        )
        lo, hi = y - 1, y + 1
        add(
            "clamp",
            "f32",
            lambda x=x, lo=lo, hi=hi: myops.clamp(x, lo, hi),
            lambda x=x, lo=lo, hi=hi: torch.clamp(x, lo, hi),
            4 * n * f32,
        )

        s = _pool_shape(n)
        p = torch.randn(s, generator=g).to(device)
        o = torch.randn(1, 1, s[2] // 2, s[3] // 2, generator=g).to(device)
        add(
            "max_pool2d_add",
            f"{list(s)} f32",
            lambda p=p, o=o: myops.max_pool2d_add(p, o),
            lambda p=p, o=o: F.max_pool2d(p, 3, 2, 1) + o,
            (p.numel() + o.numel() + n) * f32,
        )

        d = _diag_shape(n)
        t = torch.randn(d, generator=g).to(device)
        add(
            "diagonal",
            f"{list(d)} (-2,-1) f32",
            lambda t=t: myops.diagonal(t, 0, -2, -1),
            lambda t=t: torch.diagonal(t, 0, -2, -1).contiguous(),
            2 * n * f32,
        )
    return out


_half = torch.tensor(0.5)  # a 0-d tensor operand (as torch wraps a Python number)
