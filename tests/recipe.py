"""The add-an-op recipe of docs/contributing.md, read as data and applied to a tree.

The recipe's worked examples ("### ... (worked example: `NAME`, N files)") are lists of numbered
steps, each naming one file (``1. `path`: ...``) and giving, in a code block, what goes into it;
a paragraph starting ``**... optional:** `path``` names an optional file the same way, and the
``bash`` blocks are the commands to run (the first before the build, the rest after it). This
module parses them (``examples``) and puts a block where it belongs in its file (``apply``): the
check that runs the whole recipe is tests/recipe_check.py (``make recipe-check``), and
tests/test_docs.py checks on every run that the recipe still parses and applies.
"""

import re
import textwrap
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Dict, List, Tuple

ROOT = Path(__file__).resolve().parent.parent
RECIPE = ROOT / "docs" / "contributing.md"
SECTION = "## Adding an elementwise op"
NOT_RUN = "# not run"  # a docs python block's first line that keeps it from running (docs/_ext)

STEP = re.compile(r"^(\d+)\. `([^`]+)`")
OPTIONAL = re.compile(r"^\*\*[^*]*optional[^*]*\*\*[^`]*`([^`]+)`", re.I)
FENCE = re.compile(r"^(\s*)(`{3,})(\S*)\s*$")
EXAMPLE = re.compile(r"^### .*\(worked example: `(\w+)`, (\d+) files\)")


@dataclass
class Example:
    op: str  # the worked example's op
    kind: str  # "unary" or "binary"
    files: int  # the number of files the heading claims
    steps: List[Tuple[str, str]] = field(default_factory=list)  # (path, block), in order
    optional: List[Tuple[str, str]] = field(default_factory=list)
    commands: List[List[str]] = field(default_factory=list)  # the bash blocks' lines

    @property
    def counted(self) -> List[str]:
        """The files a contributor edits, tests aside (what the heading counts)."""
        return sorted({p for p, _ in self.steps if not p.startswith("tests/")})


def examples(text: str = "") -> List[Example]:
    """The worked examples of the recipe, in order."""
    text = text or RECIPE.read_text()
    start = text.index(SECTION)
    end = text.find("\n## ", start + 1)
    lines = text[start : end if end > 0 else len(text)].splitlines()
    out: List[Example] = []
    target = None  # the file the next block goes into: a step's or an optional one's
    i = 0
    while i < len(lines):
        line = lines[i]
        if line.startswith("### "):
            m = EXAMPLE.match(line)
            target = None
            if m:
                kind = "unary" if "unary" in line else "binary"
                out.append(Example(m.group(1), kind, int(m.group(2))))
            elif out:
                out.append(Example("", "", 0))  # a later subsection: not an example
        elif out and out[-1].op and (m := FENCE.match(line)):
            indent, ticks, lang = m.groups()
            j = i + 1
            while not re.match(rf"^\s*{ticks}\s*$", lines[j]):
                j += 1
            block = textwrap.dedent("\n".join(lines[i + 1 : j])) + "\n"
            if lang == "bash":
                out[-1].commands.append([c for c in block.splitlines() if c.strip()])
            elif target:
                (out[-1].optional if target[0] == "optional" else out[-1].steps).append((target[1], block))
                target = None if target[0] == "optional" else target
            i = j
        elif out and out[-1].op:
            if m := STEP.match(line):
                target = ("step", m.group(2))
            elif m := OPTIONAL.match(line):
                target = ("optional", m.group(1))
            elif line and not line[0].isspace() and not lines[i - 1].strip():
                target = None  # a new paragraph
        i += 1
    return [e for e in out if e.op]


# ---- where a block goes -------------------------------------------------------------------------


def _macro_rows(text: str, macro: str, rows: List[str]) -> str:
    """`rows` appended to the X-macro list `#define macro(...)` (its lines joined by '\\')."""
    lines = text.split("\n")
    i = next(k for k, ln in enumerate(lines) if ln.startswith(f"#define {macro}("))
    while lines[i].rstrip().endswith("\\"):
        i += 1
    new = [lines[i].rstrip() + " \\"] + [f"  {r} \\" for r in rows[:-1]] + [f"  {rows[-1]}"]
    return "\n".join(lines[:i] + new + lines[i + 1 :])


def _table(text: str, block: str, kind: str) -> str:
    rows = [r.strip() for r in block.splitlines() if r.strip()]
    text = _macro_rows(text, "MYOPS_EW_KERNELS", [r for r in rows if r.startswith("K(")])
    return _macro_rows(text, "MYOPS_EW_OPS", [r for r in rows if r.startswith("X(")])


def _before(marker: Callable[[str], str]) -> Callable[[str, str, str], str]:
    def put(text: str, block: str, kind: str) -> str:
        m = marker(kind)
        assert m in text, f"the place for the block is gone: {m!r}"
        return text.replace(m, block + "\n" + m, 1)

    return put


def _autograd(text: str, block: str, kind: str) -> str:
    """#include lines into the sorted run of ATen includes, the rest before the file's anonymous
    namespace closes (after every formula's primary template, before the generated
    registrations instantiate them)."""
    lines = text.split("\n")
    body = []
    for ln in block.splitlines():
        if ln.startswith("#include <"):
            if ln not in lines:
                at = [k for k, x in enumerate(lines) if x.startswith("#include <ATen/ops/")]
                k = next((k for k in at if lines[k] > ln), at[-1] + 1)
                lines.insert(k, ln)
        else:
            body.append(ln)
    return _before(lambda _: "}  // namespace\n}  // namespace myops\n\nTORCH_LIBRARY_IMPL(myops, Autograd")(
        "\n".join(lines), "\n".join(body).strip("\n") + "\n", kind
    )


def _python(text: str, block: str, kind: str) -> str:
    """The function appended to its module, its name added to the module's __all__."""
    lines = block.splitlines()
    if lines and lines[0].startswith(NOT_RUN):
        lines = lines[1:]
    name = re.search(r"^def (\w+)\(", "\n".join(lines), re.M)
    assert name, "the block defines no function"
    text, n = re.subn(r"(__all__ = \[[^\]]*?)(,?\s*)\]", rf'\1, "{name.group(1)}"]', text, count=1)
    assert n == 1, "the module has no __all__ list"
    return text.rstrip("\n") + "\n\n\n" + "\n".join(lines).strip("\n") + "\n"


def _calls(text: str, block: str, kind: str) -> str:
    m = "\nCALLS = [\n"
    assert m in text, "tests/test_replace.py has no CALLS list"
    return text.replace(m, m + textwrap.indent(block, "    "), 1)


APPLY: Dict[str, Callable[[str, str, str], str]] = {
    "csrc/include/myops/op_table.h": _table,
    "csrc/elementwise/elementwise_functors.h": _before(
        lambda kind: "// ---- binary ---" if kind == "unary" else "// ---- ternary ---"
    ),
    "csrc/elementwise/autograd.cpp": _autograd,
    "python/myops/_unary.py": _python,
    "python/myops/_elementwise.py": _python,
    "docs/ops/elementwise.md": _before(lambda kind: "## Binary\n" if kind == "unary" else "## Ternary\n"),
    "csrc/elementwise/cpu/elementwise_simd_math.h": _before(lambda _: "#undef MYOPS_VEC_UNARY\n"),
    "tests/test_replace.py": _calls,
}


def apply(tree: Path, ex: Example, optional: bool = True) -> None:
    """Every step of `ex` (and its optional files) applied to the files under `tree`."""
    for path, block in ex.steps + (ex.optional if optional else []):
        assert path in APPLY, f"the recipe names {path}, which tests/recipe.py cannot apply (add it to APPLY)"
        f = tree / path
        f.write_text(APPLY[path](f.read_text(), block, ex.kind))
