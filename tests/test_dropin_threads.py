"""The drop-in and the ops under threads (csrc/dropin/aten_override.cpp, docs/dropin.md "Threads").

- Every routed op, torchvision's nms included, called from several threads at once while scopes
  open and close in every thread, in one thread only, nested, or beside a thread that turns the
  process-wide enable() on and off: every result equal to torch's, no exception
  (tests/dropin_stress.py; `make stress-check` runs it for minutes with more threads).
- The dispatcher's tables change only at the first enable: the cause of the failures this
  guards against (a scope in one thread registering kernels while another thread dispatches).
- Threads calling the ops for the first time at once, in a fresh process: the lazy state (the
  CPU ISA choice, the op handles, the variant table, the first registration) gives every thread
  the result one thread gets.
"""

import os
import subprocess
import sys
import textwrap
import threading

import pytest
import torch
import torchvision  # noqa: F401  (loads torchvision::nms before the drop-in registers it)

import dropin_stress
import myops
from helpers import DEVICES
from myops.replace import ALL_OPS

HERE = os.path.dirname(os.path.abspath(__file__))


@pytest.fixture(autouse=True)
def nothing_left_routed():
    yield
    myops.disable()
    assert torch.ops.myops._override_enabled() == [] and torch.ops.myops._override_scoped() == []


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("form", dropin_stress.FORMS)
def test_stress(form, device):
    r = dropin_stress.run(form, threads=4, seconds=2.0, device=device)
    assert r.errors == [], f"{len(r.errors)} exceptions, e.g. {r.errors[:3]}"
    assert r.wrong == [], f"{len(r.wrong)} wrong values, e.g. {r.wrong[:3]}"
    # the run did what it says: every thread called every op, scopes (and toggles) happened
    assert r.calls >= 4 * len(ALL_OPS)
    assert r.scopes > 0
    assert r.toggles > 0 if form == "mixed_global" else r.toggles == 0


def test_stress_catches_a_wrong_value(monkeypatch):
    # the check itself: a routed op whose result differs from torch's is reported
    real = dropin_stress.cases

    def broken(device="cpu", seed=0):
        out = real(device, seed)
        c = out[ALL_OPS.index("add")]
        out[ALL_OPS.index("add")] = c._replace(torch_result=c.torch_result + 1, myops_result=c.myops_result + 1)
        return out

    monkeypatch.setattr(dropin_stress, "cases", broken)
    r = dropin_stress.run("one_scoped", threads=2, seconds=0.3)
    assert r.wrong and all("add" in w for w in r.wrong)


def dispatch_tables():
    ops = ["aten::nonzero", "aten::add.Tensor", "aten::where.self", "aten::relu", "torchvision::nms"]
    return {op: torch._C._dispatch_dump_table(op) for op in ops}


def test_scopes_in_other_threads_never_change_the_dispatcher():
    with myops.replace_torch_ops():  # the first registration, if no test made it yet
        pass
    before = dispatch_tables()
    seen = []
    stop = threading.Event()

    def scopes():
        while not stop.is_set():
            with myops.replace_torch_ops(ALL_OPS):
                with myops.enable({"add"}):
                    pass

    threads = [threading.Thread(target=scopes) for _ in range(2)]
    for t in threads:
        t.start()
    try:
        for _ in range(50):
            seen.append(dispatch_tables())
    finally:
        stop.set()
        for t in threads:
            t.join()
    assert all(t == before for t in seen)


FIRST_CALLS = textwrap.dedent(
    """
    import threading, sys
    import torch, torchvision
    sys.path.insert(0, {here!r})
    from helpers import rand

    torch.manual_seed({seed})
    x, y = torch.randn(4, 8, 33, 35), torch.randn(1, 8, 1, 35)
    cond = torch.rand(4, 8, 33, 35) > 0.5
    xy = torch.rand(200, 2) * 50
    boxes, scores = torch.cat([xy, xy + torch.rand(200, 2) * 20 + 1], 1), torch.rand(200)
    pooled = torch.nn.functional.max_pool2d(x, 3, 2, 1)
    other = torch.randn(1, 8, 1, pooled.shape[-1])
    # torch's results, before myops is imported
    expected = [
        torch.add(x, y), torch.where(cond, x, y), torch.nonzero(cond), torch.nonzero_static(cond.flatten(), size=9000),
        pooled + other, torch.diagonal_copy(x, 1, 2, 3), torchvision.ops.nms(boxes, scores, 0.5),
        torch.relu(x), x * y,
    ]
    import myops

    def calls():
        # the ops' first calls: direct, through torch.ops, and through the drop-in's first scope
        out = [
            myops.add(x, y), torch.ops.myops.where(cond, x, y), myops.nonzero(cond),
            myops.nonzero_static(cond.flatten(), size=9000), myops.max_pool2d_add(x, other),
            myops.diagonal(x, 1, 2, 3), torch.ops.myops.nms(boxes, scores, 0.5),
        ]
        with myops.replace_torch_ops():
            out += [torch.relu(x), x * y]
        return out

    n = {threads}
    barrier = threading.Barrier(n)
    results, errors = [None] * n, []

    def body(i):
        barrier.wait()
        try:
            results[i] = calls()
        except Exception as e:
            errors.append(repr(e))

    ts = [threading.Thread(target=body, args=(i,)) for i in range(n)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    assert not errors, errors
    for r in results:
        for a, e in zip(r, expected, strict=True):
            assert a.dtype == e.dtype and a.shape == e.shape and a.stride() == e.stride(), (a.shape, e.shape)
            assert torch.equal(a, e)
    print("ok", n)
    """
)


@pytest.mark.parametrize("isa", [None, "baseline"])
def test_first_calls_from_many_threads_at_once(isa):
    env = dict(os.environ)
    env.pop("MYOPS_CPU_ISA", None)
    if isa:
        env["MYOPS_CPU_ISA"] = isa
    seed = int.from_bytes(os.urandom(2), "little")
    code = FIRST_CALLS.format(here=HERE, seed=seed, threads=4)
    p = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=300)
    assert p.returncode == 0 and "ok 4" in p.stdout, p.stdout + p.stderr
