"""pytest plugin of the GPU session (gpu/gpu_session.py loads it with -p gpu_pytest_plugin).

--gpu-record FILE   append one line per test as its outcome is known: "outcome<TAB>nodeid"
                    (passed, failed, error, skipped), written and flushed at once, so that a run
                    cut by a timeout still leaves the outcome of every test that ended. Under
                    pytest-xdist the controller writes it (it sees every worker's reports).
--gpu-errors FILE   append, for each failed or erroring test, one JSON line {"nodeid", "error"}:
                    where it failed and pytest's `E ` lines (error_excerpt: a few lines, bounded),
                    so that the session's record says why without a second call for tracebacks.
--gpu-select FILE   keep only the tests whose node id matches a line of FILE (the sanitizer's
                    representative set): `*` matches any text, everything else is literal;
                    blank lines and lines starting with `#` are left out.
--gpu-skip-done FILE  leave out the tests whose last outcome in FILE (a --gpu-record file) is
                    passed or skipped: a rerun runs what failed, errored or never ended.
--gpu-selected FILE write the node ids of the tests this run selected (after -m and the options
                    above), one a line: what a cut run did not reach is the rest.
--gpu-dry-hang      (the session's dry run) the third test hangs, so that a deadline cuts the run
                    after two recorded tests.
"""

import json
import os
import re
import time

import pytest

DONE = ("passed", "skipped")
ERROR_LINES = 8  # of pytest's `E ` lines per failed test, the first
ERROR_LINE_CHARS = 240
ERROR_CHARS = 1600  # per failed test, at most


def error_excerpt(report):
    """Why a failed report failed, bounded (ERROR_LINES lines of ERROR_LINE_CHARS, ERROR_CHARS in
    all): the innermost crash location (path:line: message), then pytest's `E ` lines (the
    exception and its explanation); a report without them (a crashed worker, a string) gives its
    last lines."""
    text = report.longreprtext or ""
    crash = getattr(report.longrepr, "reprcrash", None)
    head = []
    if crash is not None:
        path = str(crash.path)
        path = path.split("site-packages/", 1)[-1] if "site-packages/" in path else os.path.relpath(path)
        head = [f"{path}:{crash.lineno}: {(crash.message or '').splitlines()[0] if crash.message else ''}"]
    body = [x for x in text.splitlines() if re.match(r"E(\s|$)", x)]
    if not body:
        body = [x for x in text.strip().splitlines() if x.strip()][-ERROR_LINES:]
    lines = [x if len(x) <= ERROR_LINE_CHARS else x[: ERROR_LINE_CHARS - 3] + "..." for x in head + body[:ERROR_LINES]]
    if len(body) > ERROR_LINES:
        lines.append(f"... ({len(body) - ERROR_LINES} more lines)")
    return "\n".join(lines)[:ERROR_CHARS]


def read_errors(path):
    """nodeid -> its last error excerpt in a --gpu-errors file (absent file: nothing)."""
    last = {}
    if path and os.path.exists(path):
        with open(path, errors="replace") as f:
            for line in f:
                try:
                    entry = json.loads(line)
                except ValueError:  # a line cut by a killed run
                    continue
                last[entry["nodeid"]] = entry["error"]
    return last


def read_patterns(path):
    """The patterns of a --gpu-select file."""
    with open(path) as f:
        return [line.strip() for line in f if line.strip() and not line.lstrip().startswith("#")]


def pattern_regex(pattern):
    return re.compile("".join(".*" if part == "*" else re.escape(part) for part in re.split(r"(\*)", pattern)) + r"\Z")


def read_record(path):
    """nodeid -> its last outcome in a --gpu-record file (absent file: nothing)."""
    last = {}
    if path and os.path.exists(path):
        with open(path, errors="replace") as f:
            for line in f:
                outcome, _, nodeid = line.rstrip("\n").partition("\t")
                if nodeid:
                    last[nodeid] = outcome
    return last


def pytest_addoption(parser):
    g = parser.getgroup("gpu session")
    g.addoption("--gpu-record", default=None, metavar="FILE")
    g.addoption("--gpu-errors", default=None, metavar="FILE")
    g.addoption("--gpu-select", default=None, metavar="FILE")
    g.addoption("--gpu-skip-done", default=None, metavar="FILE")
    g.addoption("--gpu-selected", default=None, metavar="FILE")
    g.addoption("--gpu-dry-hang", action="store_true")


@pytest.hookimpl(trylast=True)  # after -m has deselected
def pytest_collection_modifyitems(config, items):
    keep, drop = list(items), []
    select = config.getoption("gpu_select")
    if select:
        regexes = [pattern_regex(p) for p in read_patterns(select)]
        keep = [it for it in items if any(r.match(it.nodeid) for r in regexes)]
    done_file = config.getoption("gpu_skip_done")
    if done_file:
        done = {n for n, o in read_record(done_file).items() if o in DONE}
        keep = [it for it in keep if it.nodeid not in done]
    drop = [it for it in items if it not in set(keep)]
    if drop:
        config.hook.pytest_deselected(items=drop)
        items[:] = keep
    selected = config.getoption("gpu_selected")
    worker = getattr(config, "workerinput", {}).get("workerid", "gw0")
    if selected and worker == "gw0":  # every xdist worker collects the same tests: one writes them
        with open(selected, "w") as f:
            f.writelines(it.nodeid + "\n" for it in items)


_started = [0]


@pytest.hookimpl(tryfirst=True)  # before the skip marks: the dry run's CUDA tests all skip
def pytest_runtest_setup(item):
    if item.config.getoption("gpu_dry_hang"):
        _started[0] += 1
        if _started[0] > 2:
            time.sleep(3600)


class Recorder:
    def __init__(self, path, errors=None):
        self.f = open(path, "a", buffering=1)
        self.errors = open(errors, "a", buffering=1) if errors else None

    @pytest.hookimpl(trylast=True)
    def pytest_runtest_logreport(self, report):
        outcome = None
        if report.when == "call":
            outcome = "skipped" if report.skipped else report.outcome
        elif report.when == "setup" and not report.passed:
            outcome = "skipped" if report.skipped else "error"
        elif report.when == "teardown" and report.failed:
            outcome = "error"
        if outcome:
            self.f.write(f"{outcome}\t{report.nodeid}\n")
        if self.errors and report.failed:
            self.errors.write(json.dumps({"nodeid": report.nodeid, "error": error_excerpt(report)}) + "\n")

    def pytest_unconfigure(self, config):
        self.f.close()
        if self.errors:
            self.errors.close()


def pytest_configure(config):
    path = config.getoption("gpu_record")
    # an xdist worker has `workerinput`: its reports reach the controller, which records them
    if path and not hasattr(config, "workerinput"):
        config.pluginmanager.register(Recorder(path, config.getoption("gpu_errors")), "gpu_record")
