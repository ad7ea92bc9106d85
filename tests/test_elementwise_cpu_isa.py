"""Elementwise family, CPU builds: every CPU build (baseline, AVX2, AVX-512) this machine can run,
forced through MYOPS_CPU_ISA in a subprocess, against torch at the matching capability."""

import pytest


# Run in a subprocess with MYOPS_CPU_ISA set: every build's results are compared with torch's at
# the level a CPU with that build runs (ATEN_CPU_CAPABILITY, see test_cpu_build): bit for bit on
# the exact ops, within the suite's tolerance on gelu, silu and sigmoid. Sizes cover the vector loops, their tails, broadcast and strided rows, and a
# streamed (> 16 MiB) output.
_BUILD_SCRIPT = r"""
import sys, torch, myops
import torch.nn.functional as F
want = sys.argv[1]
assert torch.ops.myops._cpu_isa() == want, (torch.ops.myops._cpu_isa(), want)
sys.path.insert(0, sys.argv[2])
from helpers import (check_add_alpha_scalar_tail, check_gelu_edges, check_gradient_edges, check_number_first,
                     check_signed_zero_ties)
torch.manual_seed(0)

def ulp_ok(got, ref, dt):
    # the suite's compare(): 4 ulp (float32/64) or 1 ulp (half/bfloat16), or 3e-6 * max(1, |ref|)
    assert torch.equal(got.isnan(), ref.isnan()), dt
    ok = got.isnan() | (got == ref)
    bits = {torch.float32: torch.int32, torch.float64: torch.int64, torch.float16: torch.int16,
            torch.bfloat16: torch.int16}[dt]
    def ordered(t):
        i = t.view(bits).long()
        return torch.where(i < 0, -(i & ((1 << (8 * t.element_size() - 1)) - 1)), i)
    ulps = 1 if dt in (torch.float16, torch.bfloat16) else 4
    ok |= (ordered(got) - ordered(ref)).abs() <= ulps
    ok |= (got.double() - ref.double()).abs() <= 3e-6 * ref.double().abs().clamp(min=1)
    assert ok.all(), (dt, got[~ok][:4], ref[~ok][:4])

specials = torch.tensor([float("nan"), float("inf"), -float("inf"), -0.0, 0.0, 1e-40, -1e-40, -100.0,
                         -88.5, -30.0, 30.0, 100.0])
for dt in (torch.float32, torch.float64, torch.float16, torch.bfloat16, torch.int32, torch.uint8):
    for n in (1, 37, 4 * 37 * 5, 70001):
        x = (torch.randn(n) * 8).to(dt)
        if dt.is_floating_point and n > 20:
            x[3:3 + len(specials)] = specials.to(dt)
        y = (torch.randn(n) * 8).to(dt)
        z = (torch.randn(n) * 8).to(dt)
        c = torch.rand(n) > 0.5
        x3, y2 = x[: n - n % 37].view(-1, 37), y[:37]
        exact = [
            (lambda: myops.add(x, y), lambda: torch.add(x, y)),
            (lambda: myops.add(x3, y2[None]), lambda: torch.add(x3, y2[None])),
            (lambda: myops.mul(x3.t(), y2[:, None]), lambda: torch.mul(x3.t(), y2[:, None])),
            (lambda: myops.maximum(x[1:], y[:-1]), lambda: torch.maximum(x[1:], y[:-1])),
            (lambda: myops.minimum(x, y), lambda: torch.minimum(x, y)),
            (lambda: myops.where(c, x, y), lambda: torch.where(c, x, y)),
            (lambda: myops.cast(x, torch.float16), lambda: x.to(torch.float16)),
            (lambda: myops.cast(x, torch.bfloat16), lambda: x.to(torch.bfloat16)),
            (lambda: myops.cast(x, torch.float32), lambda: x.to(torch.float32)),
            (lambda: myops.clamp(x, y, y + 3), lambda: torch.clamp(x, y, y + 3)),
        ]
        if dt != torch.uint8:
            exact.append((lambda: myops.sub(x, y), lambda: torch.sub(x, y)))
        if dt != torch.uint8:
            exact.append((lambda: myops.relu(x[1:]), lambda: torch.relu(x[1:])))
        for my, ref in exact:
            got, want_ = my(), ref()
            assert got.dtype == want_.dtype and got.stride() == want_.stride(), dt
            assert torch.equal(got, want_) or (got.is_floating_point() and torch.equal(got.isnan(), want_.isnan())
                                               and torch.equal(got.nan_to_num(), want_.nan_to_num())), (dt, n)
        if dt.is_floating_point:
            # add / sub with alpha and addcmul: fused (rounded once) in torch's AVX2 / AVX-512
            # loops, rounded after each operation in its default build (the baseline build's
            # peer); half / bfloat16 add with alpha in torch's own two orders. Bit for bit, with
            # a 0-d operand (a stride-0 row in torch's loop), broadcast and stepped rows.
            s0 = y[-1].clone()
            for my, ref in [(lambda: myops.add(x, y, alpha=3), lambda: torch.add(x, y, alpha=3)),
                            (lambda: myops.sub(x, y), lambda: torch.sub(x, y)),
                            (lambda: myops.sub(x[1:], y[:-1], alpha=0.3), lambda: torch.sub(x[1:], y[:-1], alpha=0.3)),
                            (lambda: myops.add(x3, y2[None], alpha=-1.7), lambda: torch.add(x3, y2[None], alpha=-1.7)),
                            (lambda: myops.add(s0, x, alpha=2.5), lambda: torch.add(s0, x, alpha=2.5)),
                            (lambda: myops.add(x3.t(), y2[:, None], alpha=3), lambda: torch.add(x3.t(), y2[:, None], alpha=3)),
                            (lambda: myops.addcmul(x, y, z, value=0.5), lambda: torch.addcmul(x, y, z, value=0.5)),
                            (lambda: myops.addcmul(x, y, z), lambda: torch.addcmul(x, y, z)),
                            (lambda: myops.addcmul(x[1:], y[:-1], s0, value=-1.7), lambda: torch.addcmul(x[1:], y[:-1], s0, value=-1.7)),
                            (lambda: myops.addcmul(x3, y2[None], x3.t()[:, :1].t(), value=0.3),
                             lambda: torch.addcmul(x3, y2[None], x3.t()[:, :1].t(), value=0.3))]:
                got, want_ = my(), ref()
                assert got.stride() == want_.stride() and torch.equal(got.nan_to_num(), want_.nan_to_num()), (dt, n)
            for got, ref in [(myops.gelu(x), F.gelu(x)),
                             (myops.gelu(x, approximate="tanh"), F.gelu(x, approximate="tanh")),
                             (myops.silu(x[1:]), F.silu(x[1:])), (myops.sigmoid(x), torch.sigmoid(x))]:
                ulp_ok(got, ref, dt)
    if dt == torch.float32:
        big = torch.randn((1 << 22) + 37)  # 16 MiB outputs: streamed stores
        assert torch.equal(myops.add(big[1:], big[:-1]), torch.add(big[1:], big[:-1]))
        ulp_ok(myops.sigmoid(big[3:]), torch.sigmoid(big[3:]), dt)

# docs/exactness.md: the stated bounds of gelu (both forms), silu and sigmoid against torch, on a
# 2e6-point grid over [-12, 12], through myops' vector loop and its scalar loop (contiguous and
# stepped input) against torch's two: (absolute, ulp for x >= -2, ulp everywhere or None)
BOUNDS = {
    torch.float32: {"gelu": (1.5e-6, 76, None), "gelu_tanh": (1.5e-6, 17, None), "silu": (2e-6, 4, 4),
                    "sigmoid": (1.5e-6, 4, 4)},
    torch.float64: {"gelu": (2e-15, 16, None), "gelu_tanh": (2e-15, 16, None), "silu": (2e-15, 2, 2),
                    "sigmoid": (2e-15, 2, 2)},
}
FNS = {"gelu": (myops.gelu, F.gelu), "gelu_tanh": (lambda t: myops.gelu(t, approximate="tanh"),
                                                   lambda t: F.gelu(t, approximate="tanh")),
       "silu": (myops.silu, F.silu), "sigmoid": (myops.sigmoid, torch.sigmoid)}
def ordered(t):
    i = t.contiguous().view({2: torch.int16, 4: torch.int32, 8: torch.int64}[t.element_size()]).long()
    return torch.where(i < 0, -(i & ((1 << (8 * t.element_size() - 1)) - 1)), i)
for dt, bounds in BOUNDS.items():
    g = torch.linspace(-12, 12, 2_000_001, dtype=torch.float64).to(dt)
    big = torch.empty(2 * g.numel(), dtype=dt)
    big[::2] = g
    for name, (absolute, ulp_right, ulp_all) in bounds.items():
        fm, ft = FNS[name]
        for mine in (fm(g), fm(big[::2])):
            for theirs in (ft(g), ft(big[::2])):
                ulps = (ordered(mine) - ordered(theirs)).abs()
                assert (mine.double() - theirs.double()).abs().max().item() <= absolute, (dt, name)
                assert ulps[g >= -2].max().item() <= ulp_right, (dt, name, ulps[g >= -2].max().item())
                assert ulp_all is None or ulps.max().item() <= ulp_all, (dt, name, ulps.max().item())
# sigmoid and silu where exp(-x) nears and passes float's overflow (issue #56): torch's result
# is a denormal, then 0 (sigmoid) or -0 (silu), and so is ours, within the ulp bounds above with
# no absolute allowance, through the vector loop (a lane of the tail in a vector of ordinary
# inputs too) and the scalar one; bfloat16 within 1 ulp (its denormals, which the AVX512-BF16
# conversion flushes); sigmoid's gradient, from that result, within the same bound
tail = torch.cat([torch.linspace(-120, -60, 60_001), torch.tensor([-1e30, -float("inf")])])
for dt, ulp in ((torch.float32, 4), (torch.bfloat16, 1)):
    t = tail.to(dt)
    mixed = torch.randn(t.numel(), dtype=dt)
    mixed[::7] = t[::7]
    for name in ("sigmoid", "silu"):
        fm, ft = FNS[name]
        for inp in (t, mixed, t[::3]):
            mine, theirs = fm(inp), ft(inp)
            assert torch.equal(mine.isnan(), theirs.isnan()), (dt, name)
            ok = mine.isnan() | ((ordered(mine) - ordered(theirs)).abs() <= ulp)
            assert ok.all(), (dt, name, inp[~ok][:3].tolist(), mine[~ok][:3].tolist(), theirs[~ok][:3].tolist())
    xg = t.clone().requires_grad_()
    xt = t.clone().requires_grad_()
    myops.sigmoid(xg).backward(torch.ones_like(t))
    torch.sigmoid(xt).backward(torch.ones_like(t))
    assert ((ordered(xg.grad) - ordered(xt.grad)).abs() <= ulp).all(), dt
# gelu (erf), float32: in the negative tail (x < -3) within 5e-7 of the exact value (float64)
g = torch.linspace(-12, 12, 2_000_001)
exact = g.double() * 0.5 * torch.special.erfc(-g.double() / 2 ** 0.5)
assert (myops.gelu(g).double() - exact)[g < -3].abs().max().item() < 5e-7

# -0.0 / +0.0 ties in maximum / minimum / clamp: broken as torch's loops break them at this level
# add / sub with alpha beside a stride-0 operand (torch's scalar tail), gelu's edges (oneDNN or not)
for dt in (torch.float32, torch.float64, torch.float16, torch.bfloat16):
    check_signed_zero_ties(dt)
    check_add_alpha_scalar_tail(dt)
    check_gelu_edges(dt)
# a number first beside float16 / bfloat16 (not rounded to them), gradients at torch's edges
for dt in (torch.float16, torch.bfloat16):
    check_number_first(dt)
for dt in (torch.float32, torch.float16):
    check_gradient_edges(dt)
print("ok")
"""


def _cpu_builds():
    """The CPU builds this machine can run (core/cpu_isa.h), best last."""
    import subprocess
    import sys

    order = ["baseline", "avx2", "avx512", "avx512_bf16"]
    best = subprocess.run(
        [sys.executable, "-c", "import torch, myops; print(torch.ops.myops._cpu_isa())"],
        capture_output=True,
        text=True,
        env=_env_without_isa(),
    ).stdout.strip()
    return order[: order.index(best) + 1] if best in order else ["baseline"]


def _env_without_isa(**extra):
    import os

    env = {k: v for k, v in os.environ.items() if k not in ("MYOPS_CPU_ISA", "MYOPS_CPU_BASELINE")}
    env.update(extra)
    return env


@pytest.mark.parametrize("isa", ["baseline", "avx2", "avx512", "avx512_bf16"])
def test_cpu_build(isa):
    # The CPU loops are built for the baseline, AVX2 and (floating dtypes) AVX-512, picked at run
    # time; MYOPS_CPU_ISA forces one. The other test files run the best build this CPU has; this runs
    # each build the CPU can run against torch. A build is skipped only where the CPU lacks it.
    import subprocess
    import sys

    import os

    if isa not in _cpu_builds():
        pytest.skip(f"this CPU cannot run the {isa} build")
    # against torch at the level a CPU with that build runs it: torch's default kernels on a CPU
    # without AVX2 (the baseline build's peer), its AVX2 / AVX-512 ones otherwise
    peer = {"baseline": "default", "avx2": "avx2"}.get(isa, "avx512")
    res = subprocess.run(
        [sys.executable, "-c", _BUILD_SCRIPT, isa, os.path.dirname(__file__)],
        env=_env_without_isa(MYOPS_CPU_ISA=isa, ATEN_CPU_CAPABILITY=peer),
        capture_output=True,
        text=True,
    )
    assert res.returncode == 0 and res.stdout.strip() == "ok", res.stderr[-3000:]


def test_cpu_isa_switch():
    # MYOPS_CPU_BASELINE=1 is an alias of MYOPS_CPU_ISA=baseline; a bad value or a build the CPU
    # cannot run is a RuntimeError at the first CPU call, naming the variable; unset: the best.
    import subprocess
    import sys

    def isa_of(**env):
        code = (
            "import torch, myops\ntry:\n    print(torch.ops.myops._cpu_isa())\nexcept RuntimeError as e:\n"
            "    print('error:', e)\ntry:\n    myops.relu(torch.ones(3))\nexcept RuntimeError as e:\n"
            "    print('error:', e)\n"
        )
        res = subprocess.run([sys.executable, "-c", code], env=_env_without_isa(**env), capture_output=True, text=True)
        assert res.returncode == 0, res.stderr[-2000:]
        return res.stdout.strip().splitlines()

    builds = _cpu_builds()
    assert isa_of() == [builds[-1]]
    assert isa_of(MYOPS_CPU_BASELINE="1") == ["baseline"]
    assert isa_of(MYOPS_CPU_ISA="AVX2" if "avx2" in builds else "baseline") == [builds[min(1, len(builds) - 1)]]
    out = isa_of(MYOPS_CPU_ISA="sse9")
    assert len(out) == 2 and all(
        o.startswith("error:") and "MYOPS_CPU_ISA='sse9' is not a CPU build" in o for o in out
    ), out
    if builds[-1] != "avx512_bf16":
        out = isa_of(MYOPS_CPU_ISA="avx512_bf16")
        assert len(out) == 2 and all("which this CPU cannot run" in o for o in out), out
