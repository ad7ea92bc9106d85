"""Smoke test of an installed myops (run from outside the source tree by .ci/check_package).

Every family once against torch, autograd, torch.ops, the metadata (version, pinned torch,
license, type information: py.typed, _C.pyi) and the C++ package files.
"""

import importlib.metadata as md
import os
import re
import sys

import torch

import myops

here = os.path.dirname(os.path.abspath(myops.__file__))
assert "site-packages" in here, f"myops imported from {here}, not from an installed wheel"
print("myops", myops.__version__, "from", here)
myops.show_config()

torch.manual_seed(0)
x = torch.randn(4, 6, 5)
m = x > 0.2
checks = {
    "nonzero": (myops.nonzero(m), torch.nonzero(m)),
    "nonzero_static": (myops.nonzero_static(m, size=30), torch.nonzero_static(m, size=30)),
    "where(cond)": (torch.stack(myops.where(m)), torch.stack(torch.where(m))),
    "argwhere": (myops.argwhere(m), torch.argwhere(m)),
    "relu": (myops.relu(x), torch.relu(x)),
    "gelu": (myops.gelu(x), torch.nn.functional.gelu(x)),
    "silu": (myops.silu(x), torch.nn.functional.silu(x)),
    "sigmoid": (myops.sigmoid(x), torch.sigmoid(x)),
    "mul_scalar": (myops.mul_scalar(x, 3), x * 3),
    "cast": (myops.cast(x, torch.float16), x.to(torch.float16)),
    "add": (myops.add(x, x[0], alpha=2), torch.add(x, x[0], alpha=2)),
    "sub": (myops.sub(x, x[:, :1]), x - x[:, :1]),
    "mul": (myops.mul(x, x), x * x),
    "div": (myops.div(x, x + 5), x / (x + 5)),
    "maximum": (myops.maximum(x, -x), torch.maximum(x, -x)),
    "minimum": (myops.minimum(x, -x), torch.minimum(x, -x)),
    "where": (myops.where(m, x, -x), torch.where(m, x, -x)),
    "addcmul": (myops.addcmul(x, x, x, value=0.5), torch.addcmul(x, x, x, value=0.5)),
    "clamp": (myops.clamp(x, -x.abs() * 0.5, x.abs() * 0.5), torch.clamp(x, -x.abs() * 0.5, x.abs() * 0.5)),
    "diagonal": (myops.diagonal(x, 1, 1, 2), torch.diagonal(x, 1, 1, 2).contiguous()),
}
f, o = torch.randn(2, 3, 11, 9), torch.randn(2, 1, 6, 5)
checks["max_pool2d_add"] = (myops.max_pool2d_add(f, o), torch.nn.functional.max_pool2d(f, 3, 2, 1) + o)
checks["torch.ops.myops.relu"] = (torch.ops.myops.relu(x), torch.relu(x))
for name, (got, want) in checks.items():
    torch.testing.assert_close(got, want, rtol=1e-6, atol=1e-6, msg=lambda s: f"{name}: {s}")

leaf = f.clone().requires_grad_()
myops.max_pool2d_add(leaf, o).sum().backward()
leaf2 = f.clone().requires_grad_()
(torch.nn.functional.max_pool2d(leaf2, 3, 2, 1) + o).sum().backward()
torch.testing.assert_close(leaf.grad, leaf2.grad)

# metadata: the version (0.1.0, or 0.1.0+cpu / +cuXXX), torch pinned to the build's, license, typed
dist = md.distribution("myops")
assert dist.version == myops.__version__, (dist.version, myops.__version__)
torch_pin = "torch==" + myops.BUILD_CONFIG["torch_version"].split("+")[0]
assert torch_pin in (dist.requires or []), dist.requires
assert dist.metadata.get("License-Expression") == "BSD-3-Clause", dist.metadata.get("License-Expression")
# what an index page shows: the README as Markdown, the Pythons tested, links, classifiers
meta = dist.metadata
assert meta["Description-Content-Type"] == "text/markdown" and "## Installing" in meta.get_payload()
# the Pythons: the checkout's pyproject.toml (the one list), as the wheel states them, and this one
with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "pyproject.toml")) as f:
    project = f.read()
requires = re.search(r'^requires-python = "(.*)"$', project, re.M).group(1)
assert sorted(meta["Requires-Python"].split(",")) == sorted(requires.split(",")), meta["Requires-Python"]
assert {u.split(",")[0] for u in meta.get_all("Project-URL")} >= {"Homepage", "Source", "Issues", "Changelog"}
classifiers = meta.get_all("Classifier")
pythons = re.findall(r'"(Programming Language :: Python :: 3\.\d+)"', project)
this_python = f"Programming Language :: Python :: {sys.version_info.major}.{sys.version_info.minor}"
assert this_python in pythons, (this_python, pythons)
for c in pythons + ["Operating System :: POSIX :: Linux", "Environment :: GPU :: NVIDIA CUDA :: 13"]:
    assert c in classifiers, (c, classifiers)
# the wheel's tag: manylinux, as torch's own wheels
tags = [line.split(": ", 1)[1] for line in dist.read_text("WHEEL").splitlines() if line.startswith("Tag: ")]
assert tags and all(t.endswith("-manylinux_2_28_x86_64") for t in tags), tags
assert any(str(p).endswith("LICENSE") for p in dist.files), "LICENSE not in the wheel"
assert all(os.path.exists(os.path.join(here, f)) for f in ("py.typed", "_C.pyi")), "type information"
assert not os.path.exists(os.path.join(here, "..", "tests")), "tests installed as a package"
assert os.path.exists(os.path.join(myops.cmake_prefix_path, "myops", "myopsConfig.cmake"))
assert os.path.exists(os.path.join(here, "include", "myops", "ops.h"))
assert os.path.exists(os.path.join(here, "lib", "libmyops.so"))
print(f"smoke test passed: {len(checks)} ops, autograd, metadata ({torch_pin})", file=sys.stderr)
