"""The nonzero family: ``nonzero``, ``argwhere``, ``nonzero_static``, ``where``, and the bounded
selections (static shapes plus the true count on the device, no host sync)."""

from typing import Literal, Optional, Tuple, Union, overload

import torch
from torch import Tensor

from ._common import _check_int_args, _fake_kernel, _fast, _fast_path, _info, _ops, _rules
from ._elementwise import _where_tensor

__all__ = [
    "nonzero",
    "argwhere",
    "nonzero_static",
    "where",
    "nonzero_bounded",
    "masked_select_bounded",
    "mask_rows_bounded",
]


# the result's type follows as_tuple (as torch.nonzero's overloads say it)
@overload
def nonzero(input: Tensor, *, as_tuple: Literal[False] = False) -> Tensor: ...
@overload
def nonzero(input: Tensor, *, as_tuple: Literal[True]) -> Tuple[Tensor, ...]: ...
@overload
def nonzero(input: Tensor, *, as_tuple: bool) -> Union[Tensor, Tuple[Tensor, ...]]: ...
def nonzero(input: Tensor, *, as_tuple: bool = False) -> Union[Tensor, Tuple[Tensor, ...]]:
    """Indices of the nonzero elements of ``input``: :func:`torch.nonzero`.

    NaN counts as nonzero, -0.0 as zero. Synchronizes with the host once on CUDA (the result
    size depends on the data); see :func:`nonzero_static` for a sync-free variant.

    Args:
        input: a tensor of any shape; dtype bool, uint8, int8, int16, int32, int64, float16,
            bfloat16, float32, float64 or complex.
        as_tuple: return one 1-D index tensor per dim instead (one for a 0-d input, as torch).

    Returns:
        An int64 tensor ``[nnz, input.dim()]`` (torch's values and strides on that device), or
        with ``as_tuple=True`` a tuple of ``input.dim()`` int64 tensors ``[nnz]``.

    Raises:
        NotImplementedError: a dtype outside the list above (e.g. uint16).

    Example::

        >>> myops.nonzero(torch.tensor([[0, 1], [2, 0]]))
        tensor([[0, 1],
                [1, 0]])
        >>> myops.nonzero(torch.tensor([0., 3., 0., 4.]), as_tuple=True)
        (tensor([1, 3]),)
    """
    if as_tuple:
        return nonzero(input.unsqueeze(0) if input.dim() == 0 else input).unbind(1)
    r = _fast_path(_fast.nonzero, input)
    return _ops.nonzero.default(input) if r is NotImplemented else r


def argwhere(input: Tensor) -> Tensor:
    """:func:`torch.argwhere`: the indices of the nonzero elements, as :func:`nonzero`.

    Args:
        input: a tensor of any shape and of a dtype :func:`nonzero` takes.

    Returns:
        An int64 tensor ``[nnz, input.dim()]``.

    Raises:
        NotImplementedError: a dtype :func:`nonzero` does not take.

    Example::

        >>> myops.argwhere(torch.tensor([True, False, True]))
        tensor([[0],
                [2]])
    """
    return nonzero(input)


def nonzero_static(input: Tensor, *, size: int, fill_value: int = -1) -> Tensor:
    """:func:`torch.nonzero_static`: the first ``size`` rows of ``nonzero(input)``, padded.

    The output shape does not depend on the data, so on CUDA it never synchronizes with the host
    and can be captured in a CUDA graph.

    Args:
        input: a tensor of a dtype :func:`nonzero` takes.
        size: the number of output rows, ``>= 0``.
        fill_value: the value of the padding rows.

    Returns:
        An int64 tensor ``[size, input.dim()]``: ``nonzero(input)[:size]``, then rows of
        ``fill_value`` when there are fewer nonzeros.

    Raises:
        RuntimeError: ``size < 0``.
        TypeError: ``size`` or ``fill_value`` not an int; ValueError: one outside int64.

    Example::

        >>> myops.nonzero_static(torch.tensor([0, 5, 0, 7]), size=3)
        tensor([[ 1],
                [ 3],
                [-1]])
    """
    r = _fast_path(_fast.nonzero_static, input, size, fill_value)
    if r is not NotImplemented:
        return r
    _check_int_args("nonzero_static", size=size, fill_value=fill_value)
    return _ops.nonzero_static.default(input, size=size, fill_value=fill_value)


def where(
    condition: Tensor,
    self: Optional[Union[Tensor, float, int, bool]] = None,
    other: Optional[Union[Tensor, float, int, bool]] = None,
) -> Union[Tensor, Tuple[Tensor, ...]]:
    """:func:`torch.where`, both forms.

    ``where(condition)`` is ``nonzero(condition, as_tuple=True)``. ``where(condition, self,
    other)`` picks the elements of ``self`` where ``condition`` is true and those of ``other``
    elsewhere, broadcasting all three (``torch.ops.myops.where``; a Python number promotes as in
    torch, through the ``ScalarSelf`` / ``ScalarOther`` / ``Scalar`` overloads). Differentiable in
    ``self`` and ``other``.

    Args:
        condition: a bool tensor (uint8 is taken with torch's deprecation warning).
        self: a tensor or a Python number, or None for the one-argument form.
        other: a tensor or a Python number, or None for the one-argument form.

    Returns:
        A tuple of int64 index tensors (one-argument form), or a tensor of the broadcast shape
        and dtype ``torch.result_type(self, other)``.

    Raises:
        TypeError: only one of ``self`` and ``other`` given, or an operand that is neither a
            tensor nor a number.
        RuntimeError: shapes that do not broadcast, a number that does not fit the result dtype.

    Example::

        >>> c = torch.tensor([True, False, True])
        >>> myops.where(c, torch.tensor([1., 2., 3.]), 0.)
        tensor([1., 0., 3.])
        >>> myops.where(c)
        (tensor([0, 2]),)
    """
    if self is None and other is None:
        return nonzero(condition, as_tuple=True)
    if self is None or other is None:
        raise TypeError("myops.where: expected both 'self' and 'other', or neither")
    return _where_tensor(condition, self, other)


def nonzero_bounded(input: Tensor, *, size: int, fill_value: int = -1) -> Tuple[Tensor, Tensor]:
    """``(indices, count)``: a bounded :func:`torch.nonzero`.

    Both come from nonzero_static's one select pass: no host sync on CUDA, graph-capturable, and
    static output shapes under torch.compile / torch.export.

    Args:
        input: a tensor of a dtype :func:`nonzero` takes.
        size: the number of index rows, ``>= 0``.
        fill_value: the value of the padding rows.

    Returns:
        ``indices``, int64 ``[size, input.dim()]``: its first ``min(count, size)`` rows equal
        ``torch.nonzero(input)[:size]``, the others hold ``fill_value``; and ``count``, a 0-d int64
        tensor on ``input``'s device holding the TRUE number of nonzeros, which may exceed
        ``size`` (overflow is detectable without a sync: ``count > size``).

    Raises:
        RuntimeError: ``size < 0``.
        TypeError: ``size`` or ``fill_value`` not an int; ValueError: one outside int64.

    Example::

        >>> idx, count = myops.nonzero_bounded(torch.tensor([3, 0, 4, 5]), size=2)
        >>> idx, count
        (tensor([[0],
                [2]]), tensor(3))
    """
    r = _fast_path(_fast.nonzero_bounded, input, size, fill_value)
    if r is not NotImplemented:
        return r
    _check_int_args("nonzero_bounded", size=size, fill_value=fill_value)
    return _ops.nonzero_bounded.default(input, size=size, fill_value=fill_value)


def masked_select_bounded(
    input: Tensor, mask: Tensor, *, size: int, fill_value: Union[int, float, bool] = 0
) -> Tuple[Tensor, Tensor]:
    """``(values, count)``: a bounded :func:`torch.masked_select`. Differentiable in ``input``.

    Args:
        input: a tensor that broadcasts with ``mask`` (as in torch.masked_select).
        mask: a bool tensor.
        size: the number of output values, ``>= 0``.
        fill_value: the value of the padding.

    Returns:
        ``values``, ``[size]`` of ``input``'s dtype: the first ``min(count, size)`` elements of
        ``input[mask]``, the rest ``fill_value``; and ``count``, the true number of selected
        elements (0-d int64, on the device).

    Raises:
        RuntimeError: ``mask`` not bool, shapes that do not broadcast, ``size < 0``.

    Example::

        >>> x = torch.tensor([1., 2., 3., 4.])
        >>> myops.masked_select_bounded(x, x > 1.5, size=2)
        (tensor([2., 3.]), tensor(3))
    """
    return _ops.masked_select_bounded.default(input, mask, size=size, fill_value=fill_value)


def mask_rows_bounded(
    input: Tensor, mask: Tensor, *, size: int, fill_value: Union[int, float, bool] = 0
) -> Tuple[Tensor, Tensor]:
    """``(rows, count)``: a bounded ``input[mask]`` for a 1-D boolean ``mask`` over dim 0 (what
    detector code does with ``boxes[keep]``). Differentiable in ``input``.

    Args:
        input: a tensor ``[R, ...]``.
        mask: a bool tensor ``[R]``.
        size: the number of output rows, ``>= 0``.
        fill_value: the value of the padding rows.

    Returns:
        ``rows``, ``[size, *input.shape[1:]]``: the first ``min(count, size)`` rows of
        ``input[mask]``, the rest ``fill_value``; and ``count``, the true number of selected rows
        (0-d int64, on the device).

    Raises:
        RuntimeError: ``mask`` not bool or not ``[R]``, ``size < 0``.

    Example::

        >>> boxes = torch.tensor([[0., 0., 1., 1.], [0., 0., 2., 2.], [1., 1., 3., 3.]])
        >>> myops.mask_rows_bounded(boxes, torch.tensor([True, False, True]), size=3, fill_value=-1)
        (tensor([[ 0.,  0.,  1.,  1.],
                [ 1.,  1.,  3.,  3.],
                [-1., -1., -1., -1.]]), tensor(2))
    """
    return _ops.mask_rows_bounded.default(input, mask, size=size, fill_value=fill_value)


# ---- fake kernels: the result's shape, dtype and strides under a tracer, after the C++ checks ----
# (_fake_kernel collects them and myops._fake registers them; _rules runs the family's C++ rules)


def _nonzero_indices(self, size):
    # CUDA: the transpose of a contiguous [ndim, size] buffer
    if self.device.type == "cuda":
        return self.new_empty((self.dim(), size), dtype=torch.int64).t()
    return self.new_empty((size, self.dim()), dtype=torch.int64)


@_fake_kernel("myops::nonzero")
def _nonzero_fake(self):
    _rules("nonzero", "nonzero", *_info(self), None)
    numel = self.numel()
    nnz: Union[int, torch.SymInt]
    if isinstance(numel, int) and numel == 0:
        nnz = 0
    else:
        ctx = torch.library.get_ctx()
        nnz = ctx.new_dynamic_size(max=numel if isinstance(numel, int) else None)
    # [nnz, ndim] with strides (1, nnz): a column-major buffer, as the CPU and CUDA kernels
    # (and torch) return it.
    return self.new_empty_strided((nnz, self.dim()), (1, nnz), dtype=torch.int64)


@_fake_kernel("myops::nonzero_static")
def _nonzero_static_fake(self, *, size, fill_value=-1):
    _rules("nonzero", "nonzero_static", *_info(self), size)
    return _nonzero_indices(self, size)


@_fake_kernel("myops::nonzero_bounded")
def _nonzero_bounded_fake(self, *, size, fill_value=-1):
    _rules("nonzero", "nonzero_bounded", *_info(self), size)
    return _nonzero_indices(self, size), self.new_empty((), dtype=torch.int64)
