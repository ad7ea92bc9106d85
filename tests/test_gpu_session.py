"""The GPU session proven on the CPU (issue #25): benchmarks/gpu_session.sh --dry-run runs every
stage against the CPU build, so that a lent GPU finds no plumbing bug; and the readers of the
runner's and the results writer's output survive error rows, a failed Inductor peer and a cut."""
import json
import os
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "benchmarks"))

import gpu_results  # noqa: E402
import runner  # noqa: E402


def session(tmp_path, *args, **env):
    out = tmp_path / "out"
    out.mkdir(exist_ok=True)
    e = dict(os.environ, OUT=str(out), PYTHON=sys.executable, GPU_SESSION_FAMILIES="diagonal",
             GPU_SESSION_BENCH="diagonal", **env)
    p = subprocess.run(["bash", os.path.join(ROOT, "benchmarks", "gpu_session.sh"), "--dry-run", *args],
                       cwd=ROOT, env=e, capture_output=True, text=True, timeout=300)
    return p, out


def read_tests_md(out):
    [name] = [n for n in os.listdir(out) if n.endswith("-tests.md")]
    assert name.startswith("cpu-dryrun-") and name.endswith("-tests.md")
    return (out / name).read_text()


def test_dry_run_cuda_and_sanitize_stages(tmp_path):
    p, out = session(tmp_path, "cuda", GPU_SESSION_SECONDS="200")
    assert p.returncode == 0, p.stdout + p.stderr
    # one tool: the plumbing is the same for each (the stage's default runs memcheck and initcheck)
    p2, _ = session(tmp_path, "sanitize", GPU_SESSION_SECONDS="200", SANITIZE_TOOLS="memcheck")
    assert p2.returncode == 0, p2.stdout + p2.stderr
    md = read_tests_md(out)
    # the second call kept the first call's section (read from the same folder) and added its own
    assert "<!-- stage:cuda -->" in md and "<!-- stage:sanitize -->" in md
    # every test of the family's `cuda` selection ran (skipped: no device), none passed on a CPU
    cuda_row = next(line for line in md.splitlines() if line.startswith("| diagonal |"))
    cells = [c.strip() for c in cuda_row.strip("|").split("|")]
    assert cells[1] == "0" and cells[2] == "0" and int(cells[3]) > 0 and cells[6] == "ok", cuda_row
    for tool in ("memcheck", "memcheck-graphs"):
        assert f"| diagonal | {tool} | 0 errors |" in md
    assert sorted(os.listdir(out)) == sorted(["session.log", os.path.basename(
        [n for n in os.listdir(out) if n.endswith("-tests.md")][0])])


def test_dry_run_bench_cut_and_file_limit(tmp_path):
    (tmp_path / "out").mkdir()
    for k in range(7):  # with the stage's own files, more than the device tool brings back
        (tmp_path / "out" / f"filler{k}").write_text("x")
    p, out = session(tmp_path, "bench", GPU_SESSION_SECONDS="14")
    assert p.returncode == 3, p.stdout + p.stderr
    assert "OVER THE DEVICE TOOL'S LIMITS" in p.stdout
    md = read_tests_md(out)
    assert "| diagonal |" in md and "CUT (time share)" in md, md


def test_unknown_stage_is_refused():
    p = subprocess.run(["bash", os.path.join(ROOT, "benchmarks", "gpu_session.sh"), "tests"],
                       cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert p.returncode == 2 and "unknown stage 'tests'" in p.stdout


def error_and_ok_rows():
    ok = {"family": "diagonal", "device": "cpu", "label": "diagonal", "sub_label": "[8,8]", "myops_s": 1e-6,
          "bytes": 64, "numel": 8, "target": 1.0, "floor_target": None, "series": "diagonal",
          "baselines": {"torch": {"s": 2e-6, "ratio": 2.0}, "inductor": {"error": "BackendCompilerFailed: x"}}}
    err = runner.error_row("diagonal", "cpu", "diagonal", "[9,9]", RuntimeError("boom\nmore"))
    fam_err = runner.error_row("nms", "cpu", "nms", "(cases)", ValueError("no cases"))
    return [ok, err, fam_err]


def test_runner_readers_survive_error_rows(tmp_path):
    rows = error_and_ok_rows()
    meta = {"device": "cpu", "device_name": "CPU", "date": "2026-11-24", "torch": "x", "torch_cuda": None,
            "commit": "c", "copy_GBps": 10.0}
    md = runner.markdown(rows, meta)
    assert "ERROR: RuntimeError: boom" in md and "ERROR: ValueError: no cases" in md
    line = next(x for x in md.splitlines() if x.startswith("| diagonal | [8,8] |"))
    assert "| 2.00x | ERROR |" in line  # the eager ratio, then the Inductor peer that failed
    assert "1 / 1: met" in md  # the target summary counts the good row only
    assert runner.reference(rows[1]) is None and runner.reference(rows[0])["ratio"] == 2.0
    assert runner.format_row(rows[0]).endswith("inductor ERROR BackendCompilerFailed: x")
    path = tmp_path / "cpu-isa.json"
    path.write_text(json.dumps({"meta": dict(meta, cpu_isa="avx2"), "rows": rows}))
    assert "| diagonal | diagonal | [8,8] | 2.00x |" in runner.side_by_side([str(path)])


def test_results_writer_error_rows_and_cut(tmp_path):
    (tmp_path / "cpu-2026-11-24.json").write_text(json.dumps({"meta": {}, "rows": error_and_ok_rows()}))
    log = tmp_path / "san.log"
    log.write_text("========= ERROR SUMMARY: 3 errors\n========= ERROR SUMMARY: 1 error\n")
    recs = [
        {"stage": "bench", "family": "diagonal", "tool": "runner", "rc": 0, "share": "10", "log": "", "xml": ""},
        {"stage": "bench", "family": "nms", "tool": "runner", "rc": 124, "share": "10", "log": "", "xml": ""},
        {"stage": "sanitize", "family": "nonzero", "tool": "memcheck", "rc": 99, "share": "10", "log": str(log),
         "xml": str(tmp_path / "missing.xml")},
        {"stage": "cuda", "family": "nonzero", "tool": "pytest", "rc": 124, "share": "10", "log": "",
         "xml": str(tmp_path / "missing.xml")},
    ]
    env = {"torch": "t", "cuda": "13.0", "date": "2026-11-24", "device": "GPU X", "capability": "9.0",
           "driver": "1", "slug": "GPU-X", "commit": "c"}
    path = gpu_results.write(recs, str(tmp_path), None, env=env)
    md = open(path).read()
    assert os.path.basename(path) == "GPU-X-2026-11-24-tests.md"
    assert "| diagonal | 2 | 1 | 10 s | ok |" in md  # one case row and one error row
    assert "| nms | 1 | 1 | 10 s | CUT (time share) |" in md
    assert "| nonzero | memcheck | 4 errors | - | - | - | - | SANITIZER ERRORS |" in md
    assert "| nonzero | - | - | - | - | 10 s | CUT (time share), no report |" in md
    # a later stage's call replaces only its own section
    again = gpu_results.write(recs[:1], str(tmp_path), None, env=env)
    md2 = open(again).read()
    assert "SANITIZER ERRORS" in md2 and "| nms |" not in md2


@pytest.mark.parametrize("junit, expected", [
    ('<testsuites><testsuite><testcase/><testcase><skipped/></testcase><testcase><failure/></testcase>'
     '<testcase><error/></testcase></testsuite></testsuites>', (1, 1, 1, 1)),
    ("<testsuites><testsuite", None),  # a report cut while being written
])
def test_junit_counts(tmp_path, junit, expected):
    path = tmp_path / "r.xml"
    path.write_text(junit)
    assert gpu_results.junit_counts(str(path)) == expected


def test_every_graph_capture_is_marked():
    """The sanitizer stage runs `cuda_graph` tests apart (the no-caching allocator's cudaFree is
    forbidden inside a capture): every test that captures a CUDA graph must carry the marker."""
    import ast

    unmarked = []
    for name in sorted(os.listdir(os.path.join(ROOT, "tests"))):
        if not (name.startswith("test_") and name.endswith(".py")) or name == "test_gpu_session.py":
            continue
        tree = ast.parse(open(os.path.join(ROOT, "tests", name)).read())
        for fn in ast.walk(tree):
            if not isinstance(fn, ast.FunctionDef) or not fn.name.startswith("test_"):
                continue
            body = ast.unparse(fn)
            if "CUDAGraph" in body or "cuda.graph(" in body or "make_graphed_callables" in body:
                marks = [ast.unparse(d) for d in fn.decorator_list]
                if "cuda_graph" not in marks and "pytest.mark.cuda_graph" not in marks:
                    unmarked.append(f"{name}::{fn.name}")
    assert not unmarked, f"capture a CUDA graph without @cuda_graph: {unmarked}"
