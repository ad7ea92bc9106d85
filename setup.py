"""Build myops: two libraries from one build description, with torch's cpp_extension (ninja).

  myops/lib/libmyops.so   every kernel, schema and backward (csrc/ except csrc/python/). Links
                          LibTorch only (c10, torch_cpu; torch_cuda + cudart with CUDA), never
                          libpython: it loads in a C++ process. RUNPATH finds torch's libraries
                          in the same site-packages. Exported to CMake as myops::myops.
  myops/_C*.so            the Python module (csrc/python/): PyInit__C and the wrappers' fast
                          entry points. Links libmyops (RUNPATH $ORIGIN/lib) and libtorch_python.

Every .cpp under csrc/ (and every .cu when building with CUDA) goes into libmyops, except
csrc/python/ (the module) and, without CUDA, whatever lies under a folder named cuda/ (each
family's csrc/<family>/cuda/, csrc/core/cuda/). The wheel also carries the C++ API header
(myops/include/myops/ops.h, from csrc/include/) and the CMake package
(myops/share/cmake/myops/, from cmake/): see myops.cmake_prefix_path.

Environment variables:
  FORCE_CUDA=1            build the CUDA kernels, or fail saying why not (no nvcc, a CPU-only
                          torch, a CUDA version other than torch's). Never a silent CPU build.
  FORCE_CPU=1             build the CPU kernels only
  (neither)               CUDA kernels when torch has CUDA and a matching nvcc is found, GPU or
                          not; otherwise CPU only, with a warning that says why
  TORCH_CUDA_ARCH_LIST    GPU architectures to compile for, e.g. "9.0" (read by torch); default:
                          the GPUs present, or 9.0 when none is
  MAX_JOBS                parallel compile jobs (read by torch's ninja builder)
  DEBUG=1                 -O0 -g, device code with -G (release builds carry no debug info)
"""

import glob
import os
import platform
import re
import shutil
import subprocess
import sys


def _find_cuda_home():
    """torch derives CUDA_HOME from `which nvcc`; a wrapper script such as /usr/local/bin/nvcc
    then yields /usr/local, which has no CUDA headers. Prefer a directory that has them."""
    if os.environ.get("CUDA_HOME") or os.environ.get("CUDA_PATH"):
        return
    candidates = []
    nvcc = shutil.which("nvcc")
    if nvcc:
        candidates.append(os.path.dirname(os.path.dirname(os.path.realpath(nvcc))))
    candidates += ["/usr/local/cuda"]
    for c in candidates:
        if os.path.exists(os.path.join(c, "include", "cuda_runtime.h")) and os.path.exists(
            os.path.join(c, "bin", "nvcc")
        ):
            os.environ["CUDA_HOME"] = c
            return


_find_cuda_home()

import torch  # noqa: E402
import setuptools  # noqa: E402
from setuptools import setup  # noqa: E402
from torch.utils.cpp_extension import (  # noqa: E402
    CUDA_HOME,
    BuildExtension,
    CppExtension,
    CUDAExtension,
    include_paths,
)

ROOT = os.path.dirname(os.path.abspath(__file__))
BASE_VERSION = "0.1.0"
LIB_NAME = "myops.lib.libmyops"  # -> myops/lib/libmyops.so


def env_flag(name):
    return os.environ.get(name, "0").lower() in ("1", "true", "yes", "on")


def rel(path):
    return os.path.relpath(path, ROOT)


# ---- which build: CUDA or CPU, and why ---------------------------------------------------


def nvcc_version():
    """The CUDA version of CUDA_HOME's nvcc ("13.0"), or None when it cannot be run."""
    if CUDA_HOME is None:
        return None
    try:
        out = subprocess.check_output([os.path.join(CUDA_HOME, "bin", "nvcc"), "--version"], text=True)
    except (OSError, subprocess.CalledProcessError):
        return None
    m = re.search(r"release (\d+\.\d+)", out)
    return m.group(1) if m else None


def why_no_cuda():
    """None when the CUDA kernels can be built, else the reason they cannot."""
    if torch.version.cuda is None:
        return f"the installed torch {torch.__version__} is a CPU-only build (torch.version.cuda is None)"
    if CUDA_HOME is None:
        return (
            "no CUDA toolkit found: no nvcc on PATH and no CUDA_HOME / CUDA_PATH "
            "(set CUDA_HOME to a toolkit whose bin/nvcc and include/cuda_runtime.h exist)"
        )
    found = nvcc_version()
    if found is None:
        return f"{os.path.join(CUDA_HOME, 'bin', 'nvcc')} cannot be run (CUDA_HOME={CUDA_HOME})"
    if found.split(".")[0] != torch.version.cuda.split(".")[0]:
        return (
            f"nvcc in {CUDA_HOME} is CUDA {found}, but torch {torch.__version__} was built with "
            f"CUDA {torch.version.cuda}: the major versions must match (point CUDA_HOME to a CUDA "
            f"{torch.version.cuda.split('.')[0]}.x toolkit)"
        )
    return None


DEBUG = env_flag("DEBUG")
if env_flag("FORCE_CPU"):
    WITH_CUDA, CUDA_REASON = False, "FORCE_CPU=1"
else:
    CUDA_REASON = why_no_cuda()
    WITH_CUDA = CUDA_REASON is None
    if not WITH_CUDA and env_flag("FORCE_CUDA"):
        sys.exit(f"myops: FORCE_CUDA=1 but the CUDA kernels cannot be built: {CUDA_REASON}.")
    if not WITH_CUDA:
        print(f"myops: WARNING: building the CPU kernels only: {CUDA_REASON}.", file=sys.stderr)

arch_list = os.environ.get("TORCH_CUDA_ARCH_LIST", "") if WITH_CUDA else ""
if WITH_CUDA and not arch_list:
    if torch.cuda.is_available():
        arch_list = ";".join("%d.%d" % torch.cuda.get_device_capability(i) for i in range(torch.cuda.device_count()))
    else:
        # No GPU to target (e.g. CI): one architecture keeps the build short.
        arch_list = "9.0"
    os.environ["TORCH_CUDA_ARCH_LIST"] = arch_list

# The default variant, the one published with a public version (`pip install myops`): CUDA 13.0
# kernels, as torch 2.14.1's and torchvision's default wheels on PyPI. Every other build carries
# a local tag, as torchvision's do on torch's own index: 0.1.0+cpu, 0.1.0+cu126. The sdist
# carries the plain version.
DEFAULT_VARIANT_CUDA = "13.0"
LOCAL_TAG = ("cu" + torch.version.cuda.replace(".", "")) if WITH_CUDA else "cpu"
IS_DEFAULT_VARIANT = WITH_CUDA and torch.version.cuda == DEFAULT_VARIANT_CUDA
VERSION = BASE_VERSION if "sdist" in sys.argv or IS_DEFAULT_VARIANT else f"{BASE_VERSION}+{LOCAL_TAG}"
TORCH_BASE_VERSION = torch.__version__.split("+")[0]

# Written into the package by build_ext as myops/_build_config.py (never by other commands:
# `setup.py sdist` must not overwrite the in-tree build's record). Recorded so that `import myops` can tell the user when the installed torch differs from the
# one this build was compiled against, and so `myops.show_config()` can print it.
config = {
    "version": VERSION,
    "torch_version": torch.__version__,
    "torch_cuda_version": torch.version.cuda,
    "with_cuda": WITH_CUDA,
    "why_no_cuda": None if WITH_CUDA else CUDA_REASON,
    "cuda_archs": arch_list,
    "debug": DEBUG,
    "nvcc": CUDA_HOME if WITH_CUDA else None,
}

# ---- sources and flags -------------------------------------------------------------------


def lib_sources():
    """Every .cpp (and .cu with CUDA) under csrc/, except the Python module's csrc/python/ and,
    without CUDA, any file under a folder named cuda/ (csrc/<family>/cuda/, csrc/core/cuda/)."""
    out = []
    for ext in ("cpp", "cu") if WITH_CUDA else ("cpp",):
        for p in glob.glob(os.path.join(ROOT, "csrc", "**", "*." + ext), recursive=True):
            parts = rel(p).split(os.sep)
            if parts[1] == "python" or (not WITH_CUDA and "cuda" in parts[1:-1]):
                continue
            out.append(rel(p))
    return sorted(out)


# ---- the CPU ISA builds ------------------------------------------------------------------
# A kernel family with ISA builds (core/cpu_isa.h) has one source per instruction set, named by
# its suffix, in any folder: elementwise_avx2.cpp, elementwise_avx512.cpp, max_pool2d_add_avx2.cpp
# (under csrc/<family>/cpu/). Each is compiled with that set's flags, as torch compiles its
# ATen/native/cpu kernels once per CPU_CAPABILITY (cmake/Codegen.cmake): the compiler enables the
# instructions and defines its own feature macros (__AVX2__, __AVX512F__, ... which sleef.h and
# at::vec test), and CPU_CAPABILITY names at::vec's namespace for the build (at::vec::AVX2,
# at::vec::AVX512). The baseline builds (elementwise.cpp, max_pool2d_add.cpp) get the common flags
# only; the runtime dispatch between the builds stays in C++ (core/cpu_isa.cpp). Only on x86-64:
# elsewhere these files compile for the baseline and are never called.
# An ISA build's objects go last on the link line (BuildMyops.build_extension): an inline
# function that is not inlined (a COMDAT copy in several objects) keeps the first copy the
# linker sees, so a baseline copy wins over one compiled with AVX-512 instructions.
_X86_64 = platform.machine().lower() in ("x86_64", "amd64")
ISA_BUILDS = (
    {
        "_avx2.cpp": ["-mavx2", "-mfma", "-mf16c", "-DCPU_CAPABILITY=AVX2", "-DCPU_CAPABILITY_AVX2"],
        "_avx512.cpp": [
            "-mavx512f",
            "-mavx512bw",
            "-mavx512vl",
            "-mavx512dq",
            "-mavx2",
            "-mfma",
            "-mf16c",
            "-DCPU_CAPABILITY=AVX512",
            "-DCPU_CAPABILITY_AVX512",
        ],
    }
    if _X86_64
    else {}
)


def isa_suffix(source):
    """The ISA_BUILDS key of an ISA build's source, else None."""
    return next((k for k in ISA_BUILDS if source.endswith(k)), None)


def module_sources():
    return sorted(rel(p) for p in glob.glob(os.path.join(ROOT, "csrc", "python", "*.cpp")))


# torch's headers are system headers to us: -isystem keeps -Wall to our own code (the build
# printed ~1,600 warnings from torch's headers with -I).
TORCH_ISYSTEM = [a for d in include_paths() for a in ("-isystem", d)]
OWN_INCLUDES = [os.path.join(ROOT, "csrc"), os.path.join(ROOT, "csrc", "include")]

# Release: -O3 and no debug info (-g0 overrides the -g in Python's own CFLAGS; it made the
# library ~9x larger). DEBUG=1: -O0 -g, device code with -G.
cxx_flags = ["-O0", "-g"] if DEBUG else ["-O3", "-g0"]
cxx_flags += ["-fopenmp", "-fdiagnostics-color=always", "-Wall", "-Wno-unused-function"] + TORCH_ISYSTEM
nvcc_flags = ["-O0", "-g", "-G"] if DEBUG else ["-O3"]
nvcc_flags += ["--expt-relaxed-constexpr", "--expt-extended-lambda", "-Xfatbin", "-compress-all"] + TORCH_ISYSTEM
# ptxas reports every register spill and every use of local memory ("ptxas warning : Registers
# are spilled to local memory in function ..."); tools/check_spills.py reads the build log and
# fails on a spill in a kernel that docs/design.md does not list with its reason.
nvcc_flags += ["-Xptxas", "-warn-spills,-warn-lmem-usage"]
link_flags = ["-fopenmp"] + (["-g"] if DEBUG else ["-Wl,--strip-debug"])


def without_torch_includes(ext):
    """Drop the -I torch paths cpp_extension adds: they come back as -isystem (TORCH_ISYSTEM)."""
    torch_dirs = set(include_paths())
    ext.include_dirs = [d for d in ext.include_dirs if d not in torch_dirs]
    return ext


def torch_runpath():
    """RUNPATH of libmyops: torch's libraries (and CUDA's runtime from the nvidia wheels, as
    torch's own libraries find it) in the same site-packages as myops/lib/."""
    paths = ["$ORIGIN/../../torch/lib"]
    if WITH_CUDA:
        paths.append("$ORIGIN/../../nvidia/cu%s/lib" % torch.version.cuda.split(".")[0])
    return paths


lib_kwargs = dict(
    name=LIB_NAME,
    sources=lib_sources(),
    include_dirs=list(OWN_INCLUDES),
    define_macros=[("MYOPS_WITH_CUDA", "1")] if WITH_CUDA else [],
    extra_compile_args={"cxx": list(cxx_flags), "nvcc": list(nvcc_flags)} if WITH_CUDA else {"cxx": list(cxx_flags)},
    # -z defs: every symbol must resolve against the libraries named here (LibTorch), so a
    # Python symbol in a kernel file is a link error, not a crash in a C++ process.
    extra_link_args=link_flags + ["-Wl,-soname,libmyops.so", "-Wl,-z,defs"],
)
libmyops = without_torch_includes((CUDAExtension if WITH_CUDA else CppExtension)(**lib_kwargs))
libmyops.libraries = [lib for lib in libmyops.libraries if lib != "torch_python"]

module = without_torch_includes(
    CppExtension(
        name="myops._C",
        sources=module_sources(),
        include_dirs=list(OWN_INCLUDES),
        extra_compile_args={"cxx": list(cxx_flags)},
        libraries=["myops"],
        extra_link_args=link_flags + ["-Wl,-rpath,$ORIGIN/lib"],
    )
)


class BuildMyops(BuildExtension):
    """torch's BuildExtension (ninja), plus: libmyops is a plain shared library
    (myops/lib/libmyops.so, no Python ABI tag) that _C links; the C++ header and the CMake
    package are copied next to it."""

    def get_ext_filename(self, ext_name):
        # Called with the full name or its last part: myops/lib/libmyops.so or libmyops.so.
        parts = ext_name.split(".")
        if parts[-1] == LIB_NAME.split(".")[-1]:
            return os.path.join(*parts[:-1], "libmyops.so")
        return super().get_ext_filename(ext_name)

    def run(self):
        # Where the package is assembled: the source tree for an in-place / editable build.
        pkg_dir = os.path.dirname(self.get_ext_fullpath("myops._C"))
        self.in_tree = bool(self.inplace or getattr(self, "editable_mode", False))
        if self.in_tree:
            self.mkpath(os.path.join(pkg_dir, "lib"))  # the in-place copy of libmyops.so goes there
        # Always hand the build to ninja (it recompiles only what changed, or what a changed
        # command line needs) and relink: setuptools' own check compares source dates only and
        # would keep a CPU-only libmyops when the next build adds the CUDA sources.
        self.force = True
        if getattr(self, "editable_mode", False):
            # pip install -e builds in a fresh temporary directory each time: keep the objects
            # in build/ so that ninja rebuilds only what changed.
            self.build_temp = os.path.join(ROOT, "build", "editable-temp")
        super().run()
        with open(os.path.join(pkg_dir, "_build_config.py"), "w") as f:
            f.write(
                "# Written by setup.py at build time. Do not edit.\nfrom typing import Any, Dict\n\n"
                "BUILD_CONFIG: Dict[str, Any] = %r\n" % (config,)
            )
        self.copy_tree(os.path.join(ROOT, "csrc", "include"), os.path.join(pkg_dir, "include"))
        self.copy_tree(os.path.join(ROOT, "cmake"), os.path.join(pkg_dir, "share", "cmake", "myops"))

    def build_extension(self, ext):
        # A Python built with a shared libpython (pyenv's, for one) may put
        # -Wl,-rpath,<its lib directory> into the link command (sysconfig's LDSHARED): a wheel
        # must not carry the builder's absolute path. Every RUNPATH of ours is set below.
        for attr in ("linker_so", "linker_so_cxx"):
            cmd = getattr(self.compiler, attr, None)
            if cmd:
                setattr(self.compiler, attr, [a for a in cmd if not a.startswith("-Wl,-rpath,/")])
        if ext.name == LIB_NAME:
            runpath = torch_runpath()
            if self.in_tree:
                # In the source tree torch is not a sibling directory: also its absolute path.
                runpath += [os.path.join(os.path.dirname(torch.__file__), "lib")]
                if WITH_CUDA:
                    import importlib.util

                    spec = importlib.util.find_spec("nvidia")
                    for d in (spec.submodule_search_locations or []) if spec else []:
                        runpath.append(os.path.join(d, "cu%s" % torch.version.cuda.split(".")[0], "lib"))
            ext.extra_link_args = ext.extra_link_args + ["-Wl,-rpath," + ":".join(runpath)]
        else:
            # _C links the libmyops.so just built (in build_lib, before any in-place copy).
            ext.library_dirs = ext.library_dirs + [os.path.dirname(self.get_ext_fullpath(LIB_NAME))]
        # The ISA builds (ISA_BUILDS): compiled here with their own flags, one group per
        # instruction set, then linked after the other objects.
        sources, extra_objects = ext.sources, ext.extra_objects
        isa_objects = []
        for suffix, flags in ISA_BUILDS.items():
            group = [s for s in sources if isa_suffix(s) == suffix]
            if not group:
                continue
            args = (
                dict(ext.extra_compile_args)
                if isinstance(ext.extra_compile_args, dict)
                else {"cxx": list(ext.extra_compile_args)}
            )
            args["cxx"] = list(args["cxx"]) + flags
            isa_objects += self.compiler.compile(
                group,
                output_dir=self.build_temp,
                macros=ext.define_macros + [(m,) for m in ext.undef_macros],
                include_dirs=ext.include_dirs,
                debug=self.debug,
                extra_postargs=args,
                depends=ext.depends,
            )
        try:
            ext.sources = [s for s in sources if isa_suffix(s) is None]
            ext.extra_objects = list(extra_objects) + isa_objects
            super().build_extension(ext)
            if isa_objects:
                self.check_isa_link(ext, isa_objects)
        finally:
            ext.sources, ext.extra_objects = sources, extra_objects

    def check_isa_link(self, ext, isa_objects):
        """tools/check_isa_link.py: no baseline code calls an ISA build's copy of a shared
        inline function (the link order above). Needs binutils' nm and objdump."""
        if not (shutil.which("nm") and shutil.which("objdump")):
            print(
                "WARNING: nm / objdump not found: the ISA link check (tools/check_isa_link.py) did not run",
                file=sys.stderr,
            )
            return
        baseline = self.compiler.object_filenames(ext.sources, output_dir=self.build_temp)
        missing = [o for o in baseline if not os.path.exists(o)]
        if missing:
            raise RuntimeError("check_isa_link: objects not found where expected: %s" % missing[:5])
        tool = os.path.join(ROOT, "tools", "check_isa_link.py")
        lib = self.get_ext_fullpath(ext.name)
        if subprocess.run([sys.executable, tool, lib, "--isa", *isa_objects, "--baseline", *baseline]).returncode:
            raise RuntimeError("check_isa_link failed for %s (above)" % lib)


print("myops build configuration:", file=sys.stderr)
for k, v in config.items():
    print("  %-20s %s" % (k, v), file=sys.stderr)
print("  %-20s %s" % ("MAX_JOBS", os.environ.get("MAX_JOBS", "(torch default)")), file=sys.stderr)
print("  %-20s %d files -> myops/lib/libmyops.so" % ("libmyops sources", len(libmyops.sources)), file=sys.stderr)
print("  %-20s %d files -> myops/_C" % ("module sources", len(module.sources)), file=sys.stderr)

# The license: PEP 639's License-Expression needs setuptools >= 77; an older setuptools (the
# environment's own, under --no-build-isolation) rejects that form in pyproject.toml outright.
_SETUPTOOLS = tuple(int(p) for p in re.findall(r"\d+", setuptools.__version__)[:2])
LICENSE_METADATA = (
    {"license_expression": "BSD-3-Clause", "license_files": ["LICENSE"]}
    if _SETUPTOOLS >= (77, 0)
    else {"license": "BSD-3-Clause", "license_files": ["LICENSE"]}
)

setup(
    version=VERSION,
    **LICENSE_METADATA,
    # The extension only works with the torch it was compiled against (torchvision pins it too).
    install_requires=[f"torch=={TORCH_BASE_VERSION}"],
    ext_modules=[libmyops, module],
    cmdclass={"build_ext": BuildMyops.with_options(use_ninja=True)},
)
