"""Elementwise family benchmarks for benchmarks/runner.py.

Contiguous unary / binary / cast over 2^10 .. 2^28 elements (quick: .. 2^22) in float32,
float16 and bfloat16, a misaligned view (x[1:]), and the broadcast [32,64,56,56] + [1,64,1,1].
Targets (docs/performance.md): contiguous >= 64 MiB: >= 1.0x torch (casts to half/bfloat16 >= 1.1x on
CUDA); broadcast >= 1.3x on CUDA, >= 1.0x on CPU; 2^10 elements (latency): >= 1.0x.
"""

import torch
import torch.nn.functional as F

import myops
from myops._table import EW_OPS
from runner import Case

DTYPES = {"f32": torch.float32, "f16": torch.float16, "bf16": torch.bfloat16}


def _target(device, nbytes, numel, cast_to_half=False):
    if numel <= 1 << 10:
        return 1.0  # latency: no slower than torch
    if nbytes >= 64 << 20:
        return 1.1 if (cast_to_half and device.startswith("cuda")) else 1.0
    return None


def cases(device, quick):
    exps = [10, 16, 20, 22] if quick else list(range(10, 29, 2))
    if device == "cpu" and not quick:
        exps = [e for e in exps if e <= 26]  # 2^28 float32 tensors are 1 GiB each on the host
    # headline: float32 add / relu / gelu / cast at the largest size up to 2^26 (DRAM-bound: the
    # bandwidth floor), add at 2^10 (latency), and the broadcast cases
    head_exps = (min(exps[-1], 26), 10)
    out = []
    for e in exps:
        if quick and e in (16, 20, 22):
            continue  # every op at these sizes: the loop below
        n = 1 << e
        for dname, dt in DTYPES.items():
            if quick and dname == "bf16" and e not in (10, 22):
                continue
            x = torch.randn(n, device=device).to(dt)
            y = torch.randn(n, device=device).to(dt)
            es = x.element_size()
            tag = f"[2^{e}] {dname}"
            head = dname == "f32" and e == head_exps[0]
            out.append(
                Case(
                    "add",
                    tag,
                    lambda x=x, y=y: myops.add(x, y),
                    {"torch": lambda x=x, y=y: torch.add(x, y)},
                    bytes=3 * n * es,
                    numel=n,
                    target=_target(device, 3 * n * es, n),
                    headline=dname == "f32" and e in head_exps,
                )
            )
            out.append(
                Case(
                    "relu",
                    tag,
                    lambda x=x: myops.relu(x),
                    {"torch": lambda x=x: torch.relu(x)},
                    bytes=2 * n * es,
                    numel=n,
                    target=_target(device, 2 * n * es, n),
                    headline=head,
                )
            )
            if dname == "f32" or not quick:
                out.append(
                    Case(
                        "gelu",
                        tag,
                        lambda x=x: myops.gelu(x),
                        {"torch": lambda x=x: F.gelu(x)},
                        bytes=2 * n * es,
                        numel=n,
                        target=_target(device, 2 * n * es, n),
                        headline=head,
                    )
                )
            if dname == "f32":
                out.append(
                    Case(
                        "mul",
                        tag + " x[1:]",
                        lambda x=x, y=y: myops.mul(x[1:], y[:-1]),
                        {"torch": lambda x=x, y=y: torch.mul(x[1:], y[:-1])},
                        bytes=3 * (n - 1) * es,
                        numel=n - 1,
                        target=_target(device, 3 * n * es, n),
                    )
                )
                for to, tname in ((torch.float16, "f16"), (torch.bfloat16, "bf16")):
                    if quick and tname == "bf16":
                        continue
                    out.append(
                        Case(
                            "cast",
                            f"[2^{e}] f32->{tname}",
                            lambda x=x, to=to: myops.cast(x, to),
                            {"torch": lambda x=x, to=to: x.to(to)},
                            bytes=n * (4 + 2),
                            numel=n,
                            target=_target(device, n * 6, n, cast_to_half=True),
                            headline=head and tname == "f16",
                        )
                    )
    # every elementwise op at 2^16, 2^20 and 2^22 elements in each float dtype (issue #19; the
    # AVX2 and AVX-512 builds are compared with `runner.py --cpu-isa avx2 avx512_bf16`); in the
    # full run the loop above already has add / relu / gelu / mul x[1:] / cast at these sizes
    made = {(c.label, c.sub_label) for c in out}
    for e in (16, 20, 22):
        n = 1 << e
        for dname, dt in DTYPES.items():
            g = torch.Generator().manual_seed(e)
            x = torch.randn(n, generator=g).to(device, dt)
            y = torch.randn(n, generator=g).to(device, dt)
            z = torch.randn(n, generator=g).to(device, dt)
            lo, hi = torch.minimum(y, z), torch.maximum(y, z)
            m = torch.rand(n, generator=g).to(device) > 0.5
            es = x.element_size()
            tag = f"[2^{e}] {dname}"
            # a positive operand for the ops defined on one (log, sqrt, rsqrt, pow's base): on
            # randn's negative half they return NaN, which takes slow paths in torch's CPU kernels
            # that a model never meets (they would flatter myops)
            pos = x.abs() + 0.5
            more = [  # (op, case, myops, torch, bytes moved)
                ("add", tag, lambda x=x, y=y: myops.add(x, y), lambda x=x, y=y: torch.add(x, y), 3 * n * es),
                (
                    "add",
                    tag + " alpha=2",
                    lambda x=x, y=y: myops.add(x, y, alpha=2),
                    lambda x=x, y=y: torch.add(x, y, alpha=2),
                    3 * n * es,
                ),
                ("sub", tag, lambda x=x, y=y: myops.sub(x, y), lambda x=x, y=y: torch.sub(x, y), 3 * n * es),
                ("mul", tag, lambda x=x, y=y: myops.mul(x, y), lambda x=x, y=y: torch.mul(x, y), 3 * n * es),
                ("div", tag, lambda x=x, y=y: myops.div(x, y), lambda x=x, y=y: torch.div(x, y), 3 * n * es),
                (
                    "maximum",
                    tag,
                    lambda x=x, y=y: myops.maximum(x, y),
                    lambda x=x, y=y: torch.maximum(x, y),
                    3 * n * es,
                ),
                (
                    "minimum",
                    tag,
                    lambda x=x, y=y: myops.minimum(x, y),
                    lambda x=x, y=y: torch.minimum(x, y),
                    3 * n * es,
                ),
                ("mul_scalar", tag, lambda x=x: myops.mul_scalar(x, 0.5), lambda x=x: torch.mul(x, 0.5), 2 * n * es),
                ("relu", tag, lambda x=x: myops.relu(x), lambda x=x: torch.relu(x), 2 * n * es),
                ("gelu", tag, lambda x=x: myops.gelu(x), lambda x=x: F.gelu(x), 2 * n * es),
                (
                    "gelu tanh",
                    tag,
                    lambda x=x: myops.gelu(x, approximate="tanh"),
                    lambda x=x: F.gelu(x, approximate="tanh"),
                    2 * n * es,
                ),
                ("silu", tag, lambda x=x: myops.silu(x), lambda x=x: F.silu(x), 2 * n * es),
                ("sigmoid", tag, lambda x=x: myops.sigmoid(x), lambda x=x: torch.sigmoid(x), 2 * n * es),
                (
                    "addcmul",
                    tag,
                    lambda x=x, y=y, z=z: myops.addcmul(x, y, z, value=0.5),
                    lambda x=x, y=y, z=z: torch.addcmul(x, y, z, value=0.5),
                    4 * n * es,
                ),
                (
                    "clamp",
                    tag,
                    lambda x=x, lo=lo, hi=hi: myops.clamp(x, lo, hi),
                    lambda x=x, lo=lo, hi=hi: torch.clamp(x, lo, hi),
                    4 * n * es,
                ),
                (
                    "where",
                    tag,
                    lambda m=m, x=x, y=y: myops.where(m, x, y),
                    lambda m=m, x=x, y=y: torch.where(m, x, y),
                    3 * n * es + n,
                ),
                # pow on a positive base (a negative one with a fractional exponent is NaN)
                ("pow", tag, lambda p=pos, y=y: myops.pow(p, y), lambda p=pos, y=y: torch.pow(p, y), 3 * n * es),
                ("pow", tag + " ** 2.5", lambda p=pos: myops.pow(p, 2.5), lambda p=pos: torch.pow(p, 2.5), 2 * n * es),
            ]
            # the rest of the op table's generic unary and binary ops (SIG unary / binary /
            # scalar: a new row of the table is benchmarked without a line here), those defined
            # on positive inputs only (the op table's domain: log, sqrt, rsqrt) on pos
            named = {row[0] for row in more}
            for op in EW_OPS.values():
                a = pos if op.domain == "positive" else x
                if op.fn in named or op.entry != "generic" or a.dtype not in op.accepted:
                    continue
                ref = getattr(torch, op.name)
                if op.sig == "unary":
                    more.append((op.fn, tag, lambda a=a, f=op.packet: f(a), lambda a=a, r=ref: r(a), 2 * n * es))
                elif op.sig == "binary":
                    more.append(
                        (op.fn, tag, lambda a=a, y=y, f=op.packet: f(a, y), lambda a=a, y=y, r=ref: r(a, y), 3 * n * es)
                    )
                elif op.sig == "scalar":
                    more.append(
                        (op.fn, tag, lambda a=a, f=op.packet: f(a, 0.5), lambda a=a, r=ref: r(a, 0.5), 2 * n * es)
                    )
            if dname == "f32":
                more += [
                    (
                        "mul",
                        tag + " x[1:]",
                        lambda x=x, y=y: myops.mul(x[1:], y[:-1]),
                        lambda x=x, y=y: torch.mul(x[1:], y[:-1]),
                        3 * (n - 1) * es,
                    )
                ]
                more += [
                    (
                        "cast",
                        f"[2^{e}] f32->{tn}",
                        lambda x=x, to=to: myops.cast(x, to),
                        lambda x=x, to=to: x.to(to),
                        n * 6,
                    )
                    for to, tn in ((torch.float16, "f16"), (torch.bfloat16, "bf16"))
                ]
            else:
                more += [
                    (
                        "cast",
                        f"[2^{e}] {dname}->f32",
                        lambda x=x: myops.cast(x, torch.float32),
                        lambda x=x: x.to(torch.float32),
                        n * 6,
                    )
                ]
            for op, case, my, ref, nbytes in more:
                if (op, case) not in made:
                    out.append(Case(op, case, my, {"torch": ref}, bytes=nbytes, numel=n))
    # broadcast [32,64,56,56] + [1,64,1,1]
    for dname, dt in DTYPES.items():
        if quick and dname == "bf16":
            continue
        a = torch.randn(32, 64, 56, 56, device=device).to(dt)
        b = torch.randn(1, 64, 1, 1, device=device).to(dt)
        es = a.element_size()
        nb = 2 * a.numel() * es + b.numel() * es
        tgt = 1.3 if device.startswith("cuda") else 1.0
        out.append(
            Case(
                "add",
                f"[32,64,56,56]+[1,64,1,1] {dname}",
                lambda a=a, b=b: myops.add(a, b),
                {"torch": lambda a=a, b=b: torch.add(a, b)},
                bytes=nb,
                numel=a.numel(),
                target=tgt,
                headline=dname != "bf16",
            )
        )
        cl = a.contiguous(memory_format=torch.channels_last)
        out.append(
            Case(
                "mul",
                f"[32,64,56,56] cl*[1,64,1,1] {dname}",
                lambda a=cl, b=b: myops.mul(a, b),
                {"torch": lambda a=cl, b=b: torch.mul(a, b)},
                bytes=nb,
                numel=a.numel(),
                target=tgt,
                headline=dname != "bf16",
            )
        )
        if dname == "f32":
            cond = a > 0
            out.append(
                Case(
                    "where",
                    f"[32,64,56,56] cond,x,[1,64,1,1] {dname}",
                    lambda c=cond, a=a, b=b: torch.ops.myops.where(c, a, b),
                    {"torch": lambda c=cond, a=a, b=b: torch.where(c, a, b)},
                    bytes=nb + a.numel(),
                    numel=a.numel(),
                    target=tgt,
                )
            )
    return out
