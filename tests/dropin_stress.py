"""The drop-in under threads: every routed op (torchvision's nms included) called from several
Python threads at once, some of them inside ``myops.replace_torch_ops()`` scopes, nested, or
beside a thread that turns the process-wide ``myops.enable()`` on and off; every result compared
with torch's for the same inputs, every exception kept.

Used by tests/test_dropin_threads.py (a few seconds per form, in CI) and, for minutes and more
threads, by ``make stress-check``:

    python tests/dropin_stress.py --seconds 60 --threads 8 [--device cuda]

Expected results are computed before any thread starts: torch's own kernels for every call, and
myops' result for the ops that are routed only when named (a few ulp from torch:
docs/exactness.md) where the calling thread's scope names them. Each call's result is then
compared bit for bit (values, dtype, shape, strides) with the one it must equal.
"""

import argparse
import os
import sys
import threading
import time
from typing import Callable, Dict, List, NamedTuple, Optional, Tuple

import torch
import torchvision  # noqa: F401  (torchvision::nms is one of the routed ops)
import torchvision.ops as tv_ops

import myops
from myops._table import EW_OPS
from myops.replace import ALL_OPS, DEFAULT_OPS

# The thread layouts (FORMS): which threads open scopes, how, and whether one thread toggles
# the process-wide enable() meanwhile.
FORMS = ("all_scoped", "one_scoped", "nested", "mixed_global")


class Case(NamedTuple):
    op: str  # the routed op's myops name (ALL_OPS)
    call: Callable[[], object]  # the torch call a user makes
    torch_result: object  # its result on torch's kernels
    myops_result: object  # its result when routed (torch's for the bit-exact ops)


def _ew_call(op, device: str, gen: torch.Generator) -> Tuple[Callable[[], object], Callable[[], object]]:
    """(the aten call, the same call on myops' op) for the table's routed op `op`."""
    name, _, overload = op.aten.partition(".")
    packet = getattr(getattr(torch.ops.aten, name), overload or "default")
    n = 513  # odd: the vector loops' tails run too

    def t(positive=False, dtype=torch.float32):
        x = torch.randn(n, generator=gen, dtype=torch.float64).to(dtype).to(device)
        return x.abs() + 0.5 if positive else x

    positive = op.domain == "positive"
    if op.fn == "where":
        args: Tuple = (t() > 0, t(), t())
    elif op.fn == "clamp":
        lo = t()
        args = (t(), lo, lo + 1)
    elif op.fn == "addcmul":
        args = (t(), t(), t())
    elif "scalar" in op.sig:  # a Scalar overload: a tensor and a number
        args = (t(positive), 0.75)
    elif op.arity == 1:
        args = (t(positive),)
    else:
        args = tuple(t(positive) for _ in range(op.arity))
    return (lambda: packet(*args)), (lambda: op.packet(*args))


def cases(device: str = "cpu", seed: int = 0) -> List[Case]:
    """One call for every op of ALL_OPS on `device`, with its torch and myops results."""
    gen = torch.Generator().manual_seed(seed)
    out = []
    for fn in ALL_OPS:
        if fn == "nonzero":
            x = torch.rand(64, 33, generator=gen).to(device) > 0.6
            call, mine = (lambda x=x: torch.nonzero(x)), (lambda x=x: torch.ops.myops.nonzero(x))
        elif fn == "nonzero_static":
            x = torch.rand(1000, generator=gen).to(device) > 0.5
            call = lambda x=x: torch.nonzero_static(x, size=700)  # noqa: E731
            mine = lambda x=x: torch.ops.myops.nonzero_static(x, 700, -1)  # noqa: E731
        elif fn == "nms":
            xy = torch.rand(300, 2, generator=gen) * 100
            boxes = torch.cat([xy, xy + torch.rand(300, 2, generator=gen) * 30 + 1], 1).to(device)
            scores = torch.rand(300, generator=gen).to(device)
            call = lambda b=boxes, s=scores: tv_ops.nms(b, s, 0.5)  # noqa: E731
            mine = lambda b=boxes, s=scores: torch.ops.myops.nms(b, s, 0.5)  # noqa: E731
        else:
            call, mine = _ew_call(EW_OPS[fn], device, gen)
        out.append(Case(fn, call, call(), mine() if fn not in DEFAULT_OPS else call()))
    return out


def _others(device: str, gen: torch.Generator) -> List[Tuple[str, Callable[[], object], object]]:
    """Torch ops the drop-in does not route, called beside the routed ones (a user's server
    runs them too): their results must not change either."""
    x = torch.randn(2, 8, 33, 33, generator=gen).to(device)
    rois = torch.tensor([[0, 1.0, 2.0, 20.0, 25.0], [1, 4.0, 0.5, 30.0, 31.0]], device=device)
    calls = [
        ("max_pool2d", lambda: torch.nn.functional.max_pool2d(x, 3, 2, 1)),
        ("diagonal", lambda: torch.diagonal(x, 0, 2, 3).contiguous()),
        ("roi_align", lambda: tv_ops.roi_align(x, rois, (7, 7), 0.5, 2, True)),
        ("add_", lambda: x.clone().add_(1.0)),
    ]
    return [(name, fn, fn()) for name, fn in calls]


_INT_OF = {2: torch.int16, 4: torch.int32, 8: torch.int64}


def _same(a, b) -> bool:
    """Bit for bit: values (a float's bits, signed zeros and NaNs included), dtype, shape and
    strides; tuples element by element."""
    if isinstance(a, torch.Tensor):
        if not isinstance(b, torch.Tensor) or (a.dtype, a.shape, a.stride()) != (b.dtype, b.shape, b.stride()):
            return False
        if a.is_floating_point():
            a, b = a.view(_INT_OF[a.element_size()]), b.view(_INT_OF[b.element_size()])
        return torch.equal(a, b)
    return type(a) is type(b) and len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))


class Report(NamedTuple):
    form: str
    threads: int
    seconds: float
    calls: int
    scopes: int  # scope enters (every one exited)
    toggles: int  # process-wide enable() / disable() pairs
    errors: List[str]  # "thread: op: exception"
    wrong: List[str]  # "thread: op (routed|torch)"


def run(form: str, threads: int = 4, seconds: float = 3.0, device: str = "cpu", seed: Optional[int] = None) -> Report:
    """Runs one form for `seconds` with `threads` worker threads; returns what it saw."""
    if form not in FORMS:
        raise ValueError(f"unknown form {form!r}; the forms are {FORMS}")
    seed = int.from_bytes(os.urandom(4), "little") if seed is None else seed
    work = cases(device, seed)
    others = _others(device, torch.Generator().manual_seed(seed + 1))
    every = frozenset(ALL_OPS)
    stop = threading.Event()
    lock = threading.Lock()
    errors: List[str] = []
    wrong: List[str] = []
    totals: Dict[str, int] = {"calls": 0, "scopes": 0, "toggles": 0}
    start = threading.Barrier(threads + (1 if form == "mixed_global" else 0))

    def one_call(tid, label, expected, fn, errs, bad):
        try:
            r = fn()
        except Exception as e:  # noqa: BLE001 - every exception is a failure, kept
            errs.append(f"thread {tid}: {label}: {type(e).__name__}: {str(e)[:300]}")
            return
        if not _same(r, expected):
            bad.append(f"thread {tid}: {label}")

    def expected(case, routed_here):
        # a routed approximate op gives myops' result; every other call torch's
        routed = case.op in routed_here and case.op not in DEFAULT_OPS
        return f"{case.op} ({'routed' if routed else 'torch'})", case.myops_result if routed else case.torch_result

    def worker(tid):
        errs: List[str] = []
        bad: List[str] = []
        n = scopes = 0
        scoped = form in ("all_scoped", "nested", "mixed_global") or (form == "one_scoped" and tid == 0)
        start.wait()
        while not stop.is_set():
            for case in work:
                # a scope around each call: as many enters and exits per second as calls
                if not scoped:
                    one_call(tid, *expected(case, frozenset()), case.call, errs, bad)
                elif form == "nested":
                    with myops.replace_torch_ops():
                        with myops.replace_torch_ops(every):
                            one_call(tid, *expected(case, every), case.call, errs, bad)
                        one_call(tid, *expected(case, DEFAULT_OPS), case.call, errs, bad)
                    scopes += 2
                    n += 1
                else:
                    with myops.replace_torch_ops(every):
                        one_call(tid, *expected(case, every), case.call, errs, bad)
                    scopes += 1
                n += 1
            for name, fn, want in others:
                one_call(tid, name, want, fn, errs, bad)
                n += 1
        with lock:
            errors.extend(errs)
            wrong.extend(bad)
            totals["calls"] += n
            totals["scopes"] += scopes

    def toggler():
        # the process-wide routing of the bit-exact ops, on and off
        k = 0
        start.wait()
        while not stop.is_set():
            myops.enable()
            time.sleep(0.001)
            myops.disable()
            time.sleep(0.001)
            k += 1
        with lock:
            totals["toggles"] += k

    pool = [threading.Thread(target=worker, args=(i,), daemon=True) for i in range(threads)]
    if form == "mixed_global":
        pool.append(threading.Thread(target=toggler, daemon=True))
    t0 = time.perf_counter()
    for t in pool:
        t.start()
    time.sleep(seconds)
    stop.set()
    for t in pool:
        t.join()
    myops.disable()
    return Report(
        form, threads, time.perf_counter() - t0, totals["calls"], totals["scopes"], totals["toggles"], errors, wrong
    )


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--seconds", type=float, default=60.0, help="per form")
    p.add_argument("--threads", type=int, default=8)
    p.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    p.add_argument("--form", action="append", choices=FORMS, help="default: every form")
    args = p.parse_args(argv)
    failed = 0
    for form in args.form or FORMS:
        r = run(form, args.threads, args.seconds, args.device)
        print(
            f"{form:14s} {r.threads} threads {r.seconds:6.1f} s: {r.calls} calls, {r.scopes} scopes, "
            f"{r.toggles} enable/disable; {len(r.errors)} exceptions, {len(r.wrong)} wrong values"
        )
        for line in (r.errors + r.wrong)[:10]:
            print("   ", line)
        failed += bool(r.errors or r.wrong)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
