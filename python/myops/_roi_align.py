"""Multi-level RoIAlign: ``torchvision.ops.roi_align`` per RoI, one call for every FPN level."""

from typing import Sequence, Tuple, Union

from torch import Tensor

from ._common import _fake_kernel, _info, _ops, _rules

__all__ = ["roi_align_levels"]


def roi_align_levels(
    features: Sequence[Tensor],
    rois: Tensor,
    levels: Tensor,
    output_size: Union[int, Tuple[int, int]],
    spatial_scale: Sequence[float],
    sampling_ratio: int = -1,
    aligned: bool = False,
) -> Tensor:
    """RoIAlign of every RoI on its own feature level, in one call.

    Row ``k`` of the result is ``torchvision.ops.roi_align(features[l], rois[k:k+1],
    output_size, spatial_scale[l], sampling_ratio, aligned)`` with ``l = levels[k]``: bit for bit
    on the CPU, and following torchvision's CUDA kernel on CUDA. What
    ``torchvision.ops.MultiScaleRoIAlign`` computes with a data-dependent gather per level, with
    static shapes (exportable, graph-capturable). A level of -1 marks a padded RoI (e.g. past
    the real ones of a static-shape batch): its row of ``rois`` is not read and its output is 0,
    at no cost.
    Inference only: the forward runs when an input requires grad, and a backward through
    the result raises (the op reference's "Inference-only ops").

    Args:
        features: 1 to 8 maps ``[N, C, H_l, W_l]`` (one dtype: float16/32/64, one device).
        rois: ``[K, 5]`` (batch index, x1, y1, x2, y2) in the features' dtype.
        levels: int64 ``[K]``, the level of each RoI, or -1 for a padded one.
        output_size: ``PH`` (= ``PW``) or ``(PH, PW)``.
        spatial_scale: one scale per level (the level's size over the image's).
        sampling_ratio: sampling points per bin and axis; ``<= 0``: adaptive, as torchvision.
        aligned: shift the boxes by half a pixel, as torchvision's ``aligned=True``.

    Returns:
        ``[K, C, PH, PW]`` of the features' dtype.

    Raises:
        IndexError: on the CPU, a level (other than -1) or batch index out of range; on CUDA
            (no host sync) that RoI's output is NaN instead.
        RuntimeError: shapes, dtypes or devices that disagree.

    Example::

        >>> features = [torch.arange(16.).reshape(1, 1, 4, 4)]
        >>> rois = torch.tensor([[0., 0., 0., 2., 2.], [0., 1., 1., 3., 3.]])
        >>> myops.roi_align_levels(features, rois, torch.tensor([0, -1]), 1, [1.0]).flatten()
        tensor([5., 0.])
    """
    if isinstance(output_size, int):
        ph = pw = output_size
    else:
        ph, pw = output_size
    return _ops.roi_align_levels.default(
        list(features),
        rois,
        levels,
        [float(s) for s in spatial_scale],
        int(ph),
        int(pw),
        int(sampling_ratio),
        bool(aligned),
    )


# ---- fake kernels: the result's shape, dtype and strides under a tracer, after the C++ checks ----
# (_fake_kernel collects them and myops._fake registers them; _rules runs the family's C++ rules)


@_fake_kernel("myops::roi_align_levels")
def _roi_align_levels_fake(
    features, rois, levels, spatial_scale, pooled_height, pooled_width, sampling_ratio=-1, aligned=False
):
    _rules(
        "roi_align_levels",
        [s for f in features for s in f.shape],
        [f.dim() for f in features],
        [f.dtype for f in features],
        [f.device for f in features],
        *_info(rois),
        *_info(levels),
        spatial_scale,
        pooled_height,
        pooled_width,
        sampling_ratio,
    )
    f0 = features[0]
    return f0.new_empty((rois.shape[0], f0.shape[1], pooled_height, pooled_width))
