"""The package around the ops: version, build record, docstrings of torch.ops.myops, vmap of a
dynamic-shape op, the import-time checks, and house rules read from the binaries and sources."""

import io
import os
import re
import shutil
import subprocess
import sys

import pytest
import torch

import myops


def test_version_is_public_only_for_the_default_variant():
    """0.1.0 for the default variant (CUDA 13.0 kernels, as torch's PyPI wheel); any other build
    carries its local tag (0.1.0+cpu, 0.1.0+cu126), which a public index refuses."""
    cfg = myops.BUILD_CONFIG
    if cfg["with_cuda"] and cfg["torch_cuda_version"] == "13.0":
        assert myops.__version__ == "0.1.0"
    else:
        tag = "cu" + cfg["torch_cuda_version"].replace(".", "") if cfg["with_cuda"] else "cpu"
        assert myops.__version__ == f"0.1.0+{tag}"
        assert re.fullmatch(r"\d+\.\d+\.\d+\+(cpu|cu\d+)", myops.__version__)


# manylinux_2_28 (torch 2.14.1's own wheels): glibc 2.28, and libstdc++ as GCC 8 has it.
MANYLINUX_2_28_MAX = {"GLIBC": (2, 28), "GLIBCXX": (3, 4, 24), "CXXABI": (1, 3, 11), "GCC": (7, 0, 0)}


def _symbols(path):
    return subprocess.run(["objdump", "-T", path], capture_output=True, text=True, check=True).stdout


@pytest.mark.skipif(shutil.which("objdump") is None, reason="needs objdump (binutils)")
@pytest.mark.parametrize("lib", ["libmyops", "_C"])
def test_binaries_need_no_symbol_newer_than_manylinux_2_28(lib):
    """A build on a newer glibc still loads on glibc 2.28 (csrc/core/glibc_compat.h): without
    it, exp came out as GLIBC_2.29 and libstdc++'s __libc_single_threaded as GLIBC_2.32."""
    here = os.path.dirname(os.path.abspath(myops.__file__))
    path = os.path.join(here, "lib", "libmyops.so") if lib == "libmyops" else myops._C.__file__
    text = _symbols(path)
    needed = re.findall(r"\((GLIBC|GLIBCXX|CXXABI|GCC)_([\d.]+)\)", text)
    assert needed, text[:2000]
    too_new = sorted({f"{n}_{v}" for n, v in needed if tuple(map(int, v.split("."))) > MANYLINUX_2_28_MAX[n]})
    assert not too_new, f"{path} needs {too_new}"
    # the stand-ins are hidden: the library exports none of them
    exported = re.findall(r"\s(?:\.text|\.bss|\.data)\s.*\s(exp|exp2|log|log2|pow|__libc_single_threaded)$", text, re.M)
    assert not exported, exported


def test_show_config_names_the_build():
    buf = io.StringIO()
    cfg = myops.show_config(file=buf)
    text = buf.getvalue()
    assert myops.__version__ in text and cfg["torch_version"] in text
    assert "libmyops.so" in text and myops.cmake_prefix_path in text
    if not cfg["with_cuda"]:
        assert cfg["why_no_cuda"] and cfg["why_no_cuda"] in text


@pytest.mark.parametrize(
    "name", ["nonzero", "nonzero_static", "relu", "gelu", "add", "where", "clamp", "max_pool2d_add", "diagonal"]
)
def test_registered_ops_have_docstrings(name):
    packet = getattr(torch.ops.myops, name)
    assert packet.__doc__ == getattr(myops, name).__doc__
    assert packet.default.__doc__ == getattr(myops, name).__doc__
    assert len(packet.__doc__) > 40


def test_vmap_of_nonzero_is_a_clear_error():
    x = torch.randn(3, 5)
    with pytest.raises(RuntimeError, match="vmap: We do not support batching operators that can output dynamic shape"):
        torch.func.vmap(torch.nonzero)(x)  # torch's own message, for comparison
    with pytest.raises(RuntimeError, match=r"dynamic shape\. Attempted to vmap over myops::nonzero"):
        torch.func.vmap(myops.nonzero)(x)
    with pytest.raises(RuntimeError, match="dynamic shape"):
        torch.func.vmap(torch.ops.myops.nonzero)(x)


def test_vmap_of_nonzero_static_matches_a_loop():
    x = torch.randn(4, 6) > 0
    with pytest.warns(UserWarning, match="batching rule"):
        got = torch.func.vmap(lambda t: myops.nonzero_static(t, size=4))(x)
    want = torch.stack([torch.nonzero_static(t, size=4) for t in x])
    assert torch.equal(got, want)


def _import_myops(code, **env):
    e = dict(os.environ, **env)
    return subprocess.run([sys.executable, "-c", "import myops\n" + code], capture_output=True, text=True, env=e)


def test_import_warns_when_a_gpu_has_no_kernels():
    """A CPU-only build imported on a machine with a GPU warns (pip -q hides the build output)."""
    code = (
        "import warnings, torch\n"
        "myops.BUILD_CONFIG['with_cuda'] = False\n"
        "torch.cuda.is_available = lambda: True\n"
        "with warnings.catch_warnings(record=True) as w:\n"
        "    warnings.simplefilter('always')\n"
        "    myops._warn_if_gpu_without_kernels()\n"
        "print('|'.join(str(x.message) for x in w))\n"
    )
    r = _import_myops(code)
    assert r.returncode == 0, r.stderr
    if torch.version.cuda is None:
        assert r.stdout.strip() == ""
    else:
        assert "built without CUDA kernels" in r.stdout and "FORCE_CUDA=1" in r.stdout
    r = _import_myops(code, MYOPS_NO_CPU_BUILD_WARNING="1")
    assert r.returncode == 0 and r.stdout.strip() == "", r.stdout + r.stderr


def test_import_refuses_another_torch_release():
    code = "import torch\ntorch.__version__ = '2.0.0'\nmyops._check_torch_version()\n"
    r = _import_myops(code)
    assert r.returncode != 0 and "myops was built against torch" in r.stderr


SETUP = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "setup.py")


@pytest.mark.skipif(not os.path.exists(SETUP), reason="not in a source tree")
def test_force_cuda_without_a_toolkit_is_an_error():
    """FORCE_CUDA=1 never falls back to a silent CPU build; without it the CPU build says why."""
    env = dict(os.environ, CUDA_HOME="/nonexistent/cuda", FORCE_CUDA="1")
    env.pop("FORCE_CPU", None)
    r = subprocess.run(
        [sys.executable, SETUP, "--version"], capture_output=True, text=True, env=env, cwd=os.path.dirname(SETUP)
    )
    assert r.returncode != 0
    reason = "a CPU-only build" if torch.version.cuda is None else "/nonexistent/cuda"
    assert "FORCE_CUDA=1 but the CUDA kernels cannot be built" in r.stderr and reason in r.stderr, r.stderr

    env.pop("FORCE_CUDA")
    r = subprocess.run(
        [sys.executable, SETUP, "--version"], capture_output=True, text=True, env=env, cwd=os.path.dirname(SETUP)
    )
    assert r.returncode == 0, r.stderr
    assert "WARNING: building the CPU kernels only" in r.stderr and r.stdout.strip().endswith("0.1.0+cpu"), (
        r.stdout + r.stderr
    )


# ---- the CPU ISA builds ----------------------------------------------------------------------------
# tools/check_isa_link.py (run by setup.py after every link of libmyops): no baseline code calls an
# ISA build's copy of an inline function they share.

ROOT = os.path.dirname(SETUP)
sys.path.insert(0, os.path.join(ROOT, "tools"))
import check_isa_link  # noqa: E402

_ISA_TOOLS = bool(shutil.which("objdump") and shutil.which("nm") and shutil.which("c++"))
needs_isa_tools = pytest.mark.skipif(
    not (_ISA_TOOLS and os.uname().machine == "x86_64"),
    reason="needs x86-64 and objdump, nm, c++ (binutils, a compiler)",
)
_SHARED = "__attribute__((noinline)) inline float scaled_sum(const float* x, int n) { float s = 0; for (int i = 0; i < n; ++i) s += 2 * x[i]; return s; }\n"
_ISA_ONLY = "__attribute__((noinline)) inline float isa_only(const float* x, int n) { float s = 0; for (int i = 0; i < n; ++i) s += x[i] * x[i]; return s; }\n"


@needs_isa_tools
@pytest.mark.parametrize("isa_first", [True, False])
def test_isa_link_check_finds_an_isa_copy_of_a_shared_inline_function(tmp_path, isa_first):
    """One inline function in a baseline and an -mavx2 object: linked with the ISA object first,
    its copy is kept and the check names it; linked last, the baseline copy is kept. An inline
    function only the ISA object defines is its own code, never reported."""
    (tmp_path / "base.cpp").write_text(_SHARED + "float base_sum(const float* x, int n) { return scaled_sum(x, n); }\n")
    (tmp_path / "isa.cpp").write_text(
        _SHARED + _ISA_ONLY + "float isa_sum(const float* x, int n) { return scaled_sum(x, n) + isa_only(x, n); }\n"
    )
    for src, flags in (("base", []), ("isa", ["-mavx2", "-mfma"])):
        subprocess.run(["c++", "-O3", "-fPIC", "-c", *flags, f"{src}.cpp", "-o", f"{src}.o"], cwd=tmp_path, check=True)
    objs = ["isa.o", "base.o"] if isa_first else ["base.o", "isa.o"]
    subprocess.run(["c++", "-shared", *objs, "-o", "lib.so"], cwd=tmp_path, check=True)
    found = check_isa_link.isa_copies_kept(
        str(tmp_path / "lib.so"), [str(tmp_path / "isa.o")], [str(tmp_path / "base.o")]
    )
    assert found == (["_Z10scaled_sumPKfi"] if isa_first else []), found
    assert check_isa_link.avx_functions(str(tmp_path / "lib.so"), {"_Z8isa_onlyPKfi"}) == {"_Z8isa_onlyPKfi"}


@needs_isa_tools
def test_libmyops_baseline_code_runs_no_isa_copy():
    """The check on the library this suite imports, with the objects of the in-tree build (the
    build setup.py ran it on); skipped for an installed wheel, whose objects are gone."""
    here = os.path.dirname(os.path.abspath(myops.__file__))
    lib = os.path.join(here, "lib", "libmyops.so")
    import glob

    # the build directory (build/temp.*, build/editable-temp) whose objects were linked last
    # before the library: one build's objects only (another build inlines differently)
    built = {}
    for d in glob.glob(os.path.join(ROOT, "build", "*temp*")):
        objs = [
            o
            for o in glob.glob(os.path.join(d, "csrc", "**", "*.o"), recursive=True)
            if os.path.getmtime(o) <= os.path.getmtime(lib)
        ]
        if any(re.search(r"_avx(2|512)\.o$", o) for o in objs):
            built[max(map(os.path.getmtime, objs))] = objs
    if not built or os.path.dirname(os.path.dirname(here)) != ROOT:
        pytest.skip("no in-tree build objects of this library (an installed build)")
    objs = built[max(built)]
    isa = [o for o in objs if re.search(r"_avx(2|512)\.o$", o)]
    found = check_isa_link.isa_copies_kept(lib, isa, [o for o in objs if o not in isa])
    assert not found, f"{lib}: baseline code calls an ISA build's copy of {found[:20]}"


# The CUDA emulation (tests/test_cuda_emulation.py) builds csrc/*/cuda/ with the host compiler and
# MYOPS_CUDA_EMULATION. The kernel files never test that macro: the seam headers below hold every
# difference (docs/design.md, "The CUDA emulation"), so what the emulation runs is the production code.
EMULATION_SEAM = {
    "csrc/core/cuda/glue.h",  # device guard, stream, registration, the host read of a device value
    "csrc/core/cuda/launch.h",  # launches, block barriers
    "csrc/core/cuda/cub.h",  # CUB / thrust / the caching allocator, or their stand-ins
    "csrc/core/cuda_rules.h",  # which of torch's rules the functors follow, device intrinsics
    "csrc/core/cuda/emulation.h",  # the emulation itself
    "csrc/core/cuda/cub_emulation.h",
    "csrc/core/cuda/work_counter.h",  # the emulation's work counters (MYOPS_EMU_COUNT)
}


def test_emulation_switch_lives_in_the_seam_headers():
    root = os.path.dirname(SETUP)
    users = set()
    for d, _, files in os.walk(os.path.join(root, "csrc")):
        for f in files:
            path = os.path.join(d, f)
            with open(path, encoding="utf-8") as fh:
                if "MYOPS_CUDA_EMULATION" in fh.read():
                    users.add(os.path.relpath(path, root))
    assert users - EMULATION_SEAM == set(), (
        f"MYOPS_CUDA_EMULATION tested outside the seam headers: {sorted(users - EMULATION_SEAM)}"
    )
    assert {"csrc/core/cuda/glue.h", "csrc/core/cuda/launch.h"} <= users, users  # the scan reads the tree


def test_core_includes_no_family():
    # csrc/core/ is what the families share (docs/design.md, Layout): it includes no header of a
    # family (csrc/<family>/, the op table of csrc/include/myops/) nor of the Python module
    csrc = os.path.join(os.path.dirname(SETUP), "csrc")
    outside = {d + "/" for d in os.listdir(csrc) if os.path.isdir(os.path.join(csrc, d))} - {"core/", "include/"}
    outside |= {"myops/op_table.h", "myops/op_signatures.h", "myops/ops_elementwise.h"}
    found, bad = 0, []
    for d, _, files in os.walk(os.path.join(csrc, "core")):
        for f in files:
            with open(os.path.join(d, f), encoding="utf-8") as fh:
                for line in fh:
                    m = re.match(r'\s*#\s*include\s*"([^"]+)"', line)
                    found += bool(m)
                    if m and any(m.group(1).startswith(o) for o in outside):
                        bad.append(f"{os.path.relpath(os.path.join(d, f), csrc)}: {m.group(1)}")
    assert {"elementwise/", "max_pool2d_add/"} <= outside and found >= 10, (outside, found)  # the scan reads the tree
    assert not bad, f"csrc/core/ includes a family's header: {bad}"


ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _pyproject():
    with open(os.path.join(ROOT, "pyproject.toml")) as f:
        return f.read()


def test_requires_python_admits_exactly_the_classified_pythons():
    """The classifiers list the Pythons a wheel is built and tested for (`make release-check`
    reads them); requires-python admits exactly that range."""
    text = _pyproject()
    minors = sorted(int(m) for m in re.findall(r'"Programming Language :: Python :: 3\.(\d+)"', text))
    assert minors and minors == list(range(minors[0], minors[-1] + 1)), minors
    spec = re.search(r'^requires-python = "(.*)"$', text, re.M).group(1)
    assert spec == f">=3.{minors[0]},<3.{minors[-1] + 1}", spec
    assert minors[0] <= sys.version_info.minor <= minors[-1], "the suite runs under a Python the package refuses"


def _dev_tool(module):
    """Import a checker of requirements-dev.txt, or skip where it is missing; CI has it, so there
    a missing one fails."""
    try:
        __import__(module)
    except ImportError:
        if os.environ.get("CI"):
            raise
        pytest.skip(f"{module} is not installed (requirements-dev.txt has it)")


def test_sources_parse_on_the_oldest_supported_python():
    """No syntax newer than the oldest Python requires-python admits, in the package, the tests,
    the benchmarks and the tools: ruff reads that bound from pyproject.toml (its syntax errors
    name the Python a construct needs). The stdlib calls are checked by running the suite under
    each Python (`make release-check`)."""
    _dev_tool("ruff")
    r = subprocess.run(
        [sys.executable, "-m", "ruff", "check", "--no-cache", "--select", "E9", "--quiet", ROOT],
        capture_output=True,
        text=True,
    )
    assert r.returncode == 0, r.stdout + r.stderr


@pytest.mark.parametrize("check", [["check"], ["format", "--check"]], ids=["lint", "format"])
def test_python_style(check):
    """The Python sources hold pyproject.toml's ruff configuration: its lint rules, and the layout
    `ruff format` gives (`python -m ruff format .` mends a failure of the second)."""
    _dev_tool("ruff")
    r = subprocess.run([sys.executable, "-m", "ruff", *check, "--no-cache", ROOT], capture_output=True, text=True)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-2000:]


def test_cpp_style():
    """The C++ / CUDA sources hold clang-format's layout (`.clang-format`; `python
    tools/cpp_format.py`, or `make format`, mends a failure)."""
    _dev_tool("clang_format")
    r = subprocess.run(
        [sys.executable, os.path.join(ROOT, "tools", "cpp_format.py"), "--check"], capture_output=True, text=True
    )
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-2000:]


def test_python_types():
    """The package type-checks under pyproject.toml's mypy configuration (`python -m mypy` from
    the repository root, the same command; its cache in .mypy_cache makes a rerun take a second,
    the first run some 15 s)."""
    _dev_tool("mypy")
    r = subprocess.run([sys.executable, "-m", "mypy"], cwd=ROOT, capture_output=True, text=True)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-2000:]


def test_public_functions_are_written_out():
    """Every public function is a `def` in a module of the package that tools (mypy, IDEs) read,
    with type annotations: none is made at import time (no globals() generation), and every
    plain unary op of the op table has its function."""
    import ast
    import inspect

    from myops._table import EW_OPS

    pkg = os.path.dirname(os.path.abspath(myops.__file__))
    for name in [n for n in os.listdir(pkg) if n.endswith(".py")]:
        with open(os.path.join(pkg, name)) as f:
            assert "globals()" not in f.read(), name
    unary = [fn for fn, op in EW_OPS.items() if op.sig == "unary"]
    assert unary and set(unary) <= set(myops.__all__), unary
    for name in myops.ops.__all__:
        fn = getattr(myops, name)
        assert getattr(myops.ops, name) is fn, name
        src = inspect.getsourcefile(fn)
        tree = ast.parse(open(src).read())
        defs = [
            d
            for d in tree.body
            if isinstance(d, ast.FunctionDef)
            and d.name == name
            and not any(isinstance(dec, ast.Name) and dec.id == "overload" for dec in d.decorator_list)
        ]
        assert len(defs) == 1, (name, src)
        assert defs[0].returns is not None and all(a.annotation is not None for a in defs[0].args.args), name
