import os
import random

import pytest
import torch

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
