"""Typed, documented wrappers over ``torch.ops.myops.*``: ``myops.<fn>`` and ``myops.ops.<fn>``.

Each wrapper calls the registered op (its ``.default`` overload, or the Scalar overloads for a
Python number); all checks and all work happen in the C++/CUDA kernels. For the common call
forms a wrapper first tries the op's direct entry point in ``myops._C`` (``_common._fast_path``:
the same dispatcher call without ``torch.ops``' Python-side argument matching).

The functions live with their family, one module each:

==========================  ===============================================================
``_nonzero``                nonzero, argwhere, nonzero_static, where, the bounded selections
``_nms``                    nms, batched_nms, their static forms, multiclass_nms_static
``_roi_align``              roi_align_levels
``_detection_decode``       heatmaps_to_keypoints, paste_masks
``_bounded_layers``         linear_bounded, conv_bounded
``_unary``                  relu, gelu, silu, sigmoid, cast and the table's plain unary ops
``_elementwise``            add, sub, mul, div, maximum, minimum, addcmul, clamp, pow
``_max_pool2d_add``         max_pool2d_add
``_diagonal``               diagonal, diagonal_backward
==========================  ===============================================================
"""

# ruff: noqa: F401  (the functions are imported to be re-exported: __all__ below lists them)
from . import (
    _bounded_layers,
    _detection_decode,
    _diagonal,
    _elementwise,
    _max_pool2d_add,
    _nms,
    _nonzero,
    _roi_align,
    _unary,
)

# each family's public functions, by its __all__ (a new function is listed there only)
from ._bounded_layers import *  # noqa: F403
from ._common import Number  # noqa: F401  (the typing aliases, as before the split)
from ._detection_decode import *  # noqa: F403
from ._diagonal import *  # noqa: F403
from ._elementwise import *  # noqa: F403
from ._max_pool2d_add import *  # noqa: F403
from ._max_pool2d_add import IntOrPair  # noqa: F401
from ._nms import *  # noqa: F403
from ._nonzero import *  # noqa: F403
from ._roi_align import *  # noqa: F403
from ._unary import *  # noqa: F403

# each family module lists its own public functions once; the names are imported above so that
# tools (mypy, IDEs) see them
__all__ = [
    name
    for module in (
        _nonzero,
        _nms,
        _roi_align,
        _detection_decode,
        _bounded_layers,
        _unary,
        _elementwise,
        _max_pool2d_add,
        _diagonal,
    )
    for name in module.__all__
]
