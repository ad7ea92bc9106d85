"""myops from C++, without Python.

libmyops.so (every kernel, schema and backward) links LibTorch only; the Python module
myops._C links it. examples/cpp is built with CMake against the installed package
(find_package(myops) -> myops::myops) and run: the C++ API (myops/ops.h) against ATen, and an
AOTInductor package of a model that uses myops ops, loaded with AOTIModelPackageLoader. The
process must not map libpython.
"""

import glob
import os
import re
import shutil
import subprocess
import sys

import pytest
import torch

import myops

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
EXAMPLE = os.path.join(ROOT, "examples", "cpp")
PKG = os.path.dirname(os.path.abspath(myops.__file__))
LIB = os.path.join(PKG, "lib", "libmyops.so")

needs_binutils = pytest.mark.skipif(
    not (shutil.which("nm") and shutil.which("readelf")), reason="binutils (nm, readelf) not installed"
)


def _dynamic(path):
    """readelf -d: (NEEDED list, RUNPATH entries)."""
    out = subprocess.run(["readelf", "-d", path], capture_output=True, text=True, check=True).stdout
    needed = re.findall(r"\(NEEDED\).*\[(.*)\]", out)
    runpath = re.findall(r"\((?:RUNPATH|RPATH)\).*\[(.*)\]", out)
    return needed, runpath[0].split(":") if runpath else []


@needs_binutils
def test_libmyops_links_no_python():
    out = subprocess.run(["nm", "-D", "--undefined-only", LIB], capture_output=True, text=True, check=True).stdout
    syms = [line.split()[-1] for line in out.splitlines() if line.strip()]
    assert syms, "nm listed no undefined symbols: not a dynamic library?"
    python_syms = [s for s in syms if re.match(r"_?(Py|THP)", s)]
    assert python_syms == [], f"libmyops.so needs Python symbols: {python_syms[:10]}"
    needed, runpath = _dynamic(LIB)
    assert "libtorch_cpu.so" in needed and "libc10.so" in needed
    assert not [n for n in needed if "python" in n], needed
    assert "$ORIGIN/../../torch/lib" in runpath, runpath
    if myops.BUILD_CONFIG["with_cuda"]:
        assert any(n.startswith("libcudart.so") for n in needed), needed


@needs_binutils
def test_module_links_libmyops():
    (module,) = glob.glob(os.path.join(PKG, "_C*.so"))
    needed, runpath = _dynamic(module)
    assert "libmyops.so" in needed and "libtorch_python.so" in needed, needed
    assert "$ORIGIN/lib" in runpath, runpath


def test_cmake_package_installed():
    assert os.path.isfile(os.path.join(myops.cmake_prefix_path, "myops", "myopsConfig.cmake"))
    assert os.path.isfile(os.path.join(PKG, "include", "myops", "ops.h"))


# ---- the C++ example ------------------------------------------------------------------------


def _cuda_cmake_args():
    """torch's CMake config of a CUDA build of torch finds the CUDA toolkit itself; point it to
    the real one (nvcc on PATH may be a wrapper outside the toolkit) and, when the toolkit has
    no libnvrtc, to the one pip installed beside torch."""
    if torch.version.cuda is None:
        return []
    roots = []
    nvcc = shutil.which("nvcc")
    if nvcc:
        roots.append(os.path.dirname(os.path.dirname(os.path.realpath(nvcc))))
    roots += [os.environ.get("CUDA_HOME", ""), "/usr/local/cuda"]
    root = next((r for r in roots if r and os.path.exists(os.path.join(r, "include", "cuda_runtime.h"))), None)
    if root is None:
        pytest.skip("torch is a CUDA build and its CMake config needs a CUDA toolkit; none is installed")
    args = [f"-DCUDA_TOOLKIT_ROOT_DIR={root}", f"-DCUDAToolkit_ROOT={root}"]
    if not glob.glob(os.path.join(root, "lib*", "libnvrtc.so*")):
        major = torch.version.cuda.split(".")[0]
        # Beside torch, or in any other site directory on the path (a venv layered over another).
        sites = [os.path.dirname(os.path.dirname(torch.__file__))] + [p for p in sys.path if p]
        nvrtc = [
            f
            for site in sites
            for f in sorted(glob.glob(os.path.join(site, "nvidia", f"cu{major}", "lib", "libnvrtc.so.*")))
        ]
        nvrtc = [p for p in nvrtc if re.search(r"libnvrtc\.so\.\d+$", p)]
        if nvrtc:
            args.append(f"-DCUDA_nvrtc_LIBRARY={nvrtc[0]}")
    return args


class _Model(torch.nn.Module):
    def forward(self, x, other):
        return torch.ops.myops.relu(torch.ops.myops.max_pool2d_add(x, other)) + 1


def test_generated_elementwise_code_is_current():
    """csrc/include/myops/ops_elementwise.h (the C++ API's elementwise declarations) and
    csrc/elementwise/generated/ (the rest of the code the op table makes, written out) are what
    tools/gen_ops_elementwise.py writes from the op table and its signatures."""
    r = subprocess.run(
        [sys.executable, os.path.join(ROOT, "tools", "gen_ops_elementwise.py"), "--check"],
        capture_output=True,
        text=True,
    )
    assert r.returncode == 0, r.stdout + r.stderr


@pytest.fixture(scope="module")
def aoti_package(tmp_path_factory):
    """An AOTInductor package (CPU) of a model that calls two myops ops (see main.cpp)."""
    from torch._inductor import aoti_compile_and_package

    inputs = (torch.randn(2, 3, 9, 9), torch.randn(2, 3, 5, 5))
    ep = torch.export.export(_Model(), inputs)
    path = str(tmp_path_factory.mktemp("aoti") / "model.pt2")
    return aoti_compile_and_package(ep, package_path=path)


@pytest.fixture(scope="module")
def example_build(tmp_path_factory, aoti_package):
    """examples/cpp configured with CMake against this myops and torch, and built."""
    if shutil.which("cmake") is None:
        pytest.skip("cmake not installed")
    if shutil.which(os.environ.get("CXX", "c++")) is None and shutil.which("g++") is None:
        pytest.skip("no C++ compiler")
    build = str(tmp_path_factory.mktemp("example"))
    prefix = torch.utils.cmake_prefix_path + ";" + myops.cmake_prefix_path
    configure = [
        "cmake",
        "-S",
        EXAMPLE,
        "-B",
        build,
        "-DCMAKE_BUILD_TYPE=Release",
        f"-DCMAKE_PREFIX_PATH={prefix}",
        f"-DMYOPS_AOTI_PACKAGE={aoti_package}",
    ] + _cuda_cmake_args()
    for cmd in (configure, ["cmake", "--build", build, "-j", os.environ.get("MAX_JOBS", "2")]):
        r = subprocess.run(cmd, capture_output=True, text=True)
        assert r.returncode == 0, f"{' '.join(cmd)} failed:\n{r.stdout[-4000:]}\n{r.stderr[-4000:]}"
    return build


def _env_without_python():
    env = dict(os.environ)
    for k in ("LD_PRELOAD", "PYTHONHOME", "PYTHONPATH"):
        env.pop(k, None)
    return env


def test_cpp_example_runs_without_python(example_build, aoti_package):
    r = subprocess.run(
        ["ctest", "--test-dir", example_build, "--output-on-failure", "-V"],
        capture_output=True,
        text=True,
        env=_env_without_python(),
        timeout=600,
    )
    out = r.stdout + r.stderr
    assert r.returncode == 0, out[-6000:]
    for line in [
        "ok      myops::nonzero == at::nonzero",
        "ok      myops::max_pool2d_add == at::max_pool2d + other",
        "ok      myops::max_pool2d_add backward == at::max_pool2d's",
        "ok      myops::clamp(numbers) == at::clamp",
        "ok      myops::clamp(max=0) == at::clamp",
        "ok      myops::roi_align_levels == one level per RoI",
        "ok      myops::roi_align_levels: the backward of a result that requires grad raises",
        "ok      myops::multiclass_nms_static: 3 detections padded to 4",
        f"ok      AOTInductor package {aoti_package}",
        "ok      no libpython in this process",
        "all checks passed",
    ]:
        assert line in out, f"missing {line!r} in:\n{out[-6000:]}"
    assert "libpython" not in out.replace("no libpython", "")


def test_cpp_example_detects_libpython(example_build):
    """The libpython check can fail: preloading libpython makes the program report it."""
    import sysconfig

    libdir, ldlib = sysconfig.get_config_var("LIBDIR"), sysconfig.get_config_var("LDLIBRARY")
    libpython = os.path.join(libdir or "", ldlib or "")
    if not (ldlib and ldlib.endswith(".so") or ".so." in (ldlib or "")) or not os.path.exists(libpython):
        pytest.skip(f"this Python has no shared libpython to preload ({ldlib})")
    env = _env_without_python()
    env["LD_PRELOAD"] = libpython
    r = subprocess.run([os.path.join(example_build, "myops_example")], capture_output=True, text=True, env=env)
    assert r.returncode != 0 and "FAILED  no libpython in this process" in r.stdout, r.stdout[-3000:]
