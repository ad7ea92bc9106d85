"""The docs stay whole and true (docs/_ext/doccheck.py holds the rules; `make docs` checks them
too, and runs every example of the site):

- every registered torch.ops.myops op has an entry in the op reference, and every entry names a
  registered op;
- every public function and class of myops and myops.detection is documented by autodoc;
- every repository path named in README.md, CONTRIBUTING.md, benchmarks/README.md or docs/ exists;
- no file cites the design notes this repository does not have;
- the README's examples run, and the README stays a front page (at most 250 lines).
"""

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
