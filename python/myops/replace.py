"""Route matching torch calls to myops inside a block, so unmodified models run on myops.

    with myops.replace_torch_ops() as stats:
        detections = model(images)
    print(stats)            # e.g. RouteStats(routed={'where': 12, 'nonzero': 3, ...})

Built on ``torch.overrides.TorchFunctionMode``. A call is routed only when myops computes
what torch would: plain strided CPU/CUDA tensors, a form of the call the myops op implements
(no ``out=``, no ``rounding_mode=``, ...). Results are bit-identical to torch's wherever torch
is exact (indices, relu, add, mul, where, max/min, clamp); the transcendental ops (gelu, silu,
sigmoid) and div agree within a few ulp (DESIGN.md §2) — pass ``only=`` to leave them to torch. Anything else falls through to torch
unchanged, and so does any call that the myops op refuses (an unsupported dtype, say): then
torch runs it and raises its own error for bad input. In-place forms (``torch.relu_``,
``F.relu(x, inplace=True)``, ``x.add_(y)``) are honoured by writing the myops result into
``x`` when that result has x's dtype and shape and no autograd is involved; otherwise they
fall through.
"""
import collections
import inspect

import torch
import torch.nn.functional as F
from torch.overrides import TorchFunctionMode

from . import ops as _m

__all__ = ["replace_torch_ops", "enable", "disable", "RouteStats", "ROUTED_OPS"]


class RouteStats:
    """Counts of the torch calls a ``replace_torch_ops`` block routed to myops (``routed``)
    and of the matching calls it left to torch (``fallthrough``), per myops op name."""

    def __init__(self):
        self.routed = collections.Counter()
        self.fallthrough = collections.Counter()

    def __getitem__(self, name):
        return self.routed[name]

    @property
    def total(self):
        return sum(self.routed.values())

    def __repr__(self):
        return f"RouteStats(routed={dict(self.routed)}, fallthrough={dict(self.fallthrough)})"


class _Fallthrough(Exception):
    """Raised by a handler: this call is not one myops serves; let torch run it."""


def _is_plain(t):
    return (
        isinstance(t, torch.Tensor)
        and type(t) in (torch.Tensor, torch.nn.Parameter)
        and t.layout == torch.strided
        and t.device.type in ("cpu", "cuda")
        and not t.is_quantized
    )


def _tensors(*ts):
    for t in ts:
        if not _is_plain(t):
            raise _Fallthrough


def _binder(fn):
    sig = inspect.signature(fn)

    def bind(args, kwargs):
        try:
            b = sig.bind(*args, **kwargs)
        except TypeError:
            raise _Fallthrough
        b.apply_defaults()
        return b.arguments

    return bind


# Python signatures of the torch calls we route (the torch builtins have none to inspect).
def _sig_unary(input): ...
def _sig_unary_inplace_flag(input, inplace=False): ...
def _sig_nonzero(input, *, out=None, as_tuple=False): ...
def _sig_nonzero_static(input, *, size, fill_value=-1, out=None): ...
def _sig_where(condition, input=None, other=None, *, out=None): ...
def _sig_gelu(input, approximate="none"): ...
def _sig_add(input, other, *, alpha=1, out=None): ...
def _sig_binary(input, other, *, out=None): ...
def _sig_div(input, other, *, rounding_mode=None, out=None): ...
def _sig_addcmul(input, tensor1, tensor2, *, value=1, out=None): ...
def _sig_clamp(input, min=None, max=None, *, out=None): ...


def _no_out(a):
    if a.get("out") is not None:
        raise _Fallthrough


def _h_nonzero(a):
    _no_out(a)
    _tensors(a["input"])
    return _m.nonzero(a["input"], as_tuple=bool(a["as_tuple"]))


def _h_argwhere(a):
    _tensors(a["input"])
    return _m.argwhere(a["input"])


def _h_nonzero_static(a):
    _no_out(a)
    _tensors(a["input"])
    return _m.nonzero_static(a["input"], size=a["size"], fill_value=a["fill_value"])


def _h_where(a):
    _no_out(a)
    c, x, y = a["condition"], a["input"], a["other"]
    if x is None and y is None:
        _tensors(c)
        return _m.where(c)
    _tensors(c)
    x, y = _binary_operand(x), _binary_operand(y)
    if not (isinstance(x, torch.Tensor) or isinstance(y, torch.Tensor)):
        raise _Fallthrough
    return _m.where(c, x, y)


def _unary(fn):
    def h(a):
        _tensors(a["input"])
        return fn(a["input"])

    return h


def _h_gelu(a):
    _tensors(a["input"])
    return _m.gelu(a["input"], approximate=a["approximate"])


def _binary_operand(x):
    if _is_plain(x):
        return x
    if isinstance(x, (int, float, bool)):
        return x
    raise _Fallthrough


def _binary(fn):
    def h(a):
        _no_out(a)
        x, y = a["input"], a["other"]
        x, y = _binary_operand(x), _binary_operand(y)
        if not isinstance(x, torch.Tensor):
            raise _Fallthrough  # number (op) tensor: left to torch
        return fn(x, y) if "alpha" not in a else fn(x, y, alpha=a["alpha"])

    return h


def _h_div(a):
    if a.get("rounding_mode") is not None:
        raise _Fallthrough
    return _binary(_m.div)(a)


def _h_addcmul(a):
    _no_out(a)
    _tensors(a["input"], a["tensor1"], a["tensor2"])
    return _m.addcmul(a["input"], a["tensor1"], a["tensor2"], value=a["value"])


def _h_clamp(a):
    _no_out(a)
    x, lo, hi = a["input"], a["min"], a["max"]
    _tensors(x, lo, hi)  # myops.clamp takes tensor bounds on both sides
    return _m.clamp(x, lo, hi)


def _inplace(handler):
    """In-place form: compute out-of-place with myops, write into `input` when exact."""

    def h(a):
        x = a["input"]
        if not _is_plain(x) or torch.is_grad_enabled() and (x.requires_grad or _any_grad(a)):
            raise _Fallthrough
        r = handler(a)
        if r.dtype != x.dtype or r.shape != x.shape:
            raise _Fallthrough
        return x.copy_(r)

    return h


def _any_grad(a):
    return any(isinstance(v, torch.Tensor) and v.requires_grad for v in a.values())


def _flagged_inplace(handler):
    """F.relu(x, inplace=...) / F.silu(x, inplace=...)."""
    ip = _inplace(handler)

    def h(a):
        return ip(a) if a["inplace"] else handler(a)

    return h


# torch callable -> (myops op name, signature binder, handler)
_ROUTES = {}


def _route(fns, name, sig, handler):
    bind = _binder(sig)
    for fn in fns:
        _ROUTES[fn] = (name, bind, handler)


_route([torch.nonzero, torch.Tensor.nonzero], "nonzero", _sig_nonzero, _h_nonzero)
_route([torch.argwhere, torch.Tensor.argwhere], "argwhere", _sig_unary, _h_argwhere)
_route([torch.nonzero_static, torch.Tensor.nonzero_static], "nonzero_static", _sig_nonzero_static, _h_nonzero_static)
_route([torch.where], "where", _sig_where, _h_where)
_route([torch.relu, torch.Tensor.relu], "relu", _sig_unary, _unary(_m.relu))
_route([torch.relu_, torch.Tensor.relu_], "relu", _sig_unary, _inplace(_unary(_m.relu)))
_route([F.relu], "relu", _sig_unary_inplace_flag, _flagged_inplace(_unary(_m.relu)))
_route([F.gelu], "gelu", _sig_gelu, _h_gelu)
_route([F.silu], "silu", _sig_unary_inplace_flag, _flagged_inplace(_unary(_m.silu)))
_route([torch.sigmoid, torch.Tensor.sigmoid, F.sigmoid], "sigmoid", _sig_unary, _unary(_m.sigmoid))
_route([torch.add, torch.Tensor.add, torch.Tensor.__add__], "add", _sig_add, _binary(_m.add))
_route([torch.Tensor.__radd__], "add", _sig_binary, _binary(_m.add))  # x + y == y + x exactly
_route([torch.Tensor.add_, torch.Tensor.__iadd__], "add", _sig_add, _inplace(_binary(_m.add)))
_route([torch.sub, torch.Tensor.sub, torch.Tensor.__sub__], "sub", _sig_add, _binary(_m.sub))
_route([torch.Tensor.sub_, torch.Tensor.__isub__], "sub", _sig_add, _inplace(_binary(_m.sub)))
_route([torch.mul, torch.Tensor.mul, torch.Tensor.__mul__, torch.Tensor.__rmul__], "mul", _sig_binary, _binary(_m.mul))
_route([torch.Tensor.mul_, torch.Tensor.__imul__], "mul", _sig_binary, _inplace(_binary(_m.mul)))
_route([torch.div, torch.Tensor.div, torch.Tensor.__truediv__], "div", _sig_div, _h_div)
_route([torch.maximum, torch.Tensor.maximum], "maximum", _sig_binary, _binary(_m.maximum))
_route([torch.minimum, torch.Tensor.minimum], "minimum", _sig_binary, _binary(_m.minimum))
_route([torch.addcmul, torch.Tensor.addcmul], "addcmul", _sig_addcmul, _h_addcmul)
_route([torch.clamp, torch.Tensor.clamp], "clamp", _sig_clamp, _h_clamp)

#: The torch callables routed to myops.
ROUTED_OPS = tuple(_ROUTES)


class _ReplaceMode(TorchFunctionMode):
    def __init__(self, stats, only=None):
        super().__init__()
        self.stats = stats
        self.only = set(only) if only else None

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        route = _ROUTES.get(func)
        if route is not None:
            name, bind, handler = route
            if self.only is None or name in self.only:
                try:
                    out = handler(bind(args, kwargs))
                except _Fallthrough:
                    pass
                except (RuntimeError, TypeError, ValueError, NotImplementedError):
                    # the myops op refused this call (unsupported dtype, ...): torch decides,
                    # and raises its own error if the input is bad
                    pass
                else:
                    self.stats.routed[name] += 1
                    return out
                self.stats.fallthrough[name] += 1
        return func(*args, **kwargs)


class replace_torch_ops:
    """Context manager routing the matching torch calls to myops (see the module docstring).

    ``only``: an optional iterable of myops op names (``{"where", "nonzero"}``) to route;
    default: every op in ``ROUTED_OPS``. ``__enter__`` returns a :class:`RouteStats`.
    """

    def __init__(self, only=None):
        self.stats = RouteStats()
        self._mode = _ReplaceMode(self.stats, only)

    def __enter__(self):
        self._mode.__enter__()
        return self.stats

    def __exit__(self, *exc):
        return self._mode.__exit__(*exc)


_global = None


def enable(only=None):
    """Route matching torch calls to myops for the whole process (until :func:`disable`).
    Returns the :class:`RouteStats` of the routing. Calling it twice is a no-op."""
    global _global
    if _global is None:
        _global = replace_torch_ops(only)
        _global.__enter__()
    return _global.stats


def disable():
    """Undo :func:`enable`; returns its :class:`RouteStats` (or None if it was not enabled)."""
    global _global
    if _global is None:
        return None
    g, _global = _global, None
    g.__exit__(None, None, None)
    return g.stats
