"""Typed, documented wrappers over ``torch.ops.myops.*``.

Each wrapper calls the ``.default`` overload of the registered op; all checks and all work
happen in the C++/CUDA kernels.
"""
from typing import Optional, Sequence, Tuple, Union

import torch
from torch import Tensor

_ops = torch.ops.myops

__all__ = []

# =============================================================================================
# nonzero family: nonzero, where(cond), argwhere, nonzero_static
# =============================================================================================

# (nonzero family wrappers go here)


# =============================================================================================
# elementwise: unary, binary, ternary
# =============================================================================================

# (elementwise wrappers go here)


# =============================================================================================
# max_pool2d_add
# =============================================================================================

# (max_pool2d_add wrappers go here)


# =============================================================================================
# diagonal
# =============================================================================================

# (diagonal wrappers go here)
