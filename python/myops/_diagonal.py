"""``diagonal``: ``torch.diagonal`` as a new contiguous tensor, and its backward."""

from typing import Sequence

from torch import Tensor

from ._common import _fake_kernel, _fast, _fast_path, _ops, _rules

__all__ = ["diagonal", "diagonal_backward"]


def diagonal(self: Tensor, offset: int = 0, dim1: int = 0, dim2: int = 1) -> Tensor:
    """The diagonal of ``self`` over dims ``dim1`` and ``dim2``, as a new contiguous tensor.

    Equals ``torch.diagonal(self, offset, dim1, dim2)`` with ``torch.diagonal_copy`` semantics
    (a copy, not a view): the two dims are removed and the diagonal is appended as the last dim.
    Any strides, any dtype. Differentiable.

    Args:
        self: a tensor of rank >= 2.
        offset: ``> 0`` a diagonal above the main one, ``< 0`` one below; an offset past the
            matrix gives an empty last dim.
        dim1: the first dim (negative counts from the end).
        dim2: the second dim, other than ``dim1``.

    Returns:
        A contiguous tensor of ``self``'s dtype.

    Raises:
        IndexError: rank < 2, or a dim out of range.
        RuntimeError: ``dim1`` and ``dim2`` the same dim.

    Example::

        >>> myops.diagonal(torch.arange(9).reshape(3, 3), 1)
        tensor([1, 5])
        >>> myops.diagonal(torch.arange(8).reshape(2, 2, 2), 0, 1, 2)
        tensor([[0, 3],
                [4, 7]])
    """
    r = _fast_path(_fast.diagonal, self, offset, dim1, dim2)
    return _ops.diagonal.default(self, offset, dim1, dim2) if r is NotImplemented else r


def diagonal_backward(grad: Tensor, input_sizes: Sequence[int], offset: int, dim1: int, dim2: int) -> Tensor:
    """The gradient of :func:`diagonal`: ``grad`` written onto the diagonal of a zero tensor.

    Equals aten's ``diagonal_backward`` (``torch.ops.aten.diagonal_backward``). Differentiable
    (its gradient is :func:`diagonal` of the incoming gradient).

    Args:
        grad: the gradient of the diagonal: the shape ``diagonal(x, offset, dim1, dim2)`` has
            for an ``x`` of shape ``input_sizes``.
        input_sizes: the shape of the result.
        offset, dim1, dim2: the diagonal, as :func:`diagonal` takes it.

    Returns:
        A contiguous zero tensor of shape ``input_sizes`` and ``grad``'s dtype, with ``grad`` on
        that diagonal.

    Raises:
        RuntimeError: a ``grad`` whose shape is not that diagonal's.
        IndexError: a dim out of range.

    Example::

        >>> myops.diagonal_backward(torch.tensor([1., 2.]), [2, 3], 1, 0, 1)
        tensor([[0., 1., 0.],
                [0., 0., 2.]])
    """
    return _ops.diagonal_backward.default(grad, list(input_sizes), offset, dim1, dim2)


# ---- fake kernels: the result's shape, dtype and strides under a tracer, after the C++ checks ----
# (_fake_kernel collects them and myops._fake registers them; _rules runs the family's C++ rules)


@_fake_kernel("myops::diagonal")
def _diagonal_fake(self, offset=0, dim1=0, dim2=1):
    return self.new_empty(_rules("diagonal", self.shape, offset, dim1, dim2, None))


@_fake_kernel("myops::diagonal_backward")
def _diagonal_backward_fake(grad, input_sizes, offset, dim1, dim2):
    _rules("diagonal", input_sizes, offset, dim1, dim2, grad.shape)
    return grad.new_empty(list(input_sizes))
