"""What has run where, and how fast: the README's status lines and speed table, and the GPU
tables of docs/performance.md, rendered from the newest files in benchmarks/results/.

    python benchmarks/results_summary.py           # rewrite the marked blocks of README.md and docs/performance.md
    python benchmarks/results_summary.py --check   # exit 1 (and show the diff) when a committed block differs

Each block sits between ``<!-- results:NAME begin -->`` and ``<!-- results:NAME end -->`` and is
not edited by hand: a new results file changes it here, and tests/test_docs.py fails until the
rendered text is committed. What is read:

- a GPU's newest session record (``<gpu>-<date>-session.json``, gpu/gpu_session.py):
  device, torch, commit, the CUDA tests passed / failed / skipped, the compute-sanitizer units
  and their ERROR SUMMARY total (the counting of gpu/gpu_results.py);
- the runner's tables (``<device>-<date>[-what].json``, benchmarks/runner.py): for each device
  (the CPU, each GPU by name) and family, the newest table that ran the family (the latest date;
  on the same date the one with more rows of it, then the later name). A CPU table made with a
  forced myops CPU build (``MYOPS_CPU_ISA`` in its ``env``) compares builds and is left out.
  A family's ratios are torch ÷ myops against each row's reference (its first baseline: eager
  torch or torchvision) and against Inductor: the median and (min – max); its targets are the
  runner's (``runner.meets``), grouped as the table's own "Targets" section groups them;
- the newest CPU release check (``release-check-<date>.md``): its Python / result table.
"""

import argparse
import difflib
import glob
import json
import os
import re
import statistics
import sys
from typing import Dict, List, Optional, Tuple

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
RESULTS = os.path.join(HERE, "results")
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(ROOT, "gpu"))

from gpu_results import test_table  # noqa: E402
from runner import INDUCTOR, meets, reference  # noqa: E402

# the files that hold marked blocks, and the blocks of each
TARGETS = {
    "README.md": ("status", "speed"),
    os.path.join("docs", "performance.md"): ("gpu", "speed-docs"),
    os.path.join("docs", "dropin.md"): ("dropin-threads",),
}
FAMILY_ORDER = ["nonzero", "elementwise", "max_pool2d_add", "diagonal", "latency", "nms", "postprocess", "detector"]
FAMILY_ORDER += ["deploy"]
# what a family's rows time, where its name does not say it
FAMILY_NOTE = {
    "latency": "every op at 10^3 / 10^4 elements",
    "postprocess": "multiclass_nms_static vs its torchvision reference",
    "detector": "a torchvision detector under enable()",
    "deploy": "make_static(model) vs eager torchvision",
}


def _load(path):
    with open(path) as f:
        return json.load(f)


def tables(results=RESULTS) -> List[dict]:
    """The runner's reports: {'name', 'meta', 'rows', 'device'} each, the device being 'CPU' or
    the GPU's name; forced-build CPU tables left out."""
    out = []
    for path in sorted(glob.glob(os.path.join(results, "*.json"))):
        if path.endswith("-session.json"):
            continue
        data = _load(path)
        if not isinstance(data, dict) or "meta" not in data or "rows" not in data:
            continue
        meta = data["meta"]
        if meta["device"] == "cpu":
            if "MYOPS_CPU_ISA" in (meta.get("env") or ""):
                continue
            device = "CPU"
        else:
            device = meta["device_name"]
        out.append(
            {"name": os.path.basename(path)[: -len(".json")], "meta": meta, "rows": data["rows"], "device": device}
        )
    return out


def newest_per_family(tabs: List[dict]) -> Dict[str, Dict[str, dict]]:
    """device -> family -> the table that holds the family's newest run."""
    best: Dict[Tuple[str, str], Tuple[tuple, dict]] = {}
    for t in tabs:
        counts: Dict[str, int] = {}
        for r in t["rows"]:
            counts[r["family"]] = counts.get(r["family"], 0) + 1
        for fam, n in counts.items():
            key = (t["meta"]["date"], n, t["name"])
            if (t["device"], fam) not in best or key > best[(t["device"], fam)][0]:
                best[(t["device"], fam)] = (key, t)
    out: Dict[str, Dict[str, dict]] = {}
    for (dev, fam), (_, t) in best.items():
        out.setdefault(dev, {})[fam] = t
    return out


def fmt(r: float) -> str:
    return f"{r:.2f}×" if r < 10 else f"{r:.1f}×"


def spread(values: List[float]) -> str:
    """'median (min – max)' or the one value."""
    if not values:
        return "not run"
    if len(values) == 1:
        return fmt(values[0])
    return f"{fmt(statistics.median(values))} ({fmt(min(values))} – {fmt(max(values))})"


def span(values: List[float]) -> str:
    lo, hi = fmt(min(values)), fmt(max(values))
    return lo if lo == hi else f"{lo} – {hi}"


def target_groups(rows: List[dict]) -> List[dict]:
    """The runner's target groups (family, op, target): the ratios, the floor fractions, how many
    rows meet the target."""
    groups: Dict[tuple, dict] = {}
    for r in rows:
        if not r.get("target") or reference(r) is None:
            continue
        key = (r["family"], r["label"], r["target"], r.get("floor_target"))
        g = groups.setdefault(
            key,
            {"family": key[0], "op": key[1], "target": key[2], "floor": key[3], "ratios": [], "fracs": [], "met": 0},
        )
        g["ratios"].append(reference(r)["ratio"])
        g["fracs"].append(r.get("floor_frac", 0.0))
        g["met"] += bool(meets(r))
    return list(groups.values())


def goal(g: dict) -> str:
    return f"≥ {g['target']}×" + (f", ≥ {100 * g['floor']:.0f}% of floor" if g["floor"] else "")


def measured(g: dict) -> str:
    text = span(g["ratios"])
    if g["floor"]:
        lo, hi = round(100 * min(g["fracs"])), round(100 * max(g["fracs"]))
        text += f", {lo}%" + ("" if lo == hi else f" – {hi}%") + " of floor"
    return text


def targets_cell(rows: List[dict]) -> str:
    groups = target_groups(rows)
    if not groups:
        return "no target set"
    missed = [f"{g['op']} {measured(g)} ({goal(g)})" for g in groups if g["met"] < len(g["ratios"])]
    met = [g["op"] for g in groups if g["met"] == len(g["ratios"])]
    parts = []
    if missed:
        parts.append("**missed:** " + ", ".join(missed))
    if met:
        parts.append("met: " + ", ".join(dict.fromkeys(met)))
    return "; ".join(parts)


def link(name: str, ext: str = ".md", text: Optional[str] = None, docs: bool = False) -> str:
    """A link to a results file: Markdown from the README, the {repo} role from a docs page."""
    text = text or name + ext
    return f"{{repo}}`{text} <benchmarks/results/{name}{ext}>`" if docs else f"[{text}](benchmarks/results/{name}{ext})"


def device_order(newest: Dict[str, Dict[str, dict]]) -> List[str]:
    """The GPUs, the newest table first (then by name, descending), then the CPU."""
    gpus = [d for d in newest if d != "CPU"]
    gpus.sort(key=lambda d: (max(t["meta"]["date"] for t in newest[d].values()), d), reverse=True)
    return gpus + (["CPU"] if "CPU" in newest else [])


# ---- the README's status lines -----------------------------------------------------------------


def sessions(results=RESULTS) -> Dict[str, dict]:
    """GPU name -> its newest session record (with the file's stem under 'stem')."""
    out: Dict[str, dict] = {}
    for path in sorted(glob.glob(os.path.join(results, "*-session.json"))):
        rec = _load(path)
        dev = rec["env"]["device"]
        if dev not in out or (rec["env"]["date"], rec.get("session", "")) >= (
            out[dev]["env"]["date"],
            out[dev].get("session", ""),
        ):
            rec["stem"] = os.path.basename(path)[: -len("-session.json")]
            out[dev] = rec
    return out


def session_counts(rec: dict) -> Tuple[Dict[str, int], dict]:
    """({outcome: n} over the CUDA tests, {'units', 'failed', 'errors'} over the sanitizer units)."""
    totals: Dict[str, int] = {}
    for row in test_table(rec).values():
        for k, v in row.items():
            totals[k] = totals.get(k, 0) + v
    san = [u for u in rec.get("units", {}).values() if u.get("part") == "sanitize"]
    return totals, {
        "units": len(san),
        "failed": sum(u.get("status") == "failed" for u in san),
        "cut": sum(u.get("status") in ("cut", "running", "not started") for u in san),
        "errors": sum(u.get("errors") or 0 for u in san),
    }


def release_check(results=RESULTS) -> Optional[Tuple[str, List[Tuple[str, str]]]]:
    """(file stem, [(python, result)]) of the newest release check."""
    files = sorted(glob.glob(os.path.join(results, "release-check-*.md")))
    if not files:
        return None
    rows, head = [], None
    for line in open(files[-1]).read().splitlines():
        if not line.startswith("|") or set(line) <= set("|-: "):
            continue
        cells = [c.strip() for c in line.strip("|").split("|")]
        if head is None:
            head = cells
        elif "Python" in head and "result" in head:
            rows.append((cells[head.index("Python")], cells[head.index("result")]))
    return os.path.basename(files[-1])[:-3], rows


def render_status(results=RESULTS) -> str:
    tabs = tables(results)
    newest = newest_per_family(tabs)
    lines = []
    recs = sessions(results)
    for dev in sorted(recs, key=lambda d: (recs[d]["env"]["date"], recs[d].get("session", "")), reverse=True):
        rec = recs[dev]
        env, stem = rec["env"], rec["stem"]
        tests, san = session_counts(rec)
        bench = newest.get(dev, {})
        groups = [g for t in {id(t): t for t in bench.values()}.values() for g in target_groups(t["rows"])]
        met = sum(g["met"] == len(g["ratios"]) for g in groups)
        lines.append(
            f"- **{dev}** ({env['date']}; torch {env['torch']}, CUDA {env['torch_cuda']}; myops `{env['commit']}`): "
            f"CUDA tests {tests.get('passed', 0)} passed, {tests.get('failed', 0)} failed, "
            f"{tests.get('skipped', 0)} skipped"
            + (f", {tests['error']} errors" if tests.get("error") else "")
            + (f", {tests['not run']} not run" if tests.get("not run") else "")
            + f" ({link(stem + '-tests', text='tests')}); compute-sanitizer: {san['errors']} errors in "
            f"{san['units']} units"
            + (f" ({san['failed']} with a failed test)" if san["failed"] else "")
            + (f" ({san['cut']} cut short)" if san["cut"] else "")
            + f"; speed: {met} of {len(groups)} targets met ({link(stem, text='table')})."
        )
    cpu = newest.get("CPU", {})
    if cpu:
        names = sorted({t["name"] for t in cpu.values()}, key=lambda n: n)
        dates = sorted({t["meta"]["date"] for t in cpu.values()})
        torch_v = sorted({t["meta"]["torch"] for t in cpu.values()})
        lines.append(
            f"- **CPU** benchmarks: {len(names)} tables, {dates[0]} to {dates[-1]} (torch {', '.join(torch_v)}); "
            "each family's newest in the speed table below."
        )
    rc = release_check(results)
    if rc:
        stem, rows = rc
        lines.append(
            f"- **CPU** release check ({link(stem, text=stem)}): "
            + ", ".join(f"Python {py} {res}" for py, res in rows)
            + "."
        )
    return "\n".join(lines)


# ---- the README's speed table ------------------------------------------------------------------


def cpu_name(meta: dict) -> str:
    return "CPU: " + re.sub(r"\(R\)| Processor", "", meta.get("cpu_model", "?")).strip()


def render_speed(results=RESULTS, docs: bool = False) -> str:
    newest = newest_per_family(tables(results))
    out = [
        "| device | family (cases) | vs eager | vs Inductor | targets | table (date, commit) |",
        "|---|---|---|---|---|---|",
    ]
    for dev in device_order(newest):
        fams = newest[dev]
        last = None
        for fam in sorted(fams, key=lambda f: (FAMILY_ORDER + [f]).index(f)):
            t = fams[fam]
            rows = [r for r in t["rows"] if r["family"] == fam and reference(r) is not None]
            if not rows:
                continue
            eager = [reference(r)["ratio"] for r in rows]
            ind = [r["baselines"][INDUCTOR]["ratio"] for r in rows if "ratio" in r["baselines"].get(INDUCTOR, {})]
            m = t["meta"]
            where = dev if dev != "CPU" else cpu_name(m)
            source = "the same" if t["name"] == last else f"{link(t['name'], docs=docs)} ({m['date']}, `{m['commit']}`)"
            last = t["name"]
            out.append(
                f"| {where} | {fam}{': ' + FAMILY_NOTE[fam] if fam in FAMILY_NOTE else ''} ({len(rows)}) | "
                f"{spread(eager)} | {spread(ind)} | {targets_cell(rows)} | {source} |"
            )
    return "\n".join(out)


# ---- docs/performance.md: the GPU targets side by side -------------------------------------------


def render_gpu(results=RESULTS) -> str:
    newest = newest_per_family(tables(results))
    gpus = [d for d in device_order(newest) if d != "CPU"]
    if not gpus:
        return "No GPU table in `benchmarks/results/` yet."
    per_gpu = {}
    order: List[tuple] = []
    for dev in gpus:
        for t in {id(t): t for t in newest[dev].values()}.values():
            for g in target_groups(t["rows"]):
                key = (g["family"], g["op"], g["target"], g["floor"])
                per_gpu[(dev, key)] = g
                if key not in order:
                    order.append(key)
    order.sort(key=lambda k: (FAMILY_ORDER + [k[0]]).index(k[0]))
    sources = []
    for dev in gpus:
        for name in dict.fromkeys(t["name"] for t in newest[dev].values()):
            m = next(t["meta"] for t in newest[dev].values() if t["name"] == name)
            sources.append(f"{link(name, docs=True)} ({m['date']}, `{m['commit']}`)")
    head = "| family | op | target (torch ÷ myops) | " + " | ".join(gpus) + " | tables |"
    out = [head, "|---|---|---|" + "---|" * len(gpus) + "---|"]
    for i, key in enumerate(order):
        cells = []
        for dev in gpus:
            g = per_gpu.get((dev, key))
            if g is None:
                cells.append("not run")
                continue
            ok = "met" if g["met"] == len(g["ratios"]) else "**missed**"
            cells.append(
                f"{measured(g)}: {ok}" + (f" ({g['met']} of {len(g['ratios'])})" if len(g["ratios"]) > 1 else "")
            )
        g0 = next(per_gpu[(d, key)] for d in gpus if (d, key) in per_gpu)
        src = ", ".join(sources) if i == 0 else "the same"
        out.append(f"| {key[0]} | {key[1]} | {goal(g0)} | " + " | ".join(cells) + f" | {src} |")
    return "\n".join(out)


def render_dropin_threads(results=RESULTS) -> str:
    """docs/dropin.md's figures: the newest ``*-dropin-threads.json`` (benchmarks/bench_dropin_threads.py)."""
    files = sorted(glob.glob(os.path.join(results, "*-dropin-threads.json")), key=lambda p: (_load(p)["date"], p))
    if not files:
        return "(no run of benchmarks/bench_dropin_threads.py yet)"
    rec = _load(files[-1])
    stem = os.path.basename(files[-1])[:-5]
    src = f"{{repo}}`{stem} <benchmarks/results/{stem}.md>`, {rec['date']}: `{rec['commit']}`"
    out = [
        f"Measured with `benchmarks/bench_dropin_threads.py` ({rec['device']}, torch {rec['torch']}, "
        f"{rec['threads']} threads; medians of {rec['rounds']} rounds):",
        "",
        "| what | per call | source |",
        "|---|---|---|",
        f"| a scope's enter + exit (`with myops.replace_torch_ops(): pass`), after the first | "
        f"{rec['scope_default_us']:.1f} µs | {src} |",
        f"| the same with `only={{'add', 'where'}}` | {rec['scope_named_us']:.1f} µs | the same |",
        f"| the first scope in a process (it registers every op's kernels) | {rec['first_scope_ms']:.1f} ms | the same |",
    ]
    for name, r in rec["ops"].items():
        lo, hi = r["unrouted_extra_spread_ns"]
        out.append(
            f"| `{name}` registered but not routed, beside torch's own ({r['torch_us']:.2f} µs) | "
            f"{r['unrouted_extra_ns']:+.0f} ns ({lo:+.0f} to {hi:+.0f}) | the same |"
        )
    return "\n".join(out)


RENDER = {
    "status": render_status,
    "speed": render_speed,
    "speed-docs": lambda results=RESULTS: render_speed(results, docs=True),
    "gpu": render_gpu,
    "dropin-threads": render_dropin_threads,
}
BLOCK = re.compile(r"(<!-- results:([\w-]+) begin[^>]*-->\n)(.*?)(<!-- results:\2 end -->)", re.S)


def rendered(text: str, results=RESULTS) -> str:
    """``text`` with every marked block replaced by its rendering."""
    return BLOCK.sub(lambda m: m.group(1) + RENDER[m.group(2)](results) + "\n" + m.group(4), text)


def blocks(text: str) -> List[str]:
    return [m.group(2) for m in BLOCK.finditer(text)]


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--check", action="store_true", help="write nothing; exit 1 when a committed block differs")
    args = p.parse_args(argv)
    stale = []
    for rel, want in TARGETS.items():
        path = os.path.join(ROOT, rel)
        text = open(path).read()
        if sorted(blocks(text)) != sorted(want):
            print(f"{rel}: expected the marked blocks {sorted(want)}, found {sorted(blocks(text))}")
            return 1
        new = rendered(text)
        if new == text:
            continue
        if args.check:
            stale.append(rel)
            sys.stdout.writelines(
                difflib.unified_diff(text.splitlines(True), new.splitlines(True), rel, rel + " (rendered)")
            )
        else:
            with open(path, "w") as f:
                f.write(new)
            print(f"wrote {rel}")
    if stale:
        print(f"\n{', '.join(stale)}: stale; run python benchmarks/results_summary.py and commit the result")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
