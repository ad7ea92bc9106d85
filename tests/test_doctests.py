"""The examples in the docstrings of the public Python API run and print what they show (the docs
build executes the same examples): ``torch`` and ``myops`` are in scope, on the CPU."""

import doctest
import importlib

import pytest
import torch

import myops

# every module holding public functions (myops.ops re-exports the family modules' functions)
MODULES = [
    "myops",
    "myops._nonzero",
    "myops._nms",
    "myops._roi_align",
    "myops._detection_decode",
    "myops._bounded_layers",
    "myops._unary",
    "myops._elementwise",
    "myops._max_pool2d_add",
    "myops._diagonal",
    "myops.replace",
    "myops.detection",
]


def _examples(name):
    module = importlib.import_module(name)
    finder = doctest.DocTestFinder(exclude_empty=True)
    return [t for t in finder.find(module, name, globs={"torch": torch, "myops": myops}) if t.examples]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples_run(name):
    tests = _examples(name)
    runner = doctest.DocTestRunner(optionflags=doctest.NORMALIZE_WHITESPACE)
    for t in tests:
        runner.run(t)
    assert runner.failures == 0, f"{runner.failures} docstring example(s) of {name} failed (output above)"


def test_every_public_function_has_an_example():
    """Every function of myops.__all__ and myops.detection.__all__ documents its arguments,
    returns, errors and shows an example (issue #44's docstring checklist)."""
    import inspect

    import myops.detection

    missing = []
    public = {
        myops: myops.__all__,
        myops.replace: myops.replace.__all__,
        myops.detection: myops.detection.__all__ + ["paste_masks", "heatmaps_to_keypoints"],
    }
    for mod, names in public.items():
        for n in names:
            f = getattr(mod, n)
            if not (inspect.isfunction(f) or inspect.isclass(f)):
                continue
            doc = inspect.getdoc(f) or ""
            for section in ("Args:" if inspect.signature(f).parameters else None, "Returns:", "Example"):
                if section and section not in doc and not (inspect.isclass(f) and section == "Returns:"):
                    missing.append(f"{mod.__name__}.{n}: {section}")
            if ">>>" not in doc:
                missing.append(f"{mod.__name__}.{n}: >>>")
    assert not missing, missing
