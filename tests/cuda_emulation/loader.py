"""Builds the CUDA kernels and glue (csrc/<family>/cuda/) with the host compiler
(MYOPS_CUDA_EMULATION, see csrc/core/cuda/emulation.h) into a test-only extension whose ops are
`torch.ops.myops_emu.<op>`, CPU kernels that run the CUDA code on the host."""

import glob
import os
import platform
import shutil
import sys

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
CSRC = os.path.join(ROOT, "csrc")


# The ops whose CUDA kernels the emulation covers (nonzero: its CUB passes by host stand-ins),
# the elementwise ones read from the op table.
def _ops():
    import myops._table

    return (
        [
            "nonzero",
            "nonzero_static",
            "nonzero_bounded",
            "nms",
            "batched_nms",
            "nms_static",
            "batched_nms_static",
            "multiclass_nms_static",
            "roi_align_levels",
            "linear_bounded",
            "conv_bounded",
            "heatmaps_to_keypoints",
            "paste_masks",
        ]
        + [op.qualname for op in myops._table.EW_OPS.values()]
        + ["max_pool2d_add", "max_pool2d_add_backward", "diagonal", "diagonal_backward"]
        +
        # the drop-in's control ops (csrc/dropin/schema.cpp; dropin.cpp implements them for myops_emu)
        sorted(
            s.name.split("::", 1)[1] for s in torch._C._jit_get_all_schemas() if s.name.startswith("myops::_override_")
        )
    )


def cuda_include_dir():
    """The CUDA headers (cuda_runtime.h, cuda_fp16.h): the toolkit's, else pip's nvidia packages."""
    from torch.utils import cpp_extension

    cands = []
    for home in (os.environ.get("CUDA_HOME"), cpp_extension.CUDA_HOME, "/usr/local/cuda"):
        if home:
            cands.append(os.path.join(home, "include"))
    nvcc = shutil.which("nvcc")
    if nvcc:
        cands.append(os.path.join(os.path.dirname(os.path.dirname(os.path.realpath(nvcc))), "include"))
    for p in sys.path:
        cands += sorted(glob.glob(os.path.join(p, "nvidia", "*", "include")))
        cands += sorted(glob.glob(os.path.join(p, "nvidia", "cuda_runtime", "include")))
    for c in cands:
        if all(os.path.exists(os.path.join(c, h)) for h in ("cuda_runtime.h", "cuda_fp16.h", "crt/host_defines.h")):
            return c
    return None


def _cpu_has_fma():
    """x86-64 with FMA instructions (elsewhere -mfma is no flag: aarch64 has them always)."""
    if platform.machine() not in ("x86_64", "AMD64"):
        return False
    try:
        with open("/proc/cpuinfo") as f:
            return any(line.startswith("flags") and " fma" in line for line in f)
    except OSError:
        return False


def build(verbose=False):
    """Loads the emulation extension (compiling it on first use) and defines the `myops_emu`
    schemas as copies of myops' own."""
    import myops  # noqa: F401  (myops' schemas are the model)
    from torch.utils import cpp_extension

    inc = cuda_include_dir()
    if inc is None:
        raise RuntimeError("no CUDA headers (cuda_runtime.h, cuda_fp16.h) found")
    # `make sanitize` builds it with AddressSanitizer + UBSan (MYOPS_EMU_CFLAGS), so that an
    # out-of-bounds access by a CUDA kernel is caught on the CPU, as compute-sanitizer would
    build_dir = os.environ.get("MYOPS_EMU_BUILD_DIR", os.path.join(ROOT, "build", "cuda_emulation"))
    extra = os.environ.get("MYOPS_EMU_CFLAGS", "").split()
    # contraction as nvcc's default (--fmad=true): a * b + c may become one fused multiply-add
    # wherever the compiler sees it, so a kernel that must round twice (as a torch reference
    # made of two ops does) and forgets core/cuda_rules.h's mul_rn / add_rn fails here too.
    # GCC contracts in a pass that -O1 leaves out: -fexpensive-optimizations runs it.
    contract = ["-ffp-contract=fast", "-fexpensive-optimizations"] + (["-mfma"] if _cpu_has_fma() else [])
    os.makedirs(build_dir, exist_ok=True)
    sources = sorted(glob.glob(os.path.join(HERE, "*.cpp")))
    preload = os.environ.pop("LD_PRELOAD", None)  # the sanitizer runtimes are for this process, not the compiler
    try:
        cpp_extension.load(
            name="myops_cuda_emulation",
            sources=sources,
            extra_include_paths=[CSRC, os.path.join(CSRC, "include"), inc],
            extra_cflags=["-O1", "-fwrapv", "-DMYOPS_CUDA_EMULATION"] + contract + extra,
            extra_ldflags=[f for f in extra if f.startswith("-fsanitize")],
            build_directory=build_dir,
            is_python_module=False,
            verbose=verbose,
        )
    finally:
        if preload is not None:
            os.environ["LD_PRELOAD"] = preload
    if not hasattr(build, "lib"):
        lib = torch.library.Library("myops_emu", "DEF")
        for name in _ops():
            op, _, overload = name.partition(".")
            schema = getattr(getattr(torch.ops.myops, op), overload or "default")._schema
            lib.define(str(schema).split("::", 1)[1])
        build.lib = lib
    return torch.ops.myops_emu


if __name__ == "__main__":
    build(verbose=True)
    print("built")
