"""Elementwise family, two operands: add (alpha), sub, mul, div, maximum, minimum and pow against
torch: dtypes, broadcasting, layouts, mixed dtypes, a Python number operand, gradients."""

import pytest
import torch

import myops
from myops._table import EW_OPS
from helpers import (
    DEVICES,
    FLOAT_DTYPES,
    LAYOUTS,
    assert_same,
    cuda_only,
    outcome,
    rand,
    same_error,
    with_layout,
)
from elementwise_helpers import (
    C,
    H,
    N,
    W,
    BINARY,
    assert_exact,
    assert_ulp,
    compare,
    sample,
)

ops = torch.ops.myops


# ---- binary ---------------------------------------------------------------------------------------

BROADCAST_FORMS = {
    "same": (N, C, H, W),
    "per_channel": (1, C, 1, 1),
    "n1hw": (N, 1, H, W),
    "last_dim": (W,),
    "zero_dim": (),
    "one_elem": (1,),
}


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("name", list(BINARY))
def test_binary_dtypes(name, device):
    fn, ref, dtypes, exact = BINARY[name]
    for dtype in dtypes:
        for shape in [(), (0,), (1,), (7,), (4097,)]:
            a, b = sample(shape, dtype, device), sample(shape, dtype, device)
            compare(exact, fn(a, b), ref(a, b))


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16])
@pytest.mark.parametrize("name", list(BINARY))
def test_binary_large(name, dtype, device):
    fn, ref, _, exact = BINARY[name]
    a, b = sample((2**20 + 3,), dtype, device), sample((2**20 + 3,), dtype, device)
    compare(exact, fn(a, b), ref(a, b))
    compare(exact, fn(a[1:], b[:-1]), ref(a[1:], b[:-1]))  # one operand misaligned
    compare(exact, fn(a[1:], b[1:]), ref(a[1:], b[1:]))  # both misaligned the same way


@cuda_only
@pytest.mark.parametrize("variant", sorted(e.split(":")[1] for e in ops._cuda_variants() if e.startswith("binary16:")))
@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16], ids=str)
def test_binary16_variants_cuda(variant, dtype):
    # every variant of 16-bit add / sub / mul (csrc/core/variants.h), every bit equal to torch's on
    # the device, NaNs included: [N,C,H,W] op [1,C,1,1] in both layouts, odd sizes (pack tails),
    # zeros, infinities, NaN, subnormals and the largest values
    fi = torch.finfo(dtype)
    specials = [0.0, -0.0, float("inf"), float("-inf"), float("nan"), fi.tiny / 8, -fi.tiny, fi.max, -fi.max]
    old = ops._set_cuda_variant(f"binary16:{variant}")
    try:
        for shape, bshape in [((2, 16, 5, 8), (1, 16, 1, 1)), ((3, 5, 7, 3), (1, 5, 1, 1)), ((1037,), (1037,))]:
            x, b = rand(shape, dtype, "cuda"), rand(bshape, dtype, "cuda")
            x.view(-1)[: len(specials)] = torch.tensor(specials, dtype=dtype)
            b.view(-1)[-len(specials) :] = torch.tensor(specials[::-1], dtype=dtype)[-b.numel() :]
            layouts = (x, x.contiguous(memory_format=torch.channels_last)) if x.dim() == 4 else (x, x[1:])
            for xl in layouts:
                bb = b[: xl.shape[0]] if b.shape == x.shape else b
                for mine, theirs in ((ops.add, torch.add), (ops.sub, torch.sub), (ops.mul, torch.mul)):
                    for args in ((xl, bb), (bb, xl)):
                        got, want = mine(*args), theirs(*args)
                        assert got.stride() == want.stride()
                        assert torch.equal(got.view(torch.int16), want.view(torch.int16)), (mine, args[0].shape)
    finally:
        ops._set_cuda_variant(old)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("form", list(BROADCAST_FORMS))
@pytest.mark.parametrize("name", list(BINARY))
def test_binary_broadcast(name, form, device):
    fn, ref, dtypes, exact = BINARY[name]
    for dtype in (torch.float32, torch.float16, torch.int32):
        if dtype not in dtypes:
            continue
        a = sample((N, C, H, W), dtype, device)
        b = sample(BROADCAST_FORMS[form], dtype, device)
        compare(exact, fn(a, b), ref(a, b))
        compare(exact, fn(b, a), ref(b, a))
        cl = a.contiguous(memory_format=torch.channels_last)
        compare(exact, fn(cl, b), ref(cl, b))


def _wrapped(s, like):
    # torch.maximum / minimum take no Python numbers: their reference is the number as a 0-d
    # tensor of torch.result_type(like, s), which is how PyTorch promotes a wrapped number
    return torch.tensor(s, dtype=torch.result_type(like, s), device=like.device)


def _natural(s, like):
    # a Python number as PyTorch's wrapped number: its own value (int64 / float64 / bool), in
    # the dtype torch.result_type(like, s) when the natural dtype would promote differently; a
    # CPU 0-d tensor, as a number is (torch's CUDA kernels treat a CPU scalar specially)
    dt = torch.bool if isinstance(s, bool) else torch.int64 if isinstance(s, int) else torch.float64
    t = torch.tensor(s, dtype=dt)
    rt = torch.result_type(like, s)
    return t if torch.result_type(like, t) == rt else t.to(rt)


SCALAR_REF = {
    # name: (ref(tensor, s), ref(s, tensor))
    "add": (lambda a, s: torch.add(a, s), lambda s, a: s + a),
    "add_alpha": (lambda a, s: torch.add(a, s, alpha=3), None),
    "sub": (lambda a, s: torch.sub(a, s), lambda s, a: torch.sub(_natural(s, a), a)),
    # a number first: Python's s * a (tensor.__rmul__, the number in the opmath type), not
    # torch.mul(s, a), which on the CPU rounds it to a float16 / bfloat16 result first
    "mul": (lambda a, s: torch.mul(a, s), lambda s, a: s * a),
    "div": (lambda a, s: torch.div(a, s), lambda s, a: torch.div(_natural(s, a), a)),
    "maximum": (lambda a, s: torch.maximum(a, _wrapped(s, a)), lambda s, a: torch.maximum(_wrapped(s, a), a)),
    "minimum": (lambda a, s: torch.minimum(a, _wrapped(s, a)), lambda s, a: torch.minimum(_wrapped(s, a), a)),
}


def scalar_refs(name):
    """(ref(tensor, s), ref(s, tensor) or None) of a binary op: SCALAR_REF's, else, for a row of
    the op table with a Scalar overload (TABLE_BINARY), torch's function of the same name with
    the number second; None when the op takes no number."""
    if name in SCALAR_REF:
        return SCALAR_REF[name]
    op = EW_OPS[name]
    if not any(o.name == op.name and o.overload == "Scalar" for o in EW_OPS.values()):
        return None
    f = getattr(torch, op.name)
    return (lambda a, s: f(a, s)), None


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("name", list(BINARY))
def test_binary_python_scalar(name, device):
    fn, ref, dtypes, exact = BINARY[name]
    refs = scalar_refs(name)
    if refs is None:
        pytest.skip(f"{name} has no Scalar overload")
    fwd, rev = refs
    for dtype in (torch.float32, torch.float16, torch.bfloat16, torch.int64, torch.int8, torch.uint8):
        if dtype not in dtypes:
            continue
        a = sample((N, C, H, W), dtype, device)
        for s in (2, -3, 0.1, 2.5, True):
            if name.startswith("sub") and isinstance(s, bool):
                continue
            compare(exact, fn(a, s), fwd(a, s))
            if rev is not None:
                compare(exact, fn(s, a), rev(s, a))
    # a 0-d tensor keeps its priority rules: float32 0-d with a float16 tensor stays float16
    h = sample((7,), torch.float16, device)
    z = torch.tensor(1.5, device=device)
    compare(exact, fn(h, z), ref(h, z))


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("name", list(BINARY))
def test_binary_layouts(name, layout, device):
    fn, ref, _, exact = BINARY[name]
    a = with_layout(sample((6, 5, 4, 9), torch.float32, device), layout)
    b = sample((6, 5, 4, 9), torch.float32, device)
    compare(exact, fn(a, b), ref(a, b))
    compare(exact, fn(b, a), ref(b, a))
    b2 = with_layout(b, layout)
    compare(exact, fn(a, b2), ref(a, b2))


MIXED = [
    (torch.float16, torch.float32),
    (torch.bfloat16, torch.float16),
    (torch.int32, torch.float32),
    (torch.int64, torch.float16),
    (torch.int8, torch.int64),
    (torch.uint8, torch.int8),
    (torch.bool, torch.int32),
    (torch.bool, torch.float32),
    (torch.float32, torch.float64),
]


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("name", list(BINARY))
def test_binary_mixed_dtypes(name, device):
    fn, ref, _, exact = BINARY[name]
    for da, db in MIXED:
        if name.startswith("sub") and torch.bool in (da, db):
            continue
        for sa, sb in [((5, 7), (5, 7)), ((5, 7), (7,)), ((5, 7), ()), ((), (5, 7))]:
            a, b = sample(sa, da, device), sample(sb, db, device)
            compare(exact, fn(a, b), ref(a, b))
        # transposed half operand with a float one (cast + layout choice)
        a = sample((7, 5), da, device).t()
        b = sample((5, 7), db, device)
        compare(exact, fn(a, b), ref(a, b))
        a = sample((9, 7), da, device)[::2]
        compare(exact, fn(a, b), ref(a, b))


def test_add_bool_and_alpha():
    a, b = rand((33,), torch.bool, "cpu"), rand((33,), torch.bool, "cpu")
    assert_exact(myops.add(a, b), torch.add(a, b))
    assert_exact(myops.add(a, b, alpha=True), torch.add(a, b, alpha=True))
    x, y = rand((33,), torch.int32, "cpu"), rand((33,), torch.int32, "cpu")
    assert_exact(myops.sub(x, y, alpha=-4), torch.sub(x, y, alpha=-4))
    u, v = rand((33,), torch.uint8, "cpu"), rand((33,), torch.uint8, "cpu")
    assert_exact(myops.sub(u, v), torch.sub(u, v))  # wraps like torch
    f, g = sample((33,), torch.float32, "cpu"), sample((33,), torch.float32, "cpu")
    assert_ulp(myops.add(f, g, alpha=0.3), torch.add(f, g, alpha=0.3), ulps=1)


def test_maximum_minimum_nan():
    nan, inf = float("nan"), float("inf")
    a = torch.tensor([nan, 1.0, nan, -inf, inf, 3.0, -2.0] * 5)
    b = torch.tensor([1.0, nan, nan, inf, -inf, -3.0, 2.0] * 5)
    for fn, ref in ((myops.maximum, torch.maximum), (myops.minimum, torch.minimum)):
        assert_exact(fn(a, b), ref(a, b))
        assert_exact(fn(a.half(), b.half()), ref(a.half(), b.half()))


# ---- add / sub with alpha on half / bfloat16: bit for bit -----------------------------------------


def _alpha_inputs(kind, n, dtype):
    a = torch.randn(n).to(dtype)
    b = torch.randn(n).to(dtype)
    if kind == "contiguous":
        return a, b
    if kind == "strided":
        return torch.randn(2 * n).to(dtype)[::2], b
    if kind == "scalar_second":
        return a, b[:1].reshape(())
    if kind == "scalar_first":
        return a[:1].reshape(()), b
    if kind == "one_element":
        return a, b[:1]
    if kind == "2d_transposed":
        m = max(1, n // 37)
        return torch.randn(37, m).to(dtype), torch.randn(m, 37).to(dtype).t()
    if kind == "2d_sliced":
        m = max(1, n // 37)
        return torch.randn(m, 40).to(dtype)[:, :37], torch.randn(m, 37).to(dtype)
    raise AssertionError(kind)


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
@pytest.mark.parametrize("n", [1, 7, 31, 32, 33, 63, 100, 1000, 40001, 70003])
@pytest.mark.parametrize(
    "kind", ["contiguous", "strided", "scalar_second", "scalar_first", "one_element", "2d_transposed", "2d_sliced"]
)
def test_alpha_half_bfloat16_bit_exact(dtype, n, kind):
    a, b = _alpha_inputs(kind, n, dtype)
    for alpha in (0.3, -0.7, 3.7, 2, 1e-3):
        assert_same(myops.add(a, b, alpha=alpha), torch.add(a, b, alpha=alpha))
        assert_same(myops.sub(a, b, alpha=alpha), torch.sub(a, b, alpha=alpha))
        assert_same(ops.add(a, b, alpha=alpha), torch.add(a, b, alpha=alpha))


def test_alpha_cancellation_case():
    # nearly cancelling sums: where an alpha kept in float was hundreds of ulp off
    a = torch.linspace(-3, 3, 4099).to(torch.float16)
    b = (-a.float() / 0.3).to(torch.float16)
    for n in (4099, 17):
        assert_same(myops.add(a[:n], b[:n], alpha=0.3), torch.add(a[:n], b[:n], alpha=0.3))


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_alpha_float_bit_exact(dtype):
    for n in (7, 100, 70001):
        a, b = torch.randn(n, dtype=dtype), torch.randn(n, dtype=dtype)
        assert_same(myops.add(a, b, alpha=0.3), torch.add(a, b, alpha=0.3))
        assert_same(myops.sub(a[::2], b[::2], alpha=0.3), torch.sub(a[::2], b[::2], alpha=0.3))


# ---- pow (tensor-tensor and tensor-scalar), added through the op table ----------------------------
# Within 1 ulp of torch (float32 / float64 / float16), measured; bfloat16 within 2 (torch's own
# CPU pow goes through SLEEF and special-cases some exponents: 2, 3, -1, -2, computing x * x,
# 1 / x, ...). A number exponent is converted to the tensor's dtype first, as torch's CPU kernel
# does (a bfloat16 tensor ** -3.7 is ** -3.703125).


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", FLOAT_DTYPES, ids=str)
def test_pow_tensor(dtype, device):
    ulps = 2 if dtype == torch.bfloat16 else 1
    for sa, sb in [((5, 7), (5, 7)), ((5, 7), (7,)), ((6, 1, 4), (1, 5, 1)), ((4097,), (4097,)), ((5, 7), ())]:
        a = sample(sa, dtype, device, low=0, high=10)  # NaN, +-inf included
        b = sample(sb, dtype, device, low=-3, high=3)
        assert_ulp(myops.pow(a, b), torch.pow(a, b), ulps)
        # a negative base: NaN for non-integral exponents, as torch
        assert_ulp(myops.pow(-a, b.round()), torch.pow(-a, b.round()), ulps)
    a = sample((6, 5, 4, 9), dtype, device, low=0, high=4)
    for layout in LAYOUTS:
        x = with_layout(a, layout)
        assert_ulp(myops.pow(x, a), torch.pow(x, a), ulps)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", FLOAT_DTYPES, ids=str)
def test_pow_scalar(dtype, device):
    # CPU: float32: both sides are within 1 ulp of the exact power (SLEEF's vector pow, the C
    # library's in scalar tails), so up to 2 ulp apart: measured 2 for ** -3.7 on 2 of 300 random
    # samples, 1 for every other exponent; bfloat16: torch rounds x * x (** 2, 3, -2) in it.
    # CUDA: bit for bit: the same arithmetic as torch's CUDA kernel (its special exponents, CUDA's
    # pow / sqrt / rsqrt otherwise; elementwise_div_pow_minmax.cu).
    ulps = 0 if device == "cuda" else 2 if dtype in (torch.float32, torch.bfloat16) else 1
    a = sample((4097,), dtype, device, low=-10, high=10)
    for e in (2.5, 2, 3, -1, -2, 0.5, -0.5, 0.3, 0, 1, -3.7):
        assert_ulp(myops.pow(a, e), torch.pow(a, e), ulps)
        assert_ulp(myops.pow(a[1:], e), torch.pow(a[1:], e), ulps)


@pytest.mark.parametrize("device", DEVICES)
def test_pow_float32_against_exact(device):
    """float32 pow within 1 ulp of the correctly rounded power (the float64 pow rounded) on the
    CPU: the AVX-512 build's double-precision form (elementwise/cpu/elementwise_simd_math.h, v_pow_f) and
    SLEEF's in the others; CUDA's powf within 2. Bases over every binade with exponents that keep
    the result in range, bases next to 1 with exponents up to 1e6 (where log2 x must not lose
    its low bits), bases at the edges of the reduction's 16 intervals, and randn operands."""
    ulps = 1 if device == "cpu" else 2
    g = torch.Generator().manual_seed(int(torch.randint(0, 2**31, ())))
    n = 1 << 16
    x = torch.randint(0x00800000, 0x7F800000, (n,), generator=g, dtype=torch.int32).view(torch.float32)
    y = (torch.rand(n, generator=g) * 2 - 1) * 120 / x.double().log2().abs().clamp(min=1e-9).float()
    near1 = 1 + (torch.rand(n, generator=g) - 0.5) * 2.0 ** -torch.randint(1, 24, (n,), generator=g).float()
    big = (torch.rand(n, generator=g) * 2 - 1) * 1e6
    edge = (0x3F330000 + torch.arange(17, dtype=torch.int32) * (1 << 19)).repeat_interleave(3)
    edge = (edge + torch.tensor([-1, 0, 1], dtype=torch.int32).repeat(17)).view(torch.float32)
    edge = torch.cat([edge * 2.0**k for k in (-100, -7, 0, 5, 90)])
    for base, exp in (
        (x, y),
        (near1, big),
        (edge, torch.randn(edge.numel(), generator=g) * 3),
        (torch.randn(n, generator=g).abs() + 1e-3, torch.randn(n, generator=g) * 4),
    ):
        base, exp = base.to(device), exp.to(device)
        want = torch.pow(base.double(), exp.double()).float()
        keep = want.isfinite() & (want.abs() >= torch.finfo(torch.float32).tiny)  # normal results
        assert_ulp(myops.pow(base, exp)[keep], want[keep], ulps)


@pytest.mark.parametrize("device", DEVICES)
def test_pow_bad_input(device):
    x = torch.arange(5, device=device)
    for call in (lambda m: m.pow(x, 2), lambda m: m.pow(x.float(), x)):
        assert type(outcome(lambda: call(myops))[1]) is NotImplementedError


# ---- gradients: maximum / minimum at NaN and ties, div's divisor in torch's order ----------------


@pytest.mark.parametrize("name", ["maximum", "minimum"])
def test_maximum_minimum_gradients_nan_and_ties(name):
    n = float("nan")
    a = torch.tensor([n, 1.0, n, 1.0, 2.0, -0.0])
    b = torch.tensor([1.0, n, n, 1.0, 1.0, 0.0])
    out = []
    for fn in (getattr(myops, name), getattr(torch, name)):
        x, y = a.clone().requires_grad_(), b.clone().requires_grad_()
        r = fn(x, y)
        out.append((r,) + torch.autograd.grad(r, (x, y), torch.arange(1.0, 7.0)))
    for m, t in zip(*out):
        assert_same(m, t)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", [torch.float16, torch.float32])
def test_div_divisor_gradient_in_torch_order(device, dtype):
    """d(a/b)/db as torch computes it, -g * ((a / b) / b): b * b overflows in half for |b| > 255.9."""
    a = (torch.randn(64, dtype=torch.float64) * 4).to(dtype).to(device)
    b = torch.cat([torch.rand(32, dtype=torch.float64) * 600 + 200, torch.randn(32, dtype=torch.float64) + 3]).to(dtype)
    b = b.to(device)
    g = torch.randn(64, dtype=torch.float64).to(dtype).to(device)
    bm, bt = b.clone().requires_grad_(), b.clone().requires_grad_()
    (gm,) = torch.autograd.grad(myops.div(a, bm), bm, g)
    (gt,) = torch.autograd.grad(torch.div(a, bt), bt, g)
    assert_same(gm, gt)


# ---- sub refuses bool as torch does --------------------------------------------------------------


@pytest.mark.parametrize(
    "a, b",
    [
        (torch.tensor([True]), torch.tensor([False])),
        (torch.tensor([True]), torch.tensor([1])),
        (torch.tensor([1]), torch.tensor([True])),
        (torch.tensor([True]), 1),
    ],
)
def test_sub_bool_refused(a, b):
    same_error(lambda: myops.sub(a, b), lambda: torch.sub(a, b), match="bool")
