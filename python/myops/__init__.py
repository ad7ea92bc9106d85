"""myops: fast, bit-exact PyTorch C++/CUDA operators.

Every op is registered under ``torch.ops.myops`` by the C++ library ``myops/lib/libmyops.so``
(kernels, schemas and autograd; no Python), which the Python module ``myops._C`` links. This
package loads it and adds typed, documented wrappers (``myops.nonzero``, ``myops.add``,
``myops.max_pool2d_add``, ``myops.diagonal``, ...) and fake kernels for torch.compile / export.

C++ programs use the same library through CMake: ``find_package(myops)`` with
``myops.cmake_prefix_path`` on ``CMAKE_PREFIX_PATH`` gives the target ``myops::myops`` and the
header ``<myops/ops.h>``.
"""

import os as _os
import warnings as _warnings
import typing as _typing

import torch as _torch

try:
    from ._build_config import BUILD_CONFIG
except ImportError as e:  # pragma: no cover - only without a build
    raise ImportError(
        "myops is not built: run `pip install --no-build-isolation -e .` (or `make build`) in the myops checkout first"
    ) from e


#: The package version: ``0.1.0`` for the default variant (CUDA 13.0 kernels, as torch's PyPI
#: wheel), with the build's local tag otherwise: ``0.1.0+cpu`` (CPU kernels only), ``0.1.0+cu126``.
__version__ = BUILD_CONFIG.get("version", "0.1.0")

#: Directory to add to CMake's ``CMAKE_PREFIX_PATH`` for ``find_package(myops CONFIG)``
#: (next to ``torch.utils.cmake_prefix_path``).
cmake_prefix_path = _os.path.join(_os.path.dirname(_os.path.abspath(__file__)), "share", "cmake")


def _check_torch_version():
    built = BUILD_CONFIG["torch_version"]
    if _os.environ.get("MYOPS_SKIP_VERSION_CHECK"):
        return
    # The same torch release; for a CUDA build, a torch with the same CUDA (torch 2.14.1+cpu
    # cannot load CUDA kernels). A CPU build runs with either flavour of that release.
    same_release = _torch.__version__.split("+")[0] == built.split("+")[0]
    same_cuda = not BUILD_CONFIG["with_cuda"] or _torch.version.cuda == BUILD_CONFIG["torch_cuda_version"]
    if not (same_release and same_cuda):
        raise ImportError(
            f"myops was built against torch {built} (CUDA {BUILD_CONFIG['torch_cuda_version']}) but "
            f"torch {_torch.__version__} (CUDA {_torch.version.cuda}) is installed. A C++ extension "
            "only works with the torch it was compiled against: rebuild myops "
            "(`pip install --no-build-isolation -e .`) with the installed torch, or install torch "
            f"{built}. Set MYOPS_SKIP_VERSION_CHECK=1 to try anyway."
        )


def _warn_if_gpu_without_kernels():
    """pip's quiet mode hides the build's output: say it at import when a GPU is here but this
    build has no CUDA kernels (every CUDA call would fail)."""
    if BUILD_CONFIG["with_cuda"] or _os.environ.get("MYOPS_NO_CPU_BUILD_WARNING"):
        return
    if _torch.version.cuda is not None and _torch.cuda.is_available():
        _warnings.warn(
            f"myops {__version__} was built without CUDA kernels "
            f"({BUILD_CONFIG.get('why_no_cuda') or 'CPU-only build'}), but a GPU is visible: "
            "myops ops on CUDA tensors will fail. Rebuild with FORCE_CUDA=1 (which names what is "
            "missing if it cannot build them); myops.show_config() prints the build. "
            "MYOPS_NO_CPU_BUILD_WARNING=1 silences this.",
            RuntimeWarning,
            stacklevel=3,
        )


_check_torch_version()

from . import _C  # noqa: E402,F401  (loads lib/libmyops.so: registers torch.ops.myops.*)
from . import _fake  # noqa: E402,F401
from . import ops as _ops_module  # noqa: E402
from .ops import *  # noqa: E402,F401,F403
from .ops import __all__ as _ops_all  # noqa: E402
from .replace import RouteStats, disable, enable, replace_torch_ops  # noqa: E402


def _document_registered_ops():
    """help(torch.ops.myops.<op>) shows the typed wrapper's docstring."""
    for name in _ops_all:
        packet = getattr(_torch.ops.myops, name, None)  # argwhere: a Python-only wrapper
        doc = getattr(getattr(_ops_module, name), "__doc__", None)
        if packet is None or not doc:
            continue
        try:
            packet.__doc__ = doc
            packet.default.__doc__ = doc
        except (AttributeError, TypeError):  # pragma: no cover - a torch without settable docs
            pass


_document_registered_ops()
_warn_if_gpu_without_kernels()


def show_config(file: _typing.Optional[_typing.TextIO] = None) -> _typing.Dict[str, _typing.Any]:
    """Print the versions myops was built against and the GPU architectures it contains.

    Args:
        file: where to print (default ``sys.stdout``).

    Returns:
        :data:`BUILD_CONFIG`, the build's record (``torch_version``, ``with_cuda``,
        ``cuda_archs``, ``version``, ...).

    Example::

        >>> import io
        >>> cfg = myops.show_config(file=io.StringIO())
        >>> cfg["torch_version"].split("+")[0] == torch.__version__.split("+")[0]
        True
    """
    cfg = BUILD_CONFIG
    lines = [
        f"myops {__version__} configuration",
        f"  built against torch : {cfg['torch_version']} (CUDA {cfg['torch_cuda_version']})",
        f"  installed torch     : {_torch.__version__} (CUDA {_torch.version.cuda})",
        "  CUDA kernels        : "
        + ("yes" if cfg["with_cuda"] else f"no (CPU only build: {cfg.get('why_no_cuda') or '-'})"),
        f"  GPU architectures   : {cfg['cuda_archs'] or '-'}",
        f"  debug build         : {cfg['debug']}",
        f"  library             : {_os.path.join(_os.path.dirname(_os.path.abspath(__file__)), 'lib', 'libmyops.so')}",
        f"  cmake_prefix_path   : {cmake_prefix_path}",
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
