"""The docs stay whole and true (docs/_ext/doccheck.py holds the rules; `make docs` checks them
too, and runs every example of the site):

- every registered torch.ops.myops op has an entry in the op reference, and every entry names a
  registered op;
- every public function and class of myops and myops.detection is documented by autodoc;
- every repository path named in README.md, CONTRIBUTING.md, benchmarks/README.md or docs/ exists;
- every table row of README.md and docs/ with a measured number names its results file and commit;
- the README's status lines and speed table, and docs/performance.md's rendered tables, are what
  benchmarks/results_summary.py renders from benchmarks/results/ (a new results file needs them
  rendered again);
- no file cites the design notes this repository does not have;
- the README's examples run, and the README stays a front page (at most 250 lines).
- docs/contributing.md's add-an-op recipe parses and applies (tests/recipe.py; `make
  recipe-check` builds and tests it).
"""

import json
import re
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
if not (ROOT / "docs" / "_ext" / "doccheck.py").exists():
    pytest.skip("no docs/ beside the tests (not a source tree)", allow_module_level=True)
sys.path.insert(0, str(ROOT / "docs" / "_ext"))
import doccheck  # noqa: E402

in_git_checkout = pytest.mark.skipif(not (ROOT / ".git").exists(), reason="not a git checkout (an sdist)")


def test_every_registered_op_has_an_entry():
    registered, documented = set(doccheck.registered_ops()), doccheck.documented_ops()
    assert registered, "no torch.ops.myops op is registered"
    missing = sorted(registered - documented)
    assert not missing, (
        f"torch.ops.myops ops without an entry in the op reference: {missing}; add a "
        "```{myops-op} NAME``` entry (what it equals, its exactness, an example) to a page of docs/ops/"
    )
    assert not sorted(documented - registered), "op reference entries for ops that are not registered"


def test_every_public_function_is_documented():
    missing = sorted(doccheck.public_api() - doccheck.documented_api())
    assert not missing, f"public functions without an autodoc entry in docs/: {missing}"
    unknown = sorted(n for n in doccheck.documented_api() if n not in doccheck.public_api())
    assert not unknown, f"autodoc entries for names that are not public: {unknown}"


def test_checks_can_fail(tmp_path):
    """The readers find what they look for, so the tests above can fail."""
    page = tmp_path / "p.md"
    page.write_text(
        "see `csrc/nope.cpp`, [x](benchmarks/results/none.md), tests/test_docs.py, "
        "`benchmarks/results/<device>-<date>.md`, `git show 8ba78d3:benchmarks/results/old.md`, "
        "![plot](../benchmarks/nope.png)\n"
        "```{myops-op} nms\n```\n"
    )
    assert doccheck.cited_paths(page.read_text()) == {
        "csrc/nope.cpp",
        "benchmarks/results/none.md",
        "tests/test_docs.py",
        "../benchmarks/nope.png",
    }
    assert doccheck.missing_paths([page]) == {
        str(page): ["../benchmarks/nope.png", "benchmarks/results/none.md", "csrc/nope.cpp"]
    }
    assert doccheck.OP_DIRECTIVE.findall(page.read_text()) == ["nms"]


@in_git_checkout
def test_named_paths_exist():
    missing = doccheck.missing_paths()
    assert not missing, f"paths named in the docs that do not exist in the tree: {missing}"


def test_number_rows_name_their_table():
    unsourced = doccheck.unsourced_numbers()
    assert not unsourced, (
        f"table rows with measured numbers but no source: {unsourced}; name the results file "
        "(benchmarks/results/...) and the commit (`abc1234`) in the row, or say 'the same' below a row that does"
    )


def test_number_rows_checks_can_fail():
    """The reader finds a measured number without its source, and takes a target, a shape or a
    sourced row for what they are."""
    text = (
        "| case | ratio | table |\n|---|---|---|\n"
        "| a | 1.32× | [t](benchmarks/results/x-2026-11-27.md) (2026-11-27, `07b5750`) |\n"
        "| b | 0.55× – 0.60× | the same |\n"
        "| c | ≥ 1.5× | - |\n"
        "| d 320×416, 3×3 | n/a | - |\n"
        "\n| e | 12 ms | the same |\n"
        "| f | 0.97× | [t](benchmarks/results/x.md), no commit |\n"
        "| g | 4.1 µs | - |\n"
    )
    assert doccheck.unsourced_rows(text) == [
        "line 8: | e | 12 ms | the same |",
        "line 9: | f | 0.97× | [t](benchmarks/results/x.md), no commit |",
        "line 10: | g | 4.1 µs | - |",
    ]


def _results_summary():
    sys.path.insert(0, str(ROOT / "benchmarks"))
    try:
        import results_summary
    finally:
        sys.path.remove(str(ROOT / "benchmarks"))
    return results_summary


def test_rendered_results_are_current():
    """A results file that changes the README's status, its speed table or docs/performance.md's
    GPU tables fails here until `python benchmarks/results_summary.py` is run and committed."""
    rs = _results_summary()
    for rel, blocks in rs.TARGETS.items():
        text = (ROOT / rel).read_text()
        assert sorted(rs.blocks(text)) == sorted(blocks), f"{rel}: the marked blocks {blocks} are not all there"
        assert rs.rendered(text) == text, f"{rel} is stale: run python benchmarks/results_summary.py and commit it"


def test_rendered_results_follow_the_files(tmp_path):
    """The render reads the files: a newer GPU table and session replace the old ones' lines."""
    rs = _results_summary()
    results = ROOT / "benchmarks" / "results"
    for f in results.glob("NVIDIA-H200-2026-11-27*.json"):
        (tmp_path / f.name).write_text(f.read_text())
    table = json.loads((tmp_path / "NVIDIA-H200-2026-11-27.json").read_text())
    rec = json.loads((tmp_path / "NVIDIA-H200-2026-11-27-session.json").read_text())
    before_status, before_speed = rs.render_status(tmp_path), rs.render_speed(tmp_path)
    assert "NVIDIA H200" in before_status and "CUDA tests 1735 passed, 1 failed" in before_status
    assert "0.55× – 0.60× (≥ 1.5×)" in before_speed and "H100" not in before_speed
    for row in table["rows"]:  # a newer run whose nonzero meets its target, one test less failing
        if row["family"] == "nonzero" and row["label"] == "nonzero":
            next(iter(row["baselines"].values()))["ratio"] = 1.6
    table["meta"].update(date="2026-12-01", commit="abcdef1")
    rec["env"].update(date="2026-12-01", commit="abcdef1")
    failed = next(n for n, (o, *_) in rec["tests"].items() if o == "failed")
    rec["tests"][failed][0] = "passed"
    (tmp_path / "NVIDIA-H200-2026-12-01.json").write_text(json.dumps(table))
    (tmp_path / "NVIDIA-H200-2026-12-01-session.json").write_text(json.dumps(rec))
    status, speed = rs.render_status(tmp_path), rs.render_speed(tmp_path)
    assert "CUDA tests 1736 passed, 0 failed" in status and "`abcdef1`" in status
    assert "NVIDIA-H200-2026-12-01.md" in speed and "2026-11-27" not in speed
    assert "met: nonzero, nonzero_bounded" in speed
    assert "0.55×" not in speed


@in_git_checkout
def test_no_file_cites_the_design_notes():
    citing = doccheck.files_citing(doccheck.NOTES_FILE)
    assert not citing, (
        f"{citing} cite {doccheck.NOTES_FILE}, which this repository does not have: "
        "cite the docs page that holds the rule (docs/exactness.md, docs/design.md, "
        "docs/performance.md)"
    )


def test_readme_is_a_front_page():
    n = len((ROOT / "README.md").read_text().splitlines())
    assert n <= 250, f"README.md has {n} lines: move the detail into docs/"


def test_readme_examples_run(tmp_path, monkeypatch):
    text = (ROOT / "README.md").read_text()
    blocks = re.findall(r"^```python\n(.*?)^```", text, re.M | re.S)
    run = [b for b in blocks if not b.lstrip().startswith(doccheck.NOT_RUN)]
    assert run, "the README has no example to run"
    monkeypatch.chdir(tmp_path)
    ns = {}
    for code in run:
        exec(compile(code, "README.md", "exec"), ns)


def test_the_recipe_applies(tmp_path):
    """docs/contributing.md's add-an-op recipe still parses and applies to the tree's files as it
    stands (tests/recipe.py); `make recipe-check` builds and tests the result."""
    sys.path.insert(0, str(ROOT / "tests"))
    import recipe

    examples = recipe.examples()
    assert [e.kind for e in examples] == ["unary", "binary"], "the recipe's two worked examples"
    for e in examples:
        assert e.steps and len(e.counted) == e.files, f"{e.op}: its heading says {e.files} files: {e.counted}"
        assert len(e.commands) == 2, f"{e.op}: a block of commands before the build and one after it"
        for path, _ in e.steps + e.optional:
            dest = tmp_path / path
            if not dest.exists():
                dest.parent.mkdir(parents=True, exist_ok=True)
                dest.write_text((ROOT / path).read_text())
    for e in examples:
        recipe.apply(tmp_path, e)
    for e in examples:
        for path, _ in e.steps + e.optional:
            assert (tmp_path / path).read_text() != (ROOT / path).read_text(), f"{e.op}: {path} unchanged"
    table = (tmp_path / "csrc/include/myops/op_table.h").read_text()
    assert all(f"X({e.op}, " in table for e in examples), "each example adds its row to the op table"
