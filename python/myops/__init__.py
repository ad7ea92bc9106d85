"""myops: fast, bit-exact PyTorch C++/CUDA operators.

Every op is registered under ``torch.ops.myops`` by the compiled extension ``myops._C``;
this package loads it and adds typed, documented wrappers (``myops.nonzero``, ``myops.add``,
``myops.max_pool2d_add``, ``myops.diagonal``, ...) and fake kernels for torch.compile / export.
Autograd is registered in C++ (csrc/autograd.cpp).
"""
import os as _os

import torch as _torch

try:
    from ._build_config import BUILD_CONFIG
except ImportError as e:  # pragma: no cover - only without a build
    raise ImportError(
        "myops is not built: run `pip install --no-build-isolation -e .` (or `make build`) "
        "in the myops checkout first"
    ) from e


def _check_torch_version():
    built = BUILD_CONFIG["torch_version"]
    if _torch.__version__ != built and not _os.environ.get("MYOPS_SKIP_VERSION_CHECK"):
        raise ImportError(
            f"myops was built against torch {built} but torch {_torch.__version__} is installed. "
            "A C++ extension only works with the torch it was compiled against: rebuild myops "
            "(`pip install --no-build-isolation -e .`) with the installed torch, or install torch "
            f"{built}. Set MYOPS_SKIP_VERSION_CHECK=1 to try anyway."
        )


_check_torch_version()

from . import _C  # noqa: E402,F401  (loads the library: registers torch.ops.myops.*)
from . import _fake  # noqa: E402,F401
from .ops import *  # noqa: E402,F401,F403
from .ops import __all__ as _ops_all  # noqa: E402
from .replace import RouteStats, disable, enable, replace_torch_ops  # noqa: E402


def show_config(file=None):
    """Print the versions myops was built against and the GPU architectures it contains."""
    cfg = BUILD_CONFIG
    lines = [
        "myops configuration",
        f"  built against torch : {cfg['torch_version']} (CUDA {cfg['torch_cuda_version']})",
        f"  installed torch     : {_torch.__version__} (CUDA {_torch.version.cuda})",
        f"  CUDA kernels        : {'yes' if cfg['with_cuda'] else 'no (CPU only build)'}",
        f"  GPU architectures   : {cfg['cuda_archs'] or '-'}",
        f"  debug build         : {cfg['debug']}",
        f"  CUDA available now  : {_torch.cuda.is_available()}"
        + (f" ({_torch.cuda.get_device_name()})" if _torch.cuda.is_available() else ""),
    ]
    print("\n".join(lines), file=file)
    return cfg


__all__ = list(_ops_all) + [
    "show_config",
    "BUILD_CONFIG",
    "replace_torch_ops",
    "enable",
    "disable",
    "RouteStats",
]
