"""The CUDA kernels, their glue and the CUDA drop-in, run on the CPU.

The CUDA code (csrc/<family>/cuda/) is compiled a second time by the host compiler with
MYOPS_CUDA_EMULATION (csrc/core/cuda/emulation.h): the emulated device is an H100 (132 SMs, 2048
threads per SM, CUDA's launch limits checked at every launch), every launch runs its (block, thread)
pairs one after another in a seeded shuffled order, and the ops register as CPU kernels of the test
library `myops_emu` (tests/cuda_emulation/loader.py). So the CUDA code itself - the glue's CUDA
rules, the launch descriptors and grids, packs and per-operand alignment, tails, grid-stride loops,
broadcasting offsets, the pooling windows, the diagonal's copy plan, nonzero's and
multiclass_nms_static's CUB call sequences (against stand-ins held to CUB's contract,
csrc/core/cuda/cub_emulation.h) and the CUDA backend of the aten drop-in - runs in CI, which has no GPU. What it cannot show (races, resource limits, speed,
the device's own math library) is left to tests/*.py on a GPU.

The thread order of every launch follows a seed: MYOPS_EMU_SEED if set, else the test's own
seed (MYOPS_SEED, fresh per test); a failure prints both for a replay.

References follow PyTorch's CUDA rules: half / bfloat16 computed in float and rounded once,
`alpha` / `value` fused (one rounding), a CPU scalar applied at float precision, result strides
as TensorIterator lays them out off the CPU (computed here on the meta device).
"""

import os
import subprocess
import sys

import math

import pytest
import torch
import torch.nn.functional as F
from hypothesis import given, settings, strategies as st

import myops  # noqa: F401  (the op table)
from cuda_emulation.loader import build, cuda_include_dir
from myops._table import EW_OPS
from helpers import assert_bits_nan_anywhere, assert_meta, outcome, rand, with_layout

pytestmark = pytest.mark.skipif(cuda_include_dir() is None, reason="no CUDA headers to build the emulation with")

REDUCED = (torch.float16, torch.bfloat16)

# the CUDA kernels' variants (csrc/core/variants.h): op -> names
VARIANTS = {}
for _entry in torch.ops.myops._cuda_variants():
    _op, _name = _entry.split(":")
    VARIANTS.setdefault(_op, []).append(_name)


@pytest.fixture(scope="module")
def E():
    return build()


@pytest.fixture(autouse=True)
def emu_seed(E, fresh_seed, request):
    """Seeds the emulated thread order of this test (see the module docstring)."""
    seed = int(os.environ.get("MYOPS_EMU_SEED") or fresh_seed)
    E._emu_seed(seed)
    request.node.user_properties.append(("emu_seed", seed))
    yield seed


@pytest.fixture(autouse=True)
def poisoned_memory():
    """Memory a kernel reads before any write holds garbage, as on a device: every tensor the ops
    allocate uninitialized (outputs, temporaries) is filled with NaN or the integer maximum
    (torch's deterministic fill of empty()), and the emulated caching allocator's blocks with 0x7f
    bytes (core/cuda/cub_emulation.h). A kernel that reads what it did not write fails."""
    prev = torch.are_deterministic_algorithms_enabled(), torch.is_deterministic_algorithms_warn_only_enabled()
    torch.use_deterministic_algorithms(True, warn_only=True)
    assert torch.utils.deterministic.fill_uninitialized_memory
    yield
    torch.use_deterministic_algorithms(prev[0], warn_only=prev[1])


def meta_strides(fn, *args):
    """Strides of torch's result under its non-CPU layout rule."""
    m = [a.to("meta") if isinstance(a, torch.Tensor) and a.dim() > 0 else a for a in args]
    return fn(*m).stride()


def check(actual, expected, strides=None, signed_zero=True, ulps=0, atol=0.0):
    """dtype, shape, strides (of dims longer than 1) and every element: NaN where `expected` has
    NaN (any bits), else the same bits (`signed_zero=False`: +0.0 and -0.0 equal), or within
    `ulps` / `atol`."""
    assert_meta(actual, expected, actual.stride() if strides is None else strides)
    a, e = actual.detach(), expected.detach()
    if not a.dtype.is_floating_point:
        assert torch.equal(a, e), f"{int((a != e).sum())} of {a.numel()} elements differ"
        return
    if not signed_zero:
        a, e = a + 0.0, e + 0.0  # -0.0 + 0.0 == +0.0 (a NaN stays NaN)
    if ulps == 0 and atol == 0:
        assert_bits_nan_anywhere(a, e)
        return
    nan = e.isnan()
    assert torch.equal(a.isnan(), nan), "NaN positions differ"
    a, e = a[~nan], e[~nan]
    inf = e.isinf()
    assert torch.equal(a[inf], e[inf]), "infinities differ"
    a64, e64 = a[~inf].double(), e[~inf].double()
    tol = atol + ulps * torch.finfo(actual.dtype).eps * e64.abs()
    bad = (a64 - e64).abs() > tol
    assert not bad.any(), f"{int(bad.sum())} elements beyond tolerance: {a64[bad][:4]} vs {e64[bad][:4]}"


def up(t):
    """float for half / bfloat16 (PyTorch's CUDA opmath), anything else unchanged."""
    return t.float() if isinstance(t, torch.Tensor) and t.dtype in REDUCED else t


def reference(fn, *args):
    """fn under PyTorch's CUDA precision rules, computed on the CPU: reduced-precision operands
    in float, one rounding to torch's result dtype."""
    dtype = fn(*args).dtype
    return fn(*[up(a) for a in args]).to(dtype)


def div_reference(a, b, rt=None):
    """torch.div under PyTorch's CUDA rules, where a one-element operand is what the emulation
    sees it as: a CPU scalar (folded into the kernel). `rt`: the result dtype where `b` stands
    for a number (a wrapped number promotes as a number, not as this 0-d tensor)."""
    rt = rt or torch.div(a, b).dtype
    c = torch.float32 if rt in REDUCED else rt  # opmath
    if b.numel() == 1:  # div_true_kernel_cuda: a * (1 / b), 1 / b in double from b's own value
        return (a.to(c) * (1 / b.to(torch.float64)).to(c)).to(rt)
    # DivFunctor<scalar_t>: a scalar dividend rounded to the dtype first
    return (a.to(rt).to(c) / b.to(c)).to(rt)


def binary_reference(op, a, b):
    return div_reference(a, b) if op == "div" else reference(BINARY[op][1], a, b)


# ---- binary ops -------------------------------------------------------------------------------

BINARY = {
    "add": (lambda E: E.add, torch.add),
    "sub": (lambda E: E.sub, torch.sub),
    "mul": (lambda E: E.mul, torch.mul),
    "div": (lambda E: E.div, torch.div),
    "maximum": (lambda E: E.maximum, torch.maximum),
    "minimum": (lambda E: E.minimum, torch.minimum),
}
BIN_DTYPES = [torch.float32, torch.float64, torch.float16, torch.bfloat16, torch.int32, torch.int64, torch.uint8]
SHAPES = [(), (0,), (1,), (7,), (33,), (1000,), (5, 37), (3, 4, 17), (2, 3, 9, 11)]


@pytest.mark.parametrize(
    "op,dtype", [(op, dt) for op in BINARY for dt in BIN_DTYPES if op != "div" or dt.is_floating_point], ids=str
)
@pytest.mark.parametrize("shape", SHAPES, ids=str)
@pytest.mark.parametrize("layout", ["contiguous", "transposed", "sliced", "misaligned", "expanded", "channels_last"])
def test_binary(E, op, dtype, shape, layout):
    # integer div (true division to float) is in test_binary_mixed_dtypes
    a = with_layout(rand(shape, dtype, "cpu"), layout)
    b = rand(shape, dtype, "cpu")
    if op == "div":
        b = torch.where(b == 0, torch.ones_like(b), b)
    fe, ft = BINARY[op]
    out = fe(E)(a, b)
    check(out, binary_reference(op, a, b), meta_strides(ft, a, b), signed_zero=op not in ("maximum", "minimum"))


@pytest.mark.parametrize("op", ["add", "sub"])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16, torch.int64], ids=str)
def test_alpha(E, op, dtype):
    a, b = rand((3, 257), dtype, "cpu"), rand((257,), dtype, "cpu")
    alpha = 3 if dtype == torch.int64 else 0.37
    out = getattr(E, op)(a, b, alpha=alpha)
    if dtype.is_floating_point:
        # one fused rounding (torch's CUDA kernel contracts a + alpha * b): exact in float64 here
        # with alpha as the kernel holds it: in float
        alpha_c = torch.tensor(alpha if op == "add" else -alpha, dtype=torch.float32).double()
        exp = (a.double() + alpha_c * b.double()).float().to(dtype)
    else:
        exp = getattr(torch, op)(a, b, alpha=alpha)
    check(out, exp, meta_strides(lambda x, y: getattr(torch, op)(x, y, alpha=alpha), a, b))


MIXED = [
    (torch.float16, torch.float32),
    (torch.bfloat16, torch.float16),
    (torch.int32, torch.float16),
    (torch.uint8, torch.int8),
    (torch.bool, torch.float32),
    (torch.int64, torch.int32),
]


# sub of bool raises (tested on the CPU)
@pytest.mark.parametrize(
    "op,da,db", [(op, a, b) for op in BINARY for a, b in MIXED if op != "sub" or torch.bool not in (a, b)], ids=str
)
def test_binary_mixed_dtypes(E, op, da, db):
    a = rand((4, 6, 33), da, "cpu").transpose(0, 2)
    b = rand((6, 1), db, "cpu")
    if op == "div":
        b = torch.where(b == 0, torch.ones_like(b), b)
    fe, ft = BINARY[op]
    check(fe(E)(a, b), binary_reference(op, a, b), meta_strides(ft, a, b), signed_zero=op not in ("maximum", "minimum"))


@pytest.mark.parametrize("op", ["add", "mul", "div", "maximum"])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16, torch.int32], ids=str)
@pytest.mark.parametrize("scalar", [0.1, 3, -2.5e-3])
@pytest.mark.parametrize("side", ["left", "right"])
def test_cpu_scalar_operand(E, op, dtype, scalar, side):
    # a 0-d CPU tensor (a wrapped Python number) is folded into the kernel: on CUDA torch
    # applies it at opmath precision in either position
    if not dtype.is_floating_point and isinstance(scalar, float) and op != "div":
        scalar = int(scalar * 100) or 7
    a = rand((5, 129), dtype, "cpu")
    s = torch.tensor(scalar, dtype=torch.float64 if isinstance(scalar, float) else torch.int64)
    args = (s, a) if side == "left" else (a, s)
    fe, ft = BINARY[op]
    check(fe(E)(*args), binary_reference(op, *args), signed_zero=op != "maximum")


@settings(max_examples=60, deadline=None, derandomize=True)
@given(
    op=st.sampled_from(sorted(BINARY)),
    dtype=st.sampled_from([torch.float32, torch.float16, torch.bfloat16, torch.int16]),
    shape=st.lists(st.integers(0, 9), min_size=0, max_size=5),
    bmask=st.integers(0, 31),
    perm_seed=st.integers(0, 10**6),
    offset=st.booleans(),
)
def test_binary_property(E, op, dtype, shape, bmask, perm_seed, offset):
    """Random shapes, broadcasting (size-1 dims of `b`), permuted and offset views."""
    g = torch.Generator().manual_seed(perm_seed)
    shape = tuple(shape)
    perm = torch.randperm(len(shape), generator=g).tolist()
    base = rand(tuple(shape[p] for p in perm), dtype, "cpu")
    a = base.permute([perm.index(i) for i in range(len(shape))])
    if offset and a.numel():
        flat = torch.empty(a.numel() + 1, dtype=dtype)
        a = flat[1:].view(a.shape).copy_(a)
    bshape = tuple(1 if (bmask >> i) & 1 else n for i, n in enumerate(shape))
    b = rand(bshape, dtype, "cpu")
    if op == "div":
        b = torch.where(b == 0, torch.ones_like(b), b)
    fe, ft = BINARY[op]
    check(fe(E)(a, b), binary_reference(op, a, b), meta_strides(ft, a, b), signed_zero=op not in ("maximum", "minimum"))


def test_binary_special_values(E):
    vals = torch.tensor([0.0, -0.0, 1.0, -1.0, math.inf, -math.inf, math.nan, 1e-45, 3e38, -3e38])
    a = vals.repeat_interleave(len(vals))
    b = vals.repeat(len(vals))
    for name, (fe, ft) in BINARY.items():
        for dt in (torch.float32, torch.float16, torch.bfloat16):
            x, y = a.to(dt), b.to(dt)
            check(fe(E)(x, y), binary_reference(name, x, y), signed_zero=name not in ("maximum", "minimum"))


def test_grid_stride_loops(E):
    # past the H100 grid caps (elementwise: 132 SMs * 8 blocks * 32 waves = 33,792 blocks of 256
    # threads; 16 bytes a thread in the packed path, 1 element in the others): the real grids,
    # and every thread goes round its grid-stride loop
    n = 33792 * 256 * 16 + 13  # bytes: one past the packed cap, plus a tail
    a = torch.randint(0, 100, (n,), dtype=torch.uint8)
    b = torch.randint(0, 100, (n,), dtype=torch.uint8)
    check(E.add(a, b), a + b)
    check(E.add(a[1:9_000_001], b[:9_000_000]), a[1:9_000_001] + b[:9_000_000])  # misaligned: one element a thread
    x = torch.randn(2960, 2960)  # 8.76M elements through strides
    check(E.mul(x.t(), x[:, 0]), x.t() * x[:, 0], meta_strides(torch.mul, x.t(), x[:, 0]))


# 16-bit add / sub / mul (csrc/core/variants.h, "binary16"): every variant against torch's float-
# then-round rule, bit for bit: broadcasts as in a network ([N,C,H,W] op [1,C,1,1], both layouts),
# odd sizes (pack tails, rows not a pack long), offset views, special values and subnormals
B16_CASES = [
    ((2, 16, 5, 8), (1, 16, 1, 1), "contiguous"),
    ((2, 16, 5, 8), (1, 16, 1, 1), "channels_last"),
    ((3, 5, 7, 3), (1, 5, 1, 1), "channels_last"),
    ((3, 5, 7, 3), (3, 5, 7, 3), "contiguous"),
    ((2, 8, 4, 4), (2, 1, 4, 4), "misaligned"),
    ((1037,), (1037,), "sliced"),
]


@pytest.fixture(scope="module", params=VARIANTS["binary16"])
def b16_variant(E, request):
    old = E._emu_variant(f"binary16:{request.param}")
    yield request.param
    E._emu_variant(old)


def special16(shape, dtype):
    """Random values with zeros of both signs, infinities, NaNs, subnormals and the largest
    finite values mixed in (a quarter of the elements)."""
    fi = torch.finfo(dtype)
    vals = torch.tensor(
        [0.0, -0.0, math.inf, -math.inf, math.nan, fi.tiny / 8, -fi.tiny / 4, fi.tiny, fi.max, -fi.max, 1.0]
    ).to(dtype)
    x = rand(shape, dtype, "cpu")
    pick = torch.randint(0, len(vals), shape)
    return torch.where(torch.rand(shape) < 0.25, vals[pick], x)


@pytest.mark.parametrize("op", ["add", "sub", "mul"])
@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16], ids=str)
@pytest.mark.parametrize("case", B16_CASES, ids=str)
def test_binary16_variants(E, b16_variant, op, dtype, case):
    shape, bshape, layout = case
    a = with_layout(special16(shape, dtype), layout)
    b = special16(bshape, dtype)
    fe, ft = BINARY[op]
    for x, y in ((a, b), (b, a)) if bshape != shape else ((a, b),):
        check(fe(E)(x, y), reference(ft, x, y), meta_strides(ft, x, y))
    if op != "mul":  # alpha -1 (sub's own) is paired too; other alphas are one fused rounding
        check(getattr(E, op)(a, b, alpha=-1), reference(lambda x, y: getattr(torch, op)(x, y, alpha=-1), a, b))


def round_to_bits(x64, mant, min_exp):
    """float64 values rounded once, to nearest even, to a binary format of `mant` fraction bits
    whose smallest normal is 2**min_exp (float64 with enough range to hold every result)."""
    _, e = torch.frexp(x64)
    ulp = torch.ldexp(torch.ones_like(x64), torch.clamp(e - 1, min=min_exp) - mant)
    return torch.round(x64 / ulp) * ulp  # torch.round: half to even


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16], ids=str)
def test_binary16_double_rounding_is_innocuous(dtype):
    # the premise of "binary16:paired" (elementwise_binary.cu): the exact sum / difference /
    # product of two 16-bit values rounded ONCE equals torch's rule (rounded to float, then to
    # the 16-bit format). Exact in float64; the single rounding is computed here. Random pairs
    # of all magnitudes, and products landing among the subnormals.
    mant, min_exp = (10, -14) if dtype == torch.float16 else (7, -126)
    n = 1 << 16
    bits = torch.randint(-(1 << 15), 1 << 15, (2, n), dtype=torch.int16)
    a, b = bits.view(dtype)
    ea = torch.randint(-8, 8, (n,))  # pairs whose product is near or below the smallest normal
    eb = torch.randint(min_exp - mant - 2, min_exp + 2, (n,)) - ea
    a = torch.cat([a, torch.ldexp(torch.rand(n) + 0.5, ea).to(dtype)])
    b = torch.cat([b, torch.ldexp(torch.rand(n) + 0.5, eb).to(dtype)])
    ok = a.isfinite() & b.isfinite()
    a, b = a[ok], b[ok]
    for f in (torch.add, torch.sub, torch.mul):
        once = round_to_bits(f(a.double(), b.double()), mant, min_exp)
        twice = f(a.float(), b.float()).to(dtype)
        fin = once.abs() <= torch.finfo(dtype).max  # beyond: both round to infinity (checked in the kernel tests)
        assert fin.float().mean() > 0.9
        assert torch.equal(twice[fin].double(), once[fin]), f"{f.__name__}: double rounding differs"


# ---- unary ops ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "dtype", [torch.float32, torch.float64, torch.float16, torch.bfloat16, torch.int32, torch.int8], ids=str
)
@pytest.mark.parametrize("shape", [(), (0,), (1,), (9,), (1000,), (3, 5, 33)], ids=str)
@pytest.mark.parametrize("layout", ["contiguous", "transposed", "misaligned", "expanded"])
def test_relu_mul_scalar(E, dtype, shape, layout):
    x = with_layout(rand(shape, dtype, "cpu"), layout)
    check(E.relu(x), torch.relu(x), meta_strides(torch.relu, x), signed_zero=False)
    s = 3 if not dtype.is_floating_point else 0.3
    check(E.mul.Scalar(x, s), reference(lambda t: t * s, x), meta_strides(lambda t: t * s, x))


@pytest.mark.parametrize(
    "dtype",
    [torch.float32, torch.float64, torch.float16, torch.bfloat16, torch.int32, torch.int8, torch.uint8],
    ids=str,
)
@pytest.mark.parametrize("layout", ["contiguous", "transposed", "expanded"])
def test_number_overloads(E, dtype, layout):
    # the Scalar overloads through the CUDA glue: the number a CPU scalar, applied in the opmath
    # type on either side (torch's CUDA rules), the result dtype at::result_type(tensor, number)
    x = with_layout(rand((3, 5, 33), dtype, "cpu"), layout)
    c = rand((33,), torch.bool, "cpu")
    for s in (3, -2, 0.3, True):
        alpha = 1 if dtype.is_floating_point or isinstance(s, float) else 2  # an int alpha: exact
        check(
            E.add.Scalar(x, s, alpha),
            reference(lambda t: torch.add(t, s, alpha=alpha), x),
            meta_strides(lambda t: t + s, x),
        )
        check(E.mul.Scalar(x, s), reference(lambda t: t * s, x), meta_strides(lambda t: t * s, x))
        check(E.mul.ScalarSelf(s, x), reference(lambda t: t * s, x), meta_strides(lambda t: t * s, x))
        check(E.add.ScalarSelf(s, x), reference(lambda t: t + s, x), meta_strides(lambda t: t + s, x))
        if not isinstance(s, bool):
            check(E.sub.ScalarSelf(s, x), reference(lambda t: torch.sub(s, t), x), meta_strides(lambda t: s - t, x))
            # torch's reciprocal rule (div_reference) on the wrapped number (float64 / int64)
            wrapped = torch.tensor(s, dtype=torch.float64 if isinstance(s, float) else None)
            check(
                E.div.Scalar(x, s), div_reference(x, wrapped, torch.div(x, s).dtype), meta_strides(lambda t: t / s, x)
            )
        expected = torch.where(c, x, s)
        check(E.where.ScalarOther(c, x, s), expected, expected.stride())
    # a number first is not rounded to a float16 / bfloat16 result first (issue #47: -1.2748 *
    # bf16 -104 is 133; -2^63 * fp16 0 is -0)
    for s in (-1.2747972618057282, -(2**63), 2**63):
        check(E.mul.ScalarSelf(s, x), reference(lambda t: t * s, x), meta_strides(lambda t: t * s, x))


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16, torch.int8, torch.int32], ids=str)
def test_cuda_number_conversions(E, dtype):
    """How torch's CUDA kernels convert a Python number (elementwise/elementwise_front.h, the top),
    where its CPU kernels convert it otherwise; the expectations are torch's CUDA arithmetic
    written with CPU torch."""
    x = rand((4, 9), dtype, "cpu")
    # div by a CPU scalar: x * (1 / b), 1 / b in double from b's own value (not b rounded to
    # float first: x / 1e39 is x * 1e-39, where the CPU gives 0); a uint64 number and a 0-d
    # float32 tensor likewise
    big = torch.tensor(2**63 + 2**39 + 1, dtype=torch.uint64)
    for b in (torch.tensor(1e39, dtype=torch.float64), big, torch.tensor(3.3, dtype=torch.float32)):
        calls = [(E.div, x, b)] if b.dtype != torch.uint64 else []  # a 0-d CPU tensor divisor
        if b.dtype != torch.float32:
            calls.append((E.div.Scalar, x, b.item()))  # the number
        for f, a, d in calls:
            rt = torch.div(a, d).dtype
            opm = torch.float64 if rt == torch.float64 else torch.float32
            check(f(a, d), (a.to(opm) * (1 / b.double()).to(opm)).to(rt))
    assert E.div.Scalar(torch.ones(3), 1e39).ne(0).all()  # torch's CPU: zeros
    # addcmul's value: converted to CUDA's accumulate type (int64 for integers, wrapping in
    # that arithmetic truncated to the dtype; float for half / bfloat16), checked there
    if not dtype.is_floating_point:
        for value in (300, 2**63 - 1, -(2**63)):
            expected = (x.long() + value * (x.long() * x.long())).to(dtype)
            check(E.addcmul(x, x, x, value=value), expected)
        check(E.addcmul(x[:0], x[:0], x[:0], value=1000), x[:0])  # the CPU: overflow
        with pytest.raises(RuntimeError, match="without overflow"):
            E.addcmul(x[:0], x[:0], x[:0], value=2**63)
    else:
        check(E.addcmul(x[:0], x[:0], x[:0], value=1e6), x[:0])  # float16 on the CPU: overflow
        with pytest.raises(RuntimeError, match="without overflow"):
            E.addcmul(x[:0], x[:0], x[:0], value=1e39)
    # where's number: CUDA's fill converts it with the checked Scalar::to<dtype> (the CPU rounds
    # float16 / bfloat16 to inf and beyond), and a uint64 result has no CUDA kernel
    c = rand((4, 9), torch.bool, "cpu")
    big = {torch.float16: 65519, torch.bfloat16: 1e39, torch.float32: 1e39, torch.int8: 1000, torch.int32: 2**31}
    with pytest.raises(RuntimeError, match="without overflow"):
        E.where.ScalarOther(c, x, big[dtype])
    with pytest.raises(RuntimeError, match="without overflow"):
        E.where.ScalarSelf(c, big[dtype], x)
    with pytest.raises(NotImplementedError):
        E.where.Scalar(c, 2**63, 2**63)
    # sub's bool check is aten's own: the exception type of the torch in use
    _, err = outcome(lambda: torch.sub(x.bool(), 1))
    with pytest.raises(type(err)):
        E.sub.Scalar(x.bool(), 1)
    # a NaN bound fills before the other bound is converted (1e300 fits no float16 / float)
    if dtype.is_floating_point:
        check(E.clamp(x, float("nan"), 1e300), torch.full_like(x, float("nan")))


@pytest.mark.parametrize("op", ["gelu", "gelu_tanh", "silu", "sigmoid"])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.float16, torch.bfloat16], ids=str)
@pytest.mark.parametrize("layout", ["contiguous", "transposed", "misaligned"])
def test_transcendental(E, op, dtype, layout):
    # the host's libm stands in for the device's, so only the plumbing is exact: within a few
    # ulp of torch (float / double), one ulp of the storage type (half / bfloat16)
    x = with_layout(rand((7, 131), dtype, "cpu"), layout)
    fe = {
        "gelu": lambda t: E.gelu(t, approximate="none"),
        "gelu_tanh": lambda t: E.gelu(t, approximate="tanh"),
        "silu": E.silu,
        "sigmoid": E.sigmoid,
    }[op]
    ft = {
        "gelu": F.gelu,
        "gelu_tanh": lambda t: F.gelu(t, approximate="tanh"),
        "silu": F.silu,
        "sigmoid": torch.sigmoid,
    }[op]
    ulps = 1 if dtype in REDUCED else 8
    atol = {torch.float32: 2e-6, torch.float64: 1e-12}.get(dtype, 1e-6)
    check(fe(x), ft(x.double()).to(dtype), meta_strides(ft, x), ulps=ulps, atol=atol)


# The op table's plain unary ops and pow (myops._table): the CUDA kernels' plumbing exact, the
# host's libm standing in for the device's (within the ulps above; abs / neg: exact).
TABLE_UNARY = [op.fn for op in EW_OPS.values() if op.sig == "unary"]


@pytest.mark.parametrize("op", TABLE_UNARY + ["pow", "pow_scalar"])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.float16, torch.bfloat16, torch.int32], ids=str)
@pytest.mark.parametrize("layout", ["contiguous", "transposed", "misaligned"])
def test_table_ops(E, op, dtype, layout):
    info = EW_OPS[op]
    if dtype not in info.accepted:
        pytest.skip(f"{op} takes no {dtype}")
    x = with_layout(rand((7, 131), dtype, "cpu"), layout)
    if info.domain == "positive" and dtype.is_floating_point:
        x = x.abs()  # the domain (NaN elsewhere is checked by the parity suite)
    if op == "pow":
        y = with_layout(rand((7, 131), dtype, "cpu", low=-3, high=3), layout)
        fe, ft = (lambda t: E.pow(t, y)), (lambda t: torch.pow(t, y.to(t.dtype)))
    elif op == "pow_scalar":
        fe, ft = (lambda t: E.pow.Scalar(t, 2.5)), (lambda t: torch.pow(t, 2.5))
    else:
        fe, ft = getattr(E, op), getattr(torch.ops.aten, op).default
    out = fe(x)
    if op in ("abs", "neg"):
        check(out, ft(x), meta_strides(ft, x))
        return
    rt = out.dtype
    ulps = 1 if rt in REDUCED else 8
    atol = {torch.float32: 2e-6, torch.float64: 1e-12}.get(rt, 1e-6)
    strides = meta_strides(lambda t: torch.pow(t, y.to("meta")), x) if op == "pow" else meta_strides(ft, x)
    check(out, ft(x.double()).to(rt), strides, ulps=ulps, atol=atol)


# pow with a number exponent takes torch's CUDA special cases (PowKernel.cu): the mirror below is
# that arithmetic in torch ops on the host, each rounded to the dtype where torch's CUDA Half /
# BFloat16 arithmetic rounds; rsqrt: the emulation's stand-in for CUDA's (1 / sqrt in the compute
# type); any other exponent: the host's pow standing in for CUDA's (within the ulps).
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.float16, torch.bfloat16], ids=str)
def test_pow_number_special_exponents(E, dtype):
    x = rand((7, 131), dtype, "cpu", low=-4, high=4)
    x.view(-1)[:6] = torch.tensor([0.0, -0.0, math.inf, -math.inf, math.nan, 1e-3])
    c = torch.float64 if dtype == torch.float64 else torch.float32  # the compute type
    xc = x.to(c)
    mirror = {
        2: lambda: x * x,
        3: lambda: x * x * x,
        -2: lambda: (1 / (x * x).to(c)).to(dtype),
        -1: lambda: (1 / xc).to(dtype),
        0.5: lambda: xc.sqrt().to(dtype),
        -0.5: lambda: (1 / xc.sqrt()).to(dtype),
    }
    ulps = 1 if dtype in REDUCED else 8
    for e, want in mirror.items():
        # sqrt / rsqrt: the emulation's unary kernels are not torch's CPU bits (test_table_ops)
        tol = dict(ulps=ulps, atol=1e-12) if e in (0.5, -0.5) else {}
        check(E.pow.Scalar(x, e), want(), **tol)
        check(E.pow(x, torch.tensor(float(e))), want(), **tol)  # a 0-d CPU exponent: the same cases
    check(E.pow.Scalar(x, 2.5), torch.pow(xc.double(), 2.5).to(dtype), ulps=ulps, atol=1e-12)


CASTS = [
    (torch.float32, torch.float16),
    (torch.float32, torch.bfloat16),
    (torch.float16, torch.float32),
    (torch.bfloat16, torch.float32),
    (torch.float64, torch.float16),
    (torch.float32, torch.int32),
    (torch.int64, torch.float32),
    (torch.int32, torch.int8),
    (torch.float32, torch.bool),
    (torch.bool, torch.float16),
    (torch.uint8, torch.int64),
    (torch.float16, torch.bfloat16),
]


@pytest.mark.parametrize("src,dst", CASTS, ids=str)
@pytest.mark.parametrize("shape", [(1,), (7,), (1001,), (4, 3, 5, 6)], ids=str)
@pytest.mark.parametrize("layout", ["contiguous", "channels_last", "misaligned", "transposed"])
def test_cast(E, src, dst, shape, layout):
    x = with_layout(rand(shape, src, "cpu", low=-100, high=100), layout)
    if src.is_floating_point and not dst.is_floating_point and dst != torch.bool:
        x = x.clamp(-100, 100)
    out = E.cast(x, dst)
    check(out, x.to(dst), x.to(dst).stride())


# ---- ternary ops --------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16, torch.int64, torch.bool], ids=str)
@pytest.mark.parametrize("layout", ["contiguous", "transposed", "misaligned", "channels_last"])
def test_where(E, dtype, layout):
    c = with_layout(torch.rand(2, 3, 5, 17) < 0.5, layout)
    a = with_layout(rand((2, 3, 5, 17), dtype, "cpu"), layout)
    b = rand((5, 1), dtype, "cpu")
    check(E.where(c, a, b), torch.where(c, a, b), meta_strides(torch.where, c, a, b))
    s = torch.tensor(2.5 if dtype.is_floating_point else 2).to(dtype)
    check(E.where(c, s, a), torch.where(c, s, a))


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16, torch.int32], ids=str)
@pytest.mark.parametrize("value", [1, 0.5, -3])
def test_addcmul(E, dtype, value):
    if not dtype.is_floating_point and isinstance(value, float):
        value = 2
    a = rand((3, 65), dtype, "cpu")
    b = rand((65,), dtype, "cpu").expand(3, 65)
    c = with_layout(rand((3, 65), dtype, "cpu"), "misaligned")
    out = E.addcmul(a, b, c, value=value)
    if dtype.is_floating_point:
        # torch's CUDA kernel (pointwise_op_impl) in opmath: fma(b, c, a) for value 1, else
        # fma(value, b * c, a) with the product rounded; the fused step exact in float64 here
        p = up(b).double() * up(c).double() if value == 1 else value * (up(b) * up(c)).double()
        exp = (up(a).double() + p).float().to(dtype)
    else:
        exp = torch.addcmul(a, b, c, value=value)
    check(out, exp)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.float16, torch.bfloat16, torch.int16], ids=str)
def test_clamp(E, dtype):
    x = rand((4, 77), dtype, "cpu")
    lo, hi = rand((77,), dtype, "cpu"), rand((4, 1), dtype, "cpu")
    check(E.clamp(x, lo, hi), torch.clamp(x, lo, hi), meta_strides(torch.clamp, x, lo, hi), signed_zero=False)
    if dtype.is_floating_point:
        check(E.clamp(x, -0.5, 0.75), reference(lambda t: torch.clamp(t, -0.5, 0.75), x), signed_zero=False)
        check(E.clamp(x, None, 0.25), reference(lambda t: torch.clamp(t, max=0.25), x), signed_zero=False)
    else:
        check(E.clamp(x, -3, 4), torch.clamp(x, -3, 4))


def with_nans(x, frac=0.3):
    """x with NaNs of random sign and payload at random places."""
    ibits = {
        torch.float16: (torch.int16, 16, 10),
        torch.bfloat16: (torch.int16, 16, 7),
        torch.float32: (torch.int32, 32, 23),
    }
    itype, width, mant = ibits[x.dtype]
    exp_mask = ((1 << (width - 1 - mant)) - 1) << mant
    payload = torch.randint(1, 1 << mant, x.shape, dtype=torch.int64)
    sign = torch.randint(0, 2, x.shape, dtype=torch.int64) << (width - 1)
    v = sign | exp_mask | payload
    v = torch.where(v >= 1 << (width - 1), v - (1 << width), v).to(itype)  # two's complement
    m = torch.rand(x.shape) < frac
    return torch.where(m, v, x.contiguous().view(itype)).view(x.dtype)


def nan_bits(t):
    itype = torch.int32 if t.element_size() == 4 else torch.int16
    return t.contiguous().view(itype)[t.isnan()]


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16, torch.float32], ids=str)
def test_selecting_ops_keep_nan_bits(E, dtype):
    # torch's CUDA relu / maximum / minimum / clamp return a NaN operand as it is stored (the
    # first NaN among self, other / self, min, max); only the non-NaN values go through float
    x, y, z = (with_nans(rand((5, 77), dtype, "cpu")) for _ in range(3))
    cases = [
        (E.relu(x), x, torch.relu(x)),
        (E.maximum(x, y), torch.where(x.isnan(), x, y), torch.maximum(x, y)),
        (E.minimum(x, y), torch.where(x.isnan(), x, y), torch.minimum(x, y)),
        (E.clamp(x, y, z), torch.where(x.isnan(), x, torch.where(y.isnan(), y, z)), torch.clamp(x, y, z)),
        (E.clamp(x, -0.5, 0.5), x, torch.clamp(x, -0.5, 0.5)),
    ]
    for out, nan_source, values in cases:
        check(out, values, signed_zero=False)
        assert torch.equal(nan_bits(out), nan_source.contiguous().view(nan_bits(out).dtype)[out.isnan()])


# ---- max_pool2d_add -----------------------------------------------------------------------------

POOLS = [
    ((3, 3), (2, 2), (1, 1), False),  # the unrolled kernel
    ((2, 2), (2, 2), (0, 0), False),
    ((3, 2), (1, 2), (1, 0), True),
    ((5, 5), (1, 1), (2, 2), False),
]


@pytest.fixture(scope="module", params=VARIANTS["max_pool2d_add"])
def mp_variant(E, request):
    """Runs the test with max_pool2d_add's variant `request.param`."""
    old = E._emu_variant(f"max_pool2d_add:{request.param}")
    yield request.param
    E._emu_variant(old)


def pool_ref(x, other, k, s, p, ceil):
    pooled = F.max_pool2d(x, k, s, p, ceil_mode=ceil)
    return reference(torch.add, pooled, other)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.float16, torch.bfloat16], ids=str)
@pytest.mark.parametrize("pool", POOLS, ids=str)
@pytest.mark.parametrize("channels_last", [False, True])
@pytest.mark.parametrize("other_shape", ["full", "channel", "plane", "scalar"])
def test_max_pool2d_add(E, mp_variant, dtype, pool, channels_last, other_shape):
    k, s, p, ceil = pool
    x = rand((2, 5, 13, 11), dtype, "cpu")
    x[0, 1, 2:5, 3:6] = x[0, 1, 2, 3]  # ties
    x[1, 2, 4, 4] = math.nan if dtype.is_floating_point else 0
    if channels_last:
        x = x.contiguous(memory_format=torch.channels_last)
    out_shape = F.max_pool2d(x, k, s, p, ceil_mode=ceil).shape
    oshape = {"full": out_shape, "channel": (1, 5, 1, 1), "plane": (2, 1) + tuple(out_shape[2:]), "scalar": ()}[
        other_shape
    ]
    other = rand(oshape, dtype, "cpu")
    out = E.max_pool2d_add(x, other, list(k), list(s), list(p), ceil)
    exp = pool_ref(x, other, k, s, p, ceil)
    check(out, exp, exp.stride())


def test_max_pool2d_add_grid_stride(E, mp_variant):
    # 2.23M outputs: past the H100 cap of 132 SMs * 8 blocks * 8 = 8,448 blocks of 256 threads;
    # the tile variant (one wave, 1,056 blocks of 256 fibers here) past its cap with 1,088 / 1,122
    # one-tile planes or images, each block's second tile restaging its shared memory
    x = torch.randn(8, 64, 132, 132) if mp_variant != "tile" else torch.randn(1, 1088, 3, 3)
    o = torch.randn(F.max_pool2d(x, 3, 2, 1).shape)
    if mp_variant == "tile":  # channels_last: one tile per image of 32 channels
        xc = torch.randn(1122, 5, 3, 3).contiguous(memory_format=torch.channels_last)
        exp = F.max_pool2d(xc, 3, 2, 1) + 1.5
        check(E.max_pool2d_add(xc, torch.tensor(1.5), [3, 3], [2, 2], [1, 1], False), exp, exp.stride())
    check(E.max_pool2d_add(x, o, [3, 3], [2, 2], [1, 1], False), F.max_pool2d(x, 3, 2, 1) + o)
    xc = x.contiguous(memory_format=torch.channels_last)
    exp = F.max_pool2d(xc, 3, 2, 1) + o
    check(E.max_pool2d_add(xc, o, [3, 3], [2, 2], [1, 1], False), exp, exp.stride())


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.float16, torch.bfloat16], ids=str)
@pytest.mark.parametrize("channels_last", [False, True])
@pytest.mark.parametrize("shape", [(2, 16, 13, 11), (1, 8, 6, 10), (1, 24, 1, 1)], ids=str)
def test_max_pool2d_add_packs(E, mp_variant, dtype, channels_last, shape):
    # channel counts that fill 16-byte packs of every dtype (the wide variant's channels_last
    # path), odd and even output widths (its NCHW pairs), ties and NaN inside packs; an offset
    # input (not 16-byte aligned) takes the scalar kernel
    x = rand(shape, dtype, "cpu")
    x[0, 1, : min(3, shape[2]), : min(3, shape[3])] = x[0, 1, 0, 0]
    x[0, 3, shape[2] // 2, shape[3] // 2] = math.nan
    if channels_last:
        x = x.contiguous(memory_format=torch.channels_last)
    for xin in (x, torch.empty(x.numel() + 1, dtype=dtype)[1:].view_as(x).copy_(x)):
        for other in (rand((1, shape[1], 1, 1), dtype, "cpu"), rand(F.max_pool2d(x, 3, 2, 1).shape, dtype, "cpu")):
            out = E.max_pool2d_add(xin, other, [3, 3], [2, 2], [1, 1], False)
            exp = pool_ref(xin, other, (3, 3), (2, 2), (1, 1), False)
            check(out, exp, exp.stride())


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16], ids=str)  # all four: test_max_pool2d_add
@pytest.mark.parametrize("channels_last", [False, True])
@pytest.mark.parametrize("shape", [(1, 3, 37, 71), (2, 37, 9, 17), (1, 2, 1, 1), (3, 1, 2, 5)], ids=str)
def test_max_pool2d_add_tiles(E, mp_variant, dtype, channels_last, shape):
    # the 3x3 / 2 / 1 forward on sizes that leave partial tiles of the tile variant (NCHW: 8 x 32
    # outputs, input rows 16 and column 64 shared by two tiles; channels_last: 4 x 8 positions x
    # 32 channels), 1 x 1 and 2 x 5 images, windows of -inf only, NaN and -inf scattered (on the
    # tiles' shared rows too), every broadcast form of `other`
    n, c, h, w = shape
    x = rand(shape, dtype, "cpu")
    x[0, 0, : min(h, 4), : min(w, 5)] = -math.inf
    if h > 16:
        x[0, -1, 16, ::3] = math.nan
    if w > 64:
        x[0, 1, ::2, 64] = -math.inf
    pick = torch.rand(shape) < 0.03
    x = torch.where(pick, torch.where(torch.rand(shape) < 0.5, math.nan, -math.inf), x.double()).to(dtype)
    if channels_last:
        x = x.contiguous(memory_format=torch.channels_last)
    ho, wo = F.max_pool2d(x, 3, 2, 1).shape[2:]
    for oshape in [(n, c, ho, wo), (1, c, 1, 1), (n, 1, ho, wo), (), (wo,), (c, 1, 1)]:
        other = rand(oshape, dtype, "cpu")
        exp = pool_ref(x, other, (3, 3), (2, 2), (1, 1), False)
        check(E.max_pool2d_add(x, other, [3, 3], [2, 2], [1, 1], False), exp, exp.stride())


@pytest.mark.parametrize("channels_last", [False, True])
@pytest.mark.parametrize(
    "shape,oshape,pool",
    [
        ((1, 10, 1), (2, 1, 8, 1), ((3, 3), (1, 2), (0, 1), False)),  # issue #56's case
        ((2, 3, 9, 9), (4, 2, 3, 5, 5), POOLS[0]),  # leading dims over several images
        ((1, 4, 9, 9), (3, 4, 5, 5), POOLS[0]),  # one image, N repeated
        ((2, 1, 9, 9), (2, 6, 5, 5), POOLS[0]),  # one channel, C repeated
        ((2, 3, 2, 9), (2, 3, 4, 5), POOLS[0]),  # one pooled row, Ho repeated
        ((2, 3, 9, 2), (1, 3, 9, 5), POOLS[2]),  # one pooled column, Wo repeated
    ],
    ids=str,
)
def test_max_pool2d_add_expanding(E, mp_variant, shape, oshape, pool, channels_last):
    # other broadcasts the pooled result up (#56): every variant (none of them takes these: the
    # generic kernel), with the result's strides as torch's add gives them
    k, s, p, ceil = pool
    x = rand(shape, torch.float32, "cpu")
    x.view(-1)[::5] = math.nan
    if channels_last and x.dim() == 4:
        x = x.contiguous(memory_format=torch.channels_last)
    other = rand(oshape, torch.float32, "cpu")
    for o in (other, other.transpose(0, -1).contiguous().transpose(0, -1)):
        out = E.max_pool2d_add(x, o, list(k), list(s), list(p), ceil)
        exp = pool_ref(x, o, k, s, p, ceil)
        check(out, exp, exp.stride())


def test_max_pool2d_add_huge_window(E):
    # accepted geometry with a window far larger than the input: the loop is clipped first
    x = torch.randn(1, 2, 3, 3)
    o = torch.randn(1, 2, 1, 1)
    k, p = 2**29, 2**28
    out = E.max_pool2d_add(x, o, [k, k], [1, 1], [p, p], False)
    check(out, (x.amax(dim=(2, 3), keepdim=True) + o).expand(1, 2, 4, 4))


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.float16, torch.bfloat16], ids=str)
@pytest.mark.parametrize("pool", POOLS, ids=str)
@pytest.mark.parametrize("channels_last", [False, True])
def test_max_pool2d_add_backward(E, dtype, pool, channels_last):
    k, s, p, ceil = pool
    x = rand((2, 3, 12, 9), dtype, "cpu")
    x[0, 1, 2:5, 3:6] = x[0, 1, 2, 3]  # ties: the first in row-major window order wins
    x[1, 2, 4, 4] = math.nan
    if channels_last:
        x = x.contiguous(memory_format=torch.channels_last)
    # torch's CPU backward sums in the same (row-major window) order; CUDA accumulates half /
    # bfloat16 in float and rounds once
    xr = up(x).detach().requires_grad_()
    pooled = F.max_pool2d(xr, k, s, p, ceil_mode=ceil)
    go = rand(pooled.shape, dtype, "cpu")
    pooled.backward(up(go))
    gi = E.max_pool2d_add_backward(go, x, list(k), list(s), list(p), ceil)
    exp = xr.grad.to(dtype)
    check(gi, exp, exp.stride())


@pytest.mark.parametrize("channels_last", [False, True])
def test_max_pool2d_add_backward_all_minus_inf_window(E, channels_last):
    # torch's CUDA kernels: NCHW gives such a window's gradient to its first element, NHWC
    # (channels_last) to (0, 0) if the window covers it and drops it otherwise
    x = torch.randn(1, 2, 8, 8)
    x[:, :, 3:6, 3:6] = -math.inf  # the window of output (2, 2) of 3x3 / s2 / p1: rows, cols 3..5
    x[:, :, 0:2, 0:2] = -math.inf  # output (0, 0) too (clipped to rows, cols 0..1)
    if channels_last:
        x = x.contiguous(memory_format=torch.channels_last)
    go = torch.ones(1, 2, 4, 4)
    gi = E.max_pool2d_add_backward(go, x, [3, 3], [2, 2], [1, 1], False)
    if channels_last:
        assert (gi[:, :, 3:6, 3:6] == 0).all()
        assert (gi[:, :, 0, 0] == 1).all()
    else:
        assert (gi[:, :, 3, 3] == 1).all()  # the first element of window (2, 2)
        assert (gi[:, :, 0, 0] == 1).all()
    assert gi.sum() == go.sum() - (2 if channels_last else 0)


# ---- diagonal -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "dtype",
    [torch.float32, torch.float16, torch.int64, torch.bool, torch.uint8, torch.complex64, torch.complex128],
    ids=str,
)
@pytest.mark.parametrize(
    "shape,offset,d1,d2",
    [
        ((5, 7), 0, 0, 1),
        ((5, 7), 2, 0, 1),
        ((5, 7), -3, 1, 0),
        ((3, 4, 6, 5), 1, 1, 3),
        ((2, 9, 9), 0, -2, -1),
        ((2, 3, 4, 5, 6), -1, 0, 4),
        ((4, 4), 9, 0, 1),
        ((64, 33, 33), 0, 1, 2),
    ],
    ids=str,
)
@pytest.mark.parametrize("layout", ["contiguous", "transposed", "sliced", "expanded", "misaligned"])
def test_diagonal(E, dtype, shape, offset, d1, d2, layout):
    x = with_layout(rand(shape, dtype, "cpu") if not dtype.is_complex else torch.randn(shape, dtype=dtype), layout)
    out = E.diagonal(x, offset, d1, d2)
    exp = torch.diagonal(x, offset, d1, d2).contiguous()
    check(out, exp, exp.stride())
    g = rand(exp.shape, dtype, "cpu") if not dtype.is_complex else torch.randn(exp.shape, dtype=dtype)
    gb = E.diagonal_backward(g, list(x.shape), offset, d1, d2)
    ref = torch.zeros(x.shape, dtype=dtype)
    torch.diagonal(ref, offset, d1, d2).copy_(g)
    check(gb, ref, ref.stride())


def test_max_pool2d_add_parameters_past_int_raise(E):
    x = torch.randn(1, 1, 2, 2)
    with pytest.raises(RuntimeError, match="below 2\\^30"):
        E.max_pool2d_add(x, torch.zeros(()), [2**30 + 2, 2**30 + 2], [1, 1], [2**29 + 1, 2**29 + 1], False)


def test_64bit_offsets(E):
    # views whose offsets pass 2^31 elements take the kernels' 64-bit index paths (the storage
    # is reserved, not touched: only the viewed bytes are written)
    big = torch.empty(2**31 + 4096, dtype=torch.uint8)
    x = big.as_strided((3, 5, 7), (2**30 + 17, 64, 1))  # offsets up to 2^31 + 290
    x.copy_(torch.randint(0, 200, (3, 5, 7), dtype=torch.uint8))
    y = torch.randint(0, 50, (5, 1), dtype=torch.uint8)
    check(E.add(x, y), x + y, meta_strides(torch.add, x, y))
    check(E.maximum(y, x), torch.maximum(y, x))
    check(E.cast(x, torch.float16), x.half())
    check(E.diagonal(x, 1, 1, 2), torch.diagonal(x, 1, 1, 2).contiguous())
    g = torch.randint(0, 9, (3, 5), dtype=torch.uint8)
    ref = torch.zeros(3, 5, 7, dtype=torch.uint8)
    torch.diagonal(ref, 1, 1, 2).copy_(g)
    check(E.diagonal_backward(g, [3, 5, 7], 1, 1, 2), ref)


# ---- nonzero (the CUB passes by host stand-ins: the glue, flags and coordinate writers run) ----

NZ_DTYPES = [
    torch.bool,
    torch.uint8,
    torch.int16,
    torch.int64,
    torch.float16,
    torch.bfloat16,
    torch.float32,
    torch.float64,
    torch.complex64,
]


def sparse_like(shape, dtype, frac=0.3):
    x = rand(shape, dtype, "cpu") if not dtype.is_complex else torch.randn(shape, dtype=dtype)
    keep = torch.rand(shape) < frac
    x = torch.where(keep, x, torch.zeros((), dtype=dtype))
    if dtype.is_floating_point and x.numel():
        x.view(-1)[::7] = -0.0  # counts as zero
        x.view(-1)[3::11] = math.nan  # counts as nonzero
    return x


# The nonzero family's kernel variants (csrc/core/variants.h): every nonzero test runs once per
# variant name, each op of the family set to it where it has one.
NZ_FAMILY = ("nonzero", "nonzero_static")
NZ_VARIANTS = sorted({name for op in NZ_FAMILY for name in VARIANTS[op]})


@pytest.fixture(scope="module", params=NZ_VARIANTS)
def nz_variant(E, request):
    """Runs the test with the nonzero family's variant `request.param` (module-scoped: pytest
    runs every test of one variant, then of the next)."""
    old = E._emu_variant(",".join(f"{op}:{request.param}" for op in NZ_FAMILY if request.param in VARIANTS[op]))
    yield request.param
    E._emu_variant(old)


def check_nonzero(E, x):
    exp = torch.nonzero(x)
    out = E.nonzero(x)
    # torch's CUDA layout: column-major [nnz, ndim], strides (1, max(nnz, 1))
    assert out.dtype == torch.long and out.shape == exp.shape
    if out.numel():
        assert out.stride() == (1, max(exp.shape[0], 1)), out.stride()
    assert torch.equal(out, exp)
    for size in (0, 1, exp.shape[0], exp.shape[0] + 5):
        st = E.nonzero_static(x, size=size, fill_value=-7)
        assert torch.equal(st, torch.nonzero_static(x, size=size, fill_value=-7)), size
        bi, bc = E.nonzero_bounded(x, size=size, fill_value=-7)  # the same pass, plus its count
        assert torch.equal(bi, st) and bi.stride() == st.stride() and bc.dim() == 0
        assert int(bc) == (int(torch.count_nonzero(x)) if x.dim() else int(bool(x != 0))), size


@pytest.mark.parametrize("dtype", NZ_DTYPES, ids=str)
@pytest.mark.parametrize("shape", [(), (0,), (1,), (37,), (6, 0), (9, 13), (3, 4, 5, 6), (2,) * 7], ids=str)
@pytest.mark.parametrize("layout", ["contiguous", "transposed", "sliced", "expanded", "channels_last"])
def test_nonzero(E, nz_variant, dtype, shape, layout):
    check_nonzero(E, with_layout(sparse_like(shape, dtype), layout))


def test_nonzero_paths(E, nz_variant):
    # past the 16 MiB worst-case cap (1030 * 1030 * 2 * 8 bytes): the exact two-pass path (count,
    # then select)
    x = torch.rand(1030, 1030) < 0.01
    check_nonzero(E, x)
    check_nonzero(E, x.t())  # read through strides
    # every dim reversed: 18 dims after merging, past the kernels' 16 (a contiguous copy first)
    y = (torch.rand((2,) * 18) < 0.5).permute(tuple(range(17, -1, -1)))
    check_nonzero(E, y)
    check_nonzero(E, torch.ones(5, 3, dtype=torch.bool))  # nnz == numel: no trim
    check_nonzero(E, torch.zeros(4, 4))


@settings(max_examples=40, deadline=None, derandomize=True)
@given(
    shape=st.lists(st.integers(0, 6), min_size=0, max_size=6),
    perm_seed=st.integers(0, 10**6),
    frac=st.sampled_from([0.0, 0.05, 0.5, 1.0]),
    dtype=st.sampled_from([torch.bool, torch.float32, torch.int8]),
)
def test_nonzero_property(E, nz_variant, shape, perm_seed, frac, dtype):
    g = torch.Generator().manual_seed(perm_seed)
    perm = torch.randperm(len(shape), generator=g).tolist()
    base = sparse_like(tuple(shape[p] for p in perm), dtype, frac)
    check_nonzero(E, base.permute([perm.index(i) for i in range(len(shape))]))


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16], ids=str)
@pytest.mark.parametrize("channels_last", [False, True])
def test_max_pool2d_add_backward_copies_single_window_gradient(E, dtype, channels_last):
    # torch's CUDA NHWC backward copies the gradient of an element inside exactly one window,
    # so a -0.0 stays -0.0; everywhere else (and in NCHW) the gradient is a sum from +0.0
    x = torch.randn(2, 3, 8, 10).to(dtype)
    if channels_last:
        x = x.contiguous(memory_format=torch.channels_last)
    go = torch.full((2, 3, 4, 5), -0.0, dtype=dtype)
    gi = E.max_pool2d_add_backward(go, x, [3, 3], [2, 2], [1, 1], False)
    assert (gi == 0).all()
    _, idx = F.max_pool2d(x.float(), 3, 2, 1, return_indices=True)
    argmax = torch.zeros(2, 3, 80, dtype=torch.bool).scatter_(2, idx.flatten(2), True).view(2, 3, 8, 10)

    def windows(i, n_out):  # how many 3x3 / s2 / p1 windows cover position i
        return sum(1 for o in range(n_out) if 2 * o - 1 <= i <= 2 * o + 1)

    one = torch.tensor([[windows(h, 4) * windows(w, 5) == 1 for w in range(10)] for h in range(8)])
    expect_negative = argmax & one if channels_last else torch.zeros_like(argmax)
    assert torch.equal(torch.signbit(gi), expect_negative)


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16], ids=str)
def test_clamp_number_bounds_in_float(E, dtype):
    # torch's CUDA clamp takes number bounds in float for half / bfloat16 (its CPU kernel
    # converts them to the dtype, and raises for a half bound past 65504)
    x = rand((3, 41), dtype, "cpu")
    check(E.clamp(x, None, 1e6), x)
    check(E.clamp(x, -1e6, 1e6), x)
    check(E.clamp(x, 1e38, None), torch.full_like(x.float(), 1e38).to(dtype))  # inf in half
    with pytest.raises(RuntimeError, match="value cannot be converted to type float without overflow"):
        E.clamp(x, None, 1e300)


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16], ids=str)
def test_clamp_number_bounds_keep_a_0d_self_dtype(E, dtype):
    # the float bounds are numbers: a 0-d half self stays half (as torch's result)
    x = torch.tensor(0.3, dtype=dtype)
    for out in (E.clamp(x, -0.5, 0.25), E.clamp(x, None, 0.25), E.clamp(x, 0.5, None)):
        assert out.dtype == dtype and out.dim() == 0
    check(E.clamp(x, -0.5, 0.25), torch.clamp(x.float(), -0.5, 0.25).to(dtype))


# ---- the emulated device: launch limits and thread order -----------------------------------------

# CUDA's limits on an H100: grid (2^31 - 1, 65535, 65535), block (1024, 1024, 64), 1024 threads
BAD_LAUNCHES = [
    ([0, 1, 1], [32, 1, 1]),
    ([2**31, 1, 1], [1, 1, 1]),
    ([1, 65536, 1], [1, 1, 1]),
    ([1, 1, 65536], [1, 1, 1]),
    ([1, 1, 1], [0, 1, 1]),
    ([1, 1, 1], [1025, 1, 1]),
    ([1, 1, 1], [1, 1025, 1]),
    ([1, 1, 1], [1, 1, 65]),
    ([1, 1, 1], [32, 32, 2]),
]


@pytest.mark.parametrize("grid,block", BAD_LAUNCHES, ids=str)
def test_launch_limits(E, grid, block):
    with pytest.raises(torch.AcceleratorError, match="invalid launch configuration"):
        E._emu_launch(grid, block)


@pytest.mark.parametrize(
    "grid,block",
    [([7, 3, 2], [32, 4, 2]), ([1, 1, 1], [1024, 1, 1]), ([5, 1, 1], [1, 1, 64]), ([3, 1, 1], [16, 64, 1])],
    ids=str,
)
def test_launch_limits_accepted(E, grid, block):
    order = E._emu_launch(grid, block)
    assert torch.equal(order.sort().values, torch.arange(math.prod(grid) * math.prod(block)))


def test_thread_order_is_shuffled(E):
    grid, block = [40, 3, 1], [64, 2, 1]
    n = 40 * 3 * 64 * 2
    E._emu_seed(12345)
    a = E._emu_launch(grid, block)
    assert torch.equal(a, E._emu_launch(grid, block))  # a seed replays
    assert torch.equal(a.sort().values, torch.arange(n))  # every thread once
    assert not torch.equal(a, torch.arange(n))
    # blocks interleave: the first 128 threads to run come from many blocks
    assert len(set((a[:128] // 128).tolist())) > 32
    E._emu_seed(54321)
    assert not torch.equal(a, E._emu_launch(grid, block))
    E._emu_seed(0)  # 0: in order
    assert torch.equal(E._emu_launch(grid, block), torch.arange(n))


# ---- nonzero's CUB stand-ins: CUB's contract ---------------------------------------------------------

# What each misuse makes the stand-in do (csrc/core/cuda/cub_emulation.h): the CUDA error code
# CUB returns.
CUB_MISUSES = {
    "short_temp": 1,  # cudaErrorInvalidValue: fewer bytes than the size query returned
    "other_num_items": 1,  # cudaErrorInvalidValue: the size was queried for fewer items
    "misaligned_temp": 716,  # cudaErrorMisalignedAddress
    "negative_num_items": 1,
}


@pytest.mark.parametrize("algorithm", ["select", "reduce", "sum", "segsort"])
@pytest.mark.parametrize("misuse", sorted(CUB_MISUSES))
def test_cub_stand_ins_refuse_misuse(E, algorithm, misuse):
    assert E._emu_cub_misuse(algorithm, misuse) == CUB_MISUSES[misuse]


@pytest.mark.parametrize("algorithm", ["select", "reduce", "sum", "segsort"])
def test_cub_stand_ins_follow_the_contract(E, algorithm):
    # the size query writes nothing; the second call with exactly that many bytes works; the
    # count lands at the stream's synchronization
    assert E._emu_cub_misuse(algorithm, "none") == 0


def test_cub_stand_ins_count_past_2_31(E):
    # 64-bit num_items (CCCL >= 2.7): counted and selected in 64 bits (every 2^20-th item,
    # the last selected rank and item returned)
    n = 2**31 + 2**20 + 5
    count, last_rank, last_item = E._emu_cub_items(n, 2**20)
    assert count == (n + 2**20 - 1) // 2**20 == 2**11 + 2
    assert (last_rank, last_item) == (count - 1, (count - 1) * 2**20)


def test_nonzero_count_is_read_after_synchronization(E):
    # the two-pass path reads the count on the host: through the stream's synchronization (CUB's
    # passes; the look-back kernel's is test_nonzero_paths')
    old = E._emu_variant("nonzero:cub,nonzero_static:cub")
    try:
        x = torch.rand(3000, 1000) < 0.001
        check_nonzero(E, x)
    finally:
        E._emu_variant(old)


def test_nonzero_many_tiles(E, nz_variant):
    # past one tile of every pass (the look-back's: 8192 elements; its look-back window: 32
    # tiles), a tile boundary inside a run of selected elements, a misaligned and a strided read
    x = torch.rand(37, 8200) < 0.3
    x[0, 8100:8300] = True
    check_nonzero(E, x)
    check_nonzero(E, x.view(-1)[1:])  # not 16-byte aligned: the element-by-element loads
    y = torch.rand(20, 3, 5000).to(torch.float16) * (torch.rand(20, 3, 5000) < 0.5)
    check_nonzero(E, y.transpose(0, 2))


def counted(E, fn):
    """fn()'s [launches, memsets, syncs, temporary bytes] on the emulated device."""
    E._emu_counters(True)
    fn()
    return E._emu_counters(True)


def test_nonzero_static_lookback_costs(E):
    # the look-back variant: one memset and one kernel, no host sync; its only temporary is the
    # tile counter and one status word per 8192-element tile
    old = E._emu_variant("nonzero_static:lookback")
    try:
        for shape, size in [((3, 40000), 50000), ((1000,), 3), ((), 1)]:
            x = torch.rand(shape) < 0.5
            numel = x.numel()
            launches, memsets, syncs, temp = counted(E, lambda: E.nonzero_static(x, size=size))
            assert launches == (x.dim() > 0) and memsets <= 1 and syncs == 0, (launches, memsets, syncs)
            assert temp <= 8 * (2 + numel // 8192), temp
            launches, memsets, syncs, _ = counted(E, lambda: E.nonzero_bounded(x, size=size))
            assert launches == 1 and memsets <= 1 and syncs == 0, (launches, memsets, syncs)
    finally:
        E._emu_variant(old)


def test_nonzero_costs(E, nz_variant):
    # every variant of nonzero reads the count once (the only host sync), and of nonzero_static
    # never; nonzero's temporaries: at most the 8 * ndim bytes per element of its worst-case
    # buffer (16 MiB at most, csrc/nonzero/cuda/nonzero.cu), plus 1 KiB
    for shape in [(7, 9), (60, 700), (1030, 1030)]:
        x = torch.rand(shape) < 0.3
        launches, _, syncs, temp = counted(E, lambda: E.nonzero(x))
        assert syncs == 1 and 1 <= launches <= 4, (launches, syncs)
        assert temp <= min(8 * x.dim() * x.numel(), 16 << 20) + 1024, temp
        assert counted(E, lambda: E.nonzero_static(x, size=100))[2] == 0


@pytest.mark.parametrize("op,variant", [(op, v) for op in ("binary16", "max_pool2d_add") for v in VARIANTS[op]])
def test_variant_costs(E, op, variant):
    # every variant of the elementwise and pooling kernels: one launch, no memset, no host sync,
    # no temporary, broadcast and channels_last included (the GPU sweep times like against like)
    old = E._emu_variant(f"{op}:{variant}")
    try:
        if op == "binary16":
            a, b = torch.randn(3, 64, 33).half(), torch.randn(64, 1).bfloat16()
            calls = [lambda: E.add(a, b.half()), lambda: E.sub(a.bfloat16(), b, alpha=-1), lambda: E.mul(a, a)]
        else:
            x, o = torch.randn(2, 16, 37, 41), torch.randn(1, 16, 1, 1)
            cl = x.contiguous(memory_format=torch.channels_last)
            calls = [lambda: E.max_pool2d_add(v, o, [3, 3], [2, 2], [1, 1], False) for v in (x, cl)]
        for call in calls:
            call()  # the operands' conversions above run outside the count
            assert counted(E, call) == [1, 0, 0, 0]
    finally:
        E._emu_variant(old)


def test_detection_costs(E):
    # nms_static and multiclass_nms_static never sync with the host and launch as many kernels
    # for 3000 boxes as for 50 (a CUDA graph replays them); nms syncs once, to size its result
    launches = set()
    for n in (50, 3000):
        boxes = torch.rand(2, n, 4) * 100
        boxes[..., 2:] += boxes[..., :2]
        scores = torch.rand(2, n, 5)
        kw = dict(score_threshold=0.05, iou_threshold=0.5, max_detections=100, pre_nms_top_k=1000)
        mc = counted(E, lambda: E.multiclass_nms_static(boxes, scores, class_agnostic=False, multi_label=True, **kw))
        assert mc[1:3] == [0, 0] and mc[3] <= 1024, mc
        st = counted(E, lambda: E.nms_static(boxes[0], scores[0, :, 0], 0.5, size=100))
        assert st[1:] == [0, 0, 0], st
        assert counted(E, lambda: E.nms(boxes[0], scores[0, :, 0], 0.5))[2] == 1
        launches.add((mc[0], st[0]))
    assert len(launches) == 1, launches


def test_variant_names_are_validated(E):
    with pytest.raises(ValueError, match="unknown variant 'nope' of nonzero_static"):
        E._emu_variant("nonzero_static:nope")
    with pytest.raises(ValueError, match="unknown op 'bogus'"):
        torch.ops.myops._set_cuda_variant("bogus:cub")
    with pytest.raises(ValueError, match="is not op:variant"):
        E._emu_variant("nonzero")
    assert torch.ops.myops._cuda_variant_defaults(90) == [f"{op}:{names[0]}" for op, names in VARIANTS.items()]


def test_variant_environment_is_validated(E, tmp_path):
    # MYOPS_CUDA_VARIANT is read once; a name it does not know fails every tunable op's call
    code = (
        "import sys, torch; sys.path.insert(0, 'tests')\n"
        "from cuda_emulation.loader import build\n"
        "E = build()\n"
        "x = torch.rand(50) < 0.5\n"
        "try:\n"
        "    E.nonzero(x)\n"
        "except ValueError as e:\n"
        "    print('refused:', e)\n"
        "print(E.nonzero_static(x, size=3).shape)\n"
    )
    env = dict(os.environ, MYOPS_CUDA_VARIANT="nonzero:lookback,nonzero:fast")
    r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=300)
    assert "refused: MYOPS_CUDA_VARIANT: unknown variant 'fast' of nonzero" in r.stdout, r.stdout + r.stderr
    assert r.returncode != 0 and "unknown variant 'fast'" in r.stderr


def test_cooperative_launch_needs_atomic_tiles(E):
    # a chain of blocks, each spin-waiting on the previous tile: correct in any block order when
    # the tiles come from an atomic counter; from blockIdx, a block may wait on one that has not
    # started - the emulation, which keeps a few blocks resident, reports the deadlock
    assert E._emu_spin_order(True, 200) == 200
    with pytest.raises(RuntimeError, match="deadlock"):
        E._emu_seed(12345)
        E._emu_spin_order(False, 200)


def test_barrier_kernels_run_their_real_block_size(E):
    """A kernel whose threads meet at barriers runs here with its 256 threads (fibers, in a seeded
    random order), so a barrier it drops gives wrong results, as on a device: a copy of
    multiclass_nms.cu's block scan with and without its first barrier."""
    want = (torch.arange(1, 257).cumsum(0) - torch.arange(1, 257)).repeat(3).tolist()
    assert E._emu_block_scan(True, 3) == want
    wrong = 0
    for seed in range(5):
        E._emu_seed(1000 + seed)
        wrong += E._emu_block_scan(False, 3) != want
    assert wrong == 5


# ---- the CUDA drop-in (csrc/dropin/cuda/aten_override_cuda.cpp), against the CPU drop-in ----------

DROPIN_OPS = list(torch.ops.myops._override_ops())


def dropin_call(lib, op, fn):
    """fn() with `op` routed by the drop-in of `lib` (myops: the CPU one, myops_emu: the emulated
    CUDA one): (result or the exception it raised, calls routed, calls handed back). Both register
    on the CPU key (the emulated CUDA backend takes it), the newer one on top: each call
    unregisters its own after, so the other's kernels are back."""
    i = DROPIN_OPS.index(op)
    lib._override_enable([op])
    try:
        before = lib._override_stats(True)
        try:
            out = fn()
        except Exception as e:  # noqa: BLE001 - compared with the other drop-in's
            out = e
        after = lib._override_stats(True)
    finally:
        lib._override_disable()
        lib._override_unregister()
    assert list(lib._override_registered()) == []
    return out, after[2 * i] - before[2 * i], after[2 * i + 1] - before[2 * i + 1]


def _t(shape, dtype):
    return rand(shape, dtype, "cpu")


def _div_host_scalar_args():
    return _t((8, 8), torch.float32), torch.tensor(3.3)


# (id, op, call, differences): `differences` names where the CUDA backend's rules differ from the
# CPU's on purpose: "layout" (torch's CUDA nonzero is column-major), "signed_zero" (fmax / fmin ties),
# "reciprocal" (torch's CUDA div by a CPU scalar, div_reference: the case's own arguments)
DROPIN_CASES = [
    ("add", "add", lambda: torch.add(_t((5, 33), torch.float32), _t((33,), torch.float32)), ""),
    ("add_half", "add", lambda: torch.add(_t((5, 33), torch.float16), _t((5, 33), torch.float16)), ""),
    ("add_int_alpha", "add", lambda: torch.add(_t((7, 9), torch.int64), _t((9,), torch.int64), alpha=3), ""),
    ("add_float_alpha", "add", lambda: torch.add(_t((7,), torch.float32), _t((7,), torch.float32), alpha=0.5), ""),
    (
        "add_complex",
        "add",
        lambda: torch.add(torch.randn(4, dtype=torch.complex64), torch.randn(4, dtype=torch.complex64)),
        "",
    ),
    ("add_transposed", "add", lambda: torch.add(_t((17, 6), torch.float64).t(), _t((6, 17), torch.float64)), ""),
    ("sub", "sub", lambda: torch.sub(_t((3, 4, 5), torch.int32), _t((4, 1), torch.int32)), ""),
    ("mul_bool", "mul", lambda: torch.mul(torch.rand(9) < 0.5, torch.rand(9) < 0.5), ""),
    ("mul_scalar", "mul", lambda: torch.mul(_t((6, 7), torch.float32), torch.tensor(2.5)), ""),
    ("div", "div", lambda: torch.div(_t((8, 8), torch.float32), _t((8,), torch.float32) + 3), ""),
    ("div_host_scalar", "div", lambda: torch.div(*_div_host_scalar_args()), "reciprocal"),
    ("maximum", "maximum", lambda: torch.maximum(_t((4, 31), torch.float32), _t((31,), torch.float32)), "signed_zero"),
    (
        "minimum",
        "minimum",
        lambda: torch.minimum(_t((4, 31), torch.bfloat16), _t((4, 31), torch.bfloat16)),
        "signed_zero",
    ),
    ("relu", "relu", lambda: torch.relu(_t((1000,), torch.float16)), "signed_zero"),
    ("relu_bool", "relu", lambda: torch.relu(torch.rand(5) < 0.5), ""),
    (
        "where",
        "where",
        lambda: torch.where(torch.rand(6, 5) < 0.5, _t((6, 5), torch.float32), _t((5,), torch.float32)),
        "",
    ),
    (
        "clamp",
        "clamp",
        lambda: torch.clamp(_t((4, 9), torch.float32), _t((9,), torch.float32) - 1, _t((4, 1), torch.float32) + 1),
        "signed_zero",
    ),
    ("clamp_one_sided", "clamp", lambda: torch.clamp(_t((4, 9), torch.float32), min=_t((9,), torch.float32)), ""),
    ("nonzero", "nonzero", lambda: torch.nonzero(torch.rand(13, 7) < 0.3), "layout"),
    ("nonzero_big", "nonzero", lambda: torch.nonzero(torch.rand(700, 900) < 0.01), "layout"),
    (
        "nonzero_static",
        "nonzero_static",
        lambda: torch.nonzero_static(torch.rand(13, 7) < 0.3, size=40, fill_value=-1),
        "layout",
    ),
    ("sigmoid_int", "sigmoid", lambda: torch.sigmoid(_t((9,), torch.int32)), ""),
]


@pytest.mark.parametrize("case", DROPIN_CASES, ids=lambda c: c[0])
def test_cuda_dropin_against_cpu_dropin(E, case):
    _, op, call, differences = case
    seed = torch.initial_seed()
    torch.manual_seed(seed)
    mine, routed, handed = dropin_call(E, op, call)
    torch.manual_seed(seed)  # the same inputs
    ref, ref_routed, ref_handed = dropin_call(torch.ops.myops, op, call)
    # the calls seen (the inputs' own construction may call the op too) are the same for both
    assert routed + handed == ref_routed + ref_handed >= 1
    if isinstance(ref, Exception):  # torch refuses it: the same refusal through either drop-in
        assert type(mine) is type(ref) and str(mine) == str(ref), (mine, ref)
        return
    assert routed == ref_routed, f"CUDA drop-in routed {routed}, CPU drop-in {ref_routed}"
    if "reciprocal" in differences:
        torch.manual_seed(seed)
        ref = div_reference(*_div_host_scalar_args())
    if "layout" in differences:
        assert torch.equal(mine, ref)
        if mine.numel():
            assert mine.stride() == (1, max(mine.shape[0], 1))  # torch's CUDA layout
        return
    check(mine, ref, ref.stride(), signed_zero="signed_zero" not in differences)


def test_cuda_dropin_is_off_after_disable(E):
    x = torch.randn(4, 4)
    out, routed, _ = dropin_call(E, "relu", lambda: torch.relu(x))
    assert routed == 1 and torch.equal(out, torch.relu(x))
    before = E._override_stats(True)
    torch.relu(x)  # torch's own kernel again: not counted
    assert E._override_stats(True) == before


# ---- nms (the mask kernel and the device sweep; the sweep as a one-thread block) ----------------
# torchvision's CUDA IoU equals its CPU one for float32 boxes without NaN and a threshold exact in
# float (same operations in float; only a NaN coordinate takes fmax / fmin's other branch), so the
# emulated CUDA ops are compared with torchvision's CPU kernels.


@pytest.mark.parametrize("n", [0, 1, 63, 64, 65, 130, 700])
@pytest.mark.parametrize("ties", [False, True])
def test_nms(E, n, ties):
    tv = pytest.importorskip("torchvision").ops
    xy = torch.rand(n, 2) * 100
    boxes = torch.cat([xy, xy + torch.rand(n, 2) * 30], 1)
    if n > 4:
        boxes[1::4] = boxes[0::4][: boxes[1::4].shape[0]]  # duplicates
    scores = torch.randint(0, 5, (n,)).float() if ties else torch.rand(n)
    if n:
        scores[torch.rand(n) < 0.1] = math.nan
    idxs = torch.randint(0, 3, (n,))
    for thr in (0.0, 0.25, 0.5, 0.75):
        exp = tv.nms(boxes, scores, thr)
        assert torch.equal(E.nms(boxes, scores, thr), exp)
        bexp = tv.batched_nms(boxes, scores, idxs, thr)
        assert torch.equal(E.batched_nms(boxes, scores, idxs, thr), bexp)
        for size in (0, 3, exp.numel() + 2):
            keep, count = E.nms_static(boxes, scores, thr, size=size)
            m = min(size, exp.numel())
            assert int(count) == exp.numel() and torch.equal(keep[:m], exp[:m]) and (keep[m:] == -1).all()
            keep, count = E.batched_nms_static(boxes, scores, idxs, thr, size=size)
            m = min(size, bexp.numel())
            assert int(count) == bexp.numel() and torch.equal(keep[:m], bexp[:m]) and (keep[m:] == -1).all()


def test_batched_nms_per_class_path(E):
    # above 100000 box elements the CUDA path is one class-aware sweep (distinct scores: same order)
    tv = pytest.importorskip("torchvision").ops
    n = 25100
    xy = torch.rand(n, 2) * 3000
    boxes = torch.cat([xy, xy + 20 + torch.rand(n, 2) * 40], 1)
    scores = torch.randperm(n).float()
    idxs = torch.randint(0, 7, (n,))
    assert torch.equal(E.batched_nms(boxes, scores, idxs, 0.5), tv.batched_nms(boxes, scores, idxs, 0.5))


# ---- multiclass_nms_static (the batch pipeline: compaction, CUB's segmented sorts by stand-ins,
# the per-segment sweep and the gather, 256 fibers a block) -------------------------------------
# The reference is the op's definition (tests/test_multiclass_nms.py) with the emulated CUDA nms /
# batched_nms in torchvision's place: torchvision's CUDA IoU and its CUDA choice of batched_nms's
# path (the coordinate trick up to 25,000 candidates), NaN and non-finite boxes included. Where
# the CUDA arithmetic equals the CPU's (float boxes without NaN, thresholds exact in float, both
# forms on one batched_nms path) the CPU op must agree too.


def _mc_reference(E, boxes, scores, **kw):
    from test_multiclass_nms import reference

    return reference(boxes, scores, **{"nms": E.nms, "batched_nms": E.batched_nms, **kw})


def _mc_assert_same(got, want):
    from test_multiclass_nms import assert_same

    assert_same(got, want)


def _mc_inputs(n, a, c, dtype, per_class_boxes=False, low=0.0):
    """Boxes that overlap (from `low`), scores of 8 values (ties everywhere), NaN and -0.0 scores."""
    xy = torch.rand((n, a, c, 2) if per_class_boxes else (n, a, 2), dtype=torch.float64) * 100 + low
    boxes = torch.cat([xy, xy + torch.rand_like(xy) * 30 + 1], -1).to(dtype)
    scores = (torch.randint(0, 8, (n, a, c)) / 8).to(dtype)
    scores[torch.rand(n, a, c) < 0.05] = math.nan
    scores[torch.rand(n, a, c) < 0.05] = -0.0
    return boxes, scores


MC_SETTINGS = [  # score_threshold, iou_threshold, max_detections, pre_nms_top_k
    (0.3, 0.5, 20, None),
    (0.1, 0.25, 100, 30),  # the pre-NMS cut inside a run of equal scores
    (0.5, 0.75, 1, 1000),
    (0.0, 0.0, 300, None),
]


@pytest.mark.parametrize("dtype", [torch.float16, torch.float32, torch.float64])
@pytest.mark.parametrize("shape", [(1, 60, 1), (1, 40, 6), (3, 50, 4), (6, 20, 1)], ids=str)
@pytest.mark.parametrize("multi_label", [True, False], ids=["multi", "single"])
@pytest.mark.parametrize("class_agnostic", [False, True], ids=["per_class_nms", "agnostic"])
def test_multiclass_nms_static(E, dtype, shape, multi_label, class_agnostic):
    detections = 0
    for per_class_boxes in (False, True):
        boxes, scores = _mc_inputs(*shape, dtype, per_class_boxes)
        for thr, iou, k, top_k in MC_SETTINGS:
            kw = dict(
                score_threshold=thr,
                iou_threshold=iou,
                max_detections=k,
                pre_nms_top_k=top_k,
                class_agnostic=class_agnostic,
                multi_label=multi_label,
            )
            got = E.multiclass_nms_static(boxes, scores, **kw)
            _mc_assert_same(got, _mc_reference(E, boxes, scores, **kw))
            if dtype != torch.float16:  # the CPU op: float / double only
                _mc_assert_same(got, torch.ops.myops.multiclass_nms_static(boxes, scores, **kw))
            detections += int(got[0].sum())
    assert detections > 0


def _pairs_at_the_threshold(pairs, classes, iou, seed):
    """Boxes in pairs of one class whose IoU is within 1e-3 of `iou` (the second box of a pair is
    the first moved right by a hair more or less than the IoU asks), in high classes with a
    fractional largest coordinate: torchvision's coordinate trick shifts them by ~10^5, where one
    rounding more or less of `boxes + idxs * (max + 1)` moves the shifted IoU across `iou`."""
    g = torch.Generator().manual_seed(seed)
    xy = torch.rand(pairs, 2, generator=g, dtype=torch.float64) * 900
    wh = torch.rand(pairs, 2, generator=g, dtype=torch.float64) * 60 + 20
    first = torch.cat([xy, xy + wh], 1)
    target = iou + (torch.rand(pairs, generator=g, dtype=torch.float64) - 0.5) * 2e-3
    dx = wh[:, 0] * (1 - target) / (1 + target)  # same heights: IoU = (w - dx) / (w + dx)
    second = first + torch.stack([dx, torch.zeros_like(dx), dx, torch.zeros_like(dx)], 1)
    boxes = torch.stack([first, second], 1).reshape(1, 2 * pairs, 4)
    boxes[0, 0, 2] = 1000.37  # the largest coordinate, fractional
    labels = torch.randint(classes // 2, classes, (pairs,), generator=g).repeat_interleave(2)
    scores = torch.zeros(1, 2 * pairs, classes, dtype=torch.float64)
    scores[0, torch.arange(2 * pairs), labels] = torch.rand(2 * pairs, generator=g, dtype=torch.float64) * 0.9 + 0.1
    return boxes, scores


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_multiclass_nms_static_rounds_the_shift_twice(E, dtype):
    """The coordinate trick in the kernel rounds `idxs * (max + 1)` and then `boxes + offsets` as
    torchvision's two tensor ops do, under contraction (the emulation contracts a * b + c as nvcc
    does: one FFMA here would keep or drop boxes at the threshold that the reference does not)."""
    for seed in range(3):
        boxes, scores = _pairs_at_the_threshold(400, 80, 0.5, seed)
        boxes, scores = boxes.to(dtype), scores.to(dtype)
        kw = dict(score_threshold=0.05, iou_threshold=0.5, max_detections=800, multi_label=False)
        got = E.multiclass_nms_static(boxes, scores, **kw)
        # (not the CPU op: at the threshold, the CUDA IoU's contracted arithmetic, as nvcc
        # compiles torchvision's too, rounds apart from the CPU's)
        _mc_assert_same(got, _mc_reference(E, boxes, scores, **kw))
        kept = int(got[0].sum())
        assert 400 < kept < 800  # pairs on both sides of the threshold


@pytest.mark.parametrize("dtype", [torch.float16, torch.float32, torch.float64])
def test_multiclass_nms_static_shifted_classes(E, dtype):
    """torchvision's coordinate trick where classes meet: negative coordinates (boxes of one class
    reach into the next class's shifted range), a negative IoU threshold, NaN and infinite boxes:
    the image then runs as one segment in candidate order."""
    boxes, scores = _mc_inputs(2, 50, 5, dtype, low=-80.0)
    for iou in (0.5, -0.5):
        kw = dict(score_threshold=0.3, iou_threshold=iou, max_detections=60, multi_label=True)
        want = _mc_reference(E, boxes, scores, **kw)
        _mc_assert_same(E.multiclass_nms_static(boxes, scores, **kw), want)
        if iou < 0:  # every shifted pair suppresses: NMS class by class differs, the one segment is needed
            per_class = _mc_reference(E, boxes, scores, batched_nms=_per_class_nms(E), **kw)
            assert not torch.equal(want[0], per_class[0])
    for bad in (math.nan, math.inf):
        b = boxes.clone()
        b[0, 3, 2] = bad
        kw = dict(score_threshold=0.3, iou_threshold=0.5, max_detections=60, multi_label=True)
        _mc_assert_same(E.multiclass_nms_static(b, scores, **kw), _mc_reference(E, b, scores, **kw))


def test_multiclass_nms_static_half_threshold(E):
    """float16: the threshold rounds to float16 before the comparison, as torch's `scores > thr`
    (0.95 rounds up to 0.9502, which is then no candidate)."""
    boxes, _ = _mc_inputs(1, 4, 2, torch.float16)
    scores = torch.tensor([[[0.95, 0.9497], [0.9507, 0.95], [0.9, 0.96], [0.95, 0.2]]], dtype=torch.float16)
    for multi_label in (True, False):
        kw = dict(score_threshold=0.95, iou_threshold=0.5, max_detections=8, multi_label=multi_label)
        got = E.multiclass_nms_static(boxes, scores, **kw)
        _mc_assert_same(got, _mc_reference(E, boxes, scores, **kw))
        assert int(got[0]) == 2


def _per_class_nms(E):
    def batched(boxes, scores, idxs, thr):
        keep = [torch.nonzero(idxs == c)[:, 0][E.nms(boxes[idxs == c], scores[idxs == c], thr)] for c in idxs.unique()]
        return torch.cat(keep) if keep else idxs.new_zeros(0)

    return batched


def test_multiclass_nms_static_per_class_path(E):
    """Over 25,000 candidates in an image: torchvision's per-class path (no shift), as the CPU op's
    (float boxes, an exact threshold); and 20,000 of them after the pre-NMS cut: the trick again on
    CUDA, the per-class path on the CPU (integer coordinates: the shift is exact, the IoUs equal)."""
    boxes, _ = _mc_inputs(1, 6400, 4, torch.float32, per_class_boxes=True)
    boxes = (boxes * 30).round()
    scores = torch.rand(1, 6400, 4) + 0.5  # every pair a candidate: 25,600
    for top_k in (None, 20000):
        kw = dict(score_threshold=0.4, iou_threshold=0.5, max_detections=100, pre_nms_top_k=top_k)
        got = E.multiclass_nms_static(boxes, scores, **kw)
        _mc_assert_same(got, torch.ops.myops.multiclass_nms_static(boxes, scores, **kw))
        assert int(got[0]) == 100


@pytest.mark.parametrize("shape", [(0, 5, 3), (2, 0, 3), (2, 5, 0), (2, 5, 3)], ids=str)
def test_multiclass_nms_static_empty(E, shape):
    boxes, scores = _mc_inputs(*shape, torch.float32)
    for k, thr, top_k in ((0, 0.3, None), (4, 2.0, None), (4, 0.3, 0)):  # K = 0; no candidate; top-k 0
        kw = dict(score_threshold=thr, iou_threshold=0.5, max_detections=k, pre_nms_top_k=top_k)
        _mc_assert_same(E.multiclass_nms_static(boxes, scores, **kw), _mc_reference(E, boxes, scores, **kw))


def test_multiclass_nms_static_work_follows_candidates(E):
    """The IoU tests follow the real candidates: with 100 of them in 32,000 (anchor, class) pairs,
    pre_nms_top_k = 30,000 costs no more than 2x pre_nms_top_k = 100, and the count is bounded by
    the candidates' pairs (no padded row, no pair of two classes)."""
    n, a, c = 2, 400, 80
    boxes, _ = _mc_inputs(n, a, c, torch.float32)
    scores = torch.zeros(n, a, c)
    for i in range(n):
        scores[i].view(-1)[torch.randperm(a * c)[:100]] = torch.rand(100) + 0.5
    pairs = {}
    for top_k in (100, 30000):
        E._emu_work_counter("multiclass_nms_iou", True)
        kw = dict(score_threshold=0.4, iou_threshold=0.5, max_detections=300, pre_nms_top_k=top_k)
        got = E.multiclass_nms_static(boxes, scores, **kw)
        pairs[top_k] = E._emu_work_counter("multiclass_nms_iou", True)
        _mc_assert_same(got, _mc_reference(E, boxes, scores, **kw))
    # per class: at most s * (s - 1) / 2 tests for its s candidates
    per_class = sum(int(k) * (int(k) - 1) // 2 for i in range(n) for k in (scores[i] > 0.4).sum(0))
    assert 0 < pairs[30000] <= 2 * pairs[100] and pairs[30000] <= per_class
    # class-agnostic: one segment of the 100 candidates per image
    E._emu_work_counter("multiclass_nms_iou", True)
    E.multiclass_nms_static(boxes, scores, **kw, class_agnostic=True)
    assert 0 < E._emu_work_counter("multiclass_nms_iou", True) <= n * 100 * 99 // 2


# ---- roi_align_levels (one thread per output element, grid-stride) ------------------------------
# torchvision's CUDA kernel is its CPU kernel's arithmetic, one point at a time (the host compiler
# contracts nothing here), so the emulated CUDA op equals torchvision's CPU op bit for bit on
# finite RoIs (a NaN size is where the two kernels differ: fmax vs std::max).


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.float16])
@pytest.mark.parametrize("aligned", [False, True])
@pytest.mark.parametrize("sampling_ratio", [2, 0])
def test_roi_align_levels(E, dtype, aligned, sampling_ratio):
    pytest.importorskip("torchvision")
    from test_roi_align import FPN, FPN_SCALES, make_features, make_rois, reference

    feats = make_features(2, 3, FPN, dtype)
    rois = make_rois(120, 2, 128, 160, dtype)
    levels = torch.randint(0, len(FPN), (120,))
    got = E.roi_align_levels(feats, rois, levels, FPN_SCALES, 5, 4, sampling_ratio, aligned)
    exp = reference(feats, rois, levels, (5, 4), FPN_SCALES, sampling_ratio, aligned)
    check(got, exp, strides=exp.stride())
    empty = E.roi_align_levels(feats, rois[:0], levels[:0], FPN_SCALES, 5, 4, sampling_ratio, aligned)
    assert empty.shape == (0, 3, 5, 4) and empty.dtype == dtype


def test_roi_align_levels_invalid_indices_give_nan(E):
    # no host sync on CUDA: a level or batch index out of range is not raised; that RoI is NaN
    from test_roi_align import FPN, FPN_SCALES, make_features, make_rois

    feats = make_features(2, 3, FPN[:2], torch.float32)
    rois = make_rois(6, 2, 128, 160, torch.float32)
    rois[1, 0], rois[2, 0], rois[3, 0] = 2, -1, math.nan
    levels = torch.tensor([0, 1, 0, 1, 2, -2])
    out = E.roi_align_levels(feats, rois, levels, FPN_SCALES[:2], 3, 3, 2, False)
    assert out[1:].isnan().all()
    exp = torch.ops.myops.roi_align_levels(feats, rois[:1], levels[:1], FPN_SCALES[:2], 3, 3, 2, False)
    check(out[:1], exp, strides=exp.stride())


def test_roi_align_levels_minus_one_is_padding(E):
    # a level of -1: output 0, the RoI's row not read (a batch index out of range, NaN corners)
    from test_roi_align import FPN, FPN_SCALES, make_features, make_rois

    feats = make_features(2, 3, FPN, torch.float32)
    rois = make_rois(40, 2, 128, 160, torch.float32)
    levels = torch.randint(0, len(FPN), (40,))
    pad = torch.arange(40) % 3 == 1
    rois[pad, 0] = 9.0
    rois[pad, 1] = math.nan
    out = E.roi_align_levels(feats, rois, torch.where(pad, -1, levels), FPN_SCALES, 5, 4, 2, False)
    check(out[pad], torch.zeros_like(out[pad]))
    exp = torch.ops.myops.roi_align_levels(feats, rois[~pad], levels[~pad], FPN_SCALES, 5, 4, 2, False)
    check(out[~pad], exp, strides=exp.stride())


# ---- linear_bounded / conv_bounded (no host sync: every row computed, the padding masked) ----------


@pytest.mark.parametrize("count", [0, 1, 9, 23, 30, -2])
def test_bounded_layers(E, count):
    real = max(0, min(count, 23))
    c = torch.tensor(count)
    x, w, b = torch.randn(23, 17), torch.randn(5, 17), torch.randn(5)
    before = x.clone()
    exp = F.linear(x, w, b)
    exp[real:] = 0
    check(E.linear_bounded(x, w, b, c), exp)
    assert torch.equal(x, before)
    x, w = torch.randn(23, 4, 9, 8).contiguous(memory_format=torch.channels_last), torch.randn(4, 2, 2, 2)
    for transposed in (False, True):
        exp = torch.convolution(x, w, None, [2, 2], [1, 0], [1, 1], transposed, [1, 0] if transposed else [0, 0], 2)
        exp = exp.contiguous()
        exp[real:] = 0
        got = E.conv_bounded(x, w, None, [2, 2], [1, 0], [1, 1], transposed, [1, 0] if transposed else [0, 0], 2, c)
        check(got, exp)


# ---- heatmaps_to_keypoints (a block per RoI and keypoint), paste_masks (grid-stride) -------------
# The kernels compute torch's CUDA resampling (upsample_bicubic2d / upsample_bilinear2d) per
# position, without storing the map; the host compiler contracts nothing, torch's CPU kernels may
# (FMA): the argmax positions equal torchvision's CPU result, the values within rounding.


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_heatmaps_to_keypoints(E, dtype):
    pytest.importorskip("torchvision")
    from test_detection_decode import CudaNumberDivision, make_rois, reference_keypoints

    r, k = 11, 5
    maps = torch.randn(r, k, 56, 56, dtype=dtype)
    rois = make_rois(r, dtype)
    maps[8:] = math.nan  # padding: not read
    xy, sc = E.heatmaps_to_keypoints(maps, rois, torch.tensor(8))
    with CudaNumberDivision():  # torchvision's coordinates as its loop computes them on CUDA
        ref_xy, ref_sc = reference_keypoints(maps, rois, 8)
    torch.testing.assert_close(xy, ref_xy, rtol=0, atol=0)
    # A score is a 16-term bicubic sum of values near 1 that cancel: the two evaluation orders
    # differ by up to ~2e-6 relative in float32 (400 seeds: at most 5.5e-6 absolute on scores
    # near 3), inside assert_close's float32 default (rtol 1.3e-6 + atol 1e-5).
    torch.testing.assert_close(sc, ref_sc)


def test_paste_masks(E):
    pytest.importorskip("torchvision")
    from test_detection_decode import make_boxes
    from torchvision.models.detection.roi_heads import paste_masks_in_image

    from myops import detection

    sizes, d = [(40, 31), (23, 50)], 6
    masks = torch.rand(2, d, 1, 28, 28)
    boxes = torch.stack([make_boxes(d, h, w) for h, w in sizes])
    counts = [6, 2]
    masks[1, 2:] = math.nan
    padded, ib = detection._expanded(masks, boxes, 1)
    got = E.paste_masks(padded, ib, torch.tensor(counts), [v for hw in sizes for v in hw])
    for i, ((h, w), c) in enumerate(zip(sizes, counts)):
        ref = torch.zeros(d, 40, 50)
        ref[:c, :h, :w] = paste_masks_in_image(masks[i, :c], boxes[i, :c], (h, w))[:, 0]
        torch.testing.assert_close(got[i], ref, rtol=0, atol=1e-6)
