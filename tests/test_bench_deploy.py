"""The `deploy` benchmark family (benchmarks/bench_deploy.py, issue #28): registered with the
runner, its case builder runs in --quick mode (one row, batch 1, the four peers), and the runner
reports peers that time themselves (Case.timed) beside the interleaved ones. Nothing is timed
for a report and nothing compiled here: compile(static) and the C++ package are set up when the
runner first times them."""

import os
import sys

import torch

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "benchmarks"))

import bench_deploy  # noqa: E402
import runner  # noqa: E402


def test_deploy_family_quick_cases():
    assert "deploy" in runner.FAMILIES
    (case,) = bench_deploy.cases("cpu", quick=True)
    assert case.label == bench_deploy.MODEL and case.sub_label.startswith("batch 1, 320x416;")
    # the four peers: the static module eager (myops), torchvision eager (the reference), then
    # the two that time themselves; the runner's own Inductor peer is off (see cases())
    assert list(case.torch) == ["torchvision"] and not case.inductor
    assert list(case.timed) == ["compile(static)", "AOTI from C++"]
    assert case.target == round(1 / 1.05, 3)
    # the static module gave torchvision's detections (tests/test_detection.py's assert_matches)
    assert case.sub_label.endswith("vs torchvision: static ok"), case.sub_label
    out, ref = case.myops(), case.torch["torchvision"]()
    assert [int(c) for c in out["count"]] == [len(r["boxes"]) for r in ref]


def test_box_gap():
    g = torch.Generator().manual_seed(0)
    xy = torch.rand(30, 2, generator=g) * 300
    ref = {
        "boxes": torch.cat([xy, xy + 10 + torch.rand(30, 2, generator=g) * 50], 1),
        "labels": torch.randint(1, 5, (30,), generator=g),
    }
    [(n, m, gaps)] = bench_deploy.box_gap([ref], [ref])
    assert (n, m) == (30, 30) and gaps.tolist() == [0.0] * 30
    moved = {"boxes": ref["boxes"].clone(), "labels": ref["labels"].clone()}
    moved["boxes"][7, 2] += 2.5
    [(_, _, gaps)] = bench_deploy.box_gap([ref], [moved])
    assert 0 < gaps[7] <= 2.5 and gaps.count_nonzero() == 1  # another box of that label may be nearer
    moved["labels"][:] = 0  # no box of the same label: nothing is near
    assert bench_deploy.box_gap([ref], [moved])[0][2].isinf().all()
    [(n, m, gaps)] = bench_deploy.box_gap([ref], [{k: v[:0] for k, v in ref.items()}])
    assert (n, m) == (30, 0) and gaps.isinf().all()


def test_runner_reports_timed_peers():
    def fails():
        raise RuntimeError("no cmake\nmore")

    case = runner.Case(
        label="x",
        sub_label="y",
        myops=lambda: torch.ones(4).sum(),
        inductor=False,
        torch={"torch": lambda: torch.ones(4).sum()},
        timed={"slow": lambda: 1.0, "broken": fails},
    )
    row = runner.measure_case("f", case, "cpu", 1e10)
    assert list(row["baselines"]) == ["torch", "slow", "broken"]
    assert row["baselines"]["slow"] == {"s": 1.0, "ratio": 1.0 / row["myops_s"]}
    assert row["baselines"]["broken"] == {"error": "RuntimeError: no cmake"}
    assert runner.reference(row) is row["baselines"]["torch"]


def test_cost_table_takes_each_forms_time_from_its_own_runs(monkeypatch):
    """cost_table's bookkeeping, with the child processes replaced: eager's time comes from the
    runs timed in turn with another form, aoti's from its C++ runs, and eager's own lone runs
    only when nothing is paired with it (``--forms eager aoti``). Nothing is built or timed."""
    calls = []

    def child(args):
        kind, form = args[0], args[4]
        calls.append((kind, form))
        if kind == "--cost-one":
            return {"seconds": [{"eager": 9.0, "aoti": 2.0}.get(form, 8.0)], "maxrss": 2**30}, None
        return {"eager": [4.0, 6.0], form: [3.0, 5.0]}, None

    monkeypatch.setattr(bench_deploy, "_child", child)
    (row,) = bench_deploy.cost_table(["m"], [(8, 8)], [1], ["eager", "static", "aoti"], rounds=1, log=lambda r: r)
    cell = row["cells"]
    assert calls == [("--cost-one", f) for f in ("eager", "static", "aoti")] + [("--cost-pair", "static")]
    assert cell["eager"]["seconds"] == [4.0, 6.0] and cell["static"]["seconds"] == [3.0, 5.0]
    assert cell["aoti"]["seconds"] == [2.0]
    calls.clear()
    (row,) = bench_deploy.cost_table(["m"], [(8, 8)], [1], ["eager", "aoti"], rounds=2, log=lambda r: r)
    assert calls == [("--cost-one", f) for f in ("eager", "aoti")] * 2
    assert row["cells"]["eager"]["seconds"] == [9.0, 9.0] and row["cells"]["aoti"]["seconds"] == [2.0, 2.0]
    assert "ERROR" not in bench_deploy.format_row(row, ["eager", "aoti"])


def test_graph_table_rows():
    """The `--graph` table (the static detector in one CUDA graph, issue #59): ratios against
    eager, the batch-1 graph target marked where missed, the checks listed (a graph on the CPU,
    an error cell: test_gpu_session's dry run; capture_graph's refusal: test_detection)."""
    forms = ["eager", "static", "graph"]
    row = {
        "model": "m",
        "size": "800x1088",
        "batch": 1,
        "seconds": {"eager": 0.030, "static": 0.031, "graph": 0.025},
        "check": {"static": "ok", "graph": "ok"},
    }
    line = bench_deploy.graph_format_row(row, forms)
    assert (
        line == "| m | 800x1088 | 1 | 30.00 ms | 31.00 ms | 25.00 ms | 0.97x | 1.20x **miss** | static: ok; graph: ok |"
    )
    row["seconds"]["graph"] = 0.015
    assert "| 2.00x |" in bench_deploy.graph_format_row(row, forms)
    row["batch"], row["seconds"]["graph"] = 4, 0.025
    assert "| 1.20x |" in bench_deploy.graph_format_row(row, forms)  # the target is batch 1's
    row["seconds"]["graph"] = None
    assert bench_deploy.graph_format_row(row, forms).count("—") == 2
    header = bench_deploy.graph_header(forms).splitlines()
    assert header[0].count("|") - 1 == line.count("|") - 1 == header[1].count("|") - 1
