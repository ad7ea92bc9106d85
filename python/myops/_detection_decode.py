"""Per-detection decoding over the real rows: torchvision's Python loops (keypoints, mask
pasting) as one op each, the padding rows not read."""

from typing import Sequence, Tuple

import torch
from torch import Tensor

from ._common import _fake_kernel, _info, _ops, _rules

__all__ = ["heatmaps_to_keypoints", "paste_masks"]


def heatmaps_to_keypoints(maps: Tensor, rois: Tensor, count: Tensor) -> Tuple[Tensor, Tensor]:
    """``torchvision.models.detection.roi_heads.heatmaps_to_keypoints`` on the first ``count``
    RoIs.

    Each heatmap is resampled (bicubic) to its RoI's own ceil size and its first maximum decoded,
    as torchvision does: bit for bit on the CPU (torchvision's own resampling call, one RoI's map
    at a time); on CUDA without storing the map (torch's CUDA bicubic arithmetic per position),
    no host sync. ``myops.detection.heatmaps_to_keypoints`` takes torchvision's arguments.
    Inference only: the forward runs when an input requires grad, and a backward through
    the result raises (the op reference's "Inference-only ops").

    Args:
        maps: ``[R, K, H, W]`` heatmaps, float32 / float64.
        rois: ``[R, 4]`` (x1, y1, x2, y2), the maps' dtype.
        count: a 0-d int64 tensor on their device, the number of real RoIs (clamped to
            ``[0, R]``).

    Returns:
        ``(keypoints, scores)``: float32 ``[R, K, 3]`` (x, y, 1) and ``[R, K]``; the rows at or
        past ``count`` are 0 and not read.

    Raises:
        ValueError: shapes that disagree; RuntimeError: dtypes or devices that do.

    Example::

        >>> maps = torch.zeros(1, 1, 4, 4)
        >>> maps[0, 0, 1, 2] = 1.0
        >>> myops.heatmaps_to_keypoints(maps, torch.tensor([[0., 0., 8., 8.]]), torch.tensor(1))
        (tensor([[[4.5000, 2.5000, 1.0000]]]), tensor([[0.7725]]))
    """
    return _ops.heatmaps_to_keypoints.default(maps, rois, count)


def paste_masks(masks: Tensor, boxes: Tensor, count: Tensor, image_size: Sequence[int]) -> Tensor:
    """``torchvision.models.detection.roi_heads.paste_mask_in_image`` for each image ``n``'s
    first ``count[n]`` rows.

    Every pixel outside the pasted boxes is 0 (on the CPU a large output's zeros are fresh pages,
    never written). Bit for bit on the CPU; no host sync on CUDA.
    Inference only: the forward runs when an input requires grad, and a backward through
    the result raises (the op reference's "Inference-only ops").
    ``myops.detection.paste_masks`` takes torchvision's arguments.

    Args:
        masks: ``[N, D, S, S']``, already padded as torchvision's ``expand_masks`` gives them
            (float32 / float64).
        boxes: int64 ``[N, D, 4]``, ``expand_boxes``' integer boxes.
        count: int64 ``[N]``, the real rows of each image.
        image_size: ``[h0, w0, h1, w1, ...]``, each image's size.

    Returns:
        ``[N, D, H, W]`` on a canvas of the largest image.

    Raises:
        ValueError: shapes or an ``image_size`` that disagree; RuntimeError: dtypes or devices.

    Example::

        >>> out = myops.paste_masks(torch.ones(1, 1, 2, 2), torch.tensor([[[1, 1, 3, 3]]]),
        ...                         torch.tensor([1]), [4, 4])
        >>> out[0, 0]
        tensor([[0., 0., 0., 0.],
                [0., 1., 1., 1.],
                [0., 1., 1., 1.],
                [0., 1., 1., 1.]])
    """
    return _ops.paste_masks.default(masks, boxes, count, [int(v) for v in image_size])


# ---- fake kernels: the result's shape, dtype and strides under a tracer, after the C++ checks ----
# (_fake_kernel collects them and myops._fake registers them; _rules runs the family's C++ rules)


@_fake_kernel("myops::heatmaps_to_keypoints")
def _heatmaps_to_keypoints_fake(maps, rois, count):
    _rules("detection_decode", "heatmaps_to_keypoints", *_info(maps), *_info(rois), *_info(count), [])
    r, k = maps.shape[:2]
    return maps.new_empty((r, k, 3), dtype=torch.float32), maps.new_empty((r, k), dtype=torch.float32)


@_fake_kernel("myops::paste_masks")
def _paste_masks_fake(masks, boxes, count, image_size):
    _rules("detection_decode", "paste_masks", *_info(masks), *_info(boxes), *_info(count), image_size)
    n, d = masks.shape[:2]
    h = max(image_size[0::2], default=0)
    w = max(image_size[1::2], default=0)
    return masks.new_empty((n, d, h, w))
