"""Fake (meta) kernels: output shape, dtype and strides without computing anything, so every
op works under torch.compile, torch.export and FakeTensor. This is the module the C++ library
names for them (``set_python_module("myops._fake")``, csrc/core/schema.h): importing it imports
every family's fake kernels and registers them here, as torch requires. Each family's fakes sit
at the end of its own module (``_nonzero.py``, ``_nms.py``, ``_roi_align.py``,
``_detection_decode.py``, ``_bounded_layers.py``, ``_max_pool2d_add.py``, ``_diagonal.py``); the
elementwise ones, one per row of the op table, are below. The checks and shape rules are the
kernels' own: each family's control op (torch.ops.myops._<family>_meta, csrc/<family>/schema.cpp)
runs its C++ rules on the fake tensors' (symbolic) sizes (``_rules`` in _common.py)."""

import torch
from torch.library import register_fake

from . import _bounded_layers, _detection_decode, _diagonal, _max_pool2d_add, _nms, _nonzero, _roi_align  # noqa: F401
from ._common import _FAKE_KERNELS, _rules
from ._table import EW_OPS

for _qualname, _fn in _FAKE_KERNELS:  # each family's fake kernels (_fake_kernel, _common.py)
    register_fake(_qualname, _fn)


# ---- elementwise ----------------------------------------------------------------------------
# One fake kernel for every op of the table (csrc/include/myops/op_table.h): it hands the op's
# arguments, in schema order, to the op's C++ rule (myops::_elementwise_meta,
# csrc/elementwise/schema.cpp: the checks, the result's dtype and device, and its sizes and
# strides as the kernels lay it out, on the fake tensors' symbolic sizes).


def _elementwise_fake(op):
    arguments = op.packet._schema.arguments

    def fake(*args, **kwargs):
        tensors, numbers, text, dtype = [], [], None, None
        for i, a in enumerate(arguments):
            v = args[i] if i < len(args) else kwargs.get(a.name, a.default_value)
            if isinstance(a.type, torch.TensorType):
                tensors.append(v)
            elif isinstance(v, str):
                text = v
            elif isinstance(v, torch.dtype):
                dtype = v
            else:  # Scalar, Scalar?
                numbers.append(v)
        dt, device, sizes, strides = _rules(
            "elementwise",
            op.qualname,
            [s for t in tensors for s in t.shape],
            [s for t in tensors for s in t.stride()],
            [t.dim() for t in tensors],
            [str(t.dtype).replace("torch.", "") for t in tensors],
            [str(t.device) for t in tensors],
            *(numbers + [None, None])[:2],
            text,
            dtype,
        )
        return torch.empty_strided(sizes, strides, dtype=getattr(torch, dt), device=device)

    return fake


for _op in EW_OPS.values():
    register_fake("myops::" + _op.qualname)(_elementwise_fake(_op))
