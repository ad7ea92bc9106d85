# Type information for the extension module myops._C (csrc/python/module.cpp), which mypy and
# IDEs cannot read. Importing it loads lib/libmyops.so and registers torch.ops.myops.*; its
# attributes are the ops' direct entry points (csrc/python/fast.cpp, one per row of the op
# table): each takes the op's arguments positionally and returns the op's result, or
# NotImplemented for a call form it does not take (myops._common._fast_path says the rule).
from typing import Any, Callable

def __getattr__(name: str) -> Callable[..., Any]: ...
