"""pytest plugin of the GPU session (benchmarks/gpu_session.py loads it with -p gpu_pytest_plugin).

--gpu-record FILE   append one line per test as its outcome is known: "outcome<TAB>nodeid"
                    (passed, failed, error, skipped), written and flushed at once, so that a run
                    cut by a timeout still leaves the outcome of every test that ended. Under
                    pytest-xdist the controller writes it (it sees every worker's reports).
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

import os
import re
import time

import pytest

DONE = ("passed", "skipped")


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
    def __init__(self, path):
        self.f = open(path, "a", buffering=1)

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

    def pytest_unconfigure(self, config):
        self.f.close()


def pytest_configure(config):
    path = config.getoption("gpu_record")
    # an xdist worker has `workerinput`: its reports reach the controller, which records them
    if path and not hasattr(config, "workerinput"):
        config.pluginmanager.register(Recorder(path), "gpu_record")
