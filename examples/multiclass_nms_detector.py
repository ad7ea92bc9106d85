"""A tiny single-stage detector whose forward ends in myops.multiclass_nms_static: exported with
torch.export (static shapes, no unbacked symbol), compiled with AOTInductor and run from C++
with no Python in the process (examples/cpp's ``myops_detect``); its detections are compared
with eager's.

The model is built here (random weights, no model package): a small conv backbone with two
levels (strides 8 and 16) and an anchor-free head that predicts, per location, the distances
to the box's four sides and the class scores, as YOLOv8-style heads do; the boxes are decoded
in the forward, and ``multiclass_nms_static`` turns ``boxes [N, A, 4]`` and ``scores [N, A, C]``
into padded detections. Its ``anchors`` output is each detection's location, the index to
gather anything else predicted per location (masks, keypoints).

    python examples/multiclass_nms_detector.py                      # build dir: build/mnms-example
    python examples/multiclass_nms_detector.py --program build/example/myops_detect

tests/test_multiclass_nms.py (``test_example_aoti_from_cpp``) runs the same steps.
"""

import argparse
import os
import subprocess
import sys

import torch
import torch.nn.functional as F
from torch import nn

import myops

OUTPUTS = ("num_detections", "boxes", "scores", "classes", "anchors")


class TinyDetector(nn.Module):
    def __init__(
        self,
        num_classes: int = 3,
        width: int = 16,
        image_size: int = 64,
        *,
        score_threshold: float = 0.2,
        iou_threshold: float = 0.5,
        max_detections: int = 64,
        pre_nms_top_k: int = 100,
    ):
        super().__init__()
        self.stem = nn.Sequential(
            nn.Conv2d(3, width, 3, 2, 1),
            nn.ReLU(),
            nn.Conv2d(width, width, 3, 2, 1),
            nn.ReLU(),
            nn.Conv2d(width, width, 3, 2, 1),
            nn.ReLU(),  # stride 8
        )
        self.down = nn.Sequential(nn.Conv2d(width, width, 3, 2, 1), nn.ReLU())  # stride 16
        self.head = nn.Conv2d(width, 4 + num_classes, 1)  # shared by both levels
        # random weights that still give spread scores (torch's default init leaves every score
        # within 0.01 of sigmoid(bias)) and a class prior: most scores below the threshold
        nn.init.normal_(self.head.weight, std=2.0)
        nn.init.constant_(self.head.bias[4:], -1.0)
        self.strides = (8, 16)
        # the locations' centers and strides, [A, 2] and [A, 1] (A = 8*8 + 4*4 at 64x64)
        centers, strides = [], []
        for s in self.strides:
            n = image_size // s
            y, x = torch.meshgrid(torch.arange(n), torch.arange(n), indexing="ij")
            centers.append((torch.stack([x, y], -1).reshape(-1, 2) + 0.5) * s)
            strides.append(torch.full((n * n, 1), float(s)))
        self.register_buffer("centers", torch.cat(centers))
        self.register_buffer("anchor_strides", torch.cat(strides))
        self.post = dict(
            score_threshold=score_threshold,
            iou_threshold=iou_threshold,
            max_detections=max_detections,
            pre_nms_top_k=pre_nms_top_k,
        )

    def forward(self, images):
        p3 = self.stem(images)
        p4 = self.down(p3)
        out = torch.cat([self.head(p).flatten(2) for p in (p3, p4)], 2).transpose(1, 2)  # [N, A, 4 + C]
        ltrb = F.softplus(out[..., :4]) * self.anchor_strides * 2
        boxes = torch.cat([self.centers - ltrb[..., :2], self.centers + ltrb[..., 2:]], -1)
        scores = torch.sigmoid(out[..., 4:])
        return myops.multiclass_nms_static(boxes, scores, **self.post)


def build(seed: int = 0, **kw) -> TinyDetector:
    torch.manual_seed(seed)
    return TinyDetector(**kw).eval()


def package(model: nn.Module, images: torch.Tensor, path: str) -> str:
    """torch.export (asserting a static graph) and AOTInductor: the package's path."""
    from torch._inductor import aoti_compile_and_package

    ep = torch.export.export(model, (images,))
    for node in ep.graph.nodes:
        vals = node.meta.get("val")
        for v in vals if isinstance(vals, (list, tuple)) else [vals]:
            if isinstance(v, torch.Tensor):
                assert not any(isinstance(d, torch.SymInt) for d in v.shape), f"symbolic shape at {node}"
    return aoti_compile_and_package(ep, package_path=path)


def build_program(workdir: str) -> str:
    """examples/cpp's myops_detect, built with CMake against this myops and LibTorch."""
    here = os.path.dirname(os.path.abspath(__file__))
    build = os.path.join(workdir, "cpp")
    prefix = torch.utils.cmake_prefix_path + ";" + myops.cmake_prefix_path
    configure = [
        "cmake",
        "-S",
        os.path.join(here, "cpp"),
        "-B",
        build,
        "-DCMAKE_BUILD_TYPE=Release",
        f"-DCMAKE_PREFIX_PATH={prefix}",
    ]
    # a CUDA build of torch: its CMake config needs the toolkit (tests/test_cpp.py finds it)
    sys.path.insert(0, os.path.join(os.path.dirname(here), "tests"))
    try:
        from test_cpp import _cuda_cmake_args
    finally:
        sys.path.pop(0)
    configure += _cuda_cmake_args()
    for cmd in (
        configure,
        ["cmake", "--build", build, "--target", "myops_detect", "-j", os.environ.get("MAX_JOBS", "2")],
    ):
        subprocess.run(cmd, check=True)
    return os.path.join(build, "myops_detect")


def run_from_cpp(program: str, package_path: str, images: torch.Tensor, workdir: str):
    """The package run by myops_detect (no Python in its process): its outputs, in OUTPUTS' order."""
    src, dst = os.path.join(workdir, "images.pt"), os.path.join(workdir, "out.pt")
    torch.save(images.contiguous(), src)
    env = {k: v for k, v in os.environ.items() if k not in ("LD_PRELOAD", "PYTHONHOME", "PYTHONPATH")}
    r = subprocess.run([program, package_path, src, dst], capture_output=True, text=True, env=env)
    if r.returncode != 0:
        raise RuntimeError(f"{program} failed:\n{r.stdout}\n{r.stderr}")
    return list(torch.load(dst, weights_only=False)), r.stdout  # a list of tensors written by myops_detect


def compare(eager, cpp):
    """The C++ package's detections against eager's: the same count, classes and anchors, and boxes
    and scores within Inductor's rounding (its generated kernels round softplus / sigmoid on their
    own, ~1e-7 relative). Returns a list of differences (empty: equal)."""
    problems = []
    for name, e, c in zip(OUTPUTS, eager, cpp):
        if e.shape != c.shape or e.dtype != c.dtype:
            problems.append(f"{name}: {c.dtype}{list(c.shape)} vs eager's {e.dtype}{list(e.shape)}")
        elif e.dtype == torch.int64:
            if not torch.equal(e, c):
                problems.append(f"{name}: {c.tolist()} vs eager's {e.tolist()}")
        elif not torch.allclose(e, c, rtol=1e-5, atol=1e-5):
            problems.append(f"{name}: largest difference {(e - c).abs().max().item()}")
    return problems


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--workdir", default=os.path.join("build", "mnms-example"))
    p.add_argument("--program", help="an already built myops_detect (default: build examples/cpp here)")
    args = p.parse_args(argv)
    os.makedirs(args.workdir, exist_ok=True)
    model = build()
    images = torch.rand(2, 3, 64, 64)
    path = package(model, images, os.path.join(args.workdir, "tiny_detector.pt2"))
    program = args.program or build_program(args.workdir)
    new_images = torch.rand(2, 3, 64, 64)
    with torch.no_grad():
        eager = model(new_images)
    cpp, stdout = run_from_cpp(program, path, new_images, args.workdir)
    print(stdout.strip())
    for name, t in zip(OUTPUTS, cpp):
        print(f"{name}: {list(t.shape)}" + (f" {t.tolist()}" if name == "num_detections" else ""))
    problems = compare(eager, cpp)
    print("C++ detections == eager's" if not problems else "DIFFERENT:\n  " + "\n  ".join(problems))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
