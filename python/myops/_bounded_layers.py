"""Layers over the first ``count`` rows: a padded batch whose padding costs no work."""

from typing import List, Optional, Sequence, Union

import torch
from torch import Tensor

from ._common import _fake_kernel, _info, _ops, _rules

__all__ = ["linear_bounded", "conv_bounded"]


def linear_bounded(input: Tensor, weight: Tensor, bias: Optional[Tensor], count: Tensor) -> Tensor:
    """:func:`torch.nn.functional.linear` on the first ``count`` rows of ``input``.

    The CPU runs the layer on the real rows only (the same call as ``F.linear``, so the same
    bits); CUDA (no host sync, graph-capturable) on every row, then zeroes the padding.
    Inference only: the forward runs when an input requires grad, and a backward through
    the result raises (the op reference's "Inference-only ops").

    Args:
        input: ``[R, K]``.
        weight: ``[N, K]``, as ``F.linear``.
        bias: ``[N]`` or None.
        count: a 0-d int64 tensor on ``input``'s device (clamped to ``[0, R]``).

    Returns:
        A contiguous ``[R, N]`` whose rows ``[0, count)`` are
        ``F.linear(input[:count], weight, bias)`` and whose other rows are 0.

    Raises:
        RuntimeError: the errors of ``F.linear``, and a ``count`` that is not a 0-d int64.

    Example::

        >>> x = torch.tensor([[1., 2.], [3., 4.], [5., 6.]])
        >>> myops.linear_bounded(x, torch.eye(2), None, torch.tensor(2))
        tensor([[1., 2.],
                [3., 4.],
                [0., 0.]])
    """
    return _ops.linear_bounded.default(input, weight, bias, count)


def _tuple(v: Union[int, Sequence[int]], n: int) -> List[int]:
    return [int(v)] * n if isinstance(v, int) else [int(x) for x in v]


def conv_bounded(
    input: Tensor,
    weight: Tensor,
    bias: Optional[Tensor],
    count: Tensor,
    *,
    stride: Union[int, Sequence[int]] = 1,
    padding: Union[int, Sequence[int]] = 0,
    dilation: Union[int, Sequence[int]] = 1,
    transposed: bool = False,
    output_padding: Union[int, Sequence[int]] = 0,
    groups: int = 1,
) -> Tensor:
    """:func:`torch.convolution` (``F.conv1d/2d/3d``, ``F.conv_transpose*d`` with
    ``transposed=True``) on the first ``count`` rows (dim 0), as :func:`linear_bounded` does
    for ``F.linear``.
    Inference only: the forward runs when an input requires grad, and a backward through
    the result raises (the op reference's "Inference-only ops").

    Args:
        input: ``[R, C, *spatial]``.
        weight, bias: as ``torch.convolution``'s (``bias`` may be None).
        count: a 0-d int64 tensor on ``input``'s device (clamped to ``[0, R]``).
        stride, padding, dilation, output_padding: an int (every spatial dim) or one per dim.
        transposed: a transposed convolution.
        groups: as ``torch.convolution``'s.

    Returns:
        Rows ``[0, count)`` are the convolution of ``input[:count]``, the others 0.

    Raises:
        RuntimeError: the errors of ``torch.convolution``.

    Example::

        >>> out = myops.conv_bounded(torch.ones(2, 1, 2, 2), torch.full((1, 1, 1, 1), 2.), None,
        ...                          torch.tensor(1))
        >>> out.flatten(1)
        tensor([[2., 2., 2., 2.],
                [0., 0., 0., 0.]])
    """
    n = weight.dim() - 2
    return _ops.conv_bounded.default(
        input,
        weight,
        bias,
        _tuple(stride, n),
        _tuple(padding, n),
        _tuple(dilation, n),
        bool(transposed),
        _tuple(output_padding, n),
        int(groups),
        count,
    )


# ---- fake kernels: the result's shape, dtype and strides under a tracer, after the C++ checks ----
# (_fake_kernel collects them and myops._fake registers them; _rules runs the family's C++ rules)


def _bounded(op, input, count, layer):
    """The ops' own checks, then the layer's (torch's, on the fake input): a contiguous result
    of the layer's shape."""
    _rules("bounded", op, *_info(input), *_info(count))
    out = layer()
    return out.new_empty(out.shape)


@_fake_kernel("myops::linear_bounded")
def _linear_bounded_fake(input, weight, bias, count):
    return _bounded("linear_bounded", input, count, lambda: torch.nn.functional.linear(input, weight, bias))


@_fake_kernel("myops::conv_bounded")
def _conv_bounded_fake(input, weight, bias, stride, padding, dilation, transposed, output_padding, groups, count):
    return _bounded(
        "conv_bounded",
        input,
        count,
        lambda: torch.ops.aten.convolution.default(
            input, weight, bias, stride, padding, dilation, transposed, output_padding, groups
        ),
    )
