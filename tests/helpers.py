"""Shared test helpers: devices, dtypes, input layouts and exact comparison."""

import math

import pytest
import torch

from myops._table import DTYPES

HAS_CUDA = torch.cuda.is_available()

# The one rule for "this test runs on a CUDA device": the `cuda` marker (skipped without a
# device). gpu/gpu_session.sh selects exactly these tests with `-m cuda`, so a new test
# file that uses DEVICES or cuda_only is in the GPU session without being listed anywhere.
CUDA_MARKS = [pytest.mark.cuda, pytest.mark.skipif(not HAS_CUDA, reason="no CUDA device visible")]

# Every test parametrized over DEVICES runs on CPU and, when a GPU is visible, on CUDA.
DEVICES = ["cpu", pytest.param("cuda", marks=CUDA_MARKS)]


def cuda_only(test):
    """A test that runs on a CUDA device only."""
    for mark in CUDA_MARKS:
        test = mark(test)
    return test


# A test that captures a CUDA graph: the GPU session's sanitizer stage runs these apart, with
# the caching allocator on (the no-caching allocator's cudaFree is forbidden inside a capture).
cuda_graph = pytest.mark.cuda_graph

# The dtypes myops supports, as the library states them (csrc/core/dtypes.h, myops._table):
# bool first, then the integers, then the floating types.
ALL_DTYPES = list(DTYPES["All"])
FLOAT_DTYPES = list(DTYPES["Float"])
INT_DTYPES = [d for d in ALL_DTYPES if d != torch.bool and d not in FLOAT_DTYPES]

LAYOUTS = ["contiguous", "transposed", "sliced", "expanded", "misaligned", "channels_last"]


def rand(shape, dtype, device, low=-10, high=10):
    """Random values of any dtype (never all zeros or ones)."""
    if dtype == torch.bool:
        return torch.rand(shape, device=device) < 0.5
    if dtype.is_floating_point or dtype.is_complex:
        return (torch.randn(shape, device=device, dtype=torch.float64) * 4).to(dtype)
    info = torch.iinfo(dtype)
    return torch.randint(max(low, info.min), min(high, info.max) + 1, shape, device=device, dtype=dtype)


def with_layout(x, layout):
    """Returns a tensor with the values of `x` (same shape) in the requested memory layout.
    Layouts that make no sense for x (channels_last of a non-4-D tensor, transposing < 2 dims)
    return a contiguous copy."""
    if layout == "contiguous":
        return x.contiguous()
    if layout == "transposed" and x.dim() >= 2:
        return x.transpose(0, -1).contiguous().transpose(0, -1)
    if layout == "sliced" and x.dim() >= 1:
        # every other element of a twice-as-large buffer, with a storage offset
        big = torch.empty((x.shape[0] * 2 + 1,) + x.shape[1:], dtype=x.dtype, device=x.device)
        view = big[1::2]
        view.copy_(x)
        return view
    if layout == "misaligned":
        flat = torch.empty(x.numel() + 1, dtype=x.dtype, device=x.device)
        view = flat[1:].view(x.shape)
        view.copy_(x)
        return view
    if layout == "channels_last" and x.dim() == 4:
        return x.contiguous(memory_format=torch.channels_last)
    if layout == "expanded" and x.dim() >= 1 and x.shape[0] > 0:
        # broadcast the first slice along dim 0 (values change accordingly: callers compare
        # against torch on the same tensor)
        return x[:1].expand(x.shape)
    return x.contiguous()


def assert_meta(actual, expected, strides=None):
    """Same dtype and shape, and the same strides (`strides`, default expected's) on every dim
    longer than 1: a size-1 dim never addresses memory, and torch's stride there depends on
    which overload or layout rule ran."""
    assert actual.dtype == expected.dtype, f"dtype {actual.dtype} != {expected.dtype}"
    assert actual.shape == expected.shape, f"shape {tuple(actual.shape)} != {tuple(expected.shape)}"
    strides = expected.stride() if strides is None else strides
    if actual.numel() > 1:
        sa = [st for st, n in zip(actual.stride(), actual.shape) if n != 1]
        se = [st for st, n in zip(strides, actual.shape) if n != 1]
        assert sa == se, f"stride {actual.stride()} != {tuple(strides)}"


def assert_bits_nan_anywhere(actual, expected):
    """Floating-point values bit for bit (signed zeros included), except NaN: NaN exactly where
    `expected` has NaN, with any sign and payload (torch's own kernels differ on those)."""
    a, e = actual.detach().cpu(), expected.detach().cpu()
    nan = e.isnan()
    assert torch.equal(a.isnan(), nan), "NaN positions differ"
    itype = {2: torch.int16, 4: torch.int32, 8: torch.int64}[a.element_size()]
    bad = (a.contiguous().view(itype) != e.contiguous().view(itype)) & ~nan
    assert not bad.any(), f"{int(bad.sum())} of {a.numel()} elements differ, e.g. {a[bad][:5]} vs {e[bad][:5]}"


def assert_same(actual, expected, check_stride=True, bitwise=True):
    """Exact comparison: dtype, shape, (strides), and every element, NaNs included; with
    `bitwise`, floating-point bit patterns too (-0.0 vs +0.0, NaN payloads)."""
    assert actual.dtype == expected.dtype, f"dtype {actual.dtype} != {expected.dtype}"
    assert actual.shape == expected.shape, f"shape {tuple(actual.shape)} != {tuple(expected.shape)}"
    assert actual.device == expected.device, f"device {actual.device} != {expected.device}"
    if check_stride and actual.numel() > 1:
        assert actual.stride() == expected.stride(), f"stride {actual.stride()} != {expected.stride()}"
    torch.testing.assert_close(actual, expected, rtol=0, atol=0, equal_nan=True)
    if bitwise and actual.dtype.is_floating_point and actual.numel():
        # also distinguish -0.0 from +0.0 and NaN payloads
        a = actual.detach().cpu().contiguous()
        e = expected.detach().cpu().contiguous()
        itype = {2: torch.int16, 4: torch.int32, 8: torch.int64}[a.element_size()]
        assert torch.equal(a.view(itype), e.view(itype)), "bit patterns differ"


def signed_zeros(shape, dtype):
    """-0.0 and +0.0 at random: two such operands tie (compare equal) everywhere."""
    z = torch.zeros(shape, dtype=dtype)
    return torch.where(torch.rand(shape) < 0.5, z, -z)


def signed_zero_tie_cases(dtype, lengths=range(81)):
    """Arguments for maximum / minimum (pairs) and clamp (triples) made of random signed zeros,
    for every length in `lengths` and the layouts that decide which elements torch's CPU loop
    vectorizes: contiguous, stepped, offset, a 0-d or one-element operand on either side (one
    stride-0 operand still vectorizes; two do not), 2-D rows, transposed. Returns (pairs,
    triples), each a list of (label, args)."""
    pairs, triples = [], []
    for n in lengths:
        a, b, c = (signed_zeros((n,), dtype) for _ in range(3))
        big = signed_zeros((2 * n + 1,), dtype)
        s0, s1 = signed_zeros((), dtype), signed_zeros((1,), dtype)
        m, col = signed_zeros((3, n), dtype), signed_zeros((3, 1), dtype)
        mt = signed_zeros((n, 3), dtype).t()
        pairs += [
            (f"n={n} {k}", v)
            for k, v in {
                "contiguous": (a, b),
                "stepped": (big[1::2], b),
                "offset": (big[1 : n + 1], b),
                "0-d second": (a, s0),
                "0-d first": (s0, a),
                "[1] second": (a, s1),
                "[1] first": (s1, a),
                "expanded": (s1.expand(n), a),
                "rows": (m, b),
                "rows, column": (m, col),
                "transposed": (mt, m),
            }.items()
        ]
        triples += [
            (f"n={n} {k}", v)
            for k, v in {
                "contiguous": (a, b, c),
                "0-d min": (a, s0, c),
                "0-d max": (a, b, s0),
                "0-d bounds": (a, s0, s1),
                "0-d self": (s0, a, b),
                "stepped": (big[1::2], b, c),
                "rows": (m, b, col),
            }.items()
        ]
    return pairs, triples


def check_signed_zero_ties(dtype):
    """myops' maximum / minimum / clamp equal torch's bit for bit on signed_zero_tie_cases,
    called directly and through the drop-in (torch's own call, routed)."""
    import myops

    pairs, triples = signed_zero_tie_cases(dtype)
    calls = [
        (name, fn, ref, label, args)
        for name, fn, ref in (("maximum", myops.maximum, torch.maximum), ("minimum", myops.minimum, torch.minimum))
        for label, args in pairs
    ]
    calls += [("clamp", myops.clamp, torch.clamp, label, args) for label, args in triples]
    for name, fn, ref, label, args in calls:
        want = ref(*args)
        with myops.enable() as routed:
            dropin = ref(*args)
        for how, got in (("direct", fn(*args)), ("drop-in", dropin)):
            try:
                assert_same(got, want)
            except AssertionError as e:
                raise AssertionError(f"{name} {label}, {how}: {e}") from None
    assert routed.routed, "the drop-in routed nothing"


def outcome(fn):
    """(result, None) or (None, the exception) of fn()."""
    try:
        return fn(), None
    except Exception as e:  # noqa: BLE001  (the caller compares it)
        return None, e


def same_error(fn_myops, fn_torch, match=None):
    """Both calls raise, with the same exception type (myops' message may be its own)."""
    with pytest.raises(Exception) as et:
        fn_torch()
    with pytest.raises(et.type, match=match):
        fn_myops()


def assert_like_torch(fn_myops, fn_torch, check_stride=True):
    """Both calls raise exceptions of exactly the same type (NotImplementedError is not
    RuntimeError), or both return and the results are the same (assert_same)."""
    expected, e_err = outcome(fn_torch)
    actual, a_err = outcome(fn_myops)
    if e_err is not None:
        assert a_err is not None, f"torch raised {type(e_err).__name__} ({e_err}); myops returned {actual}"
        assert type(a_err) is type(e_err), (
            f"torch raised {type(e_err).__name__} ({e_err}); myops {type(a_err).__name__} ({a_err})"
        )
        return
    assert a_err is None, f"myops raised {type(a_err).__name__} ({a_err}); torch returned {expected}"
    assert_same(actual, expected, check_stride=check_stride)


def add_alpha_scalar_tail_cases(dtype, lengths=range(81)):
    """(label, args) for add / sub with alpha on every length in `lengths`, in the layouts that
    decide which elements torch's CPU add fuses: a stride-0 second operand (0-d, [1], a Python
    number, a broadcast column of 2-D rows) unfuses part of a row's scalar tail; a stride-0 first
    operand, stepped rows and contiguous operands do not."""
    cases = []
    for n in lengths:
        a, b = torch.randn(n, dtype=dtype), torch.randn(n, dtype=dtype)
        s0, s1 = torch.randn((), dtype=dtype), torch.randn(1, dtype=dtype)
        m, col = torch.randn(3, n, dtype=dtype), torch.randn(3, 1, dtype=dtype)
        big = torch.randn(2 * n + 1, dtype=dtype)
        cases += [
            (f"n={n} {k}", v)
            for k, v in {
                "0-d second": (a, s0),
                "[1] second": (a, s1),
                "number second": (a, 0.7310585786),
                "0-d first": (s0, a),
                "[1] first": (s1, a),
                "contiguous": (a, b),
                "stepped, 0-d": (big[1::2], s0),
                "offset, 0-d": (big[1 : n + 1], s0),
                "rows, column": (m, col),
                "rows, 0-d": (m, s0),
                "rows, row": (m, b),
            }.items()
        ]
    n = 70001  # more than one parallel piece: a piece's rows end where torch's do
    cases.append((f"n={n} 0-d second", (torch.randn(n, dtype=dtype), torch.randn((), dtype=dtype))))
    return cases


def check_add_alpha_scalar_tail(dtype):
    """myops' add / sub with alpha equal torch's bit for bit on add_alpha_scalar_tail_cases (the
    drop-in leaves floating add / sub with alpha to torch)."""
    import myops

    calls = [
        (name, fn, ref, alpha, label, args)
        for name, fn, ref in (("add", myops.add, torch.add), ("sub", myops.sub, torch.sub))
        for alpha in (3.7, -1.3)
        for label, args in add_alpha_scalar_tail_cases(dtype)
    ]
    for name, fn, ref, alpha, label, args in calls:
        want = ref(*args, alpha=alpha)
        try:
            assert_same(fn(*args, alpha=alpha), want)
        except AssertionError as e:
            raise AssertionError(f"{name} alpha={alpha} {label}: {e}") from None


def gelu_edge_values(dtype):
    """The inputs at which torch's CPU gelu paths differ in kind (docs/exactness.md): ±inf,
    NaN, and for float32 / bfloat16 2^127 and above, beside ordinary values."""
    fi = torch.finfo(dtype)
    v = [math.inf, -math.inf, math.nan, -math.nan, fi.max, -fi.max, 0.0, -0.0, 1e4, -1e4, 3.0, -3.0]
    if fi.max >= 2.0**127:
        v += [2.0**127, 2.0**127 * (1 - 2**-8), -(2.0**127)]
    return torch.tensor(v, dtype=torch.float64).to(dtype)


def check_gelu_edges(dtype):
    """myops.gelu against torch's CPU gelu (both forms) on gelu_edge_values spread over random
    values, for every length 0..80 and the layouts that decide torch's path (contiguous with
    more than one element: oneDNN for the erf form; one element, stepped, transposed: its own
    kernel), with oneDNN on and off: bit for bit at the edge values, within the suite's
    tolerance elsewhere, NaN where torch has NaN."""
    import myops

    edges = gelu_edge_values(dtype)
    tol = {
        torch.float32: (1e-5, 3e-6),
        torch.float64: (1e-12, 1e-14),
        torch.float16: (2**-10, 2e-6),
        torch.bfloat16: (2**-7, 2e-6),
    }[dtype]
    for n in range(81):
        x = (torch.randn(n, dtype=torch.float64) * 8).to(dtype)
        x[torch.randperm(n)[: min(n, len(edges))]] = edges[torch.randperm(len(edges))[: min(n, len(edges))]]
        big = torch.empty(2 * n, dtype=dtype)
        big[1::2] = x
        m = torch.empty(3, n, dtype=dtype).t()
        m[:, 1] = x
        for label, t in (
            ("contiguous", x),
            ("stepped", big[1::2]),
            ("column of transposed", m[:, 1]),
            ("[n, 1]", x[:, None]),
            ("offset", torch.cat([x[:1], x])[1:]),
        ):
            for approximate in ("none", "tanh"):
                for onednn in (True, False):
                    with torch.backends.mkldnn.flags(enabled=onednn):
                        want = torch.nn.functional.gelu(t, approximate=approximate)
                        got = myops.gelu(t, approximate=approximate)
                        # whether torch ran oneDNN here: its gelu(+inf) is NaN, in t's strides
                        probe = torch.empty_strided(t.shape, t.stride(), dtype=dtype).fill_(math.inf)
                        onednn_ran = bool(torch.nn.functional.gelu(probe, approximate=approximate).isnan().any())
                    where = f"gelu({approximate}) {dtype} n={n} {label} oneDNN {'on' if onednn else 'off'}"
                    # bits compared at ±inf, and from 2^127 on where oneDNN ran (its results, NaN
                    # of either sign included); the kernel's where they are numbers (its NaN's
                    # bits, and a NaN input's, are not promised: docs/exactness.md)
                    edge = (t.isinf() & (~want.isnan() | onednn_ran)) | ((t.abs() >= 2.0**127) & onednn_ran)
                    assert torch.equal(got.isnan(), want.isnan()), f"{where}: NaN positions differ"
                    try:
                        assert_same(got[edge], want[edge], check_stride=False)
                    except AssertionError as e:
                        raise AssertionError(
                            f"{where}: {e} at {t[edge].tolist()}: {got[edge].tolist()} vs {want[edge].tolist()}"
                        ) from None
                    ok = ~edge & ~want.isnan()
                    torch.testing.assert_close(
                        got[ok], want[ok], rtol=tol[0], atol=tol[1], msg=lambda s: f"{where}: {s}"
                    )


# ---- a Python number first, and the gradients' edge rules (issue #47) --------------------------

# numbers at the edges torch converts them at: beside float16 / bfloat16 tensors a number first
# must not be rounded to the storage type (-1.2748 * bf16 -104 is 133, not 132), ints past int64
# (uint64 to c10) and past uint64 (torch: OverflowError)
EDGE_NUMBERS = [
    -1.2747972618057282,
    0.1,
    1 / 3,
    -2.7,
    289,
    65519,
    1e5,
    3.0e38,
    1e39,
    -(2**63),
    2**63 - 1,
    2**63,
    2**64 - 1,
    2**64,
    -(2**64),
    -(2**63) + 1,
    0,
    -0.0,
    math.inf,
    math.nan,
    True,
    False,
]


def number_max_min(fn, x, s):
    """What myops.maximum / minimum (fn) of a tensor x and a number s equal: torch.clamp(x, min /
    max=s); a bool s beside a bool x (clamp has no bool result) as a 0-d bool tensor (#56)."""
    if isinstance(s, bool) and x.dtype == torch.bool:
        return fn(x, torch.tensor(s, device=x.device))
    return torch.clamp(x, **{("min" if fn is torch.maximum else "max"): s})


def number_first_calls(s, c):
    """(label, myops call, torch call), each a function of the tensor x, for every form that
    takes a Python number s first, directly and through torch.ops.myops (c: where's condition).
    The torch forms: Python's operators where they are the op (`s * x` is tensor.__rmul__: torch
    takes the number in the opmath type; `s + x`, `s - x` are torch.add / torch.sub); torch.div
    (Python's `s / x` is reciprocal(x) * s, another computation); maximum / minimum with a number
    are clamp's."""
    import myops

    ops = torch.ops.myops
    return [
        ("mul", lambda x: myops.mul(s, x), lambda x: s * x),
        ("ops.mul.ScalarSelf", lambda x: ops.mul.ScalarSelf(s, x), lambda x: s * x),
        ("add", lambda x: myops.add(s, x), lambda x: s + x),
        ("add alpha", lambda x: myops.add(s, x, alpha=-2.5), lambda x: torch.add(s, x, alpha=-2.5)),
        ("ops.add.ScalarSelf", lambda x: ops.add.ScalarSelf(s, x, alpha=3), lambda x: torch.add(s, x, alpha=3)),
        ("sub", lambda x: myops.sub(s, x), lambda x: s - x),
        ("sub alpha", lambda x: myops.sub(s, x, alpha=0.3), lambda x: torch.sub(s, x, alpha=0.3)),
        ("ops.sub.ScalarSelf", lambda x: ops.sub.ScalarSelf(s, x, alpha=-2), lambda x: torch.sub(s, x, alpha=-2)),
        ("div", lambda x: myops.div(s, x), lambda x: torch.div(s, x)),
        ("ops.div.ScalarSelf", lambda x: ops.div.ScalarSelf(s, x), lambda x: torch.div(s, x)),
        ("where", lambda x: myops.where(c, s, x), lambda x: torch.where(c, s, x)),
        ("ops.where.ScalarSelf", lambda x: ops.where.ScalarSelf(c, s, x), lambda x: torch.where(c, s, x)),
        ("maximum", lambda x: myops.maximum(s, x), lambda x: number_max_min(torch.maximum, x, s)),
        ("minimum", lambda x: myops.minimum(s, x), lambda x: number_max_min(torch.minimum, x, s)),
    ]


def check_like_torch_with_grad(label, fm, ft, x, g=None):
    """fm(x) and ft(x), x requiring a gradient where its dtype can: the same exception type (in
    the forward or the backward), or the same result (assert_same) and the same gradient of x
    for the incoming gradient g (default: random, of the result's shape and dtype)."""

    def leaf():
        return x.detach().clone().requires_grad_(x.dtype.is_floating_point)

    try:
        assert_like_torch(lambda: fm(leaf()), lambda: ft(leaf()))
    except AssertionError as e:
        raise AssertionError(f"{label}: {e}") from None
    t = leaf()
    out, err = outcome(lambda: ft(t))
    if err is not None or not out.requires_grad:
        return
    if g is None:
        g = torch.randn(out.shape, generator=torch.Generator().manual_seed(out.numel())).to(out.dtype)
    want, e_err = outcome(lambda: torch.autograd.grad(out, t, g)[0])
    t = leaf()
    got, a_err = outcome(lambda: torch.autograd.grad(fm(t), t, g)[0])
    if e_err is not None:
        assert a_err is not None and type(a_err) is type(e_err), (
            f"{label}: torch's backward raised {type(e_err).__name__} ({e_err}); myops': {a_err!r}"
        )
        return
    assert a_err is None, f"{label}: myops' backward raised {a_err!r}"
    try:
        # NaN with any payload where torch has NaN: torch's formulas run its vector and scalar
        # loops, whose NaN payloads differ
        assert_same(got, want, bitwise=False)
        assert_bits_nan_anywhere(got, want)
    except AssertionError as e:
        raise AssertionError(f"{label}, gradient: {e}") from None


def number_first_tensors(dtype, device="cpu", seed=47):
    """A 0-d tensor, a vector past one vector length (-104, ±0, inf, NaN first), a transposed
    matrix: the tensors the number-first checks put beside a number."""
    g = torch.Generator().manual_seed(seed)
    v = (torch.randn(70, generator=g, dtype=torch.float64) * 100).to(dtype)
    if dtype.is_floating_point:
        v[:5] = torch.tensor([-104.0, 0.0, -0.0, math.inf, math.nan], dtype=torch.float64).to(dtype)
    m = (torch.randn(5, 7, generator=g, dtype=torch.float64) * 100).to(dtype).t()
    return [t.to(device) for t in (v[0].clone(), v, m)]


def check_number_first(dtype, numbers=EDGE_NUMBERS, device="cpu"):
    """Every number-first form (number_first_calls) on `numbers` beside tensors of `dtype`
    (number_first_tensors): values, dtype, shape, strides, gradients and exception types as
    torch's."""
    for x in number_first_tensors(dtype, device):
        c = torch.arange(x.numel(), device=device).view(x.shape) % 3 == 0
        for s in numbers:
            for label, fm, ft in number_first_calls(s, c):
                if "sub" in label and (dtype == torch.bool or isinstance(s, bool)):
                    continue
                check_like_torch_with_grad(f"{label}({s!r}, {dtype} {tuple(x.shape)})", fm, ft, x)


ALPHAS = [0, 0.0, -0.0, False, True, 1, 1.0, -1, 2, 0.5, -(2**63), 2**63, 2**64 - 1, math.inf, math.nan]


def check_gradient_edges(dtype):
    """Gradients at torch's edges, for a float `dtype`:
    - add / sub with alpha (ALPHAS): torch's maybe_multiply(±grad, alpha) (an int alpha of 0
      gives sub's other -0; an int alpha past int64 raises in the backward), with a number first,
      a broadcast one-element first operand, tensors on both sides, a number second;
    - clamp with bounds of three dtypes (bool / dtype / float32 self, float32 min, dtype max) and
      maximum / minimum, in layouts where the where's layout and the losers' differ: a broadcast
      operand's gradient is summed in torch's order."""
    import myops

    gen = torch.Generator().manual_seed(4747)
    x = (torch.randn(3, 7, generator=gen) * 4).round().to(dtype)
    one = torch.tensor([2.0], dtype=dtype)
    for alpha in ALPHAS:
        for name, fm, ft in (("add", myops.add, torch.add), ("sub", myops.sub, torch.sub)):
            for label, m, t, arg in (
                ("number first", lambda a: fm(1.5, a, alpha=alpha), lambda a: ft(1.5, a, alpha=alpha), x),
                ("one-element first, other", lambda a: fm(one, a, alpha=alpha), lambda a: ft(one, a, alpha=alpha), x),
                ("one-element first, self", lambda a: fm(a, x, alpha=alpha), lambda a: ft(a, x, alpha=alpha), one),
                ("tensors, other", lambda a: fm(x.t().t(), a, alpha=alpha), lambda a: ft(x.t().t(), a, alpha=alpha), x),
                ("number second", lambda a: fm(a, 1.5, alpha=alpha), lambda a: ft(a, 1.5, alpha=alpha), x),
            ):
                check_like_torch_with_grad(f"{name} alpha={alpha!r} {label} {dtype}", m, t, arg)
    # clamp / maximum / minimum: ties (the bounds take values of self), broadcast and transposed
    vals = torch.tensor([0.0, 1.0, -0.5, 0.5, 2.0, -1.0])

    def pick(*shape, dt, t=False):
        v = vals[torch.randint(0, 6, shape, generator=gen)]
        v = torch.where(torch.rand(shape, generator=gen) < 0.5, v, torch.randn(shape, generator=gen))
        v = v.to(dt)
        return v.transpose(-1, -2).contiguous().transpose(-1, -2) if t else v

    for self_dt in (torch.bool, dtype, torch.float32):
        for s_shape, lo_shape, hi_shape, t in (
            ((1,), (7,), (3, 5, 7), True),
            ((3, 5, 7), (7,), (3, 5, 1), False),
            ((5, 1), (1, 7), (3, 5, 7), True),
            ((3, 5, 7), (5, 7), (3, 5, 7), True),
        ):
            s = pick(*s_shape, dt=torch.float32) > 0.3 if self_dt == torch.bool else pick(*s_shape, dt=self_dt)
            lo = pick(*lo_shape, dt=torch.float32)
            hi = pick(*hi_shape, dt=dtype, t=t)
            where = f"clamp self {self_dt} {tuple(s.shape)}, min {tuple(lo.shape)}, max {dtype} {tuple(hi.shape)}"
            for fm, ft in ((myops.clamp, torch.clamp),):
                check_like_torch_with_grad(f"{where}: min", lambda a: fm(s, a, hi), lambda a: ft(s, a, hi), lo)
                check_like_torch_with_grad(f"{where}: max", lambda a: fm(s, lo, a), lambda a: ft(s, lo, a), hi)
                if self_dt != torch.bool:
                    check_like_torch_with_grad(f"{where}: self", lambda a: fm(a, lo, hi), lambda a: ft(a, lo, hi), s)
            for fm, ft in ((myops.maximum, torch.maximum), (myops.minimum, torch.minimum)):
                if self_dt != torch.bool:
                    check_like_torch_with_grad(
                        f"{fm.__name__}({where}): other", lambda a: fm(s, a), lambda a: ft(s, a), hi
                    )
                    check_like_torch_with_grad(
                        f"{fm.__name__}({where}): self", lambda a: fm(a, hi), lambda a: ft(a, hi), s
                    )
                check_like_torch_with_grad(
                    f"clamp min only ({where})", lambda a: myops.clamp(s, min=a), lambda a: torch.clamp(s, min=a), hi
                )


def check_pool_number_other(device):
    """max_pool2d_add with a Python number other at torch's edges, against F.max_pool2d(x) +
    other: ints in [2^63, 2^64) (torch converts them once, to float or double: ties and sticky
    bits of the float rounding), past int64 / uint64 (OverflowError), on every float dtype and
    inputs large enough that the number's rounding shows; the wrong rank and a bad padding with
    such a number (torch's pooling error first)."""
    import torch.nn.functional as F

    import myops

    numbers = [
        2**63,
        2**63 + 2**39,
        2**63 + 2**39 + 1,
        2**63 + 3 * 2**39,
        2**64 - 1,
        2**64 - 2**39,
        2**64,
        -(2**63) - 1,
        10**30,
        -(2**63),
        2**63 - 1,
        True,
        1.0001,
    ]
    g = torch.Generator().manual_seed(6)
    for dtype in (torch.float32, torch.float64, torch.float16, torch.bfloat16):
        for scale in (1.0, 2.0**41, 2.0**56):
            x = (torch.randn(2, 3, 9, 9, generator=g) * scale).to(dtype).to(device)
            for v in numbers:
                assert_like_torch(lambda: myops.max_pool2d_add(x, v), lambda: F.max_pool2d(x, 3, 2, 1) + v)
        for v in numbers:
            for bad in (torch.randn(2, 3), torch.randn(1, 2, 3, 9, 9), torch.randn(3, 9, 9)):
                bad = bad.to(dtype).to(device)
                assert_like_torch(lambda: myops.max_pool2d_add(bad, v), lambda: F.max_pool2d(bad, 3, 2, 1) + v)
                assert_like_torch(lambda: myops.max_pool2d_add(bad, v, 3, 2, 2), lambda: F.max_pool2d(bad, 3, 2, 2) + v)
