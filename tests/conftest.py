import os
import random

# cuBLAS repeats its results bit for bit only with a fixed workspace (one per stream); torch reads
# this when it first uses cuBLAS, and torch.use_deterministic_algorithms (the drop-in's training
# step tests, tests/test_dropin_models.py) requires it: set before any test touches CUDA
os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")

import pytest  # noqa: E402
import torch  # noqa: E402

import myops  # noqa: F401  (registers torch.ops.myops.*)


@pytest.fixture(autouse=True)
def fresh_seed(request):
    """A fresh random seed per test, printed on failure so a failing case can be replayed
    with MYOPS_SEED=<seed>."""
    seed = int(os.environ.get("MYOPS_SEED", random.randrange(2**31)))
    torch.manual_seed(seed)
    random.seed(seed)
    request.node.user_properties.append(("seed", seed))
    yield seed


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    rep = outcome.get_result()
    if rep.failed:
        for k, v in item.user_properties:
            if k == "seed":
                rep.sections.append(("seed", f"replay with MYOPS_SEED={v}"))
            if k == "emu_seed":  # tests/test_cuda_emulation.py: the emulated thread order
                rep.sections.append(("emu_seed", f"replay the thread order with MYOPS_EMU_SEED={v}"))


def pytest_collection_modifyitems(config, items):
    """Tests marked `slow` (several GB, e.g. > 2^31-element inputs) run only with MYOPS_SLOW=1."""
    if os.environ.get("MYOPS_SLOW") == "1":
        return
    skip = pytest.mark.skip(reason="slow test (set MYOPS_SLOW=1 to run it)")
    for item in items:
        if "slow" in item.keywords:
            item.add_marker(skip)
