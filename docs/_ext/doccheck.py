"""What the docs must cover, read from the tree and from the registered ops. No Sphinx here:
tests/test_docs.py imports this module as it is, and the Sphinx extension (myops_docs.py) checks
the same rules while the site builds.

- every ``torch.ops.myops`` op has an entry in the op reference (a ``{myops-op} NAME`` directive
  in docs/ops/);
- every public function and class of ``myops`` and ``myops.detection`` is documented by autodoc
  (an ``.. autofunction::`` / ``.. autoclass::`` in an ``{eval-rst}`` block);
- every repository path named in README.md or docs/ exists;
- every table row of README.md and docs/ that carries a measured number (a ratio, a time, a
  bandwidth) names its results file and commit, or says "the same" below a row that does;
- no file cites the design notes of the sessions that wrote myops (``NOTES_FILE``), which this
  repository does not have: the rules are written in docs/.
"""

import inspect
import re
import subprocess
from pathlib import Path
from typing import Dict, List, Set

DOCS = Path(__file__).resolve().parent.parent
ROOT = DOCS.parent

# a python block whose first line starts with this is shown, not run (it says why)
NOT_RUN = "# not run"

# the directive that gives one op's entry in the op reference
OP_DIRECTIVE = re.compile(r"^```\{myops-op\}\s+(\S+)", re.M)
# autodoc's directives, in an {eval-rst} block (MyST would read their output as Markdown)
AUTODOC_DIRECTIVE = re.compile(r"^\.\. auto(?:function|class|data):: (\S+)", re.M)


def doc_files() -> List[Path]:
    """The docs' source pages (the build's output lives in build/docs, outside docs/)."""
    return sorted(p for p in DOCS.rglob("*.md") if "_build" not in p.parts)


def registered_ops() -> Dict[str, List[str]]:
    """op name (without the overload) -> every schema of it registered under torch.ops.myops."""
    import torch

    import myops  # noqa: F401  (registers the ops)

    ops: Dict[str, List[str]] = {}
    for s in torch._C._jit_get_all_schemas():
        if s.name.startswith("myops::"):
            ops.setdefault(s.name[len("myops::") :], []).append(str(s))
    return {k: sorted(v, key=lambda x: (len(x.split("(")[0]), x)) for k, v in sorted(ops.items())}


def documented_ops() -> Set[str]:
    return {m for p in doc_files() for m in OP_DIRECTIVE.findall(p.read_text())}


def public_api() -> Set[str]:
    """Dotted names of the public functions and classes of myops and myops.detection."""
    import myops
    import myops.detection as det

    names = set()
    for mod, public in ((myops, myops.__all__), (det, [n for n in vars(det) if not n.startswith("_")])):
        for n in public:
            obj = getattr(mod, n)
            home = getattr(obj, "__module__", "") or ""
            # myops re-exports ops.py and replace.py; a name myops.detection imports is not its own
            if (inspect.isfunction(obj) or inspect.isclass(obj)) and (
                home == mod.__name__ or (mod is myops and home.startswith("myops."))
            ):
                names.add(f"{mod.__name__}.{n}")
    return names


def documented_api() -> Set[str]:
    return {m for p in doc_files() for m in AUTODOC_DIRECTIVE.findall(p.read_text())}


# A path in the tree, as the docs write it: starts with one of the repository's top folders
# (after "../" for a page's relative link) and has no spaces. A path after "<commit>:" (git show's form)
# names a file in git history, not in the tree, and is not checked.
_TOP = ("csrc", "python", "tests", "benchmarks", "gpu", "examples", "tools", "cmake", "docs", ".ci")
PATH = re.compile(r"(?<![\w./:-])((?:\.\./)*(?:" + "|".join(re.escape(t) for t in _TOP) + r")/[\w./*<>{}-]*[\w*>}/])")


def cited_paths(text: str) -> Set[str]:
    """Repository paths named in a README or docs page. A name with a placeholder (``<file>``,
    ``*``, ``{...}``) is a pattern, not a file, and is left out."""
    out = set()
    for m in PATH.finditer(text):
        p = m.group(1).rstrip("/.")
        if p.endswith(">") and "<" not in p:  # the target of a {repo}`text <path>` link
            p = p[:-1]
        if any(c in p for c in "<>*{}"):
            continue
        out.add(p)
    return out


def missing_paths(files=None) -> Dict[str, List[str]]:
    """file -> the paths it names that do not exist in the tree."""
    files = (
        files
        if files is not None
        else [ROOT / "README.md", ROOT / "CONTRIBUTING.md", ROOT / "benchmarks" / "README.md", *doc_files()]
    )
    out = {}
    for f in files:
        text = f.read_text()
        # "../x" is relative to the page (a docs page's link or image), anything else to the root
        bad = sorted(p for p in cited_paths(text) if not ((f.parent if p.startswith("../") else ROOT) / p).exists())
        if bad:
            out[str(f.relative_to(ROOT)) if f.is_relative_to(ROOT) else str(f)] = bad
    return out


# A measured number in a table row: a ratio (1.23×), a time (12 ms, 3.4 µs, 0.45 s) or a bandwidth
# (GB/s); not a target (after ≥ / ≤) and not a shape (320×416, 3×3).
MEASURED = re.compile(r"(?<![≥≤<>]\s)(?<![≥≤<>\w.^])\d+(?:\.\d+)?\s?(?:×|ms|µs|us|s|GB/s)(?![\w/])")
# a row's source: a results file and a commit (`abc1234`); "the same" repeats the row above's
RESULTS_FILE = re.compile(r"benchmarks/results/[\w.+-]+\.(?:md|json)")
COMMIT = re.compile(r"`[0-9a-f]{7,40}`")


def unsourced_rows(text: str) -> List[str]:
    """The table rows of a page that carry a measured number but do not name their source
    (results file and commit), nor say "the same" below a row of their table that does."""
    out, sourced = [], False
    for n, line in enumerate(text.splitlines(), 1):
        if not line.startswith("|"):
            sourced = False
            continue
        if set(line) <= set("|-: ") or not MEASURED.search(line):
            continue
        if RESULTS_FILE.search(line) and COMMIT.search(line):
            sourced = True
        elif not (sourced and "the same" in line):
            out.append(f"line {n}: {line[:100]}")
    return out


def unsourced_numbers(files=None) -> Dict[str, List[str]]:
    """file -> its table rows whose numbers name no source (README.md and the docs pages)."""
    files = files if files is not None else [ROOT / "README.md", *doc_files()]
    out = {}
    for f in files:
        bad = unsourced_rows(f.read_text())
        if bad:
            out[str(f.relative_to(ROOT)) if f.is_relative_to(ROOT) else str(f)] = bad
    return out


# spelled in two pieces, so that this file does not cite it
NOTES_FILE = "DESIGN" + ".md"


def files_citing(word: str) -> List[str]:
    """Tracked files (and untracked ones git does not ignore) whose text contains ``word``."""
    r = subprocess.run(["git", "grep", "-l", "-I", "--untracked", "-F", word], cwd=ROOT, capture_output=True, text=True)
    if r.returncode not in (0, 1):
        raise RuntimeError(r.stderr)
    return r.stdout.split()
