"""Every float32 input of a unary op: myops against the correctly rounded result (the float64 op
rounded to float32) and against torch, as ulp histograms [0, 1, 2, >=3], the largest distance
from torch (with its input) and the count of special / denormal results whose bits differ from
torch's (NaN payloads included). Chunks of 2^24 bit patterns, [lo, hi)
of 256 (default all: about 15 min on one core).

    PYTHONPATH=python python tools/check_unary_f32.py exp [lo hi]
    MYOPS_CPU_ISA=avx2 PYTHONPATH=python python tools/check_unary_f32.py log 0 128
"""

import torch, myops, sys, time
import torch.nn.functional as F

torch.set_num_threads(1)
op = sys.argv[1]
lo, hi = (int(sys.argv[2]), int(sys.argv[3])) if len(sys.argv) > 3 else (0, 256)
OPS = {
    "exp": (myops.exp, torch.exp),
    "log": (myops.log, torch.log),
    "sigmoid": (myops.sigmoid, torch.sigmoid),
    "silu": (myops.silu, F.silu),
    "gelu_tanh": (lambda x: myops.gelu(x, approximate="tanh"), lambda x: F.gelu(x, approximate="tanh")),
    "tanh": (myops.tanh, torch.tanh),
}
mf, tf = OPS[op]


def ordered(t):
    i = t.view(torch.int32).to(torch.int64)
    return torch.where(i < 0, -(i & 0x7FFFFFFF), i)


def ulps(a, b):
    d = (ordered(a) - ordered(b)).abs()
    d[a.isnan() & b.isnan()] = 0
    d[a.isnan() ^ b.isnan()] = 1 << 40
    return d


hist_cr = torch.zeros(4, dtype=torch.int64)
hist_t = torch.zeros(4, dtype=torch.int64)
worst = None
worst_t = (0, None)  # the largest distance from torch and its (input, myops, torch)
spec_bad = 0
t0 = time.time()
C = 1 << 24
for c in range(lo, hi):
    x = torch.arange(c * C, (c + 1) * C, dtype=torch.int64).to(torch.int32).view(torch.float32)
    got = mf(x)
    tt = tf(x)
    cr = tf(x.double()).float()
    d = ulps(got, cr)
    hist_cr += torch.bincount(d.clamp(max=3), minlength=4)
    if int(d.max()) > 1 and worst is None:
        k = int(d.argmax())
        worst = (x[k].item(), got[k].item(), cr[k].item(), int(d[k]))
    dt = ulps(got, tt)
    hist_t += torch.bincount(dt.clamp(max=3), minlength=4)
    k = int(dt.argmax())
    if int(dt[k]) > worst_t[0]:
        worst_t = (int(dt[k]), (x[k].item(), got[k].item(), tt[k].item()))
    sp = ~torch.isfinite(tt) | (tt.abs() < 1.1754944e-38)
    spec_bad += int((got[sp].view(torch.int32) != tt[sp].view(torch.int32)).sum())
print(
    op,
    f"chunks {lo}-{hi}",
    "vs CR [0,1,2,>=3]:",
    hist_cr.tolist(),
    "vs torch:",
    hist_t.tolist(),
    "max vs torch",
    worst_t,
    "special/denormal bits differing from torch:",
    spec_bad,
    "worst",
    worst,
    f"{time.time() - t0:.0f}s",
    flush=True,
)
