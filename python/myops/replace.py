"""Run torch's own ops on myops kernels, at the dispatcher: ``enable()``, ``disable()``,
``replace_torch_ops()``.

    myops.enable()                          # every thread, until myops.disable()
    detections = model(images)              # aten::where / nonzero / add / ... -> myops kernels
    print(myops.disable())                  # RouteStats(routed={'nonzero': 4, 'add': 61, ...}, ...)

    with myops.enable(only={"nonzero", "where"}) as stats:   # the same, as a block
        ...
    with myops.replace_torch_ops() as stats:                  # this thread only, as a block
        ...

How it works (csrc/dropin/aten_override.cpp): while an op is enabled, C++ kernels registered for its
aten overloads on the CPU and CUDA dispatch keys (``aten::add.Tensor``, ``aten::nonzero``, ...)
replace torch's. Each one runs the myops kernel when the call is one myops computes exactly as
torch does (strided tensors of the dtypes myops supports, devices it takes, the overload's
options), and hands every other call to torch's own kernel for that backend (``at::cpu::add``,
``at::cuda::nonzero``, ...): no Python runs per call, and every caller is covered: Python,
TorchScript, C++ (LibTorch), ``torch.compile``'s fallback kernels and torch's own composite ops
(``torch.where(cond)`` and ``torch.argwhere`` are ``aten::nonzero``). The kernels sit below
Autograd, so gradients use ATen's formulas; ``torchvision::nms``'s sits on the BackendSelect key,
just above the backend's. So every mode reaches them alike: grad mode, ``no_grad``,
``inference_mode`` (which skips the Autograd keys; inference tensors too) and autocast (whose
casts run first, then the routed op on the cast tensors). Disabling stops the routing: every
call runs on torch's kernels again, through the override's hand-back.

Only the functional overloads are overridden; in-place (``add_``, ``relu_``, ``+=``) and
``out=`` forms, ``div(rounding_mode=...)``, one-sided or scalar ``clamp`` and anything else
stay torch's. ``add``/``sub`` with ``alpha != 1`` and ``addcmul`` with ``value != 1`` on
half/bfloat16 are handed back too. The transcendental ops (``gelu``, ``silu``, ``sigmoid``)
agree with torch within a few ulp, not bit for bit, so they are routed only when named
(``only={"gelu", ...}``); every default op (:data:`DEFAULT_OPS`) gives torch's result bit for
bit, with torch's dtype and strides.

Process-wide (``enable``) means every thread of this process, including the autograd engine's
threads and threads started later; not other processes (a DataLoader worker started with
``spawn`` must call ``enable()`` itself). ``replace_torch_ops()`` routes only the calls made by
the thread that opened the block, while it is open; other threads keep torch's kernels (they
run through the override's hand-back, a C++ function call). Backward passes that autograd runs
on its own threads (CUDA) are not in the block.

Threads: the first ``enable()`` or block registers the kernels of every op, and they stay
registered; from then on ``enable()``, ``disable()`` and blocks only set the state the kernels
read (a process-wide set and a per-thread one), so a block in one thread never changes what
another thread's calls dispatch to, and a block's enter and exit cost about a microsecond.
:func:`unregister` puts torch's kernels back in the dispatcher; it is never called for you.
"""

import collections
import threading
from typing import Dict, Iterable, List, Optional, Tuple, Union

import torch

from . import _C

__all__ = [
    "enable",
    "disable",
    "enabled_ops",
    "replace_torch_ops",
    "RouteStats",
    "ALL_OPS",
    "DEFAULT_OPS",
    "HAND_BACK_REASONS",
]

_ops = torch.ops.myops

#: Every op the override can route, by myops name (the counters' order).
ALL_OPS = tuple(_ops._override_ops())
#: The ops routed when none are named: those bit-identical to torch.
DEFAULT_OPS = frozenset(_ops._override_defaults())
#: Why a call is handed back to torch (:attr:`RouteStats.reasons`): ``"arguments"`` (its
#: dtypes, devices, layouts, options or dispatch layer are ones the myops kernel does not compute
#: as torch does), ``"refused"`` (the myops kernel raised for them: torch decides, and raises its
#: own error for bad input).
HAND_BACK_REASONS = tuple(_ops._override_why())


_BIT = {name: 1 << i for i, name in enumerate(ALL_OPS)}
_DEFAULT_NAMES = tuple(n for n in ALL_OPS if n in DEFAULT_OPS)
_torchvision_tried = False


def _load_torchvision():
    """torchvision::nms can only be overridden once torchvision's ops are loaded: load them
    (once per process; a later ``import torchvision`` would otherwise meet torchvision's kernel,
    unrouted)."""
    global _torchvision_tried
    if not _torchvision_tried:
        _torchvision_tried = True
        try:
            import torchvision  # noqa: F401
        except ImportError:
            pass


def _names(only) -> Tuple[str, ...]:
    if only is None:
        names = _DEFAULT_NAMES
    else:
        if isinstance(only, str):
            only = [only]
        names = tuple(dict.fromkeys(only))
        unknown = [n for n in names if n not in _BIT]
        if unknown:
            raise ValueError(f"myops: unknown op(s) {unknown}; the ops that can be routed are {list(ALL_OPS)}")
    if "nms" in names:
        _load_torchvision()
    return names


# The counters (csrc/dropin/aten_override.h, counters()): per op in ALL_OPS order, routed, then
# handed back for each reason; a snapshot is the bytes myops._C._dropin_counters returns.
_PER_OP = 1 + len(HAND_BACK_REASONS)


def _diff(now: bytes, base: bytes):
    """(routed, handed_back, reasons) between two snapshots, the ops with a count only."""
    a, b = memoryview(now).cast("Q"), memoryview(base).cast("Q")
    routed: collections.Counter = collections.Counter()
    handed_back: collections.Counter = collections.Counter()
    reasons: collections.Counter = collections.Counter()
    for i, name in enumerate(ALL_OPS):
        k = i * _PER_OP
        if a[k] != b[k]:
            routed[name] = a[k] - b[k]
        for j, why in enumerate(HAND_BACK_REASONS, 1):
            if a[k + j] != b[k + j]:
                reasons[(name, why)] = a[k + j] - b[k + j]
                handed_back[name] += a[k + j] - b[k + j]
    return routed, handed_back, reasons


class RouteStats:
    """Per op (myops names, e.g. ``'nonzero'``, ``'add'``): the calls that reached the override
    while routing was on and ran on myops (``routed``) or went to torch's kernel
    (``handed_back``, also ``fallthrough``), counted in C++ since the routing began and frozen
    when it ends, and for each call handed back its reason (``reasons``, see
    :data:`HAND_BACK_REASONS`). For :func:`enable` they are the calls of every thread; for
    :func:`replace_torch_ops`, those of the thread that opened the block (read them there).
    Every call of a routed op that reaches torch's kernel is in one of the two, in every mode:
    grad mode, ``no_grad``, ``inference_mode`` and autocast.

    Made by :func:`enable` and :func:`replace_torch_ops`, not by the caller.

    Args:
        this_thread: count the calls of the thread that makes it (``replace_torch_ops``), not
            those of every thread (``enable``).

    Example::

        >>> with myops.replace_torch_ops(only={"nonzero"}) as stats:
        ...     _ = torch.nonzero(torch.tensor([0, 1]))
        >>> stats
        RouteStats(routed={'nonzero': 1}, handed_back={}, reasons={})
        >>> stats["nonzero"], stats.total
        (1, 1)
    """

    def __init__(self, this_thread: bool):
        self._this_thread = this_thread
        self._thread = threading.get_ident()
        # snapshots of the C++ counters (bytes), read into dicts only when the stats are read
        self._base = _C._dropin_counters(this_thread)
        self._final: Optional[bytes] = None

    def _snapshot(self) -> bytes:
        if self._final is not None:
            return self._final
        if self._this_thread and threading.get_ident() != self._thread:
            raise RuntimeError(
                "myops: the RouteStats of an open replace_torch_ops() block count the calls "
                "of the thread that opened it; read them in that thread"
            )
        return _C._dropin_counters(self._this_thread)

    def _now(self):
        return _diff(self._snapshot(), self._base)

    def _stop(self):
        if self._final is None:
            self._final = self._snapshot()

    @property
    def routed(self):
        return self._now()[0]

    @property
    def handed_back(self):
        return self._now()[1]

    fallthrough = handed_back

    @property
    def reasons(self):
        """The calls handed back, per op and reason: ``{"nms": Counter({"refused": 1}), ...}``."""
        out: Dict[str, collections.Counter[str]] = {}
        for (name, why), n in self._now()[2].items():
            out.setdefault(name, collections.Counter())[why] = n
        return out

    def __getitem__(self, name):
        return self.routed[name]

    @property
    def total(self):
        return sum(self.routed.values())

    def __repr__(self):
        routed, back, _ = self._now()
        reasons = {n: dict(c) for n, c in self.reasons.items()}
        return f"RouteStats(routed={dict(routed)}, handed_back={dict(back)}, reasons={reasons})"


class _ProcessRouting(RouteStats):
    """What :func:`enable` returns: its RouteStats, and a context manager that disables on exit."""

    def __init__(self):
        super().__init__(this_thread=False)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        disable()
        return False


_lock = threading.Lock()
_global = None


def enable(only: Optional[Union[str, Iterable[str]]] = None) -> RouteStats:
    """Route torch's ops to myops in every thread of this process, until :func:`disable`.

    The aten (and ``torchvision::nms``) kernels of the named ops on the CPU and CUDA dispatch keys
    run myops' kernels for the calls myops computes exactly as torch does, and hand every other
    call back to torch's own kernel (see the module docstring). Calling it again adds ops to the
    routed set and returns the same object.

    Args:
        only: myops op names to route (an iterable or one name; see :data:`ALL_OPS`); default
            :data:`DEFAULT_OPS`, the bit-exact ones.

    Returns:
        The :class:`RouteStats` of the routing, also a context manager
        (``with myops.enable(): ...`` disables at the end of the block).

    Raises:
        ValueError: a name that is not in :data:`ALL_OPS`.

    Example::

        >>> stats = myops.enable(only={"add"})
        >>> torch.add(torch.ones(2), torch.ones(2))
        tensor([2., 2.])
        >>> myops.disable().routed["add"]
        1
    """
    global _global
    names = _names(only)
    with _lock:
        if _global is None:
            _global = _ProcessRouting()
        _ops._override_enable(names)
        return _global


def disable() -> Optional[RouteStats]:
    """Stop the process-wide routing of :func:`enable`: every call runs on torch's kernels again
    (open :func:`replace_torch_ops` blocks keep theirs).

    Returns:
        The (now frozen) :class:`RouteStats` of the routing, or None if it was not enabled.

    Example::

        >>> with myops.enable(only="relu"):
        ...     _ = torch.relu(torch.ones(2))
        >>> myops.disable() is None  # the block has disabled it already
        True
    """
    global _global
    with _lock:
        g, _global = _global, None
        _ops._override_disable()
    if g is not None:
        g._stop()
    return g


def enabled_ops() -> List[str]:
    """The ops routed process-wide now (by :func:`enable`, from Python or C++).

    Returns:
        Their myops names, in :data:`ALL_OPS` order.

    Example::

        >>> with myops.enable(only=["relu", "add"]):
        ...     myops.replace.enabled_ops()
        ['relu', 'add']
        >>> myops.replace.enabled_ops()
        []
    """
    return list(_ops._override_enabled())


class replace_torch_ops:
    """Context manager: route torch's ops to myops for the calls this thread makes inside the
    block (the scoped form of :func:`enable`, same kernels and checks).

    Blocks nest; each ends the routing it started.

    Args:
        only: myops op names to route (an iterable or one name); default :data:`DEFAULT_OPS`.

    Returns:
        ``__enter__`` returns the block's :class:`RouteStats`.

    Raises:
        ValueError: a name that is not in :data:`ALL_OPS`.

    Example::

        >>> with myops.replace_torch_ops(only={"nonzero", "where"}) as stats:
        ...     _ = torch.where(torch.tensor([True, False]))
        >>> stats.routed["nonzero"]
        1
    """

    def __init__(self, only: Optional[Union[str, Iterable[str]]] = None):
        self._names = _names(only)
        self._mask = sum(_BIT[n] for n in self._names)
        self._open: List[Tuple[int, RouteStats]] = []  # (token, stats) of each entry, innermost last
        self.stats: Optional[RouteStats] = None  # the innermost entry's

    def __enter__(self):
        # one C call each (csrc/python/dropin.cpp): no dispatcher change, no schema matching
        stats = RouteStats(this_thread=True)
        self._open.append((_C._dropin_scope_enter(self._mask), stats))
        self.stats = stats
        return stats

    def __exit__(self, *exc):
        token, stats = self._open.pop()
        stats._stop()
        _C._dropin_scope_exit(token)
        return False


def unregister() -> None:
    """Put torch's own kernels back in the dispatcher's tables, exactly as before the first
    :func:`enable` or :func:`replace_torch_ops` block (the next one registers them again).

    Not needed to stop routing (:func:`disable` and the end of a block do that) and never called
    for you. **Not safe while other threads run torch ops**: PyTorch does not support changing
    the dispatcher's tables while other threads dispatch (a call can meet a half-changed table
    and raise). For a single-threaded program that must leave the dispatcher as it found it.

    Raises:
        RuntimeError: routing is on (an :func:`enable`, or an open block in any thread).

    Example::

        >>> with myops.replace_torch_ops(only="relu"):
        ...     _ = torch.relu(torch.ones(2))
        >>> "relu" in torch.ops.myops._override_registered()
        True
        >>> myops.replace.unregister()
        >>> torch.ops.myops._override_registered()
        []
    """
    with _lock:
        _ops._override_unregister()
