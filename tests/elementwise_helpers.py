"""The elementwise family's shared test cases: comparison with torch to the bit or the ulp, random
inputs with NaN and infinities, and the op tables (myops op, torch op, dtypes, exact) that the
test_elementwise*.py files walk."""

import torch
import torch.nn.functional as F

import myops
from myops._table import EW_OPS
from helpers import ALL_DTYPES, FLOAT_DTYPES, assert_bits_nan_anywhere, rand

ops = torch.ops.myops


# ---- comparison helpers -------------------------------------------------------------------------


def _ordered(t):
    """Floats mapped to integers that are consecutive for consecutive floats (ulp distance)."""
    itype = {2: torch.int16, 4: torch.int32, 8: torch.int64}[t.element_size()]
    i = t.contiguous().view(itype).to(torch.int64)
    mask = (1 << (8 * t.element_size() - 1)) - 1
    return torch.where(i < 0, -(i & mask), i)


def check_meta(actual, expected):
    assert actual.dtype == expected.dtype, f"dtype {actual.dtype} != {expected.dtype}"
    assert actual.shape == expected.shape, f"shape {tuple(actual.shape)} != {tuple(expected.shape)}"
    assert actual.device == expected.device
    if actual.numel() > 1:
        assert actual.stride() == expected.stride(), f"stride {actual.stride()} != {expected.stride()}"


def assert_exact(actual, expected):
    """Bit-identical values (signed zeros included); NaN where PyTorch has NaN (PyTorch's own
    CPU kernels give NaNs of different payloads in their vector and scalar paths)."""
    check_meta(actual, expected)
    a, e = actual.detach().cpu(), expected.detach().cpu()
    if not a.dtype.is_floating_point:
        assert torch.equal(a, e), f"max diff {(a.double() - e.double()).abs().max()}"
        return
    assert_bits_nan_anywhere(a, e)


def assert_ulp(actual, expected, ulps=None, atol=0.0):
    """Within `ulps` units in the last place (default: 4 for float32/64, 1 for half/bfloat16)
    or, where `atol` > 0, within atol * max(1, |expected|); NaN and infinities exactly where
    PyTorch has them."""
    check_meta(actual, expected)
    a, e = actual.detach().cpu(), expected.detach().cpu()
    if not a.dtype.is_floating_point:
        assert torch.equal(a, e)
        return
    if ulps is None:
        ulps = 1 if a.dtype in (torch.float16, torch.bfloat16) else 4
    nan = e.isnan()
    assert torch.equal(a.isnan(), nan), "NaN positions differ"
    d = (_ordered(a) - _ordered(e)).abs()
    ok = (d <= ulps) | nan
    if atol:
        ok |= (a.double() - e.double()).abs() <= atol * e.double().abs().clamp(min=1)
    assert ok.all(), f"max {int(d[~ok].max())} ulp (allowed {ulps}), e.g. {a[~ok][:4]} vs {e[~ok][:4]}"


def sample(shape, dtype, device, special=True, low=-10, high=10):
    """Random values; float tensors with >= 8 elements get NaN, +inf and -inf at random places."""
    x = rand(shape, dtype, device, low=low, high=high)
    if special and dtype.is_floating_point and x.numel() >= 8:
        flat = x.view(-1)
        idx = torch.randperm(x.numel(), device=device)[:3]
        flat[idx] = torch.tensor([float("nan"), float("inf"), -float("inf")], dtype=dtype, device=device)
    return x


def in_float(ref):
    """PyTorch's result computed on float32 copies of half/bfloat16 operands, rounded back.
    For add with alpha: PyTorch's CPU vector path computes fma(alpha, b, a) in float, but its
    scalar tail multiplies alpha * b in half first; myops always does the former."""

    def fn(*args):
        out = ref(*args)
        if out.dtype not in (torch.float16, torch.bfloat16):
            return out
        # cast to the result dtype (as PyTorch does first), then compute in float
        up = [
            a.to(out.dtype).float()
            if isinstance(a, torch.Tensor)
            else torch.tensor(a, dtype=out.dtype).item()
            if isinstance(a, float)
            else a
            for a in args
        ]
        return ref(*up).to(out.dtype)

    return fn


def gelu_ref(approximate):
    def fn(x):
        # torch's own result, edges included: on the CPU, where it runs oneDNN, NaN at +inf (and
        # inf from 2^127 on); myops follows (helpers.check_gelu_edges)
        return F.gelu(x, approximate=approximate)

    return fn


# ---- op tables ------------------------------------------------------------------------------------


def aten_ref(op):
    """torch's own op for a row of the op table (the aten overload the drop-in stands in for,
    else the aten op of the same name)."""
    name, _, overload = (op.aten or op.name).partition(".")
    return getattr(getattr(torch.ops.aten, name), overload or "default")


# The op table's plain ops (myops._table: csrc/include/myops/op_table.h): the myops op, torch's,
# the dtypes the op takes, and whether it is exact (the drop-in routes exactly the exact ones by
# default); the other forms follow by hand.
TABLE_UNARY = {
    op.fn: (getattr(myops, op.fn), aten_ref(op), list(op.accepted), op.dropin_default)
    for op in EW_OPS.values()
    if op.sig == "unary"
}

UNARY = {
    # name: (myops, torch, dtypes, exact)
    **TABLE_UNARY,
    "gelu": (myops.gelu, gelu_ref("none"), FLOAT_DTYPES, False),
    "gelu_tanh": (lambda x: myops.gelu(x, "tanh"), gelu_ref("tanh"), FLOAT_DTYPES, False),
    # pow.Scalar: torch special-cases some exponents (2, 3, -1, -2, 0.5), computing x * x, 1 / x,
    # ...: within 1 ulp (2 in bfloat16 for 0.3), measured
    "pow_scalar": (lambda x: myops.pow(x, 2.5), lambda x: torch.pow(x, 2.5), FLOAT_DTYPES, False),
    "pow_scalar_3": (lambda x: myops.pow(x, 3), lambda x: torch.pow(x, 3), FLOAT_DTYPES, False),
    "mul_scalar": (lambda x: myops.mul_scalar(x, 3), lambda x: torch.mul(x, 3), ALL_DTYPES, True),
    "mul_scalar_float": (lambda x: myops.mul_scalar(x, -1.75), lambda x: torch.mul(x, -1.75), ALL_DTYPES, True),
}

# the table's generic binary ops (SIG binary, no code of their own) likewise; the rows below
# override or add
TABLE_BINARY = {
    op.fn: (getattr(myops, op.fn), aten_ref(op), list(op.accepted), op.dropin_default)
    for op in EW_OPS.values()
    if op.sig == "binary" and op.entry == "generic"
}

BINARY = {
    **TABLE_BINARY,
    "add": (myops.add, torch.add, ALL_DTYPES, True),
    "add_alpha": (
        lambda a, b: myops.add(a, b, alpha=3),
        lambda a, b: torch.add(a, b, alpha=3),
        ALL_DTYPES[1:],
        # float16 / bfloat16 are bit-exact (test_elementwise_binary.py); float32 within an ulp:
        # PyTorch's own float32 loops fuse a + 3 * b in some loops and not in others
        False,
    ),
    "sub": (myops.sub, torch.sub, ALL_DTYPES[1:], True),
    "mul": (myops.mul, torch.mul, ALL_DTYPES, True),
    "div": (myops.div, torch.div, ALL_DTYPES, False),
    "maximum": (myops.maximum, torch.maximum, ALL_DTYPES, True),
    "minimum": (myops.minimum, torch.minimum, ALL_DTYPES, True),
}

TERNARY = {
    "where": (lambda c, a, b: ops.where(c, a, b), torch.where, ALL_DTYPES, True),
    "addcmul": (
        lambda a, b, c: myops.addcmul(a, b, c, value=2),
        lambda a, b, c: torch.addcmul(a, b, c, value=2),
        ALL_DTYPES[1:],
        False,
    ),
    "clamp": (myops.clamp, torch.clamp, ALL_DTYPES[1:], True),
}


def compare(exact, actual, expected):
    if exact:
        assert_exact(actual, expected)
    elif actual.device.type == "cpu":
        # PyTorch's CPU vector kernels evaluate erf / tanh / exp with their own polynomial
        # approximations (about 1e-7 absolute error): accept a few float32 eps besides the ulps
        assert_ulp(actual, expected, atol=3e-6)
    else:
        assert_ulp(actual, expected)


def ternary_inputs(name, shapes, dtype, device):
    if name == "where":
        c = rand(shapes[0], torch.bool, device)
        return c, sample(shapes[1], dtype, device), sample(shapes[2], dtype, device)
    if name == "clamp":
        x = sample(shapes[0], dtype, device)
        lo = sample(shapes[1], dtype, device, special=False, low=-8, high=0)
        hi = sample(shapes[2], dtype, device, special=False, low=0, high=8)
        if dtype.is_floating_point:
            lo = lo.abs().neg() - 0.5
            hi = hi.abs() + 0.5
        return x, lo, hi
    return tuple(sample(s, dtype, device) for s in shapes)


SIZES = [(), (0,), (1,), (7,), (4097,), (2**20 + 3,)]
# a batch of images, the sizes the broadcast cases combine
N, C, H, W = 2, 3, 5, 8
