"""Property-based parity with torch (hypothesis): random shapes (0-d to 6-D, zero-size dims),
views (permuted, stepped, offset, expanded, overlapping as_strided), every supported dtype,
Python scalars on either side (ints at the int64 / uint64 edges too; a number with a 0-d tensor
as clamp's bounds), special values (nan, +-inf, -0.0, integer extremes; tensors made mostly of
signed zeros, see SIGNED_ZEROS) and empty inputs.

Every case runs the same call through myops and torch and checks: the same exception type when
torch raises; otherwise dtype, shape, strides and values (bit-exact; gelu / silu / sigmoid within
the documented tolerance, see TOL below).

Derandomized, so CI is reproducible: MYOPS_HYPOTHESIS_EXAMPLES sets the per-family
number of cases (default 300); e.g. MYOPS_HYPOTHESIS_EXAMPLES=5000 for a long local run.
"""

import math
import os
import warnings

import pytest
import torch
import torch.nn.functional as F

hypothesis = pytest.importorskip("hypothesis")
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

import myops  # noqa: E402
from helpers import ALL_DTYPES, FLOAT_DTYPES, INT_DTYPES, assert_bits_nan_anywhere, assert_meta, number_max_min  # noqa: E402

EXAMPLES = int(os.environ.get("MYOPS_HYPOTHESIS_EXAMPLES", "300"))
settings.register_profile(
    "myops",
    derandomize=True,
    max_examples=EXAMPLES,
    deadline=None,
    database=None,
    print_blob=True,
    suppress_health_check=list(HealthCheck),
)
CFG = settings.get_profile("myops")

INTS, FLOATS, DTYPES = INT_DTYPES, FLOAT_DTYPES, ALL_DTYPES

# Tolerance of the transcendental ops (torch itself is not correctly rounded there): relative
# to |expected| with an absolute floor for values near zero. float32 gelu (erf form) is within
# 1.5e-6 absolute of torch everywhere but far apart in ulp in its negative tail, where torch's
# own result is up to 1.3e-6 from the exact value (see docs/exactness.md).
TOL = {
    torch.float64: (1e-14, 1e-15),
    torch.float32: (2e-6, 2e-6),
    # 1 ulp of the storage type, or float32's absolute bound: torch and myops compute half /
    # bfloat16 in float, so near zero (gelu's negative tail) the float error decides the rounding
    torch.float16: (2**-10, 2e-6),
    torch.bfloat16: (2**-7, 2e-6),
}


# ---- inputs ---------------------------------------------------------------------------------


def _special(dtype):
    if dtype == torch.bool:
        return [True, False]
    if dtype.is_floating_point:
        fi = torch.finfo(dtype)
        return [math.nan, math.inf, -math.inf, -0.0, 0.0, fi.max, fi.min, fi.tiny, 1.0, -1.0]
    ii = torch.iinfo(dtype)
    return [ii.min, ii.max, 0, -1 if ii.min < 0 else 1, 1]


# "zeros": mostly -0.0 and +0.0 (and a few other values), so that two operands tie between
# signed zeros in many positions: maximum / minimum / clamp break those ties by torch's loop
# structure (which elements its vector loop takes), for every length and layout
SIGNED_ZEROS = [-0.0, 0.0, -0.0, 0.0, -0.0, 0.0, 1.0, -1.0, math.nan]


def _values(shape, dtype, seed, specials):
    g = torch.Generator().manual_seed(seed)
    n = math.prod(shape)
    if specials == "zeros" and dtype.is_floating_point:
        pick = torch.randint(0, len(SIGNED_ZEROS), (n,), generator=g)
        return torch.tensor(SIGNED_ZEROS, dtype=dtype)[pick].reshape(shape)
    if dtype == torch.bool:
        flat = torch.rand(n, generator=g) < 0.5
    elif dtype.is_floating_point:
        flat = (torch.randn(n, generator=g, dtype=torch.float64) * 3).to(dtype)
    else:
        ii = torch.iinfo(dtype)
        flat = torch.randint(max(ii.min, -100), min(ii.max, 100) + 1, (n,), generator=g).to(dtype)
    if specials and n:
        sp = _special(dtype)
        k = torch.randint(0, n, (max(1, n // 4),), generator=g)
        v = torch.randint(0, len(sp), (k.numel(),), generator=g)
        for i, j in zip(k.tolist(), v.tolist()):
            flat[i] = sp[j]
    return flat.reshape(shape)


@st.composite
def shapes(draw, min_dims=0, max_dims=6, max_side=4):
    nd = draw(st.integers(min_dims, max_dims))
    zero_ok = draw(st.integers(0, 4)) == 0  # a zero-size dim in about 20% of the shapes
    return tuple(draw(st.integers(0 if zero_ok else 1, max_side)) for _ in range(nd))


VIEWS = ["contiguous", "permuted", "stepped", "offset", "expanded", "overlapping"]


@st.composite
def tensors(draw, shape, dtype, views=VIEWS, specials=True):
    """A tensor of `shape` and `dtype` laid out as one of `views`; `specials`: True (special values
    or SIGNED_ZEROS in some draws), "zeros" (always SIGNED_ZEROS), False (neither)."""
    view = draw(st.sampled_from(views))
    seed = draw(st.integers(0, 2**31 - 1))
    sp = specials if specials == "zeros" else draw(st.sampled_from([False, True, "zeros"])) if specials else False
    nd = len(shape)
    if view == "permuted" and nd >= 2:
        perm = draw(st.permutations(range(nd)))
        inv = [perm.index(i) for i in range(nd)]
        base = _values(tuple(shape[p] for p in perm), dtype, seed, sp)
        return base.permute(*inv)
    if view == "stepped" and nd >= 1:
        d = draw(st.integers(0, nd - 1))
        big = list(shape)
        big[d] = 2 * shape[d] + 1
        sl = [slice(None)] * nd
        sl[d] = slice(1, None, 2)
        return _values(tuple(big), dtype, seed, sp)[tuple(sl)]
    if view == "offset":
        flat = _values((math.prod(shape) + 1,), dtype, seed, sp)
        return flat[1:].view(shape)
    if view == "expanded" and nd >= 1:
        small = tuple(1 if draw(st.booleans()) else s for s in shape)
        return _values(small, dtype, seed, sp).expand(shape)
    if view == "overlapping" and nd >= 1 and math.prod(shape) > 0:
        strides = tuple(draw(st.integers(0, 2)) for _ in range(nd))
        need = 1 + sum((s - 1) * t for s, t in zip(shape, strides))
        return _values((need,), dtype, seed, sp).as_strided(shape, strides)
    return _values(shape, dtype, seed, sp)


@st.composite
def broadcast_shapes(draw, n):
    """`n` shapes that broadcast together (dims dropped in front or set to 1)."""
    base = draw(shapes(max_dims=5))
    out = []
    for _ in range(n):
        nd = draw(st.integers(0, len(base)))
        s = base[len(base) - nd :]
        out.append(tuple(1 if draw(st.integers(0, 3)) == 0 else d for d in s))
    return out


# Python ints at the int64 / uint64 edges: torch reads [2^63, 2^64) as uint64 and raises
# OverflowError past them
EDGE_INTS = [2**63 - 1, 2**63, 2**64 - 1, -(2**63), 2**64, -(2**63) - 1]


def python_scalars(dtype=None):
    ints = st.one_of(st.integers(-300, 300), st.sampled_from([2**31, -(2**31) - 1] + EDGE_INTS))
    floats = st.one_of(
        st.floats(-1e3, 1e3, allow_nan=False), st.sampled_from([math.nan, math.inf, -math.inf, -0.0, 1e300, 0.3])
    )
    return st.one_of(st.booleans(), ints, floats)


# ---- comparison -----------------------------------------------------------------------------


def _run(fn):
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return fn(), None
    except Exception as e:  # noqa: BLE001  (compared below)
        return None, e


def assert_match(actual, expected, tol=None):
    if isinstance(expected, (tuple, list)):
        assert isinstance(actual, (tuple, list)) and len(actual) == len(expected)
        for a, e in zip(actual, expected):
            assert_match(a, e, tol)
        return
    # size-1 dims' strides are not compared (clamp with number bounds is a unary op in torch, a
    # ternary one with 0-d tensors in myops)
    assert_meta(actual, expected)
    a, e = actual.detach(), expected.detach()
    if not a.dtype.is_floating_point:
        assert torch.equal(a, e), f"values differ: {a} vs {e}"
        return
    if tol is None:
        assert_bits_nan_anywhere(a, e)
        return
    nan = e.isnan()
    assert torch.equal(a.isnan(), nan), "NaN positions differ"
    rtol, atol = tol
    inf = e.isinf()
    assert torch.equal(a[inf], e[inf]), "infinities differ"
    fin = ~nan & ~inf
    a64, e64 = a[fin].double(), e[fin].double()
    bad = (a64 - e64).abs() > atol + rtol * e64.abs()
    assert not bad.any(), f"{int(bad.sum())} elements beyond tolerance: {a64[bad][:4]} vs {e64[bad][:4]}"


def check(fm, ft, tol=None):
    """Runs both calls; the same exception type, or matching results."""
    e_val, e_err = _run(ft)
    a_val, a_err = _run(fm)
    if e_err is not None:
        assert a_err is not None, f"torch raised {type(e_err).__name__}: {e_err}; myops returned"
        assert type(a_err) is type(e_err), (
            f"torch raised {type(e_err).__name__} ({e_err}); myops {type(a_err).__name__} ({a_err})"
        )
        return
    assert a_err is None, f"myops raised {type(a_err).__name__}: {a_err}; torch returned"
    assert_match(a_val, e_val, tol)


# ---- elementwise ----------------------------------------------------------------------------

UNARY = {
    "relu": (myops.relu, torch.relu, False),
    "gelu": (myops.gelu, F.gelu, True),
    "gelu_tanh": (lambda x: myops.gelu(x, approximate="tanh"), lambda x: F.gelu(x, approximate="tanh"), True),
    "silu": (myops.silu, F.silu, True),
    "sigmoid": (myops.sigmoid, torch.sigmoid, True),
}


@CFG
@given(data=st.data(), name=st.sampled_from(sorted(UNARY)), dtype=st.sampled_from(DTYPES), shape=shapes())
def test_unary(data, name, dtype, shape):
    fm, ft, approx = UNARY[name]
    x = data.draw(tensors(shape, dtype))
    rt = dtype if dtype.is_floating_point else torch.get_default_dtype()
    check(lambda: fm(x), lambda: ft(x), TOL[rt] if approx else None)


@CFG
@given(data=st.data(), src=st.sampled_from(DTYPES), dst=st.sampled_from(DTYPES), shape=shapes())
def test_cast(data, src, dst, shape):
    x = data.draw(tensors(shape, src))
    if src.is_floating_point and not dst.is_floating_point and dst != torch.bool:
        # float -> int of nan / inf / out of range is undefined behaviour in C++ (torch's own
        # CPU result varies by path): keep the values representable
        ii = torch.iinfo(dst)
        x = torch.nan_to_num(x, 0.0, 0.0, 0.0).clamp(max(ii.min, -1e4), min(ii.max, 1e4))
    check(lambda: myops.cast(x, dst), lambda: x.to(dst, copy=True))  # cast always copies


@CFG
@given(data=st.data(), dtype=st.sampled_from(DTYPES), shape=shapes(), s=python_scalars())
def test_mul_scalar(data, dtype, shape, s):
    x = data.draw(tensors(shape, dtype))
    check(lambda: myops.mul_scalar(x, s), lambda: torch.mul(x, s))


BINARY = {
    "add": (myops.add, torch.add),
    "sub": (myops.sub, torch.sub),
    "mul": (myops.mul, torch.mul),
    "div": (myops.div, torch.div),
    "maximum": (myops.maximum, torch.maximum),
    "minimum": (myops.minimum, torch.minimum),
}


def _int_overflow(v, dtypes):
    return isinstance(v, int) and not isinstance(v, bool) and any(not d.is_floating_point for d in dtypes)


@CFG
@given(
    data=st.data(),
    name=st.sampled_from(sorted(BINARY)),
    dts=st.tuples(st.sampled_from(DTYPES), st.sampled_from(DTYPES)),
    form=st.sampled_from(["tensors", "scalar_second", "scalar_first"]),
    alpha=st.sampled_from([1, 2, -1, 0.3, -2.5, True, 2**31 - 1] + EDGE_INTS),
)
def test_binary(data, name, dts, form, alpha):
    fm, ft = BINARY[name]
    sa, sb = data.draw(broadcast_shapes(2))
    a = data.draw(tensors(sa, dts[0]))
    b = data.draw(tensors(sb, dts[1]))
    if form != "tensors":
        s = data.draw(python_scalars())
        if name in ("maximum", "minimum"):
            # torch.maximum takes no number: what myops' number form equals is helpers.number_max_min's
            ref = lambda: number_max_min(torch.maximum if name == "maximum" else torch.minimum, a, s)  # noqa: E731
            call = (lambda: fm(a, s)) if form == "scalar_second" else (lambda: fm(s, a))
            check(call, ref)
            return
        if form == "scalar_second":
            a_, b_ = a, s
        else:
            a_, b_ = s, a
    else:
        a_, b_ = a, b
    if name in ("add", "sub") and alpha != 1:
        check(lambda: fm(a_, b_, alpha=alpha), lambda: ft(a_, b_, alpha=alpha))
    elif name == "mul" and not isinstance(a_, torch.Tensor):
        # a number first is taken as `number * tensor` takes it (in float), not as torch.mul's
        # CPU kernel does (the number rounded to a 16-bit tensor's dtype first): docs/exactness.md
        check(lambda: fm(a_, b_), lambda: ft(b_, a_))
    else:
        check(lambda: fm(a_, b_), lambda: ft(a_, b_))


@CFG
@given(
    data=st.data(),
    dts=st.tuples(st.sampled_from(DTYPES), st.sampled_from(DTYPES)),
    cond_dtype=st.sampled_from([torch.bool, torch.bool, torch.uint8]),
    form=st.sampled_from(["tensors", "scalar_self", "scalar_other", "scalars"]),
)
def test_where(data, dts, cond_dtype, form):
    sc, sa, sb = data.draw(broadcast_shapes(3))
    c = data.draw(tensors(sc, cond_dtype))
    a = data.draw(tensors(sa, dts[0])) if form in ("tensors", "scalar_other") else data.draw(python_scalars())
    b = data.draw(tensors(sb, dts[1])) if form in ("tensors", "scalar_self") else data.draw(python_scalars())
    check(lambda: myops.where(c, a, b), lambda: torch.where(c, a, b))


@CFG
@given(
    data=st.data(),
    dts=st.tuples(*[st.sampled_from(DTYPES)] * 3),
    value=st.sampled_from([1, 2, -3, 0.5, 0.3, 2**31 - 1, 1e39] + EDGE_INTS),
)
def test_addcmul(data, dts, value):
    shapes3 = data.draw(broadcast_shapes(3))
    a, b, c = (data.draw(tensors(s, d)) for s, d in zip(shapes3, dts))
    check(lambda: myops.addcmul(a, b, c, value=value), lambda: torch.addcmul(a, b, c, value=value))


@CFG
@given(
    data=st.data(),
    dts=st.tuples(*[st.sampled_from(DTYPES)] * 3),
    form=st.sampled_from(["tensors", "numbers", "min_only", "max_only", "number_and_0d", "0d_and_number"]),
)
def test_clamp(data, dts, form):
    sx, sl, sh = data.draw(broadcast_shapes(3))
    x = data.draw(tensors(sx, dts[0]))
    lo = data.draw(tensors(sl, dts[1]))
    hi = data.draw(tensors(sh, dts[2]))
    if form == "numbers":
        lo, hi = data.draw(python_scalars()), data.draw(python_scalars())
    elif form == "number_and_0d":  # torch's number overload, the 0-d tensor read as a number
        lo, hi = data.draw(python_scalars()), data.draw(tensors((), dts[2]))
    elif form == "0d_and_number":
        lo, hi = data.draw(tensors((), dts[1])), data.draw(python_scalars())
    elif form == "min_only":
        hi = None
    elif form == "max_only":
        lo = None
    check(lambda: myops.clamp(x, lo, hi), lambda: torch.clamp(x, lo, hi))


@CFG
@given(
    data=st.data(),
    name=st.sampled_from(["maximum", "minimum", "clamp"]),
    dtype=st.sampled_from(FLOATS),
    n=st.integers(0, 80),
)
def test_signed_zero_ties(data, name, dtype, n):
    # operands of mostly -0.0 / +0.0 in rows long enough for torch's vector loop, which breaks
    # their ties the other way from its scalar loop (tails, other layouts, broadcast operands)
    forms = [(n,), (3, n), (1, n), (), (1,), (3, 1)]  # broadcast together
    args = [
        data.draw(tensors(data.draw(st.sampled_from(forms)), dtype, specials="zeros"))
        for _ in range(3 if name == "clamp" else 2)
    ]
    check(lambda: getattr(myops, name)(*args), lambda: getattr(torch, name)(*args))


# ---- nonzero family -------------------------------------------------------------------------


@CFG
@given(
    data=st.data(),
    dtype=st.sampled_from(DTYPES + [torch.complex64]),
    shape=shapes(),
    size=st.integers(0, 40),
    fill=st.sampled_from([-7, 0, 2**63 - 1, -(2**63), 2**63, True, 1.5]),
)
def test_nonzero_family(data, dtype, shape, size, fill):
    if dtype == torch.complex64:
        x = torch.complex(data.draw(tensors(shape, torch.float32)), data.draw(tensors(shape, torch.float32)))
    else:
        x = data.draw(tensors(shape, dtype))
    check(lambda: myops.nonzero(x), lambda: torch.nonzero(x))
    check(lambda: myops.argwhere(x), lambda: torch.argwhere(x))
    check(lambda: myops.where(x), lambda: torch.where(x))
    check(lambda: myops.nonzero(x, as_tuple=True), lambda: torch.nonzero(x, as_tuple=True))
    check(
        lambda: myops.nonzero_static(x, size=size, fill_value=fill),
        lambda: torch.nonzero_static(x, size=size, fill_value=fill),
    )


# ---- max_pool2d_add -------------------------------------------------------------------------


@CFG
@given(
    data=st.data(),
    dtype=st.sampled_from(FLOATS),
    other_dtype=st.sampled_from(DTYPES),
    batched=st.booleans(),
    channels_last=st.booleans(),
    k=st.tuples(st.integers(1, 4), st.integers(1, 4)),
    s=st.tuples(st.integers(1, 3), st.integers(1, 3)),
    ceil_mode=st.booleans(),
    hw=st.tuples(st.integers(1, 9), st.integers(1, 9)),
)
def test_max_pool2d_add(data, dtype, other_dtype, batched, channels_last, k, s, ceil_mode, hw):
    p = (data.draw(st.integers(0, k[0] // 2)), data.draw(st.integers(0, k[1] // 2)))
    n = data.draw(st.integers(0, 3))
    shape = ((n,) if batched else ()) + (data.draw(st.integers(1, 4)),) + hw
    x = data.draw(tensors(shape, dtype, views=["contiguous", "permuted", "stepped", "offset", "expanded"]))
    if channels_last and batched:
        x = x.contiguous(memory_format=torch.channels_last)

    def ref():
        y = F.max_pool2d(x, k, s, p, ceil_mode=ceil_mode)
        return y

    pooled, err = _run(ref)
    if err is not None:
        check(lambda: myops.max_pool2d_add(x, torch.zeros(()), k, s, p, ceil_mode), ref)
        return
    # other: broadcastable to the pooled shape (dims dropped in front or set to 1)
    ps = pooled.shape
    nd = data.draw(st.integers(0, len(ps)))
    os_ = tuple(1 if data.draw(st.booleans()) else d for d in ps[len(ps) - nd :])
    other = data.draw(tensors(os_, other_dtype, views=["contiguous", "stepped", "expanded"]))
    check(lambda: myops.max_pool2d_add(x, other, k, s, p, ceil_mode), lambda: pooled + other)
    if dtype in (torch.float32, torch.float64) and x.numel():
        xr = x.detach().clone().requires_grad_()
        xt = x.detach().clone().requires_grad_()
        g = torch.randn(ps, dtype=torch.float64).to(torch.result_type(pooled, other))
        gm = torch.autograd.grad(myops.max_pool2d_add(xr, other, k, s, p, ceil_mode), xr, g)[0]
        gt = torch.autograd.grad(F.max_pool2d(xt, k, s, p, ceil_mode=ceil_mode) + other, xt, g)[0]
        assert_match(gm, gt)


# ---- diagonal -------------------------------------------------------------------------------


@CFG
@given(
    data=st.data(),
    dtype=st.sampled_from(DTYPES),
    shape=shapes(),
    offset=st.integers(-5, 5),
    dims=st.tuples(st.integers(-7, 6), st.integers(-7, 6)),
)
def test_diagonal(data, dtype, shape, offset, dims):
    x = data.draw(tensors(shape, dtype))
    check(lambda: myops.diagonal(x, offset, *dims), lambda: torch.diagonal(x, offset, *dims).contiguous())
