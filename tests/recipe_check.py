"""The add-an-op recipe, run: `make recipe-check` (not part of `make test`: it builds a copy of the
tree, 10-20 minutes on two cores).

The recipe is docs/contributing.md's "Adding an elementwise op": two worked examples, a plain unary
op (`reciprocal`) and a binary op with Scalar overloads (`copysign`), neither in the op table.
This check copies the tree (its tracked and unignored files), applies every step of both examples
as the recipe writes it (tests/recipe.py), runs the recipe's commands, builds the copy (CPU
kernels; the CUDA kernels run in the CUDA emulation) and checks that:
- the files a contributor edits are exactly the ones the recipe's steps name, as many as its
  headings say, and everything else that changed was written by the recipe's commands (the
  generated code, the speed-guard baseline);
- the tests that read the op table pass for the new ops (parity on every dtype and layout,
  gradcheck, opcheck, fake against real, the drop-in, the CUDA kernel in the emulation), and so
  do the checks a new op meets (docs, generated code current, layout and types);
- the new ops equal torch's, values and gradients.

MYOPS_RECIPE_TREE=DIR keeps the copy (and its build, which ninja then reuses) in DIR.
"""

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import recipe

ROOT = recipe.ROOT
PY = sys.executable
EXAMPLES = recipe.examples()
OPS = [e.op for e in EXAMPLES]
# what the recipe's commands may write besides the steps' files
TOOL_OUTPUTS = ("csrc/include/myops/ops_elementwise.h", "csrc/elementwise/generated/", "tools/speed_guard.json")


def sh(cmd, cwd, env=None, **kw):
    print("+", cmd if isinstance(cmd, str) else " ".join(map(str, cmd)), flush=True)
    return subprocess.run(cmd, cwd=cwd, env=env, shell=isinstance(cmd, str), check=True, **kw)


def changed(tree):
    out = subprocess.run(["git", "status", "--porcelain", "-uall"], cwd=tree, capture_output=True, text=True)
    return {line[3:] for line in out.stdout.splitlines()}


@pytest.fixture(scope="module")
def tree(tmp_path_factory):
    """The copy, with the recipe applied and built: (path, env, files the steps changed)."""
    t = Path(os.environ.get("MYOPS_RECIPE_TREE") or tmp_path_factory.mktemp("recipe")) / "tree"
    keep = t.parent / "build-kept"
    if (t / "build").exists():
        shutil.rmtree(keep, ignore_errors=True)
        (t / "build").rename(keep)
    shutil.rmtree(t, ignore_errors=True)
    files = subprocess.run(
        ["git", "ls-files", "-co", "--exclude-standard", "-z"], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout.split("\0")
    for f in filter(None, files):
        if (ROOT / f).is_file():
            (t / f).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / f, t / f)  # mtimes kept: a kept build recompiles what changed only
    if keep.exists():
        keep.rename(t / "build")
    git = ["git", "-c", "user.name=recipe", "-c", "user.email=recipe@check"]
    sh(["git", "init", "-q"], t)
    (t / ".git" / "info" / "exclude").write_text("build/\n")
    sh(["git", "add", "-A"], t)
    sh([*git, "commit", "-qm", "before the recipe"], t)

    for ex in EXAMPLES:
        recipe.apply(t, ex)
    stepped = changed(t)
    env = dict(os.environ, PYTHON=PY, PATH=f"{Path(PY).parent}:{os.environ['PATH']}")
    env.pop("PYTHONPATH", None)
    for ex in EXAMPLES:  # the commands before the build
        for cmd in ex.commands[0]:
            sh(cmd, t, env)
    lib = t / "build" / "dev"
    sh(
        [PY, "setup.py", "build_ext", "--build-lib", lib, "--build-temp", lib / "temp"],
        t,
        dict(env, FORCE_CPU="1", MAX_JOBS=str(os.cpu_count() or 2)),
        stdout=subprocess.DEVNULL,
    )
    for f in (t / "python" / "myops").glob("*.py"):
        if f.name != "_build_config.py":
            shutil.copy2(f, lib / "myops" / f.name)
    env.update(PYTHONPATH=str(lib), MYOPS_EMU_BUILD_DIR=str(t / "build" / "cuda_emulation"))
    for ex in EXAMPLES:  # the commands after it
        for block in ex.commands[1:]:
            for cmd in block:
                sh(cmd, t, env)
    return t, env, stepped


def test_the_examples_are_new_ops():
    from myops._table import EW_OPS

    assert len(EXAMPLES) == 2 and {e.kind for e in EXAMPLES} == {"unary", "binary"}
    assert not set(OPS) & {op.name for op in EW_OPS.values()}, "a worked example must add an op the table lacks"


def test_files_touched_are_the_recipes(tree):
    t, _, stepped = tree
    named = {p for e in EXAMPLES for p, _ in e.steps + e.optional}
    assert stepped == named, "applying the steps changed other files than the steps name"
    for e in EXAMPLES:
        assert len(e.counted) == e.files, f"{e.op}: the heading says {e.files} files, the steps name {e.counted}"
    by_tools = changed(t) - named
    assert by_tools and all(p.startswith(TOOL_OUTPUTS) for p in by_tools), (
        f"files changed that neither a step nor a tool of the recipe writes: "
        f"{sorted(p for p in by_tools if not p.startswith(TOOL_OUTPUTS))}"
    )
    print(
        "recipe:",
        {e.op: e.counted + [p + " (optional)" for p, _ in e.optional] for e in EXAMPLES},
        "written by its commands:",
        sorted(by_tools),
    )


def k(*words):
    return " or ".join(words)


UNARY, BINARY = (next(e.op for e in EXAMPLES if e.kind == kind) for kind in ("unary", "binary"))
# each file: the -k selection (None: the whole file); each must select tests
SUITE = {
    "tests/test_elementwise_unary.py": UNARY,
    "tests/test_elementwise_binary.py": BINARY,
    # and the tests that walk the whole table
    "tests/test_elementwise.py": k(
        UNARY, BINARY, "opcheck", "fake_matches_real", "op_samples_cover", "inputs_not_modified", "unsupported"
    ),
    "tests/test_replace.py": None,
    "tests/test_cuda_emulation.py": f"table_ops and ({k(UNARY, BINARY)})",
    "tests/test_docs.py": None,
    "tests/test_doctests.py": k("_unary", "_elementwise"),
    "tests/test_cpp.py": "generated",
    "tests/test_package.py": k("style", "types", "written_out", "docstrings"),
}


@pytest.mark.parametrize("path", list(SUITE))
def test_the_suite_passes_with_the_new_ops(tree, path):
    t, env, _ = tree
    sel = ["-k", SUITE[path]] if SUITE[path] else []
    r = subprocess.run([PY, "-m", "pytest", "-q", "-x", "-p", "no:cacheprovider", path, *sel], cwd=t, env=env)
    assert r.returncode == 0, f"{path} failed (or selected nothing: exit 5) in the recipe's tree: {r.returncode}"


def test_the_docs_build_with_the_new_entries(tree):
    t, env, _ = tree
    sh([PY, "-m", "sphinx", "-W", "--keep-going", "-E", "-q", "-b", "html", "docs", "build/docs/html"], t, env)


EQUALS_TORCH = """
import torch, myops
from torch.autograd import gradcheck, gradgradcheck

g = torch.Generator().manual_seed(int.from_bytes(__import__("os").urandom(4), "little"))
for dt in (torch.float32, torch.float64, torch.float16, torch.bfloat16, torch.int32, torch.uint8, torch.bool):
    x = (torch.randn(37, 65, generator=g) * 4).to(dt)
    y = (torch.randn(65, generator=g) * 4).to(dt)
    for mine, ref in (
        (myops.reciprocal(x), torch.reciprocal(x)),
        (myops.reciprocal(x.t()), torch.reciprocal(x.t())),
        (myops.copysign(x, y), torch.copysign(x, y)),
        (myops.copysign(x.t(), y[:37]), torch.copysign(x.t(), y[:37])),
        (myops.copysign(x, -1.5), torch.copysign(x, -1.5)),
        (myops.copysign(x, 2), torch.copysign(x, 2)),
    ):
        assert mine.dtype == ref.dtype and mine.shape == ref.shape and mine.stride() == ref.stride(), (dt, mine, ref)
        assert torch.equal(mine, ref), dt
for dt in (torch.float32, torch.float64):
    a = torch.randn(8, 9, dtype=dt, generator=g).requires_grad_()
    b = torch.randn(9, dtype=dt, generator=g).requires_grad_()
    for mine, ref in (
        (lambda a, b: myops.reciprocal(a), lambda a, b: torch.reciprocal(a)),
        (myops.copysign, torch.copysign),
        (lambda a, b: myops.copysign(a, -0.5), lambda a, b: torch.copysign(a, -0.5)),
    ):
        gm = torch.autograd.grad(mine(a, b).sum(), (a, b), allow_unused=True, materialize_grads=True)
        gt = torch.autograd.grad(ref(a, b).sum(), (a, b), allow_unused=True, materialize_grads=True)
        for x, y in zip(gm, gt):
            assert x.dtype == y.dtype and torch.equal(x, y), (mine, x, y)
a64 = torch.rand(5, 6, dtype=torch.float64, generator=g).add(0.5).requires_grad_()
b64 = torch.randn(6, dtype=torch.float64, generator=g).requires_grad_()
assert gradcheck(myops.reciprocal, (a64,)) and gradgradcheck(myops.reciprocal, (a64,))
assert gradcheck(lambda a: myops.copysign(a, b64), (a64,)) and gradcheck(lambda a: myops.copysign(a, -1.0), (a64,))
print("the new ops equal torch")
"""


def test_the_new_ops_equal_torch(tree):
    assert (UNARY, BINARY) == ("reciprocal", "copysign"), "EQUALS_TORCH checks the recipe's examples: update it"
    t, env, _ = tree
    sh([PY, "-c", EQUALS_TORCH], t, env)
