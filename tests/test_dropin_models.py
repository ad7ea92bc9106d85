"""Unmodified torchvision models under the dispatcher drop-in (myops.enable()): a Faster R-CNN
and a ResNet give torch's outputs bit for bit, in eval and over one training step, and a
TorchScript Faster R-CNN loaded in a fresh process routes its calls and gives torch's outputs.

Random weights (nothing is downloaded) and small images keep this file short on 2 cores."""

import contextlib
import os
import subprocess
import sys
import textwrap
import warnings

import pytest
import torch

import myops
from helpers import DEVICES

torchvision = pytest.importorskip("torchvision")


@pytest.fixture(autouse=True)
def nothing_left_enabled():
    yield
    myops.disable()
    assert torch.ops.myops._override_enabled() == [] and torch.ops.myops._override_scoped() == []


def detector(device):
    torch.manual_seed(0)
    model = torchvision.models.detection.fasterrcnn_resnet50_fpn(
        weights=None, weights_backbone=None, box_score_thresh=0.0, min_size=200, max_size=256
    )
    return model.to(device)


def images(device):
    g = torch.Generator().manual_seed(1)
    return [torch.rand(3, 200, 250, generator=g).to(device), torch.rand(3, 230, 190, generator=g).to(device)]


def targets(device):
    g = torch.Generator().manual_seed(2)
    out = []
    for w, h in [(250, 200), (190, 230)]:
        xy = torch.rand(3, 2, generator=g) * torch.tensor([w * 0.6, h * 0.6])
        wh = 10 + torch.rand(3, 2, generator=g) * 60
        out.append({"boxes": torch.cat([xy, xy + wh], 1).to(device), "labels": torch.tensor([1, 5, 7], device=device)})
    return out


def assert_identical(actual, expected, path="output"):
    """Same structure, and every tensor equal bit for bit (dtype, shape, values)."""
    if isinstance(expected, torch.Tensor):
        assert actual.dtype == expected.dtype and actual.shape == expected.shape, path
        assert torch.equal(actual, expected), f"{path} differs"
    elif isinstance(expected, dict):
        assert actual.keys() == expected.keys(), path
        for k in expected:
            assert_identical(actual[k], expected[k], f"{path}[{k!r}]")
    elif isinstance(expected, (list, tuple)):
        assert len(actual) == len(expected), path
        for i, (a, e) in enumerate(zip(actual, expected)):
            assert_identical(a, e, f"{path}[{i}]")
    else:
        assert actual == expected, path


def train_step(model, inputs, loss_fn):
    """One SGD step from the model's current state; returns the losses and the new state."""
    state = {k: v.clone() for k, v in model.state_dict().items()}
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    torch.manual_seed(3)  # the detector samples proposals at random
    model.train()
    losses = loss_fn(model, inputs)
    opt.zero_grad()
    sum(losses.values()).backward()
    opt.step()
    new_state = {k: v.detach().clone() for k, v in model.state_dict().items()}
    model.load_state_dict(state)  # back to where it started, for the other run
    return {k: v.detach() for k, v in losses.items()}, new_state


@contextlib.contextmanager
def deterministic(device):
    """torch's deterministic kernels for the block, on CUDA (the CPU's are already): cuDNN's
    deterministic convolution algorithms (its default backward-weight ones sum in a varying
    order), and use_deterministic_algorithms, which picks the deterministic path of ops that have
    two (index_put's accumulation; torchvision's roi_align, which then runs its Python form
    instead of its atomicAdd backward). Ops with no deterministic CUDA kernel warn (warn_only):
    the block yields the list of those warnings. Everything is restored afterwards."""
    if device != "cuda":
        yield []
        return
    cudnn = torch.backends.cudnn
    saved = (cudnn.deterministic, cudnn.benchmark, torch.are_deterministic_algorithms_enabled())
    saved_warn_only = torch.is_deterministic_algorithms_warn_only_enabled()
    cudnn.deterministic, cudnn.benchmark = True, False
    torch.use_deterministic_algorithms(True, warn_only=True)
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            yield caught
    finally:
        cudnn.deterministic, cudnn.benchmark = saved[0], saved[1]
        torch.use_deterministic_algorithms(saved[2], warn_only=saved_warn_only)


def _leaves(x, path="output"):
    """(path, tensor) for every tensor of a nested dict / list / tuple, in order."""
    if isinstance(x, torch.Tensor):
        yield path, x
    elif isinstance(x, dict):
        for k in x:
            yield from _leaves(x[k], f"{path}[{k!r}]")
    elif isinstance(x, (list, tuple)):
        for i, v in enumerate(x):
            yield from _leaves(v, f"{path}[{i}]")


def _max_diff(a, e):
    return (a.double() - e.double()).abs().max().item() if e.numel() else 0.0


def assert_train_step_matches(actual, expected, rerun, caught=()):
    """myops' training step against torch's, both run in :func:`deterministic`. Wherever torch's
    own step repeats bit for bit (the CPU; CUDA with torch's deterministic kernels) they must be
    identical. Where it does not (an op with no deterministic CUDA kernel: ``caught`` names it),
    each tensor of myops' step may differ from torch's by at most 4x what torch's own two steps
    differ by in that tensor (two other runs of the same noise): a tensor torch repeats exactly
    must be exact."""
    again = rerun()
    try:
        assert_identical(again, expected)
    except AssertionError:
        pass
    else:
        assert_identical(actual, expected)
        return
    ops = sorted({str(w.message).split(" does not have")[0] for w in caught}) or "none warned"
    for (path, a), (_, t), (_, e) in zip(_leaves(actual), _leaves(again), _leaves(expected)):
        spread, diff = _max_diff(t, e), _max_diff(a, e)
        assert diff <= 4 * spread, (
            f"{path}: myops differs from torch by {diff}, torch's own two steps by {spread} "
            f"(ops without a deterministic CUDA kernel: {ops})"
        )


def test_train_step_check_allows_only_torchs_own_spread():
    """assert_train_step_matches: exact where torch repeats itself; where it does not, each
    tensor within 4x torch's own spread in that tensor, and a tensor torch repeats stays exact."""
    e = {"loss": torch.tensor(1.0), "w": torch.tensor([1.0, 2.0])}
    noisy = {"loss": torch.tensor(1.0), "w": torch.tensor([1.0, 2.0 + 1e-6])}
    assert_train_step_matches(e, e, lambda: e)
    with pytest.raises(AssertionError):  # torch repeats bit for bit: myops must too
        assert_train_step_matches(noisy, e, lambda: e)
    assert_train_step_matches({"loss": e["loss"], "w": torch.tensor([1.0, 2.0 + 3e-6])}, e, lambda: noisy)
    with pytest.raises(AssertionError, match=r"\['w'\]"):  # past 4x torch's spread
        assert_train_step_matches({"loss": e["loss"], "w": torch.tensor([1.0, 2.0 + 1e-5])}, e, lambda: noisy)
    with pytest.raises(AssertionError, match=r"\['loss'\]"):  # torch repeats the loss: exact
        assert_train_step_matches({"loss": torch.tensor(1.0 + 1e-6), "w": e["w"]}, e, lambda: noisy)


@pytest.mark.parametrize("device", DEVICES)
def test_fasterrcnn_eval_and_train_step_identical(device):
    model = detector(device).eval()
    x = images(device)
    with torch.no_grad():
        expected = model(x)
        with myops.enable() as stats:
            actual = model(x)
    assert sum(len(d["boxes"]) for d in expected) > 0  # box_score_thresh=0: detections to compare
    assert_identical(actual, expected)
    # remove_small_boxes / box filtering: torch.where(cond)[0] -> aten::nonzero; box coding: + - * /
    assert stats.routed["nonzero"] > 0 and stats.routed["add"] > 0 and stats.routed["div"] > 0, stats

    t = targets(device)
    loss = lambda m, inp: m(inp, t)  # noqa: E731
    with deterministic(device) as caught:
        expected = train_step(model, x, loss)
        with myops.enable() as stats:
            actual = train_step(model, x, loss)
        assert_train_step_matches(actual, expected, lambda: train_step(model, x, loss), caught)
    assert stats.routed["nonzero"] > 0 and stats.routed["mul"] > 0 and stats.routed["sub"] > 0, stats


@pytest.mark.parametrize("device", DEVICES)
def test_resnet_eval_and_train_step_identical(device):
    torch.manual_seed(0)
    model = torchvision.models.resnet18(weights=None, num_classes=10).to(device).eval()
    x = torch.randn(4, 3, 64, 64, device=device)
    labels = torch.randint(0, 10, (4,), device=device)
    with torch.no_grad():
        expected = model(x)
        with myops.enable():
            actual = model(x)
    assert_identical(actual, expected)

    def loss(m, inp):
        return {"ce": torch.nn.functional.cross_entropy(m(inp), labels)}

    with deterministic(device) as caught:
        expected = train_step(model, x, loss)
        with myops.enable() as stats:
            actual = train_step(model, x, loss)
        assert_train_step_matches(actual, expected, lambda: train_step(model, x, loss), caught)
    # ResNet's own ops are mostly in-place (relu_, +=) and stay torch's; its backward's are routed
    assert stats.total > 0, stats


# SSD300's VGG16 costs ~30 GFLOP an image: slow (MYOPS_SLOW=1, make deploy-check); CI runs SSDlite
@pytest.mark.parametrize(
    "name", ["ssdlite320_mobilenet_v3_large", pytest.param("ssd300_vgg16", marks=pytest.mark.slow)]
)
def test_ssd_under_inference_mode_identical(name):
    """SSD / SSDlite as a server runs them: eval, inside torch.inference_mode(). Their
    postprocess (per-class score filter and topk, then batched_nms: one torchvision nms per class
    above its box limit) runs on myops, nms included, with identical detections."""
    torch.manual_seed(0)
    model = getattr(torchvision.models.detection, name)(weights=None, weights_backbone=None).eval()
    x = images("cpu")[:1]
    with torch.inference_mode():
        expected = model(x)
        with myops.enable() as stats:
            actual = model(x)
    assert all(len(d["boxes"]) > 20 for d in expected)  # detections to compare
    assert_identical(actual, expected)
    assert stats.routed["nms"] > 0 and stats.routed["nonzero"] > 0 and stats.routed["add"] > 0, stats
    assert stats.handed_back == {}, stats


CHILD = textwrap.dedent(
    """
    import sys, torch, myops
    import torchvision  # noqa: F401  (registers torchvision::nms, roi_align: the model calls them)
    torch.set_num_threads({threads})
    model = torch.jit.load(sys.argv[1])
    inputs = torch.load(sys.argv[2])
    with myops.enable() as stats, torch.no_grad():
        out = model(inputs)
    torch.save({{"out": out, "routed": dict(stats.routed), "handed_back": dict(stats.handed_back)}}, sys.argv[3])
    """
)


def test_scripted_fasterrcnn_in_fresh_process(tmp_path):
    """TorchScript calls aten ops from C++: the override serves them with no Python involved."""
    model = detector("cpu").eval()
    scripted = torch.jit.script(model)
    path, inputs_path, out_path = tmp_path / "frcnn.pt", tmp_path / "inputs.pt", tmp_path / "out.pt"
    scripted.save(str(path))
    x = images("cpu")
    torch.save(x, inputs_path)
    with torch.no_grad():
        expected = torch.jit.load(str(path))(x)  # torch's kernels, in this process
        eager = model(x)
    assert_identical(expected[1], eager)

    pkg = os.path.dirname(os.path.dirname(os.path.abspath(myops.__file__)))
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([pkg, os.environ.get("PYTHONPATH", "")]))
    code = CHILD.format(threads=torch.get_num_threads())
    proc = subprocess.run(
        [sys.executable, "-c", code, str(path), str(inputs_path), str(out_path)],
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    result = torch.load(out_path)
    assert_identical(result["out"], expected)
    assert result["routed"].get("nonzero", 0) > 0 and result["routed"].get("add", 0) > 0, result["routed"]
    assert result["routed"].get("nms", 0) > 0, result["routed"]  # torchvision::nms, from TorchScript
