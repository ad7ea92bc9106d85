"""The GPU session's summary: <gpu>-<date>-tests.md, the committed format, rendered from the
session's record (<gpu>-<date>-session.json, written by gpu/gpu_session.py).

    python gpu/gpu_results.py RECORD.json [--out DIR]   # render the .md again

The file has a header (device, driver, torch, CUDA, Python, commit, the build used, the calls),
a table with each part's outcome, then one section per part:
  - tests: the CUDA tests passed / failed / skipped / errors / not run, by test file; the failed
    ones by name, each with its error (where it failed and pytest's `E ` lines, from the record's
    `errors`); the tests whose outcome changed between calls (a rerun's pass after a failure);
  - sanitize: each compute-sanitizer unit (tool, test file) with its ERROR SUMMARY and status;
  - bench: each runner family's rows and error rows (the tables are the runner's .md / .json).
A unit's status is one of: done, failed (tests failed), errors (sanitizer errors, or bench error
rows), CUT (stopped by its deadline: its counts are what ran before), not started (no time was
left), running (the call was stopped while it ran), no tests.
"""

import argparse
import json
import os
import re
import sys

PARTS = ("tests", "sanitize", "sweep", "graph", "bench")
OUTCOMES = ("passed", "failed", "skipped", "error")


def error_summaries(log):
    """The compute-sanitizer 'ERROR SUMMARY: N errors' numbers in a log (one per process)."""
    try:
        with open(log, errors="replace") as f:
            text = f.read()
    except OSError:
        return []
    return [int(n) for n in re.findall(r"ERROR SUMMARY: (\d+) error", text)]


def record_counts(path):
    """{outcome: count} of a --gpu-record file (each test's last outcome)."""
    from gpu_pytest_plugin import read_record

    counts = dict.fromkeys(OUTCOMES, 0)
    for outcome in read_record(path).values():
        counts[outcome] = counts.get(outcome, 0) + 1
    return counts


def bench_rows(out_dir, family=None):
    """The runner's rows in out_dir's .json reports (the session's own record left out)."""
    rows = []
    for name in sorted(os.listdir(out_dir)) if os.path.isdir(out_dir) else []:
        if not name.endswith(".json") or name.endswith("-session.json"):
            continue
        try:
            with open(os.path.join(out_dir, name)) as f:
                data = json.load(f)
        except (OSError, ValueError):
            continue
        if isinstance(data, dict):
            rows += [r for r in data.get("rows", []) if family is None or r.get("family") == family]
    return rows


def status_word(status):
    return {"cut": "CUT", "failed": "FAILED", "errors": "ERRORS", "running": "CUT (stopped while running)"}.get(
        status, status
    )


def test_table(rec):
    """{test file: {outcome: n, 'not run': n}} from the record's tests and selection."""
    table = {}
    tests = rec.get("tests", {})
    for nodeid in set(rec.get("selected", [])) | set(tests):
        fam = nodeid.split("::")[0].replace("tests/test_", "").replace(".py", "")
        row = table.setdefault(fam, dict.fromkeys(OUTCOMES + ("not run",), 0))
        outcome = tests.get(nodeid, ["not run"])[0]
        row[outcome] = row.get(outcome, 0) + 1
    return table


def part_outcomes(rec, out_dir):
    """{part: (outcome, detail)} for each part that has units."""
    units = rec.get("units", {})
    res = {}
    if "tests" in units:
        u = units["tests"]
        totals = dict.fromkeys(OUTCOMES + ("not run",), 0)
        for row in test_table(rec).values():
            for k, v in row.items():
                totals[k] += v
        bad = totals["failed"] + totals["error"]
        if u.get("status") in ("cut", "running", "not started") or totals["not run"]:
            word = status_word(u.get("status")) if u.get("status") != "done" else "CUT"
        elif bad:
            word = "FAILED"
        else:
            word = "done"
        res["tests"] = (word, ", ".join(f"{v} {k}" for k, v in totals.items()))
    for part in ("sanitize", "sweep", "graph", "bench"):
        us = {k: v for k, v in units.items() if v.get("part") == part}
        if not us:
            continue
        st = [v.get("status") for v in us.values()]
        if any(s in ("cut", "running", "not started") for s in st):
            word = "CUT"
        elif any(s == "errors" for s in st):
            word = "ERRORS"
        elif any(s not in ("done", "no tests") for s in st):
            word = "FAILED"
        else:
            word = "done"
        counts = {}
        for s in st:
            counts[status_word(s)] = counts.get(status_word(s), 0) + 1
        detail = f"{len(us)} units: " + ", ".join(f"{n} {k}" for k, n in sorted(counts.items()))
        if part == "sanitize":
            errs = sum(v.get("errors") or 0 for v in us.values())
            detail += f"; ERROR SUMMARY total {errs} errors"
        else:
            rows = sum(v.get("rows") or 0 for v in us.values())
            detail += f"; {rows} rows, {sum(v.get('error_rows') or 0 for v in us.values())} error rows"
        res[part] = (word, detail)
    return res


def render(rec, out_dir):
    env = rec["env"]
    lines = [
        f"# myops GPU session — {env['device']} — {env['date']}",
        "",
        f"- device: {env['device']}, compute capability {env.get('capability') or '-'}, driver "
        f"{env.get('driver')}, {env.get('cores')} cores",
        f"- torch {env['torch']} (CUDA {env['torch_cuda']}, git {str(env.get('torch_git'))[:12]}, wheel "
        f"{env.get('torch_dist')}), Python {env['python']}; myops commit {env.get('commit')}, sources "
        f"{env.get('source_hash')} (`gpu/gpu_build.py`'s hash)",
        f"- pytest-xdist: {'yes' if env.get('xdist') else 'no (tests ran serially)'}; pytest-timeout: "
        f"{'yes' if env.get('pytest_timeout') else 'no'}; compute-sanitizer: {env.get('sanitizer')}",
    ]
    for k, call in enumerate(rec.get("calls", []), 1):
        b = call.get("build", {})
        lines.append(
            f"- call {k}: `{call['kind']}`{' (dry run)' if call.get('dry_run') else ''}, started "
            f"{call['started']}, budget {call['budget']} s, ran {call.get('seconds', '?')} s"
            f"{'' if call.get('outcome') == 'ended' else ' (' + call.get('outcome', 'STOPPED before its end') + ')'}; "
            f"build: {b.get('action', 'not reached')}"
        )
        if b.get("reasons"):
            lines.append(f"  - archive {b.get('verdict')}: " + "; ".join(b["reasons"]))
        if b.get("built_for"):
            bf = b["built_for"]
            lines.append(
                f"  - archive built {bf.get('built')} for torch {bf.get('torch')} (CUDA {bf.get('torch_cuda')}), "
                f"Python {bf.get('python')}, sources {bf.get('source_hash')} (commit {bf.get('commit')})"
            )
    outcomes = part_outcomes(rec, out_dir)
    lines += ["", "## Parts", "", "| part | outcome | detail |", "|---|---|---|"]
    for part in PARTS:
        word, detail = outcomes.get(part, ("not run in this session", "-"))
        lines.append(f"| {part} | {word} | {detail} |")
    units = rec.get("units", {})
    if "tests" in units:
        lines += [
            "",
            "## tests",
            "",
            "CUDA tests (`pytest -m cuda`, every test file but the CPU emulation), the last outcome of each:",
            "",
            "| file | passed | failed | skipped | errors | not run |",
            "|---|---|---|---|---|---|",
        ]
        for fam, row in sorted(test_table(rec).items()):
            lines.append(
                f"| {fam} | {row['passed']} | {row['failed']} | {row['skipped']} | {row['error']} | {row['not run']} |"
            )
        bad = sorted(n for n, (o, _) in rec.get("tests", {}).items() if o in ("failed", "error"))
        if bad:
            errors = rec.get("errors", {})
            lines += ["", f"Failed ({len(bad)}):", ""]
            for n in bad[:60]:
                lines.append(f"- `{n}`")
                if errors.get(n):
                    fenced = [f"  {x}".replace("```", "'''") for x in errors[n].splitlines()]
                    lines += ["  ```", *fenced, "  ```"]
            if len(bad) > 60:
                lines.append(f"- ... and {len(bad) - 60} more (the record has them all)")
        if rec.get("changed"):
            lines += ["", "Changed between calls:", ""] + [f"- `{n}`: {v}" for n, v in sorted(rec["changed"].items())]
    san = {k: v for k, v in units.items() if v.get("part") == "sanitize"}
    if san:
        lines += [
            "",
            "## sanitize",
            "",
            "compute-sanitizer over gpu/gpu_sanitize_set.txt, one process per "
            "tool and test file, the caching allocator off (`graphs`: the `cuda_graph` tests, allocator on):",
            "",
            "| tool | tests | ERROR SUMMARY | passed | failed | skipped | errors | seconds | status | call |",
            "|---|---|---|---|---|---|---|---|---|---|",
        ]
        for uid, u in sorted(san.items()):
            c = u.get("counts") or {}
            errs = "-" if u.get("errors") is None else f"{u['errors']} errors"
            lines.append(
                f"| {u.get('tool')} | {uid.split(':')[-1]} | {errs} | {c.get('passed', '-')} | "
                f"{c.get('failed', '-')} | {c.get('skipped', '-')} | {c.get('error', '-')} | "
                f"{u.get('seconds', '-')} | {status_word(u.get('status'))} | {u.get('call')} |"
            )
    bench = {k: v for k, v in units.items() if v.get("part") == "bench"}
    if bench:
        lines += [
            "",
            "## bench",
            "",
            "The headline cases of each family (`runner.py --headline`), `torch` eager and "
            "`inductor` peers; the tables are the runner's .md / .json beside this file:",
            "",
            "| family | rows | error rows | seconds | status | call |",
            "|---|---|---|---|---|---|",
        ]
        for uid, u in bench.items():
            lines.append(
                f"| {uid[6:]} | {u.get('rows', '-')} | {u.get('error_rows', '-')} | {u.get('seconds', '-')} | "
                f"{status_word(u.get('status'))} | {u.get('call')} |"
            )
    return "\n".join(lines) + "\n"


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("record")
    p.add_argument("--out", default=None, help="folder to write the .md into (default: the record's)")
    args = p.parse_args(argv)
    with open(args.record) as f:
        rec = json.load(f)
    out = args.out or os.path.dirname(os.path.abspath(args.record))
    path = os.path.join(out, f"{rec['env']['slug']}-{rec['env']['date']}-tests.md")
    with open(path, "w") as f:
        f.write(render(rec, out))
    print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    sys.exit(main())
