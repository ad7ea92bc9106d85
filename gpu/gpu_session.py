"""The GPU session: a lease of the device tool turned into results in one call (`all`), and a
short second call (`rerun`) for what failed or was cut. Run through gpu/gpu_session.sh;
benchmarks/README.md ("GPU") gives the exact calls.

`all`, on a bare 16-core GPU machine, within GPU_SESSION_SECONDS (default 520 of the call's 540):
  0. the build: the archive carried in gpu-build/ (gpu/gpu_build.py) is checked against the
     torch, CUDA and Python found here and the checkout's sources. A match is installed into
     python/myops/; otherwise myops is built here (16 cores), and the new archive goes to $OUT.
  1. tests: every CUDA test (`pytest -m cuda`, every test file but the CPU emulation), with
     pytest-xdist across the cores;
  2. sanitize: compute-sanitizer memcheck, then initcheck, over the set in
     gpu/gpu_sanitize_set.txt, one process per test file and tool (a pool of 4 beside
     the tests, 12 once they are done), the caching allocator off; the `cuda_graph` tests of
     the set apart under memcheck, allocator on;
  3. bench: the headline cases of every runner family (`runner.py --headline`), Inductor beside
     eager, one process per family, each under a fair share of the time left.
  Parts 1 and 2 share the GPU from the start; part 3 runs alone after them. Parts 1 and 2 end by
  GPU_SESSION_BENCH_SECONDS (default 180) before the budget's end, or at half of the time left
  after the build if that is later (a build on the device squeezes the bench first). A part
  stopped by its deadline is CUT.
`sweep` (issue #54): the build as in `all`, then benchmarks/sweep.py: every CUDA kernel variant
(csrc/core/variants.h) x its family's headline cases, checked against torch and timed in turn
with it, into <gpu>-<date>-sweep.md / .json in $OUT (the dry run: through the CUDA emulation, on
the importable CPU build, at small sizes).
`tune` (issue #54), for a tree whose sources already passed `all` on a GPU: the build as in
`all`, then the CUDA tests of the changed families only (GPU_SESSION_FAMILIES, required: the
test files' stems; `gpu_session.py --families-since COMMIT` prints them from git on the host, as
the device's copy of .git may be stale), then the sweep, then the headline bench (part 3), in one
call: the tests until GPU_SESSION_TUNE_TESTS_SECONDS (default 120) after the build, the sweep
until GPU_SESSION_BENCH_SECONDS before the budget's end, the bench the rest. The dry run takes
the importable CPU build, as `sweep` does, and its sweep runs the variants through the emulation
(GPU_SESSION_SWEEP_OPS: only those tunable ops).
`graph` (issue #59): the build as in `all`, then benchmarks/bench_deploy.py --graph --check64:
the static detector (Faster / Mask R-CNN, RetinaNet at 800x1088, batch 1 and 4) captured whole in
one CUDA graph, against eager torchvision, the static module eager and
torch.compile(mode="reduce-overhead"), into <gpu>-<date>-graph.md in $OUT (GPU_SESSION_GRAPH_ARGS:
more bench_deploy.py arguments, e.g. "--graph-forms eager static graph" to leave out the
compile). The dry run: Faster R-CNN at 320x416, batch 1, on the CPU (the graph an error cell).
`rerun` reads the record of the last call (below) and runs, with the same archive, only the tests
that did not pass or skip, the sanitizer units and the bench families that did not end clean.

Results, rewritten in $OUT each time a unit ends (and every 20 s while the tests run), so that a
call cut by the device tool still returns its evidence:
  <gpu>-<date>-tests.md      the summary (gpu/gpu_results.py): each part's outcome, the
                             tests by file, each sanitizer unit's ERROR SUMMARY, the bench rows;
  <gpu>-<date>-session.json  the record: every test's outcome, every unit's status, the calls;
  <gpu>-<date>.md / .json    the runner's tables;  session.log  everything printed;
  myops-gpu.tar.xz(.partNN)  only when the build was made here.
The record is also kept on the machine (build/gpu-session/, with any archive built here), where a
`rerun` on the still-warm machine finds it; on a fresh machine `rerun` reads the newest
*-session.json in benchmarks/results/ (commit the returned one there first).

Environment: GPU_SESSION_SECONDS, GPU_SESSION_BENCH_SECONDS, GPU_SESSION_PARTS (default
"tests sanitize bench"), GPU_SESSION_FAMILIES (test files, e.g. "nonzero diagonal"),
GPU_SESSION_BENCH (runner families; default all but deploy, the detector last),
GPU_SESSION_BENCH_ARGS (more runner arguments), SANITIZE_TOOLS (default "memcheck initcheck"),
GPU_SESSION_WORKERS (xdist workers, default 12), GPU_SESSION_SANITIZE_WORKERS (default 4) and
GPU_SESSION_SANITIZE_WORKERS_ALONE (default 12, once the tests are done), GPU_SESSION_ARCHIVE
(default gpu-build), GPU_SESSION_RESULTS (default benchmarks/results), GPU_SESSION_STATE
(default build/gpu-session), GPU_SESSION_RECORD (the record a rerun reads, instead of the
newest). Dry run (--dry-run, CI): every part on the CPU against the CPU build (the CUDA tests
skip, a stand-in prints the sanitizer's summary, the build is the CPU build packed);
GPU_SESSION_DRY_HANG="tests sanitize bench" makes those parts hang, to prove a cut.
"""

import argparse
import datetime
import glob
import json
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
BENCH = os.path.join(ROOT, "benchmarks")  # runner.py, sweep.py, bench_deploy.py, results/
sys.path.insert(0, HERE)
sys.path.insert(1, BENCH)  # runner.py: the bench part's families (bench_families)

import gpu_build  # noqa: E402
import gpu_results  # noqa: E402
from gpu_pytest_plugin import DONE, read_errors, read_patterns  # noqa: E402

PARTS = ("tests", "sanitize", "bench")
MAX_ERRORS = 400  # failed tests whose error the record keeps (each gpu_pytest_plugin.ERROR_CHARS at most)
MARGIN = 8  # seconds kept at the end of the budget for the last writes
GRACE = 10  # seconds between SIGINT (pytest writes its report) and SIGKILL
SANITIZE_SET = os.path.join(HERE, "gpu_sanitize_set.txt")


def env_int(name, default):
    return int(os.environ.get(name) or default)


def now_iso():
    return datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


class Session:
    def __init__(self, mode, dry):
        self.mode, self.dry = mode, dry
        self.t0 = time.monotonic()
        self.budget = env_int("GPU_SESSION_SECONDS", 520 if mode in ("all", "sweep", "tune", "graph") else 150)
        self.bench_seconds = env_int("GPU_SESSION_BENCH_SECONDS", 180)
        self.parts = [p for p in (os.environ.get("GPU_SESSION_PARTS", " ".join(PARTS))).split() if p in PARTS]
        self.out = os.path.abspath(os.environ.get("OUT") or os.path.join(ROOT, "gpu-out"))
        os.makedirs(self.out, exist_ok=True)
        self.state = os.path.abspath(os.environ.get("GPU_SESSION_STATE") or os.path.join(ROOT, "build", "gpu-session"))
        os.makedirs(self.state, exist_ok=True)
        self.results = os.path.abspath(os.environ.get("GPU_SESSION_RESULTS") or os.path.join(BENCH, "results"))
        self.archive = os.path.abspath(os.environ.get("GPU_SESSION_ARCHIVE") or os.path.join(ROOT, "gpu-build"))
        self.work = tempfile.mkdtemp(prefix="gpu-session-")
        self.python = os.environ.get("PYTHON") or sys.executable
        self.hang = set(os.environ.get("GPU_SESSION_DRY_HANG", "").split()) if dry else set()
        self.pkgroot = os.path.join(self.work, "pkg") if dry else os.path.join(ROOT, "python")
        self.lock = threading.RLock()
        self.tests_done = threading.Event()  # the sanitizer then takes the tests' cores
        self.procs = set()
        self.env = dict(os.environ, PYTHONUNBUFFERED="1")
        if dry:
            self.env["CUDA_VISIBLE_DEVICES"] = ""
        path = [self.pkgroot, HERE, BENCH] + ([os.environ["PYTHONPATH"]] if os.environ.get("PYTHONPATH") else [])
        self.env["PYTHONPATH"] = os.pathsep.join(path)

    # ---- time ------------------------------------------------------------------------------
    def elapsed(self):
        return time.monotonic() - self.t0

    def left(self):
        return self.budget - MARGIN - self.elapsed()

    def log(self, msg):
        print(f"[{self.elapsed():5.0f}s] {msg}", flush=True)

    # ---- processes -------------------------------------------------------------------------
    def run(self, cmd, deadline, logpath, env=None):
        """Run cmd (its own process group) until it ends or the session clock reaches `deadline`
        (seconds since start): then SIGINT, and SIGKILL after GRACE. (rc, cut, seconds)."""
        start = self.elapsed()
        if deadline - start < 3:
            return None, True, 0.0
        with open(logpath, "ab") as log:
            try:
                p = subprocess.Popen(
                    cmd, stdout=log, stderr=subprocess.STDOUT, env=env or self.env, cwd=ROOT, start_new_session=True
                )
            except OSError as e:  # e.g. no compute-sanitizer on PATH
                log.write(f"ERROR: cannot run {cmd[0]}: {e}\n".encode())
                return 127, False, 0.0
            with self.lock:
                self.procs.add(p)
            cut = False
            try:
                p.wait(timeout=max(0.1, deadline - self.elapsed()))
            except subprocess.TimeoutExpired:
                cut = True
                self.signal(p, signal.SIGINT)
                try:
                    p.wait(timeout=GRACE)
                except subprocess.TimeoutExpired:
                    self.signal(p, signal.SIGKILL)
                    p.wait()
            with self.lock:
                self.procs.discard(p)
        return p.returncode, cut, self.elapsed() - start

    @staticmethod
    def signal(p, sig):
        try:
            os.killpg(p.pid, sig)
        except ProcessLookupError:
            pass

    def stop_all(self):
        with self.lock:
            for p in list(self.procs):
                self.signal(p, signal.SIGKILL)

    # ---- the record ------------------------------------------------------------------------
    def load_record(self):
        """The record a rerun continues: GPU_SESSION_RECORD, else the newest of the one kept on
        this machine and the committed ones."""
        given = os.environ.get("GPU_SESSION_RECORD")
        paths = (
            [given]
            if given
            else [os.path.join(self.state, "record.json")]
            + sorted(glob.glob(os.path.join(self.results, "*-session.json")))
        )
        best = None
        for path in paths:
            try:
                with open(path) as f:
                    rec = json.load(f)
            except (OSError, ValueError):
                continue
            key = (rec.get("session", ""), len(rec.get("calls", [])))
            if best is None or key > best[0]:
                best = (key, rec, path)
        if best is None:
            raise SystemExit(
                "rerun: no record of an earlier call (build/gpu-session/record.json, "
                f"{self.results}/*-session.json or GPU_SESSION_RECORD)"
            )
        self.log(
            f"rerun: continuing the record {best[2]} (session {best[1]['session']}, {len(best[1]['calls'])} call(s))"
        )
        return best[1]

    def flush(self):
        """Write the record and the summary into $OUT (atomically) and the record into the state
        folder."""
        with self.lock:
            self.fold_live_tests()
            rec = self.rec
            rec["calls"][-1]["seconds"] = round(self.elapsed())
            name = f"{rec['env']['slug']}-{rec['env']['date']}"
            for folder, fname in ((self.out, f"{name}-session.json"), (self.state, "record.json")):
                tmp = os.path.join(folder, f".{fname}.partial")
                with open(tmp, "w") as f:
                    json.dump(rec, f, indent=0, sort_keys=True)
                os.replace(tmp, os.path.join(folder, fname))
            md = gpu_results.render(rec, self.out)
            tmp = os.path.join(self.out, f".{name}-tests.md.partial")
            with open(tmp, "w") as f:
                f.write(md)
            os.replace(tmp, os.path.join(self.out, f"{name}-tests.md"))

    def fold_live_tests(self):
        """Merge the tests part's live files (one line per test as it ends; the selection) into
        the record."""
        call = len(self.rec["calls"])
        rec_file = os.path.join(self.work, "tests.record")
        if os.path.exists(rec_file):
            with open(rec_file, errors="replace") as f:
                for line in f:
                    outcome, _, nodeid = line.rstrip("\n").partition("\t")
                    if not nodeid:
                        continue
                    old = self.rec["tests"].get(nodeid)
                    if old and old[0] != outcome and old[1] != call:
                        self.rec["changed"][nodeid] = f"{old[0]} (call {old[1]}) -> {outcome} (call {call})"
                    self.rec["tests"][nodeid] = [outcome, call]
        # why each test that fails now failed (its latest error); a test that passed since has none
        errors = self.rec.setdefault("errors", {})
        for nodeid, text in read_errors(os.path.join(self.work, "tests.errors")).items():
            if nodeid in errors or len(errors) < MAX_ERRORS:
                errors[nodeid] = text
        for nodeid in [n for n in errors if self.rec["tests"].get(n, ["failed"])[0] in DONE]:
            del errors[nodeid]
        sel = os.path.join(self.work, "tests.selected")
        if os.path.exists(sel):
            with open(sel) as f:
                ids = [x.rstrip("\n") for x in f if x.strip()]
            self.rec["selected"] = sorted(set(self.rec.get("selected", [])) | set(ids))

    def set_unit(self, uid, **fields):
        with self.lock:
            u = self.rec["units"].setdefault(uid, {})
            u.update(fields, call=len(self.rec["calls"]))
            self.flush()

    # ---- setup -----------------------------------------------------------------------------
    def probe(self):
        """The stack here: fingerprint (gpu_build.py) and device, driver, cores."""
        out = subprocess.run(
            [self.python, os.path.join(HERE, "gpu_build.py"), "fingerprint"],
            env=self.env,
            capture_output=True,
            text=True,
            cwd=ROOT,
        )
        if out.returncode:
            raise SystemExit(f"cannot import torch with {self.python}: {out.stderr[-2000:]}")
        fp = json.loads(out.stdout.strip().splitlines()[-1])
        # the machine's copy of the checkout has no .git: the sources' hash names them there
        env = dict(
            fp,
            date=datetime.date.today().isoformat(),
            cores=os.cpu_count(),
            commit=gpu_build._git_commit(),
            source_hash=gpu_build.source_hash(),
        )
        if self.dry:
            env.update(device="CPU (dry run: every part's plumbing, no GPU)", driver="-", slug="cpu-dryrun")
        else:
            try:
                q = (
                    subprocess.check_output(
                        ["nvidia-smi", "--query-gpu=name,driver_version", "--format=csv,noheader"], text=True
                    )
                    .strip()
                    .splitlines()[0]
                )
                env["device"], env["driver"] = [x.strip() for x in q.split(",")]
            except Exception:  # noqa: BLE001
                env["device"], env["driver"] = "unknown GPU", "unknown"
            env["slug"] = re.sub(r"[^A-Za-z0-9._-]+", "-", env["device"])  # as runner.py names its tables
        env["xdist"] = self.has_module("xdist")
        env["pytest_timeout"] = self.has_module("pytest_timeout")
        env["sanitizer"] = "dry-run stand-in" if self.dry else (shutil.which("compute-sanitizer") or "not found")
        return env

    def has_module(self, name):
        return subprocess.run([self.python, "-c", f"import {name}"], env=self.env, capture_output=True).returncode == 0

    def prepare_build(self):
        """The archive check (gpu-build/, then the build kept from an earlier call on this
        machine); a match is installed, otherwise myops is built here. True when myops imports."""
        b = {"archive": self.archive}
        found = None
        for folder in (self.archive, os.path.join(self.state, "archive")):
            verdict, reasons, manifest = gpu_build.check(folder, fp=self.rec["env"])
            self.log(f"archive {folder}: {verdict}" + "".join(f"\n    {r}" for r in reasons))
            if found is None or verdict == "match":
                found = (folder, verdict, reasons, manifest)
            if verdict == "match":
                break
        folder, verdict, reasons, manifest = found
        b.update(
            verdict=verdict,
            reasons=reasons,
            folder=folder,
            built_for={
                k: manifest.get(k)
                for k in ("python", "torch", "torch_cuda", "torch_git", "built", "commit", "source_hash")
            }
            if manifest
            else None,
        )
        if verdict == "match":
            self.install(folder)
            b["action"] = f"archive used ({os.path.relpath(folder, ROOT) if folder.startswith(ROOT) else folder})"
        else:
            b["action"] = self.build_here(b)
        self.rec["calls"][-1]["build"] = b
        self.flush()
        ok = b["action"].startswith(("archive used", "built here"))
        if ok:
            r = subprocess.run(
                [
                    self.python,
                    "-c",
                    "import myops, sys; myops.show_config(); "
                    f"sys.exit(0 if myops.BUILD_CONFIG['with_cuda'] or {self.dry} else 1)",
                ],
                env=self.env,
                cwd=ROOT,
                capture_output=True,
                text=True,
            )
            print(r.stdout + r.stderr, end="")
            if r.returncode:
                b["action"] += "; IMPORT FAILED (myops without its CUDA kernels, or a broken archive)"
                ok = False
        self.log(f"build: {b['action']}")
        return ok

    def install(self, folder):
        if self.dry:  # a scratch package: the checkout's .py files and the archive's built files
            shutil.rmtree(self.pkgroot, ignore_errors=True)
            shutil.copytree(
                os.path.join(ROOT, "python", "myops"),
                os.path.join(self.pkgroot, "myops"),
                ignore=shutil.ignore_patterns("*.so", "lib", "include", "share", "_build_config.py", "__pycache__"),
            )
        verdict, reasons, _ = gpu_build.check(folder, install=self.pkgroot, fp=self.rec["env"])
        assert verdict == "match", reasons

    def build_here(self, b):
        """Build with setup.py (16 cores) out of the tree, pack the archive into $OUT and the
        state folder, install it. The dry run's stand-in packs the CPU build in python/myops."""
        start = self.elapsed()
        lib = os.path.join(self.work, "build-lib")
        if self.dry:
            os.makedirs(lib)
            shutil.copytree(
                os.path.join(ROOT, "python", "myops"),
                os.path.join(lib, "myops"),
                ignore=shutil.ignore_patterns("__pycache__"),
            )
            how = "built here (dry run: the CPU build in python/myops packed as a stand-in)"
        else:
            env = dict(self.env, FORCE_CUDA="1", MAX_JOBS=str(os.cpu_count() or 16))
            log = os.path.join(self.work, "build.log")
            cmd = [
                self.python,
                "setup.py",
                "build_ext",
                "--build-lib",
                lib,
                "--build-temp",
                os.path.join(ROOT, "build", "gpu-temp"),
            ]
            self.log("building myops here: " + " ".join(cmd))
            rc, cut, secs = self.run(cmd, self.budget - MARGIN - 60, log, env)
            if rc != 0 or cut:
                print(open(log, errors="replace").read()[-6000:])
                return f"build {'CUT' if cut else 'FAILED'} after {secs:.0f} s (the log's end is in session.log)"
            how = f"built here in {self.elapsed() - start:.0f} s"
        paths, _ = gpu_build.pack(
            lib, self.out, note=f"built by gpu_session.py on {self.rec['env']['device']}", allow_cpu=self.dry
        )
        keep = os.path.join(self.state, "archive")
        shutil.rmtree(keep, ignore_errors=True)
        os.makedirs(keep)
        for p in paths:
            shutil.copy(p, keep)
        self.install(self.out)
        names = ", ".join(os.path.basename(p) for p in paths)
        return f"{how}; the new archive is in $OUT ({names}): copy it into gpu-build/"

    # ---- the parts -------------------------------------------------------------------------
    def pytest_cmd(self, args, record, selected=None, hang=False, timeout=120, errors=None):
        """pytest with the session's plugin (gpu/gpu_pytest_plugin.py): each test's outcome
        into `record` as it ends (and each failure's error lines into `errors`); pytest-timeout's
        per-test limit where it is installed."""
        cmd = [
            self.python,
            "-m",
            "pytest",
            "-q",
            "-rfE",
            "-p",
            "no:cacheprovider",
            "-p",
            "gpu_pytest_plugin",
            "--gpu-record",
            record,
        ]
        if self.rec["env"]["pytest_timeout"]:
            cmd += ["--timeout", str(timeout)]
        if selected:
            cmd += ["--gpu-selected", selected]
        if errors:
            cmd += ["--gpu-errors", errors]
        if hang:
            cmd += ["--gpu-dry-hang"]
        return cmd + args

    def test_files(self):
        fams = os.environ.get("GPU_SESSION_FAMILIES", "").split()
        if fams:
            return [f"tests/test_{f}.py" for f in fams]
        return [
            os.path.relpath(p, ROOT)
            for p in sorted(glob.glob(os.path.join(ROOT, "tests", "test_*.py")))
            if not p.endswith("test_cuda_emulation.py")
        ]

    def part_tests(self, deadline):
        try:
            self.run_tests(deadline)
        finally:
            self.tests_done.set()

    def run_tests(self, deadline):
        files = self.test_files()
        cmd = self.pytest_cmd(
            files + ["-m", "cuda"],
            os.path.join(self.work, "tests.record"),
            os.path.join(self.work, "tests.selected"),
            hang="tests" in self.hang,
            errors=os.path.join(self.work, "tests.errors"),
        )
        if self.mode == "rerun":
            done = os.path.join(self.work, "tests.done")
            with open(done, "w") as f:
                f.writelines(f"{o}\t{n}\n" for n, (o, _) in self.rec["tests"].items() if o in DONE)
            cmd += ["--gpu-skip-done", done]
        workers = env_int("GPU_SESSION_WORKERS", 12)
        if self.rec["env"]["xdist"] and not self.dry and workers > 1:
            cmd += ["-n", str(workers)]
        self.log(f"tests: start ({len(files)} files, deadline {deadline:.0f} s)")
        self.set_unit("tests", part="tests", status="running")
        rc, cut, secs = self.run(cmd, deadline, os.path.join(self.work, "tests.log"))
        status = "cut" if cut else {0: "done", 1: "failed", 5: "done"}.get(rc, f"exit {rc}")
        self.set_unit("tests", part="tests", status=status, rc=rc, seconds=round(secs))
        self.log(f"tests: {status} in {secs:.0f} s")
        self.excerpt("tests.log")

    def sanitize_units(self):
        """(unit id, tool, test file or None for the graph captures) in the order they run."""
        patterns = read_patterns(SANITIZE_SET)
        files = [f for f in self.test_files() if any(p.startswith(f + "::") for p in patterns)]
        tools = os.environ.get("SANITIZE_TOOLS", "memcheck initcheck").split()
        units = []
        for tool in tools:
            # the largest families first: a pool of workers ends sooner
            for f in sorted(files, key=lambda f: -sum(p.startswith(f + "::") for p in patterns)):
                units.append((f"sanitize:{tool}:{os.path.basename(f)[5:-3]}", tool, f))
            if tool == "memcheck":
                units.append(("sanitize:memcheck:graphs", "memcheck", None))
        return units

    def sanitize_cmd(self, tool, f, uid):
        graphs = f is None
        files = [x for x in self.test_files()] if graphs else [f]
        mark = "cuda and cuda_graph" if graphs else "cuda and not cuda_graph"
        cmd = self.pytest_cmd(
            files + ["-m", mark, "--gpu-select", SANITIZE_SET],
            os.path.join(self.work, f"{uid}.record"),
            hang="sanitize" in self.hang,
            timeout=300,
        )
        if self.dry:
            # the stand-in: the same tests, then the summary line compute-sanitizer prints
            summary = f"========= ERROR SUMMARY: 0 errors (dry run: no compute-sanitizer, tool {tool})"
            shell = " ".join(map(shlex.quote, cmd)) + f"; rc=$?; echo '{summary}'; exit $rc"
            cmd = ["bash", "-c", shell]
        else:
            cmd = ["compute-sanitizer", "--tool", tool, "--error-exitcode", "99", "--print-limit", "20"] + cmd
        env = dict(self.env)
        if not graphs:
            # no caching allocator: an access past an allocation's end lands outside any allocation
            # (a capture forbids that allocator's cudaFree: the graph tests keep the caching one)
            env["PYTORCH_NO_CUDA_MEMORY_CACHING"] = "1"
        return cmd, env

    def part_sanitize(self, deadline, units):
        queue = list(units)
        for uid, tool, f in queue:
            self.rec["units"].setdefault(uid, {}).update(
                part="sanitize", tool=tool, status="not started", call=len(self.rec["calls"])
            )
        self.flush()
        self.log(f"sanitize: start ({len(queue)} units, deadline {deadline:.0f} s)")

        def worker():
            while True:
                with self.lock:
                    if not queue:
                        return
                    uid, tool, f = queue.pop(0)
                if deadline - self.elapsed() < 20:  # too little left for a sanitizer process
                    self.log(f"{uid}: not started ({deadline - self.elapsed():.0f} s left of the part)")
                    continue
                cmd, env = self.sanitize_cmd(tool, f, uid)
                log = os.path.join(self.work, uid.replace(":", "-") + ".log")
                self.set_unit(uid, status="running")
                rc, cut, secs = self.run(cmd, deadline, log, env)
                errors = gpu_results.error_summaries(log)
                counts = gpu_results.record_counts(os.path.join(self.work, f"{uid}.record"))
                if cut:
                    status = "cut"
                elif rc == 5:
                    status = "no tests"
                elif rc == 99 or sum(errors):
                    status = "errors"
                else:
                    status = {0: "done", 1: "failed"}.get(rc, f"exit {rc}")
                self.set_unit(
                    uid,
                    status=status,
                    rc=rc,
                    seconds=round(secs),
                    errors=sum(errors) if errors else None,
                    counts=counts,
                )
                self.log(f"{uid}: {status} in {secs:.0f} s" + (f", ERROR SUMMARY {sum(errors)}" if errors else ""))
                self.excerpt(os.path.basename(log))

        def start(n):
            ts = [threading.Thread(target=self.guarded, args=(worker,)) for _ in range(n)]
            for t in ts:
                t.start()
            return ts

        # a few processes beside the tests; once the tests are done, their cores too
        threads = start(env_int("GPU_SESSION_SANITIZE_WORKERS", 4))
        while any(t.is_alive() for t in threads) and not self.tests_done.wait(2):
            pass
        with self.lock:
            more = min(len(queue), max(0, env_int("GPU_SESSION_SANITIZE_WORKERS_ALONE", 12) - len(threads)))
        if more:
            self.log(f"sanitize: the tests are done: {more} more sanitizer processes at a time")
            threads += start(more)
        for t in threads:
            t.join()

    def bench_families(self):
        given = os.environ.get("GPU_SESSION_BENCH")
        if given:
            return given.split()
        import runner  # noqa: PLC0415 - only the list of families

        # deploy: minutes of export and C++ builds; the detector last (its Inductor peer compiles a
        # whole detector: the family most likely to run out of time)
        fams = [f for f in runner.FAMILIES if f not in ("deploy", "detector")]
        return fams + ["detector"] * ("detector" in runner.FAMILIES)

    def part_bench(self, fams):
        for uid in fams:
            self.rec["units"].setdefault(f"bench:{uid}", {}).update(
                part="bench", status="not started", call=len(self.rec["calls"])
            )
        self.flush()
        extra = os.environ.get("GPU_SESSION_BENCH_ARGS", "--quick" if self.dry else "").split()
        kept = os.path.join(self.state, "bench")  # the runner's tables so far: --append adds to them
        os.makedirs(kept, exist_ok=True)
        for p in glob.glob(os.path.join(kept, "*")):
            if not os.path.exists(os.path.join(self.out, os.path.basename(p))):
                shutil.copy(p, self.out)
        for i, fam in enumerate(fams):
            share = (self.left() - GRACE) / (len(fams) - i)
            uid = f"bench:{fam}"
            cmd = [
                self.python,
                os.path.join(BENCH, "runner.py"),
                "--family",
                fam,
                "--device",
                "cpu" if self.dry else "cuda",
                "--out",
                self.out,
                "--append",
                "--no-plots",
                "--headline",
            ] + extra
            if "bench" in self.hang:
                cmd = ["sleep", "3600"]
            self.set_unit(uid, status="running")
            rc, cut, secs = self.run(cmd, self.elapsed() + share, os.path.join(self.work, f"bench-{fam}.log"))
            for p in glob.glob(os.path.join(self.out, "*.json")) + glob.glob(os.path.join(self.out, "*.md")):
                if not p.endswith(("-session.json", "-tests.md")):
                    shutil.copy(p, kept)
            rows = gpu_results.bench_rows(self.out, fam)
            errs = sum(1 for r in rows if r.get("error"))
            status = "cut" if cut else ("errors" if rc == 0 and errs else {0: "done"}.get(rc, "failed"))
            self.set_unit(uid, status=status, rc=rc, seconds=round(secs), rows=len(rows), error_rows=errs)
            self.log(f"{uid}: {status} in {secs:.0f} s (share {share:.0f} s), {len(rows)} rows, {errs} error rows")
            self.excerpt(f"bench-{fam}.log")

    def guarded(self, part, *args):
        """A part's bug must not cost the other parts their results: it is printed, and the units
        it left `running` read as stopped in the -tests.md."""
        try:
            part(*args)
        except Exception:  # noqa: BLE001
            import traceback

            print(traceback.format_exc(), flush=True)
            self.log(f"ERROR in {part.__name__}: the traceback is above")

    def excerpt(self, logname, n=20):
        """The failures' lines of a unit's log into session.log (the logs stay on the machine)."""
        path = os.path.join(self.work, logname)
        if not os.path.exists(path):
            return
        keys = (
            "FAILED ",
            "ERROR ",
            "========= Invalid",
            "========= Uninitialized",
            "========= ERROR SUMMARY: ",
            "Traceback",
            "Timeout",
            "ERROR:",
        )
        lines = [x.rstrip() for x in open(path, errors="replace") if x.startswith(keys) and "0 errors" not in x]
        for x in lines[:n]:
            print(f"  {logname}: {x[:300]}")

    # ---- the call --------------------------------------------------------------------------
    def plan(self):
        """What this call runs: {part: list of units} (tests: [True] or [])."""
        if self.mode == "all":
            return {
                "tests": ["tests"] if "tests" in self.parts else [],
                "sanitize": self.sanitize_units() if "sanitize" in self.parts else [],
                "bench": self.bench_families() if "bench" in self.parts else [],
            }
        units = self.rec["units"]
        redo = lambda uid: units.get(uid, {}).get("status") not in ("done", "no tests")  # noqa: E731
        tests_left = [n for n in self.rec.get("selected", []) if self.rec["tests"].get(n, ["?"])[0] not in DONE]
        plan = {
            "tests": ["tests"] if "tests" in units and (redo("tests") or tests_left) else [],
            "sanitize": [u for u in self.sanitize_units() if u[0] in units and redo(u[0])],
            "bench": [uid[6:] for uid in units if uid.startswith("bench:") and redo(uid)],
        }
        plan = {k: (v if k in self.parts else []) for k, v in plan.items()}
        self.log(
            f"rerun: tests: {len(tests_left)} not passed or skipped"
            + ("" if plan["tests"] else ", nothing to do")
            + f"; sanitize: {[u[0] for u in plan['sanitize']] or 'nothing to do'}"
            + f"; bench: {plan['bench'] or 'nothing to do'}"
        )
        return plan

    # ---- the one-script parts (sweep, graph) ------------------------------------------------
    def run_unit(self, name, cmd, deadline, parse):
        """Run a benchmark script `cmd` as the unit `name` (part `name`) until `deadline`: its log
        printed whole, its status, rc, seconds and counts in the record. parse(log text) ->
        (rows, error rows, summary): summary, whether the script printed its summary line (then its
        rc 1 means error rows: status `errors`, not `failed`). True when it ended clean."""
        log = os.path.join(self.work, f"{name}.log")
        self.set_unit(name, part=name, status="running")
        rc, cut, secs = self.run(cmd, deadline, log)
        with open(log, errors="replace") as f:
            text = f.read()
        print(text, end="")
        rows, errs, summary = parse(text)
        status = "cut" if cut else ("errors" if rc == 1 and summary else {0: "done"}.get(rc, "failed"))
        self.set_unit(name, part=name, status=status, rc=rc, seconds=round(secs), rows=rows, error_rows=errs)
        self.log(f"{name}: {'CUT' if cut else f'rc {rc}'} in {secs:.0f} s")
        return rc == 0 and not cut

    def run_sweep(self, deadline):
        """benchmarks/sweep.py until `deadline`; its -sweep.md / .json land in $OUT (rewritten after
        each row, so a cut sweep returns its rows). True when it ended clean."""
        cmd = [self.python, os.path.join(BENCH, "sweep.py"), "--out", self.out]
        # the dry run's times mean nothing, and Inductor on the CPU compiles C++ for minutes
        cmd += ["--emulation", "--min-time", "0.01", "--no-inductor"] if self.dry else []
        if os.environ.get("GPU_SESSION_SWEEP_OPS"):
            cmd += ["--ops"] + os.environ["GPU_SESSION_SWEEP_OPS"].split()

        def parse(text):  # its last line: "sweep: N rows, M error rows" (rc 1 when M > 0)
            m = re.search(r"sweep: (\d+) rows, (\d+) error rows", text)
            return (int(m.group(1)), int(m.group(2)), True) if m else (0, 0, False)

        return self.run_unit("sweep", cmd, deadline, parse)

    def run_graph(self, deadline):
        """benchmarks/bench_deploy.py --graph until `deadline`; its -graph.md lands in $OUT (the
        table is written when every row is done). True when it ended clean."""
        cmd = [self.python, os.path.join(BENCH, "bench_deploy.py"), "--graph", "--out", self.out]
        if self.dry:  # one small row on the CPU: the code path, not a measurement
            cmd += ["--device", "cpu", "--models", "fasterrcnn_resnet50_fpn", "--sizes", "320x416", "--batches", "1"]
            cmd += ["--graph-forms", "eager", "static", "graph", "--reps", "1"]
        else:
            cmd += ["--check64"]
        cmd += os.environ.get("GPU_SESSION_GRAPH_ARGS", "").split()

        def parse(text):  # the table's rows and its error cells; an rc of 1 is a failure
            rows = len(re.findall(r"^\| \w+ \| \d+x\d+ \| \d+ \|", text, re.M))
            return rows, len(re.findall(r"^\| .*ERROR", text, re.M)), False

        return self.run_unit("graph", cmd, deadline, parse)

    def new_record(self, kind, parts):
        """A fresh record for a call of `kind` (not `all` / `rerun`) running `parts`: (env, call)."""
        env = self.probe()
        call = {"kind": kind, "started": now_iso(), "budget": self.budget, "dry_run": self.dry, "parts": parts}
        self.rec = dict(format=1, session=now_iso(), env=env, calls=[call], units={}, tests={}, changed={}, selected=[])
        return env, call

    def main_unit(self, kind, run):
        """`sweep` / `graph`: the build (as `all`; the dry run takes the importable CPU build), then
        the part's one script, run(deadline), within the budget."""
        env, call = self.new_record(kind, [kind])
        self.log(f"{kind}: budget {self.budget} s on {env['device']}; torch {env['torch']}")
        if not self.dry and not self.prepare_build():
            return 1
        ok = run(self.budget - MARGIN)
        call["outcome"] = "ended"
        self.flush()
        return 0 if ok else 1

    def main_tune(self):
        """`tune`: the changed families' tests, the sweep, then the headline bench (module docstring)."""
        if not os.environ.get("GPU_SESSION_FAMILIES", "").split():
            self.log(
                "tune: GPU_SESSION_FAMILIES is not set (the changed families' test files; on the host: "
                "python gpu/gpu_session.py --families-since COMMIT)"
            )
            return 2
        env, call = self.new_record("tune", ["tests", "sweep", "bench"])
        self.log(f"tune: budget {self.budget} s on {env['device']}; torch {env['torch']}; tests: {self.test_files()}")
        self.flush()
        if not self.dry and not self.prepare_build():
            call["outcome"] = "no usable build: nothing ran"
            self.flush()
            return 1
        self.guarded(self.part_tests, self.elapsed() + env_int("GPU_SESSION_TUNE_TESTS_SECONDS", 120))
        self.flush()
        self.guarded(self.run_sweep, max(self.budget - MARGIN - self.bench_seconds, self.elapsed() + 10))
        self.flush()
        self.guarded(self.part_bench, self.bench_families())
        call["outcome"] = "ended"
        self.flush()
        return 0

    def main(self):
        if self.mode == "sweep":
            return self.main_unit("sweep", self.run_sweep)
        if self.mode == "tune":
            return self.main_tune()
        if self.mode == "graph":
            return self.main_unit("graph", self.run_graph)
        env = self.probe()
        if self.mode == "all":
            shutil.rmtree(os.path.join(self.state, "bench"), ignore_errors=True)  # an earlier session's tables
            self.rec = {
                "format": 1,
                "session": now_iso(),
                "env": env,
                "calls": [],
                "units": {},
                "tests": {},
                "changed": {},
                "selected": [],
            }
        else:
            self.rec = self.load_record()
            self.rec["env"].update({k: v for k, v in env.items() if k not in ("date", "slug")})
        self.rec["calls"].append(
            {"kind": self.mode, "started": now_iso(), "budget": self.budget, "dry_run": self.dry, "parts": self.parts}
        )
        self.log(
            f"{self.mode}: budget {self.budget} s on {env['device']} ({env['cores']} cores); torch "
            f"{env['torch']} (CUDA {env['torch_cuda']}, git {str(env['torch_git'])[:7]}), Python {env['python']}; "
            f"pytest-xdist {'yes' if env['xdist'] else 'NO (tests run serially)'}, "
            f"pytest-timeout {'yes' if env['pytest_timeout'] else 'NO (no per-test limit)'}; "
            f"sanitizer {env['sanitizer']}"
        )
        self.flush()
        if not self.prepare_build():
            self.rec["calls"][-1]["outcome"] = "no usable build: nothing ran"
            self.flush()
            return 1
        plan = self.plan()
        self.rec["calls"][-1]["plan"] = {k: [u if isinstance(u, str) else u[0] for u in v] for k, v in plan.items()}
        for uid, _, _ in plan["sanitize"]:
            self.rec["units"].get(uid, {}).update(status="not started")
        for fam in plan["bench"]:
            self.rec["units"].setdefault(f"bench:{fam}", {}).update(part="bench", status="not started")
        # parts 1 and 2 together, then part 3 alone
        left = self.left() - GRACE  # a cut part has GRACE seconds to write its report
        # tests and sanitizer first, never with less than half of what is left
        a_deadline = self.elapsed() + (max(left - self.bench_seconds, left / 2) if plan["bench"] else left)
        threads = []
        if not plan["tests"]:
            self.tests_done.set()
        if plan["tests"]:
            threads.append(threading.Thread(target=self.guarded, args=(self.part_tests, a_deadline)))
        if plan["sanitize"]:
            threads.append(
                threading.Thread(target=self.guarded, args=(self.part_sanitize, a_deadline, plan["sanitize"]))
            )
        stop = threading.Event()

        def refresher():  # the tests' outcomes into $OUT while they run
            while not stop.wait(20):
                self.flush()

        r = threading.Thread(target=refresher, daemon=True)
        r.start()
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        stop.set()
        self.flush()
        if plan["bench"]:
            self.guarded(self.part_bench, plan["bench"])
        self.rec["calls"][-1]["outcome"] = "ended"
        self.flush()
        return 0


def families_of(paths):
    """The test families (tests/test_<family>*.py stems) a change of `paths` needs run on a GPU:
    csrc/<family>/..., python/myops/[_]<family>.py and tests/test_<family>*.py map to that family's
    test files; a change elsewhere under csrc/, python/, tests/ (helpers, conftest) or setup.py
    (shared code, the build) to every test file; the CPU emulation and anything else (docs,
    benchmarks) to none."""
    tests = sorted(os.path.basename(p)[5:-3] for p in glob.glob(os.path.join(ROOT, "tests", "test_*.py")))
    tests = [t for t in tests if t != "cuda_emulation"]
    fams = set()
    for path in paths:
        parts = path.split("/")
        if parts[0] == "tests" and (parts[1:2] == ["cuda_emulation"] or path == "tests/test_cuda_emulation.py"):
            continue
        if parts[0] == "tests" and len(parts) == 2 and parts[1][5:-3] in tests:
            fams.add(parts[1][5:-3])
            continue
        if parts[0] == "csrc" and len(parts) > 2:
            fam = parts[1]
        elif parts[0] == "python" and len(parts) == 3 and parts[1] == "myops" and parts[2].endswith(".py"):
            fam = parts[2][:-3].lstrip("_")
        elif parts[0] in ("csrc", "python", "tests") or path in ("setup.py", "pyproject.toml"):
            return tests
        else:
            continue
        mine = [t for t in tests if t == fam or t.startswith(fam + "_")]
        if not mine:
            return tests  # a shared folder (csrc/core, csrc/include) or a module no family owns
        fams.update(mine)
    return sorted(fams)


def changed_families(since):
    """families_of the files that differ between commit `since` and the working tree (git)."""
    out = subprocess.check_output(["git", "diff", "--name-only", since, "--"], cwd=ROOT, text=True)
    return families_of(out.split())


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--dry-run", action="store_true", help="on the CPU against the CPU build (CI)")
    p.add_argument("mode", nargs="?", choices=["all", "rerun", "sweep", "tune", "graph"])
    p.add_argument("--families-since", metavar="COMMIT", help="print the test families changed since COMMIT, then exit")
    p.add_argument("--plan", action="store_true", help="print what `all` would run (JSON: part -> units), then exit")
    args = p.parse_args(argv)
    if args.families_since:
        print(" ".join(changed_families(args.families_since)))
        return 0
    if args.mode is None:
        p.error("a mode is required")
    if args.plan and args.mode != "all":
        p.error("--plan: the plan of `all` only")
    s = Session(args.mode, args.dry_run)
    if args.plan:
        try:
            print(json.dumps(s.plan()))
        finally:
            shutil.rmtree(s.work, ignore_errors=True)
        return 0
    rc = 1
    try:
        rc = s.main()
    except KeyboardInterrupt:
        s.log("interrupted")
    finally:
        s.stop_all()
        shutil.rmtree(s.work, ignore_errors=True)
    return rc


if __name__ == "__main__":
    sys.exit(main())
