"""What the drop-in costs a program that uses it from threads (docs/dropin.md, "Threads").

- a scope: ``with myops.replace_torch_ops(): pass``, enter + exit, after the first (target
  <= 5 us), and the first one in a fresh process (it registers every op's kernels);
- an op that is registered but not routed (after ``disable()``, or in a thread with no scope):
  torch's own call with the drop-in's kernels registered against the same call with them
  unregistered (``myops.replace.unregister()``), interleaved (target <= 100 ns more);
- a routed call, against the same call on torch's kernel, for scale.

    python benchmarks/bench_dropin_threads.py [--out benchmarks/results] [--rounds 15]

Writes ``<device>-<date>-dropin-threads.json`` and ``.md``; benchmarks/results_summary.py
renders docs/dropin.md's figures from the newest one. Times are per call: the median over
rounds of (round time / calls), each round a tight loop; ``spread`` is the rounds' min - max.
"""

import argparse
import datetime
import json
import os
import statistics
import subprocess
import sys
import time

import torch
import torchvision  # noqa: F401  (torchvision::nms is routed)
import torchvision.ops as tv_ops

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import myops  # noqa: E402
from runner import cpu_model, git_commit  # noqa: E402

SCOPE_TARGET_US = 5.0
UNROUTED_TARGET_NS = 100.0


def per_call(fn, calls, rounds):
    """Median and (min, max) over rounds of seconds per call."""
    out = []
    for _ in range(rounds):
        t0 = time.perf_counter()
        for _ in range(calls):
            fn()
        out.append((time.perf_counter() - t0) / calls)
    return statistics.median(out), (min(out), max(out))


def scope_cost(rounds):
    with myops.replace_torch_ops():  # the first one registers
        pass

    def scope():
        with myops.replace_torch_ops():
            pass

    def named():
        with myops.replace_torch_ops(only={"add", "where"}):
            pass

    m, spread = per_call(scope, 5000, rounds)
    mn, spread_n = per_call(named, 5000, rounds)
    return {
        "scope_default_us": m * 1e6,
        "scope_default_spread_us": [s * 1e6 for s in spread],
        "scope_named_us": mn * 1e6,
        "scope_named_spread_us": [s * 1e6 for s in spread_n],
    }


FIRST_SCOPE = """
import time, torch, torchvision, myops
t0 = time.perf_counter()
with myops.replace_torch_ops():
    pass
t1 = time.perf_counter()
with myops.replace_torch_ops():
    pass
print(t1 - t0, time.perf_counter() - t1)
"""


def first_scope():
    p = subprocess.run([sys.executable, "-c", FIRST_SCOPE], capture_output=True, text=True, check=True)
    first, second = map(float, p.stdout.split())
    return {"first_scope_ms": first * 1e3, "second_scope_us": second * 1e6}


def calls():
    g = torch.Generator().manual_seed(0)
    x, y = torch.randn(16, generator=g), torch.randn(16, generator=g)
    c = x > 0
    xy = torch.rand(4, 2, generator=g) * 10  # few boxes: the call's cost, not the kernel's
    b, s = torch.cat([xy, xy + 3], 1), torch.rand(4, generator=g)
    return {
        "add": lambda: torch.add(x, y),
        "relu": lambda: torch.relu(x),
        "where": lambda: torch.where(c, x, y),
        "nonzero": lambda: torch.nonzero(c),
        "nms": lambda: tv_ops.nms(b, s, 0.5),
    }


def unrouted_cost(rounds):
    """Per op: torch's call with the kernels unregistered, registered but not routed, routed."""
    fns = calls()
    out = {}
    for name, fn in fns.items():
        plain, registered, routed = [], [], []
        for _ in range(rounds):
            # interleaved: unregistered, registered (not routed), routed, the same loop each
            myops.replace.unregister()
            plain.append(per_call(fn, 4000, 1)[0])
            with myops.replace_torch_ops():
                pass  # registers; nothing routed after the block
            registered.append(per_call(fn, 4000, 1)[0])
            with myops.replace_torch_ops():
                routed.append(per_call(fn, 4000, 1)[0])
        diffs = [(r - p) * 1e9 for r, p in zip(registered, plain)]
        out[name] = {
            "torch_us": statistics.median(plain) * 1e6,
            "registered_us": statistics.median(registered) * 1e6,
            "unrouted_extra_ns": statistics.median(diffs),
            "unrouted_extra_spread_ns": [min(diffs), max(diffs)],
            "routed_us": statistics.median(routed) * 1e6,
        }
    with myops.replace_torch_ops():
        pass  # leave the kernels registered, as a program that used the drop-in has them
    return out


def markdown(rec):
    lines = [
        f"# The drop-in's cost under threads: {rec['device']}, {rec['date']}",
        "",
        f"torch {rec['torch']}, {rec['threads']} threads, commit `{rec['commit']}`; "
        f"`python benchmarks/bench_dropin_threads.py` (median of {rec['rounds']} rounds).",
        "",
        "| what | per call | target |",
        "|---|---|---|",
        f"| scope enter + exit, `replace_torch_ops()` | {rec['scope_default_us']:.2f} µs "
        f"({rec['scope_default_spread_us'][0]:.2f} – {rec['scope_default_spread_us'][1]:.2f}) | "
        f"≤ {SCOPE_TARGET_US:g} µs |",
        f"| scope enter + exit, `replace_torch_ops(only={{'add', 'where'}})` | {rec['scope_named_us']:.2f} µs "
        f"({rec['scope_named_spread_us'][0]:.2f} – {rec['scope_named_spread_us'][1]:.2f}) | "
        f"≤ {SCOPE_TARGET_US:g} µs |",
        f"| the first scope in a process (registers every op) | {rec['first_scope_ms']:.1f} ms | - |",
        "",
        "| op (16 elements; nms 4 boxes) | torch, kernels unregistered | registered, not routed | extra "
        "(spread) | routed |",
        "|---|---|---|---|---|",
    ]
    for name, r in rec["ops"].items():
        lo, hi = r["unrouted_extra_spread_ns"]
        lines.append(
            f"| {name} | {r['torch_us']:.2f} µs | {r['registered_us']:.2f} µs | {r['unrouted_extra_ns']:+.0f} ns "
            f"({lo:+.0f} – {hi:+.0f}) | {r['routed_us']:.2f} µs |"
        )
    lines += ["", f"Target for the extra: ≤ {UNROUTED_TARGET_NS:g} ns.", ""]
    return "\n".join(lines)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--out", default=os.path.join(HERE, "results"))
    p.add_argument("--rounds", type=int, default=15)
    args = p.parse_args(argv)
    rec = {
        "device": f"cpu: {cpu_model()}",
        "date": datetime.date.today().isoformat(),
        "torch": torch.__version__,
        "threads": torch.get_num_threads(),
        "commit": git_commit(),
        "rounds": args.rounds,
        **first_scope(),
        **scope_cost(args.rounds),
        "ops": unrouted_cost(args.rounds),
    }
    stem = os.path.join(args.out, f"cpu-{rec['date']}-dropin-threads")
    with open(stem + ".json", "w") as f:
        json.dump(rec, f, indent=1)
    with open(stem + ".md", "w") as f:
        f.write(markdown(rec))
    print(markdown(rec))
    print(f"wrote {stem}.json, {stem}.md")


if __name__ == "__main__":
    main()
