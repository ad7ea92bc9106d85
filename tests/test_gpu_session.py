"""The GPU session proven on the CPU (issues #25, #39): gpu/gpu_session.sh --dry-run runs
every part against the CPU build, so that a lent GPU finds no plumbing bug: the archive check
(missing, match, mismatch), a call cut in each part, `rerun` of what was cut, the -tests.md each
call writes; and the readers of the runner's and the session's output survive error rows."""

import json
import os
import re
import shutil
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "benchmarks"))
sys.path.insert(0, os.path.join(ROOT, "gpu"))

import gpu_build  # noqa: E402
import gpu_pytest_plugin  # noqa: E402
import gpu_results  # noqa: E402
import runner  # noqa: E402

# the smallest families: one test file (17 CUDA tests, 13 of them in the sanitizer's set) and one
# runner family's headline cases without Inductor (compiling C++ on 2 cores takes minutes)
SMALL = dict(
    GPU_SESSION_FAMILIES="roi_align",
    GPU_SESSION_BENCH="diagonal",
    SANITIZE_TOOLS="memcheck",
    GPU_SESSION_BENCH_ARGS="--quick --no-inductor",
    GPU_SESSION_SANITIZE_WORKERS="2",
)


def session(tmp_path, mode, out, **env):
    out.mkdir(parents=True, exist_ok=True)
    e = dict(
        os.environ,
        OUT=str(out),
        PYTHON=sys.executable,
        GPU_SESSION_STATE=str(tmp_path / "state"),
        GPU_SESSION_ARCHIVE=str(tmp_path / "gpu-build"),
        GPU_SESSION_RESULTS=str(tmp_path / "results"),
        **SMALL,
    )
    e.update(env)
    p = subprocess.run(
        ["bash", os.path.join(ROOT, "gpu", "gpu_session.sh"), "--dry-run", mode],
        cwd=ROOT,
        env=e,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert p.returncode == 0, p.stdout[-5000:] + p.stderr[-5000:]
    return p.stdout, read_tests_md(out)


def read_tests_md(out):
    [name] = [n for n in os.listdir(out) if n.endswith("-tests.md")]
    assert re.fullmatch(r"cpu-dryrun-\d{4}-\d\d-\d\d-tests\.md", name)
    assert os.path.exists(out / name.replace("-tests.md", "-session.json"))
    return (out / name).read_text()


def part_row(md, part):
    """(outcome, detail) of the -tests.md's Parts table."""
    line = next(x for x in md.splitlines() if x.startswith(f"| {part} |"))
    cells = [c.strip() for c in line.strip("|").split("|")]
    return cells[1], cells[2]


def test_dry_run_archive_missing_match_cut_tests_and_rerun(tmp_path):
    # no archive: the dry run's stand-in "builds" (packs the CPU build) and returns the archive
    out, md = session(tmp_path, "all", tmp_path / "o1", GPU_SESSION_PARTS="")
    assert "archive missing" in md and "built here" in md, md
    assert (tmp_path / "o1" / gpu_build.NAME).exists()
    assert "| tests | not run in this session |" in md
    # the returned archive, carried as gpu-build/, matches the next call's stack and sources; the
    # tests part hangs at its third test: the deadline cuts it
    shutil.copytree(
        tmp_path / "o1", tmp_path / "gpu-build", ignore=lambda d, names: [n for n in names if n != gpu_build.NAME]
    )
    shutil.rmtree(tmp_path / "state")  # a fresh machine: only the carried archive
    out, md = session(
        tmp_path,
        "all",
        tmp_path / "o2",
        GPU_SESSION_PARTS="tests",
        GPU_SESSION_DRY_HANG="tests",
        GPU_SESSION_SECONDS="60",
    )
    assert "build: archive used" in md, md
    assert part_row(md, "tests")[0] == "CUT", md
    assert "| sanitize | not run in this session |" in md and "| bench | not run in this session |" in md
    assert not (tmp_path / "o2" / gpu_build.NAME).exists()  # nothing built: no archive comes back
    rec = json.loads(next((tmp_path / "o2").glob("*-session.json")).read_text())
    assert rec["units"]["tests"]["status"] == "cut"
    before = {n for n, (o, _) in rec["tests"].items()}
    assert len(before) <= 2, before  # the third test hung
    # rerun on the warm machine (the record kept in the state folder): the tests only
    out, md = session(tmp_path, "rerun", tmp_path / "o3")
    assert "rerun: tests: " in out and "bench: nothing to do" in out and "sanitize: nothing to do" in out, out
    word, detail = part_row(md, "tests")
    assert word == "done" and detail == "0 passed, 0 failed, 17 skipped, 0 error, 0 not run", md
    assert "call 1: `all`" in md and "call 2: `rerun`" in md
    rec = json.loads(next((tmp_path / "o3").glob("*-session.json")).read_text())
    assert all(call == 2 for n, (o, call) in rec["tests"].items() if n not in before)


def test_dry_run_archive_mismatch_cut_sanitize_and_bench_then_rerun(tmp_path):
    # an archive built for another torch: the call builds (the stand-in) and says why
    lib = tmp_path / "lib"
    shutil.copytree(os.path.join(ROOT, "python", "myops"), lib / "myops", ignore=shutil.ignore_patterns("__pycache__"))
    gpu_build.pack(str(lib), str(tmp_path / "gpu-build"), allow_cpu=True, override={"torch": "2.11.0+cu130"})
    out, md = session(
        tmp_path,
        "all",
        tmp_path / "o1",
        GPU_SESSION_PARTS="sanitize bench",
        GPU_SESSION_DRY_HANG="sanitize bench",
        GPU_SESSION_SECONDS="85",
        GPU_SESSION_BENCH_SECONDS="20",
    )
    assert "archive mismatch: torch: archive '2.11.0+cu130'" in md and "built here" in md, md
    assert (tmp_path / "o1" / gpu_build.NAME).exists()
    assert part_row(md, "sanitize")[0] == "CUT" and part_row(md, "bench")[0] == "CUT", md
    assert "| tests | not run in this session |" in md
    # the bench part began once the sanitizer's units had ended (cut): timings run alone
    rec = json.loads(next((tmp_path / "o1").glob("*-session.json")).read_text())
    assert rec["units"]["bench:diagonal"]["status"] == "cut"
    # rerun on a fresh machine (README: the returned record into benchmarks/results/, the returned
    # archive into gpu-build/): only the cut units run
    shutil.rmtree(tmp_path / "state")
    (tmp_path / "results").mkdir()
    for name in os.listdir(tmp_path / "o1"):
        if name.endswith("-session.json"):
            shutil.copy(tmp_path / "o1" / name, tmp_path / "results")
        if name == gpu_build.NAME:
            shutil.copy(tmp_path / "o1" / name, tmp_path / "gpu-build")
    out, md = session(tmp_path, "rerun", tmp_path / "o2", GPU_SESSION_SECONDS="150")
    assert f"continuing the record {tmp_path / 'results'}" in out, out
    assert "archive used" in md.split("call 2:")[1], md
    assert part_row(md, "sanitize")[0] == "done" and part_row(md, "bench")[0] == "done", md
    assert "| memcheck | roi_align | 0 errors | 0 | 0 | 13 | 0 |" in md, md
    assert re.search(r"\| diagonal \| [1-9]\d* \| 0 \| \d+ \| done \| 2 \|", md), md
    # the runner's tables came back too, and the 8-file limit holds
    assert any(n.startswith("cpu-") and n.endswith(".json") and "session" not in n for n in os.listdir(tmp_path / "o2"))
    assert "$OUT: " in out and "OVER THE DEVICE TOOL'S LIMITS" not in out


def test_rerun_without_a_record_and_out_over_the_device_tools_limit(tmp_path):
    (tmp_path / "o").mkdir()
    for k in range(8):  # with session.log, one file more than the device tool brings back
        (tmp_path / "o" / f"filler{k}").write_text("x")
    e = dict(
        os.environ,
        OUT=str(tmp_path / "o"),
        PYTHON=sys.executable,
        GPU_SESSION_STATE=str(tmp_path / "s"),
        GPU_SESSION_RESULTS=str(tmp_path / "r"),
    )
    p = subprocess.run(
        ["bash", os.path.join(ROOT, "gpu", "gpu_session.sh"), "--dry-run", "rerun"],
        cwd=ROOT,
        env=e,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert "rerun: no record of an earlier call" in p.stdout, p.stdout + p.stderr
    assert p.returncode == 3 and "OVER THE DEVICE TOOL'S LIMITS" in p.stdout, p.stdout + p.stderr


def test_unknown_mode_is_refused():
    p = subprocess.run(
        ["bash", os.path.join(ROOT, "gpu", "gpu_session.sh"), "cuda"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert p.returncode == 2 and "usage: gpu_session.sh [--dry-run] all|rerun" in p.stdout


def test_default_budget_fits_the_call():
    """`all`, `sweep`, `tune` and `graph` must end inside the device call's 540 s: the budget, plus the grace a cut unit gets
    (pytest writes its report) and the start of Python, stays under it."""
    import gpu_session

    s = open(os.path.join(ROOT, "gpu", "gpu_session.py")).read()
    budget = int(re.search(r'"GPU_SESSION_SECONDS", (\d+) if mode in \("all", "sweep", "tune", "graph"\)', s).group(1))
    assert budget + gpu_session.GRACE + 10 <= 540
    readme = open(os.path.join(ROOT, "benchmarks", "README.md")).read()
    assert "timeout_s=540" in readme and 'carry=["gpu-build"]' in readme


def test_archive_check_reasons(tmp_path):
    fp = {"python": "3.12", "torch": "2.11.0+cu130", "torch_cuda": "13.0", "torch_git": "70d99e99", "capability": "9.0"}
    m = dict(fp, cuda_archs="9.0", source_hash="abc", commit="c")
    m.pop("capability")
    assert gpu_build.compare(m, fp, "abc") == []
    assert gpu_build.compare(dict(m, cuda_archs="9.0+PTX"), fp, "abc") == []
    for key, other in [("python", "3.11"), ("torch", "2.11.0"), ("torch_cuda", "12.8"), ("torch_git", "1234")]:
        [reason] = gpu_build.compare(dict(m, **{key: other}), fp, "abc")
        assert reason.startswith(f"{key}: archive {other!r}")
    [reason] = gpu_build.compare(m, dict(fp, capability="10.0"), "abc")
    assert "compute capability 10.0" in reason
    [reason] = gpu_build.compare(m, fp, "def")
    assert reason.startswith("sources: archive built from abc")
    assert gpu_build.check(str(tmp_path / "none"))[0] == "missing"


def test_source_hash_follows_the_sources(tmp_path):
    for top in gpu_build.SOURCES:
        src = os.path.join(ROOT, top)
        (shutil.copytree if os.path.isdir(src) else shutil.copy)(src, tmp_path / top)
    h = gpu_build.source_hash(str(tmp_path))
    (tmp_path / "csrc" / "x.o").write_text("object")  # build outputs do not travel: not hashed
    assert gpu_build.source_hash(str(tmp_path)) == h
    with open(tmp_path / "csrc" / "myops.cpp", "a") as f:
        f.write("\n")
    assert gpu_build.source_hash(str(tmp_path)) != h


def test_sanitize_set_matches_cuda_tests():
    """Every line of gpu/gpu_sanitize_set.txt selects a CUDA test (a renamed test cannot
    silently leave the set), and every test file with CUDA tests has a line or a `# not here:`
    line with its reason."""
    p = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "--collect-only",
            "-q",
            "-p",
            "no:cacheprovider",
            "-m",
            "cuda",
            "tests",
            "--ignore=tests/test_cuda_emulation.py",
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
    )
    ids = [x for x in p.stdout.splitlines() if "::" in x]
    assert len(ids) > 100, p.stdout[-3000:]
    path = os.path.join(ROOT, "gpu", "gpu_sanitize_set.txt")
    patterns = gpu_pytest_plugin.read_patterns(path)
    for pat in patterns:
        r = gpu_pytest_plugin.pattern_regex(pat)
        assert any(r.match(i) for i in ids), f"{pat} selects no CUDA test"
    exempt = re.findall(r"^# not here: (\S+)", open(path).read(), re.M)
    files = {i.split("::")[0] for i in ids}
    covered = {p.split("::")[0] for p in patterns} | set(exempt)
    assert files <= covered, f"CUDA tests of {sorted(files - covered)} are not in the sanitizer's set"


def test_pattern_and_record(tmp_path):
    r = gpu_pytest_plugin.pattern_regex("tests/test_nonzero.py::test_x[(1,)-*-cuda]")
    assert r.match("tests/test_nonzero.py::test_x[(1,)-torch.bool-cuda]")
    assert not r.match("tests/test_nonzero.py::test_x[(1,)-torch.bool-cpu]")
    assert not r.match("tests/test_nonzero.py::test_x[(12)-torch.bool-cuda]")  # ( , [ are literal
    rec = tmp_path / "r"
    rec.write_text("failed\ta\npassed\tb\npassed\ta\nerror\tc\nskipped\td\n")
    assert gpu_pytest_plugin.read_record(str(rec)) == {"a": "passed", "b": "passed", "c": "error", "d": "skipped"}
    assert gpu_results.record_counts(str(rec)) == {"passed": 2, "failed": 0, "skipped": 1, "error": 1}


def test_plugin_records_each_failures_error_bounded(tmp_path):
    """--gpu-errors: one JSON line per failed or erroring test, with where it failed and pytest's
    `E ` lines, bounded; passed and skipped tests have none."""
    (tmp_path / "test_x.py").write_text(
        "import pytest\n"
        "@pytest.fixture\n"
        "def broken():\n"
        "    raise RuntimeError('no device')\n"
        "def test_ok():\n"
        "    pass\n"
        "def test_skip():\n"
        "    pytest.skip('no')\n"
        "def test_fails():\n"
        "    assert 1078 == 521, 'count'\n"
        "def test_long():\n"
        "    raise ValueError('x' * 5000 + 'y\\n' * 50)\n"
        "def test_setup_error(broken):\n"
        "    pass\n"
    )
    record, errors = tmp_path / "record", tmp_path / "errors"
    plugin = ["-p", "no:cacheprovider", "-p", "gpu_pytest_plugin", "--gpu-record", str(record)]
    p = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", *plugin, "--gpu-errors", str(errors), "test_x.py"],
        cwd=tmp_path,
        env=dict(os.environ, PYTHONPATH=os.path.join(ROOT, "gpu")),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert p.returncode == 1, p.stdout[-3000:] + p.stderr[-3000:]
    got = gpu_pytest_plugin.read_errors(str(errors))
    assert set(got) == {"test_x.py::test_fails", "test_x.py::test_long", "test_x.py::test_setup_error"}
    fails = got["test_x.py::test_fails"].splitlines()
    assert fails[0].startswith("test_x.py:10: AssertionError: count"), fails
    assert any(x.startswith("E ") and "1078 == 521" in x for x in fails[1:]), fails
    assert "RuntimeError: no device" in got["test_x.py::test_setup_error"]
    long = got["test_x.py::test_long"]
    assert len(long) <= gpu_pytest_plugin.ERROR_CHARS
    assert all(len(x) <= gpu_pytest_plugin.ERROR_LINE_CHARS for x in long.splitlines())
    assert len(long.splitlines()) <= gpu_pytest_plugin.ERROR_LINES + 2
    assert gpu_pytest_plugin.read_record(str(record))["test_x.py::test_setup_error"] == "error"


def test_record_keeps_the_error_of_each_failing_test(tmp_path):
    """The session folds the plugin's error lines into the record: the latest error of each test
    that fails now; a test that passed since (a rerun) loses its error."""
    import gpu_session

    s = object.__new__(gpu_session.Session)
    s.work = str(tmp_path)
    s.rec = {
        "calls": [{}, {}],
        "tests": {"a": ["failed", 1], "b": ["failed", 1]},
        "changed": {},
        "errors": {"a": "old a", "b": "old b"},
    }
    (tmp_path / "tests.record").write_text("passed\ta\nfailed\tb\nerror\tc\n")
    lines = [{"nodeid": "b", "error": "new b"}, {"nodeid": "c", "error": "E   boom"}]
    (tmp_path / "tests.errors").write_text("".join(json.dumps(x) + "\n" for x in lines) + '{"cut')
    s.fold_live_tests()
    assert s.rec["errors"] == {"b": "new b", "c": "E   boom"}
    assert s.rec["tests"] == {"a": ["passed", 2], "b": ["failed", 2], "c": ["error", 2]}


def test_render_statuses():
    rec = {
        "env": {
            "device": "GPU X",
            "date": "2026-11-27",
            "slug": "GPU-X",
            "torch": "2.11.0+cu130",
            "torch_cuda": "13.0",
            "python": "3.12",
            "capability": "9.0",
        },
        "calls": [{"kind": "all", "started": "t", "budget": 520, "seconds": 540, "build": {"action": "archive used"}}],
        "selected": ["tests/test_a.py::x", "tests/test_a.py::y", "tests/test_b.py::z"],
        "tests": {"tests/test_a.py::x": ["passed", 1], "tests/test_a.py::y": ["failed", 1]},
        "errors": {"tests/test_a.py::y": "tests/test_a.py:3: AssertionError: boom\nE   assert 1 == 2"},
        "changed": {},
        "units": {
            "tests": {"part": "tests", "status": "done", "call": 1},
            "sanitize:memcheck:a": {"part": "sanitize", "tool": "memcheck", "status": "errors", "errors": 4, "call": 1},
            "sanitize:initcheck:a": {"part": "sanitize", "tool": "initcheck", "status": "running", "call": 1},
            "bench:nms": {"part": "bench", "status": "not started", "call": 1},
        },
    }
    md = gpu_results.render(rec, "/nonexistent")
    assert "STOPPED before its end" in md  # the call never wrote its last record
    assert part_row(md, "tests") == ("CUT", "1 passed, 1 failed, 0 skipped, 0 error, 1 not run")
    assert part_row(md, "sanitize")[0] == "CUT" and "4 errors" in part_row(md, "sanitize")[1]
    assert part_row(md, "bench")[0] == "CUT"
    assert "| b | 0 | 0 | 0 | 0 | 1 |" in md and "- `tests/test_a.py::y`" in md
    # the failed test's error under its name
    assert "- `tests/test_a.py::y`\n  ```\n  tests/test_a.py:3: AssertionError: boom\n  E   assert 1 == 2\n  ```" in md
    rec["units"]["sanitize:initcheck:a"]["status"] = "done"
    assert part_row(gpu_results.render(rec, "/x"), "sanitize")[0] == "ERRORS"


def error_and_ok_rows():
    ok = {
        "family": "diagonal",
        "device": "cpu",
        "label": "diagonal",
        "sub_label": "[8,8]",
        "myops_s": 1e-6,
        "bytes": 64,
        "numel": 8,
        "target": 1.0,
        "floor_target": None,
        "series": "diagonal",
        "baselines": {"torch": {"s": 2e-6, "ratio": 2.0}, "inductor": {"error": "BackendCompilerFailed: x"}},
    }
    err = runner.error_row("diagonal", "cpu", "diagonal", "[9,9]", RuntimeError("boom\nmore"))
    fam_err = runner.error_row("nms", "cpu", "nms", "(cases)", ValueError("no cases"))
    return [ok, err, fam_err]


def test_runner_readers_survive_error_rows(tmp_path):
    rows = error_and_ok_rows()
    meta = {
        "device": "cpu",
        "device_name": "CPU",
        "date": "2026-11-24",
        "torch": "x",
        "torch_cuda": None,
        "commit": "c",
        "copy_GBps": 10.0,
    }
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
    # the session's bench reader: the runner's rows by family, its own record left out
    (tmp_path / "GPU-X-2026-11-24-session.json").write_text(json.dumps({"rows": rows}))
    assert len(gpu_results.bench_rows(str(tmp_path), "diagonal")) == 2
    assert len(gpu_results.bench_rows(str(tmp_path))) == 3


def test_every_family_marks_headline_cases():
    """The session's bench part runs `runner.py --headline`: every family marks the cases its
    targets are read on (Case.headline)."""
    for fam in runner.FAMILIES:
        src = open(os.path.join(ROOT, "benchmarks", f"bench_{fam}.py")).read()
        assert "headline=" in src, f"bench_{fam}.py marks no headline case"


def test_every_graph_capture_is_marked():
    """The sanitizer part runs `cuda_graph` tests apart (the no-caching allocator's cudaFree is
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


def test_dry_run_sweep_runs_every_variant_through_the_emulation(tmp_path):
    # `gpu_session.sh --dry-run sweep`: every kernel variant x its family's cases (small sizes),
    # through the CUDA emulation (tests/cuda_emulation/loader.py builds it on first use: in CI this
    # file runs on the plain build, apart from test_cuda_emulation.py), each checked against torch;
    # the -sweep.md / .json come back in $OUT
    from cuda_emulation.loader import cuda_include_dir

    if cuda_include_dir() is None:
        pytest.skip("no CUDA headers to build the emulation with")
    import torch

    import myops  # noqa: F401

    out = tmp_path / "out"
    e = dict(os.environ, OUT=str(out), PYTHON=sys.executable, GPU_SESSION_STATE=str(tmp_path / "state"))
    p = subprocess.run(
        ["bash", os.path.join(ROOT, "gpu", "gpu_session.sh"), "--dry-run", "sweep"],
        cwd=ROOT,
        env=e,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert p.returncode == 0, p.stdout[-5000:] + p.stderr[-5000:]
    [md] = [n for n in os.listdir(out) if n.endswith("-sweep.md")]
    assert re.fullmatch(r"cpu-dryrun-\d{4}-\d\d-\d\d-sweep\.md", md)
    rows = json.loads((out / md.replace(".md", ".json")).read_text())["rows"]
    assert rows and not [r for r in rows if "error" in r]
    swept = {f"{r['op']}:{r['variant']}" for r in rows}
    assert swept == set(torch.ops.myops._cuda_variants())
    text = (out / md).read_text()
    assert "| op | variant | case |" in text and "| nonzero_static | lookback | [1e+03] bool 50% |" in text, text


def test_dry_run_tune_runs_tests_sweep_and_bench(tmp_path):
    # `gpu_session.sh --dry-run tune` (a tree that passed `all`): the changed families' tests, the
    # sweep (one tunable op, through the emulation), then the headline bench, in one call whose
    # -tests.md lists the three parts; without GPU_SESSION_FAMILIES it refuses
    from cuda_emulation.loader import cuda_include_dir

    if cuda_include_dir() is None:
        pytest.skip("no CUDA headers to build the emulation with")
    out, md = session(tmp_path, "tune", tmp_path / "o", GPU_SESSION_SWEEP_OPS="binary16")
    assert part_row(md, "tests") == ("done", "0 passed, 0 failed, 17 skipped, 0 error, 0 not run"), md
    word, detail = part_row(md, "sweep")
    assert word == "done" and re.search(r"; [1-9]\d* rows, 0 error rows", detail), md
    assert part_row(md, "bench")[0] == "done" and "| sanitize | not run in this session |" in md, md
    assert "call 1: `tune` (dry run)" in md
    [sw] = (tmp_path / "o").glob("*-sweep.json")
    assert {r["op"] for r in json.loads(sw.read_text())["rows"]} == {"binary16"}
    e = dict(os.environ, OUT=str(tmp_path / "o2"), PYTHON=sys.executable, GPU_SESSION_FAMILIES="")
    p = subprocess.run(
        ["bash", os.path.join(ROOT, "gpu", "gpu_session.sh"), "--dry-run", "tune"],
        cwd=ROOT,
        env=e,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert p.returncode == 2 and "GPU_SESSION_FAMILIES is not set" in p.stdout, p.stdout + p.stderr


def test_families_of_changed_paths():
    import gpu_session

    f = gpu_session.families_of
    assert f(["csrc/max_pool2d_add/cuda/max_pool2d_add.cu", "docs/design.md"]) == ["max_pool2d_add"]
    assert f(["csrc/elementwise/cuda/elementwise_binary.cu"]) == [
        t for t in f(["setup.py"]) if t.startswith("elementwise")
    ]
    assert f(["python/myops/_nonzero.py", "tests/test_nms.py", "benchmarks/sweep.py"]) == ["nms", "nonzero"]
    everything = f(["csrc/core/variants.h"])
    assert "roi_align" in everything and "cuda_emulation" not in everything and everything == f(["setup.py"])
    assert f(["tests/helpers.py"]) == everything
    assert f(["README.md", "tests/cuda_emulation/loader.py", "tests/test_cuda_emulation.py"]) == []


def test_dry_run_graph_runs_the_detector_table(tmp_path):
    # `gpu_session.sh --dry-run graph` (issue #59): bench_deploy.py --graph on one small row on
    # the CPU: eager and the static module timed and checked, the CUDA graph an error cell; the
    # -graph.md comes back in $OUT and the -tests.md has the graph part
    out, md = session(tmp_path, "graph", tmp_path / "o")
    word, detail = part_row(md, "graph")
    assert word == "done" and detail.endswith("; 1 rows, 1 error rows"), md
    [table] = (tmp_path / "o").glob("*-graph.md")
    text = table.read_text()
    assert "| fasterrcnn_resnet50_fpn | 320x416 | 1 |" in text, text
    assert "static: ok" in text and "graph: ERROR a CUDA graph needs a CUDA device" in text, text


def test_sweep_table_has_inductor_columns():
    # the Inductor cells: a time and its ratio, an error named, or a dash where not timed
    import sweep

    rows = [
        dict(
            op="binary16",
            variant="paired",
            case="c",
            default=False,
            myops_s=1e-5,
            torch_s=2e-5,
            speedup=2.0,
            inductor_s=1.5e-5,
            vs_inductor=1.5,
        ),
        dict(
            op="max_pool2d_add",
            variant="tile",
            case="c",
            default=True,
            myops_s=1e-5,
            torch_s=1e-5,
            speedup=1.0,
            inductor_error="BackendCompilerFailed: x | y",
        ),
        dict(op="nonzero", variant="cub", case="c", default=True, myops_s=1e-5, torch_s=1e-5, speedup=1.0),
        dict(op="nonzero", variant="lookback", case="c", default=False, error="differs"),
    ]
    meta = dict(device="d", date="2026-01-01", torch="t", commit="c", arch=90, emulation=False)
    md = sweep.markdown(rows, meta)
    assert "| op | variant | case | myops | torch | inductor | vs torch | vs inductor | default |" in md
    assert "| binary16 | paired | c | 10.0 us | 20.0 us | 15.0 us | 2.00x | 1.50x |  |" in md, md
    assert (
        "| max_pool2d_add | tile | c | 10.0 us | 10.0 us | error: BackendCompilerFailed: x / y | 1.00x |  | yes |" in md
    )
    assert "| nonzero | cub | c | 10.0 us | 10.0 us | - | 1.00x |  | yes |" in md
    assert "| nonzero | lookback | c | ERROR |  |  | differs |  |  |" in md


def test_the_dry_run_plans_what_the_gpu_runs(tmp_path):
    """`all` as the GPU machine calls it (no GPU_SESSION_* narrowing, no sys.path of the tests):
    the dry run's plan, part by part and unit by unit in order, is the real one's, and the bench
    part holds every runner family but deploy, the detector last."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GPU_SESSION", "SANITIZE_"))}
    env.pop("PYTHONPATH", None)
    env.update(OUT=str(tmp_path / "out"), GPU_SESSION_STATE=str(tmp_path / "state"))
    script = os.path.join(ROOT, "gpu", "gpu_session.py")

    def plan(*dry):
        p = subprocess.run(
            [sys.executable, script, *dry, "--plan", "all"], env=env, cwd=tmp_path, capture_output=True, text=True
        )
        assert p.returncode == 0, p.stdout + p.stderr
        return json.loads(p.stdout.strip().splitlines()[-1])

    real, dry = plan(), plan("--dry-run")
    assert dry == real
    fams = [f for f in runner.FAMILIES if f not in ("deploy", "detector")] + ["detector"]
    assert real["bench"] == fams and real["tests"] == ["tests"]
    assert real["sanitize"] and {u[1] for u in real["sanitize"]} == {"memcheck", "initcheck"}
