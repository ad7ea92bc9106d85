"""The GPU session's results writer: <gpu>-<date>-tests.md, the committed format.

benchmarks/gpu_session.sh records one line per run (stage, family, tool, exit status, time share,
log) and calls this at the end of every stage. The file has a header (device, driver, torch and
CUDA versions, commit) and one section per stage:
  - cuda: the CUDA tests passed / failed / skipped / errors by family (from pytest's JUnit XML);
  - sanitize: each compute-sanitizer tool's ERROR SUMMARY by family, and its tests' counts;
  - bench: each runner family's rows and error rows (the tables are the runner's .md / .json).
A stage's section replaces the same stage's section of an earlier file of the same name (in
--previous, e.g. benchmarks/results/, where the last call's file was committed), so one file
holds the whole session. An exit status of 124 means the run was cut by its time share: its
counts are what ran before the cut, and it is marked CUT.
"""
import argparse
import datetime
import json
import os
import re
import subprocess
import sys
import xml.etree.ElementTree as ET

STAGES = ["cuda", "sanitize", "bench"]
STATUS = {0: "ok", 1: "FAILED", 5: "no CUDA tests", 99: "SANITIZER ERRORS", 124: "CUT (time share)"}


def status(rc):
    return STATUS.get(rc, f"exit {rc}")


def junit_counts(path):
    """(passed, failed, skipped, errors) from a pytest JUnit XML, or None when there is none
    (the run was cut before pytest wrote it, or pytest never started)."""
    if not path or not os.path.exists(path):
        return None
    try:
        root = ET.parse(path).getroot()
    except ET.ParseError:
        return None
    p = f = s = e = 0
    for case in root.iter("testcase"):
        kinds = {child.tag for child in case}
        if "failure" in kinds:
            f += 1
        elif "error" in kinds:
            e += 1
        elif "skipped" in kinds:
            s += 1
        else:
            p += 1
    return p, f, s, e


def error_summaries(log):
    """The compute-sanitizer 'ERROR SUMMARY: N errors' numbers in a log (one per process)."""
    try:
        with open(log, errors="replace") as f:
            text = f.read()
    except OSError:
        return []
    return [int(n) for n in re.findall(r"ERROR SUMMARY: (\d+) error", text)]


def read_records(path):
    recs = []
    with open(path) as f:
        for line in f:
            parts = line.rstrip("\n").split("\t")
            if len(parts) != 6:
                continue
            stage, fam, tool, rc, share, log = parts
            recs.append({"stage": stage, "family": fam, "tool": tool, "rc": int(rc),
                         "share": share, "log": log, "xml": log[:-4] + ".xml" if log.endswith(".log") else ""})
    return recs


def counts_cell(c):
    """passed | failed | skipped | errors cells ('-' each when there is no report)."""
    return " | ".join("-" if c is None else str(x) for x in (c or (None,) * 4))


def section(stage, recs, out_dir):
    lines = [f"<!-- stage:{stage} -->", f"## {stage} stage", ""]
    if stage == "cuda":
        lines += ["CUDA tests (`pytest -m cuda`), one process per test file:", "",
                  "| family | passed | failed | skipped | errors | time share | status |", "|---|---|---|---|---|---|---|"]
        for r in recs:
            c = junit_counts(r["xml"])
            lines.append(f"| {r['family']} | {counts_cell(c)} | {r['share'] or '-'} s | "
                         f"{status(r['rc'])}{'' if c else ', no report'} |")
    elif stage == "sanitize":
        lines += ["compute-sanitizer, one process per family and tool (`memcheck-graphs`: the graph-capture "
                  "tests under memcheck with the caching allocator on):", "",
                  "| family | tool | ERROR SUMMARY | passed | failed | skipped | errors | status |",
                  "|---|---|---|---|---|---|---|---|"]
        for r in recs:
            sums = error_summaries(r["log"])
            summary = f"{sum(sums)} errors" if sums else "none printed"
            c = junit_counts(r["xml"])
            lines.append(f"| {r['family']} | {r['tool']} | {summary} | {counts_cell(c)} | "
                         f"{status(r['rc'])} |")
    else:
        reports = bench_reports(out_dir)
        lines += ["The runner's tables are in the .md / .json beside this file (`torch` eager and `inductor` "
                  "peers).", "", "| family | rows | error rows | time share | status |", "|---|---|---|---|---|"]
        for r in recs:
            rows = [x for x in reports if x.get("family") == r["family"]]
            errs = sum(1 for x in rows if x.get("error") or not x.get("baselines"))
            lines.append(f"| {r['family']} | {len(rows)} | {errs} | {r['share'] or '-'} s | {status(r['rc'])} |")
    return lines + ["", f"<!-- /stage:{stage} -->"]


def bench_reports(out_dir):
    rows = []
    for name in sorted(os.listdir(out_dir)):
        if name.endswith(".json"):
            try:
                with open(os.path.join(out_dir, name)) as f:
                    data = json.load(f)
                rows += data.get("rows", []) if isinstance(data, dict) else []
            except (OSError, ValueError):
                continue
    return rows


def environment(dry_run):
    import torch

    env = {"torch": torch.__version__, "cuda": torch.version.cuda, "date": datetime.date.today().isoformat()}
    if not dry_run and torch.cuda.is_available():
        env["device"] = torch.cuda.get_device_name()
        env["capability"] = "%d.%d" % torch.cuda.get_device_capability()
        try:
            env["driver"] = subprocess.check_output(
                ["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"], text=True).split()[0]
        except Exception:  # noqa: BLE001
            env["driver"] = "unknown"
        env["slug"] = re.sub(r"[^A-Za-z0-9._-]+", "-", env["device"])
    else:
        env.update(device="CPU (dry run: every stage's plumbing, no GPU)", capability="-", driver="-", slug="cpu-dryrun")
    try:
        env["commit"] = subprocess.check_output(["git", "rev-parse", "--short", "HEAD"], text=True,
                                                stderr=subprocess.DEVNULL).strip()
    except Exception:  # noqa: BLE001
        env["commit"] = "unknown"
    return env


def parse_sections(text):
    found = {}
    for st in STAGES:
        m = re.search(rf"<!-- stage:{st} -->.*?<!-- /stage:{st} -->", text, re.S)
        if m:
            found[st] = m.group(0).splitlines()
    return found


def write(records, out_dir, previous_dir=None, dry_run=False, env=None):
    env = env or environment(dry_run)
    name = f"{env['slug']}-{env['date']}-tests.md"
    sections = {}
    for d in (previous_dir, out_dir):  # the committed file, then this call's (newer) file
        if d and os.path.exists(os.path.join(d, name)):
            with open(os.path.join(d, name)) as f:
                sections.update(parse_sections(f.read()))
    by_stage = {}
    for r in records:
        by_stage.setdefault(r["stage"], []).append(r)
    for st, recs in by_stage.items():
        sections[st] = section(st, recs, out_dir)
    head = [f"# myops GPU session — {env['device']} — {env['date']}", "",
            f"- device: {env['device']}, compute capability {env['capability']}, driver {env['driver']}",
            f"- torch {env['torch']} (CUDA {env['cuda']}); commit {env['commit']}",
            "- written by benchmarks/gpu_session.sh (benchmarks/gpu_results.py); CUT: the run was stopped by "
            "its time share, its counts are what ran before", ""]
    body = [line for st in STAGES if st in sections for line in sections[st] + [""]]
    path = os.path.join(out_dir, name)
    with open(path, "w") as f:
        f.write("\n".join(head + body).rstrip() + "\n")
    return path


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--records", required=True, help="the session's records (tab-separated)")
    p.add_argument("--out", required=True, help="folder to write <gpu>-<date>-tests.md into")
    p.add_argument("--previous", default=None, help="folder holding an earlier file of the same name")
    p.add_argument("--dry-run", action="store_true")
    args = p.parse_args(argv)
    path = write(read_records(args.records), args.out, args.previous, args.dry_run)
    print(f"wrote {path}")
    with open(path) as f:
        print(f.read())
    return 0


if __name__ == "__main__":
    sys.exit(main())
