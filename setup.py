"""Build the myops._C extension with torch's cpp_extension (ninja).

Environment variables:
  FORCE_CUDA=1            build the CUDA kernels even when no GPU is visible (needs nvcc)
  FORCE_CPU=1             build the CPU kernels only, even when a GPU is visible
  TORCH_CUDA_ARCH_LIST    GPU architectures to compile for, e.g. "9.0" (read by torch)
  MAX_JOBS                parallel compile jobs (read by torch's ninja builder)
  DEBUG=1                 -O0 -g, device code with -G
"""
import glob
import os
import sys


def _find_cuda_home():
    """torch derives CUDA_HOME from `which nvcc`; a wrapper script such as /usr/local/bin/nvcc
    then yields /usr/local, which has no CUDA headers. Prefer a directory that has them."""
    if os.environ.get("CUDA_HOME") or os.environ.get("CUDA_PATH"):
        return
    import shutil

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
from setuptools import setup  # noqa: E402
from torch.utils.cpp_extension import CUDA_HOME, BuildExtension, CppExtension, CUDAExtension  # noqa: E402

ROOT = os.path.dirname(os.path.abspath(__file__))


def env_flag(name):
    return os.environ.get(name, "0").lower() in ("1", "true", "yes", "on")


def sources(pattern):
    return sorted(glob.glob(os.path.join("csrc", pattern)))


DEBUG = env_flag("DEBUG")
WITH_CUDA = (
    not env_flag("FORCE_CPU")
    and CUDA_HOME is not None
    and torch.version.cuda is not None
    and (torch.cuda.is_available() or env_flag("FORCE_CUDA"))
)

cxx_flags = ["-O0", "-g"] if DEBUG else ["-O3"]
cxx_flags += ["-fopenmp", "-fdiagnostics-color=always", "-Wall", "-Wno-unused-function"]
nvcc_flags = ["-O0", "-g", "-G"] if DEBUG else ["-O3", "-lineinfo"]
nvcc_flags += ["--expt-relaxed-constexpr", "--expt-extended-lambda", "-Xfatbin", "-compress-all"]
define_macros = []

srcs = sources("*.cpp") + sources("cpu/*.cpp")
if WITH_CUDA:
    srcs += sources("cuda/*.cu") + sources("cuda/*.cpp")
    define_macros.append(("MYOPS_WITH_CUDA", "1"))

arch_list = os.environ.get("TORCH_CUDA_ARCH_LIST", "") if WITH_CUDA else ""
if WITH_CUDA and not arch_list:
    if torch.cuda.is_available():
        arch_list = ";".join(
            "%d.%d" % torch.cuda.get_device_capability(i) for i in range(torch.cuda.device_count())
        )
    else:
        # No GPU to target (e.g. CI): one architecture keeps the build short.
        arch_list = "9.0"
        os.environ["TORCH_CUDA_ARCH_LIST"] = arch_list

# Recorded so that `import myops` can tell the user when the installed torch differs from the
# one this build was compiled against, and so `myops.show_config()` can print it.
config = {
    "torch_version": torch.__version__,
    "torch_cuda_version": torch.version.cuda,
    "with_cuda": WITH_CUDA,
    "cuda_archs": arch_list,
    "debug": DEBUG,
    "nvcc": CUDA_HOME if WITH_CUDA else None,
}
with open(os.path.join(ROOT, "python", "myops", "_build_config.py"), "w") as f:
    f.write("# Written by setup.py at build time. Do not edit.\nBUILD_CONFIG = %r\n" % (config,))

print("myops build configuration:", file=sys.stderr)
for k, v in config.items():
    print("  %-20s %s" % (k, v), file=sys.stderr)
print("  %-20s %s" % ("MAX_JOBS", os.environ.get("MAX_JOBS", "(torch default)")), file=sys.stderr)
print("  %-20s %d files" % ("sources", len(srcs)), file=sys.stderr)

Ext = CUDAExtension if WITH_CUDA else CppExtension
ext = Ext(
    name="myops._C",
    sources=srcs,
    include_dirs=[os.path.join(ROOT, "csrc")],
    define_macros=define_macros,
    extra_compile_args={"cxx": cxx_flags, "nvcc": nvcc_flags} if WITH_CUDA else {"cxx": cxx_flags},
    extra_link_args=["-fopenmp"] + (["-g"] if DEBUG else []),
)

setup(
    ext_modules=[ext],
    cmdclass={"build_ext": BuildExtension.with_options(use_ninja=True)},
)
