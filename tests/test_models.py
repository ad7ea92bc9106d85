"""An unmodified torchvision R-CNN detector gives the same detections on myops."""

import pytest
import torch

import myops
from helpers import DEVICES

torchvision = pytest.importorskip("torchvision")


def build_detector(device):
    torch.manual_seed(0)
    model = torchvision.models.detection.fasterrcnn_resnet50_fpn(
        weights=None, weights_backbone=None, box_score_thresh=0.0, min_size=320, max_size=320
    )
    return model.eval().to(device)


@pytest.mark.parametrize("device", DEVICES)
def test_fasterrcnn_detections_identical(device):
    model = build_detector(device)
    images = [torch.rand(3, 320, 320, device=device) for _ in range(2)]
    with torch.no_grad():
        expected = model(images)
        with myops.replace_torch_ops() as stats:
            actual = model(images)
    assert stats.routed["nonzero"] > 0, stats  # torch.where(cond) is aten::nonzero underneath
    assert stats.routed["nonzero"] + stats.routed["where"] > 0
    assert len(actual) == len(expected) == 2
    for a, e in zip(actual, expected):
        assert set(a) == set(e) == {"boxes", "scores", "labels"}
        assert a["boxes"].shape[0] > 0  # box_score_thresh=0: there are detections to compare
        for k in ("boxes", "scores", "labels"):
            torch.testing.assert_close(a[k], e[k], rtol=0, atol=0)
