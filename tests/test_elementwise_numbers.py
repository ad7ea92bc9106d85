"""Elementwise family, Python numbers as operands: the Scalar overloads, torch's wrapped-number
promotion, range and overflow checks (ints past int64 included), a number first on 16-bit floats."""

import pytest
import torch
from hypothesis import given, settings, strategies as st

import myops
from helpers import (
    ALL_DTYPES,
    DEVICES,
    assert_like_torch,
    assert_same,
    check_like_torch_with_grad,
    check_number_first,
    number_first_calls,
    outcome,
    rand,
    same_error,
)
from elementwise_helpers import (
    sample,
)

ops = torch.ops.myops


# ---- Python int numbers that do not fit the tensor's dtype ---------------------------------------


def i8(v):
    return torch.tensor(v, dtype=torch.int8)


@pytest.mark.parametrize(
    "fm, ft",
    [
        (
            lambda: myops.clamp(torch.tensor([0, 100, 200], dtype=torch.uint8), -1, 300),
            lambda: torch.clamp(torch.tensor([0, 100, 200], dtype=torch.uint8), -1, 300),
        ),
        (lambda: myops.clamp(i8([5, -5]), -129, 3), lambda: torch.clamp(i8([5, -5]), -129, 3)),
        (lambda: myops.clamp(i8(5), 0, 1000), lambda: torch.clamp(i8(5), 0, 1000)),
        (
            lambda: myops.where(torch.tensor([True, False]), i8([1, 2]), 1000),
            lambda: torch.where(torch.tensor([True, False]), i8([1, 2]), 1000),
        ),
        (
            lambda: myops.where(torch.tensor([True, False]), -1000, i8([1, 2])),
            lambda: torch.where(torch.tensor([True, False]), -1000, i8([1, 2])),
        ),
        (
            lambda: myops.where(torch.tensor([True, False]), i8(1), 1000),
            lambda: torch.where(torch.tensor([True, False]), i8(1), 1000),
        ),
        (lambda: myops.maximum(i8([5, -5]), -129), lambda: torch.clamp(i8([5, -5]), min=-129)),
        (
            lambda: myops.minimum(torch.tensor([1, 2], dtype=torch.int16), 2**15),
            lambda: torch.clamp(torch.tensor([1, 2], dtype=torch.int16), max=2**15),
        ),
        (
            lambda: myops.clamp(torch.ones(2, dtype=torch.float16), 0, 1e6),
            lambda: torch.clamp(torch.ones(2, dtype=torch.float16), 0, 1e6),
        ),
        (
            lambda: myops.clamp(torch.ones(2, dtype=torch.bfloat16), -1e39, 0),
            lambda: torch.clamp(torch.ones(2, dtype=torch.bfloat16), -1e39, 0),
        ),
    ],
)
def test_scalar_overflow_raises_like_torch(fm, ft):
    same_error(fm, ft, match="without overflow")


@pytest.mark.parametrize(
    "fm, ft",
    [
        # arithmetic with a Python int wraps in torch (the number is a wrapped int64 tensor)
        (lambda: myops.add(i8([1, 2]), 1000), lambda: torch.add(i8([1, 2]), 1000)),
        (lambda: myops.sub(1000, i8([1, 2])), lambda: torch.sub(1000, i8([1, 2]))),
        (lambda: myops.mul(i8(2), 1000), lambda: torch.mul(i8(2), 1000)),
        (lambda: myops.mul(1000, i8([2, 3])), lambda: torch.mul(1000, i8([2, 3]))),
        (lambda: myops.add(i8([1, 2]), 2**63 - 1), lambda: torch.add(i8([1, 2]), 2**63 - 1)),
        (
            lambda: myops.clamp(torch.tensor([1, 2], dtype=torch.uint8), -1, 200),
            lambda: torch.clamp(torch.tensor([1, 2], dtype=torch.uint8), -1, 200),
        ),
        # integer tensors divided by an int: the number is converted to float, not to int8 first
        (lambda: myops.div(i8(3), 1000), lambda: torch.div(i8(3), 1000)),
        (lambda: myops.div(i8([3, -7]), 1000), lambda: torch.div(i8([3, -7]), 1000)),
        (
            lambda: myops.div(torch.tensor(5, dtype=torch.int16), 2**31),
            lambda: torch.div(torch.tensor(5, dtype=torch.int16), 2**31),
        ),
        (lambda: myops.div(1000, i8(3)), lambda: torch.div(1000, i8(3))),
        (
            lambda: myops.div(torch.tensor(7, dtype=torch.uint8), 2.5),
            lambda: torch.div(torch.tensor(7, dtype=torch.uint8), 2.5),
        ),
        # a 0-d tensor beside a number keeps its dtype (the number is weak)
        (
            lambda: myops.add(torch.tensor(1.5, dtype=torch.float16), 0.1),
            lambda: torch.add(torch.tensor(1.5, dtype=torch.float16), 0.1),
        ),
        (
            lambda: myops.mul(torch.tensor(1.5, dtype=torch.bfloat16), 0.1),
            lambda: torch.mul(torch.tensor(1.5, dtype=torch.bfloat16), 0.1),
        ),
        (
            lambda: myops.where(torch.tensor([True, False]), i8(1), 100),
            lambda: torch.where(torch.tensor([True, False]), i8(1), 100),
        ),
        (lambda: myops.where(torch.tensor(True), 1000, 2), lambda: torch.where(torch.tensor(True), 1000, 2)),
        (
            lambda: myops.where(torch.tensor([True, False]), 1.5, 2),
            lambda: torch.where(torch.tensor([True, False]), 1.5, 2),
        ),
        # where lets a float16 overflow to inf (no check for floats, as torch)
        (
            lambda: myops.where(torch.tensor([True, False]), torch.ones(2, dtype=torch.float16), 1e6),
            lambda: torch.where(torch.tensor([True, False]), torch.ones(2, dtype=torch.float16), 1e6),
        ),
        (lambda: myops.clamp(i8([1, 2, 3]), 0.5, 2), lambda: torch.clamp(i8([1, 2, 3]), 0.5, 2)),
        (
            lambda: myops.clamp(torch.tensor([0.1, 5.0]), torch.tensor([1.0, 1.0]), 3),
            lambda: torch.clamp(torch.tensor([0.1, 5.0]), torch.tensor([1.0, 1.0]), torch.tensor(3.0)),
        ),
    ],
)
def test_scalar_values_like_torch(fm, ft):
    assert_same(fm(), ft())


# ---- Python ints past int64, alpha and value checked on empty inputs -----------------------------


# Python ints at and past the int64 / uint64 edges: torch reads [2^63, 2^64) as uint64 and
# raises OverflowError beyond; 2^63 + 2^39 + 1 rounds differently to float32 through float64
BIG_INTS = [2**63 - 1, 2**63, 2**63 + 2**39 + 1, 2**64 - 1, -(2**63), 2**64, -(2**63) - 1]


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=str)
def test_python_ints_past_int64_like_torch(device, dtype):
    x = rand((9,), dtype, device)
    x0 = rand((), dtype, device)
    c = rand((9,), torch.bool, device)
    for v in BIG_INTS:
        calls = [
            (lambda: myops.add(x, v), lambda: torch.add(x, v)),
            (lambda: myops.add(v, x0), lambda: torch.add(v, x0)),
            (lambda: myops.sub(x, v), lambda: torch.sub(x, v)),
            (lambda: myops.sub(v, x), lambda: torch.sub(v, x)),
            (lambda: myops.mul(x0, v), lambda: torch.mul(x0, v)),
            (lambda: myops.mul(v, x), lambda: torch.mul(v, x)),
            (lambda: myops.div(x, v), lambda: torch.div(x, v)),
            (lambda: myops.div(v, x), lambda: torch.div(v, x)),
            (lambda: myops.where(c, x, v), lambda: torch.where(c, x, v)),
            (lambda: myops.where(c, v, x0), lambda: torch.where(c, v, x0)),
            (lambda: myops.where(c, v, 2**63), lambda: torch.where(c, v, 2**63)),
            (lambda: myops.where(c, 1.5, v), lambda: torch.where(c, 1.5, v)),
            (lambda: myops.where(c, True, v), lambda: torch.where(c, True, v)),
            (lambda: myops.clamp(x, 7, v), lambda: torch.clamp(x, 7, v)),
            (lambda: myops.clamp(x, v), lambda: torch.clamp(x, v)),
            (lambda: myops.clamp(x, None, v), lambda: torch.clamp(x, None, v)),
            (lambda: myops.add(x, x, alpha=v), lambda: torch.add(x, x, alpha=v)),
            (lambda: myops.sub(x, x0, alpha=v), lambda: torch.sub(x, x0, alpha=v)),
            (lambda: myops.addcmul(x, x, x0, value=v), lambda: torch.addcmul(x, x, x0, value=v)),
        ]
        for fm, ft in calls:
            assert_like_torch(fm, ft)
    # the reported cases
    assert_same(myops.add(torch.ones(3), 2**63), torch.add(torch.ones(3), 2**63))
    for f in (myops.add, myops.sub, myops.mul, myops.div):
        with pytest.raises(OverflowError):
            f(torch.ones(3), 2**64)
    with pytest.raises(RuntimeError, match="value cannot be converted to type int16_t without overflow"):
        myops.add(torch.ones(3, dtype=torch.int16), torch.ones(3, dtype=torch.int16), alpha=2**63)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=str)
def test_alpha_and_value_range_checked_on_empty_inputs(device, dtype):
    """An alpha / value that does not fit the op's compute type raises as in torch, which
    converts it before looking at the number of elements."""
    values = [2**31 - 1, 2**15, 128, 256, -129, 1e6, 1e39, 2**63, 2**63 - 1, -(2**63), 1.5, True, float("inf")]
    for shape in [(0,), (3, 0), (4,)]:
        e = torch.ones(shape, dtype=dtype, device=device)
        for v in values:
            assert_like_torch(lambda: myops.add(e, e, alpha=v), lambda: torch.add(e, e, alpha=v))
            assert_like_torch(lambda: myops.sub(e, e, alpha=v), lambda: torch.sub(e, e, alpha=v))
            assert_like_torch(lambda: myops.addcmul(e, e, e, value=v), lambda: torch.addcmul(e, e, e, value=v))
            assert_like_torch(lambda: ops.add(e, e, alpha=v), lambda: torch.add(e, e, alpha=v))
    e = torch.ones(0, dtype=torch.int16, device=device)
    with pytest.raises(RuntimeError, match="value cannot be converted to type int16_t without overflow"):
        myops.sub(e, e, alpha=2**31 - 1)
    if device == "cpu":
        with pytest.raises(RuntimeError, match="value cannot be converted to type int16_t without overflow"):
            myops.addcmul(e, e, e, value=2**31 - 1)
    else:
        # torch's CUDA addcmul converts value to CUDA's accumulate type, int64: it fits
        assert_same(myops.addcmul(e, e, e, value=2**31 - 1), e)


# ---- number operands: the Scalar overloads (add.Scalar, where.ScalarOther, ...) ---------------------
# A Python number is aten's wrapped number: at::result_type(tensor, number) in C++ (the number never
# widens the tensor's dtype within its category), torch's conversion and range checks. A 0-d tensor
# is not a number: it promotes as a tensor.

NUMBERS = [0, 3, -7, 300, -129, 70000, 2**31, 2**62, 0.5, -2.75, 1e6, 1e39, float("inf"), float("nan"), True, False]
NUMBER_DTYPES = ALL_DTYPES + [torch.complex64]


def _number_calls(x, v, c):
    """(label, myops call, torch call) for every number form of every op with a number operand."""
    return [
        ("add", lambda: myops.add(x, v), lambda: torch.add(x, v)),
        ("add_alpha", lambda: myops.add(x, v, alpha=2), lambda: torch.add(x, v, alpha=2)),
        ("radd", lambda: myops.add(v, x), lambda: torch.add(v, x)),
        ("radd_alpha", lambda: myops.add(v, x, alpha=3), lambda: torch.add(v, x, alpha=3)),
        ("sub", lambda: myops.sub(x, v), lambda: torch.sub(x, v)),
        ("rsub", lambda: myops.sub(v, x), lambda: torch.sub(v, x)),
        ("rsub_alpha", lambda: myops.sub(v, x, alpha=-2), lambda: torch.sub(v, x, alpha=-2)),
        ("mul", lambda: myops.mul(x, v), lambda: torch.mul(x, v)),
        ("rmul", lambda: myops.mul(v, x), lambda: v * x),
        ("mul_scalar", lambda: myops.mul_scalar(x, v), lambda: torch.mul(x, v)),
        ("div", lambda: myops.div(x, v), lambda: torch.div(x, v)),
        ("rdiv", lambda: myops.div(v, x), lambda: torch.div(v, x)),
        ("where_other", lambda: myops.where(c, x, v), lambda: torch.where(c, x, v)),
        ("where_self", lambda: myops.where(c, v, x), lambda: torch.where(c, v, x)),
        ("where_both", lambda: myops.where(c, v, 5), lambda: torch.where(c, v, 5)),
        ("where_both_float", lambda: myops.where(c, -1.5, v), lambda: torch.where(c, -1.5, v)),
    ]


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", NUMBER_DTYPES, ids=str)
def test_number_operands_like_torch(dtype, device):
    """Every dtype, int / float / bool numbers on either side: the same values, dtype and strides
    as torch, or the same exception type (an overflow: torch's RuntimeError; a result dtype
    myops has no kernel for: NotImplementedError where torch computes it)."""
    c = rand((5, 7), torch.bool, device)
    for x in (rand((5, 7), dtype, device), rand((7, 5), dtype, device).t(), rand((), dtype, device)):
        for v in NUMBERS:
            for label, fm, ft in _number_calls(x, v, c if x.dim() else c[0, 0]):
                expected, e_err = outcome(ft)
                if e_err is None and expected.dtype not in ALL_DTYPES:
                    with pytest.raises(NotImplementedError):
                        fm()
                    continue
                try:
                    assert_like_torch(fm, ft)
                except AssertionError as e:
                    raise AssertionError(f"{label} {dtype} {tuple(x.shape)} {v!r}: {e}") from None


@pytest.mark.parametrize("device", DEVICES)
def test_number_is_not_a_0d_tensor(device):
    """A number is weak in promotion, a 0-d tensor is not: int8(3) + 1000 stays int8 (wrapping
    as in torch), int8(3) + tensor(1000) is int64; a float16 tensor with a float number stays
    float16, with a 0-d float64 tensor too (dimensioned), but a 0-d float16 with a 0-d float64 is
    float64."""
    x0 = torch.tensor(3, dtype=torch.int8, device=device)
    x = rand((6,), torch.int8, device)
    h0 = torch.tensor(1.5, dtype=torch.float16, device=device)
    cases = [
        (lambda: myops.add(x0, 1000), lambda: torch.add(x0, 1000)),
        (lambda: myops.add(x0, torch.tensor(1000)), lambda: torch.add(x0, torch.tensor(1000))),
        (lambda: myops.mul(x, 1000), lambda: torch.mul(x, 1000)),
        (lambda: myops.mul(x, torch.tensor(1000)), lambda: torch.mul(x, torch.tensor(1000))),
        (lambda: myops.div(x0, 1000), lambda: torch.div(x0, 1000)),
        (lambda: myops.sub(h0, 0.1), lambda: torch.sub(h0, 0.1)),
        (
            lambda: myops.sub(h0, torch.tensor(0.1, dtype=torch.float64)),
            lambda: torch.sub(h0, torch.tensor(0.1, dtype=torch.float64)),
        ),
        (lambda: myops.where(x0 > 0, x0, 1000), lambda: torch.where(x0 > 0, x0, 1000)),
        (lambda: myops.where(x0 > 0, x0, torch.tensor(1000)), lambda: torch.where(x0 > 0, x0, torch.tensor(1000))),
    ]
    for fm, ft in cases:
        assert_like_torch(fm, ft)
    assert myops.add(x0, 1000).dtype == torch.int8
    assert myops.add(x0, torch.tensor(1000)).dtype == torch.int64
    assert myops.sub(h0, torch.tensor(0.1, dtype=torch.float64)).dtype == torch.float64
    assert myops.sub(h0, 0.1).dtype == torch.float16


@pytest.mark.parametrize("device", DEVICES)
def test_number_overflow_errors(device):
    """A number that does not fit the result dtype where torch checks it (where's number; the
    alpha of add / sub) raises torch's RuntimeError with torch's message."""
    c = torch.tensor([True, False, True], device=device)
    for dtype, v, name in [
        (torch.int8, 300, "int8_t"),
        (torch.uint8, 256, "uint8_t"),
        (torch.int16, 2**15, "int16_t"),
        (torch.int32, 2**31, "int"),
        (torch.float32, 1e39, "float"),
    ]:
        x = torch.ones(3, dtype=dtype, device=device)
        msg = f"value cannot be converted to type {name} without overflow"
        with pytest.raises(RuntimeError, match=msg):
            torch.where(c, x, v)
        with pytest.raises(RuntimeError, match=msg):
            myops.where(c, x, v)
        with pytest.raises(RuntimeError, match=msg):
            myops.where(c, v, x)
        if not dtype.is_floating_point:
            with pytest.raises(RuntimeError, match=msg):
                myops.add(x, 1, alpha=v)
    with pytest.raises(OverflowError):
        myops.add(torch.ones(3, device=device), 2**64)
    with pytest.raises(TypeError):
        myops.add(torch.ones(3, device=device), "1")
    with pytest.raises(TypeError):
        myops.add(1, 2)


def test_python_functions_hold_no_promotion_code():
    """The result dtype of a number operand is computed in C++ (the Scalar overloads), not in
    python/myops/ops.py: the promotion helpers are gone."""
    from myops import ops as pyops

    for name in (
        "_scalar_result_type",
        "_check_fits",
        "_C10_NAMES",
        "_ew_lift",
        "_ew_drop",
        "_ew_wrap",
        "_uint64_number",
        "_number_as",
        "_category",
    ):
        assert not hasattr(pyops, name), name


@pytest.mark.parametrize("device", DEVICES)
def test_number_overloads_under_compile(device):
    """torch.compile traces the Python functions onto the Scalar overloads (fake kernels) and
    gives the eager result."""
    x = sample((4, 5), torch.float16, device)
    i = rand((4, 5), torch.int8, device)

    def f(x, i):
        return myops.add(x, 2.5), myops.sub(3, i), myops.div(i, 2), myops.mul(-1.5, x), myops.where(x > 0, x, 7)

    torch._dynamo.reset()
    got = torch.compile(f, fullgraph=True, backend="aot_eager")(x, i)
    for g, e in zip(got, f(x, i)):
        assert_same(g, e)


# ---- a number first on float16 / bfloat16 (issue #47) --------------------------------------------


@pytest.mark.parametrize("device", DEVICES)
def test_bool_number_beside_bool_tensor(device):
    """maximum / minimum of a bool tensor and a bool number: torch.maximum / minimum with the
    number as a 0-d bool tensor (or / and), not clamp's bool refusal under clamp's name (#56);
    beside other numbers still clamp's value and dtype. pow with a number base: a TypeError
    naming pow, not the schema's parse error."""
    b = torch.rand(3, 5, device=device) < 0.5
    for m, t in ((myops.maximum, torch.maximum), (myops.minimum, torch.minimum)):
        for v in (True, False):
            n = torch.tensor(v, device=device)
            assert_same(m(b, v), t(b, n))
            assert_same(m(v, b), t(n, b))
            assert_same(m(b.t(), v), t(b.t(), n))
        assert_same(m(b, 1), torch.clamp(b, **{"min" if m is myops.maximum else "max": 1}))
    with pytest.raises(TypeError, match="^myops.pow: argument 'self' must be a Tensor"):
        myops.pow(2.0, torch.rand(3, device=device))


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=str)
def test_number_first_like_torch(dtype, device):
    """A Python number first (mul, add, sub, div, where, maximum, minimum; directly and through
    torch.ops.myops) is taken as torch takes it: beside a float16 / bfloat16 tensor never rounded
    to the storage type first (-1.2748 * bf16 -104 is 133, not 132; -2^63 * fp16 0 is -0, not
    NaN); values, dtype, strides, gradients and errors, on every dtype (helpers.check_number_first)."""
    b = torch.tensor([-104.0], dtype=torch.bfloat16, device=device)
    assert_same(myops.mul(-1.2747972618057282, b), -1.2747972618057282 * b)
    assert myops.mul(-1.2747972618057282, b).item() == 133.0
    h = torch.tensor(0.0, dtype=torch.float16, device=device)
    assert_same(myops.mul(-(2**63), h), -(2**63) * h)
    assert_same(torch.ops.myops.mul.ScalarSelf(-(2**63), h), torch.tensor(-0.0, dtype=torch.float16, device=device))
    check_number_first(dtype, device=device)


_HUGE = [2**63, -(2**63), 2**64, -(2**64), 2**63 - 1, -(2**63) + 1, 2**64 - 1, -(2**63) - 1, 2**65]
_NUMBERS = st.one_of(
    st.sampled_from(_HUGE),
    st.integers(-(2**66), 2**66),
    st.integers(-300, 300),
    st.floats(allow_nan=True, allow_infinity=True),
    st.floats(-1e5, 1e5),
    st.booleans(),
)


@settings(max_examples=400, deadline=None, derandomize=True)
@given(
    s=_NUMBERS,
    dtype=st.sampled_from([torch.float16, torch.bfloat16]),
    form=st.integers(0, len(number_first_calls(0, None)) - 1),
    shape=st.sampled_from([(), (1,), (37,), (5, 7)]),
    transposed=st.booleans(),
    seed=st.integers(0, 2**16),
)
def test_number_first_16bit_properties(s, dtype, form, shape, transposed, seed):
    """Hypothesis: a random number (huge ints at the int64 / uint64 edges, floats, bools) first,
    each number-first form, float16 / bfloat16 tensors of random values and layouts: as torch,
    gradients included."""
    g = torch.Generator().manual_seed(seed)
    x = (torch.randn(shape, generator=g, dtype=torch.float64) * 200).to(dtype)
    if transposed and x.dim() == 2:
        x = x.t()
    c = torch.rand(x.shape, generator=g) > 0.5
    label, fm, ft = number_first_calls(s, c)[form]
    if "sub" in label and isinstance(s, bool):
        return  # torch's sub refuses bool; myops raises NotImplementedError (test_number_operands_like_torch)
    check_like_torch_with_grad(f"{label}({s!r}, {dtype} {tuple(x.shape)})", fm, ft, x)


@settings(max_examples=200, deadline=None, derandomize=True)
@given(
    s=_NUMBERS,
    dtype=st.sampled_from([torch.float16, torch.bfloat16]),
    shape=st.sampled_from([(), (37,), (5, 7)]),
    seed=st.integers(0, 2**16),
)
def test_number_first_16bit_dropin_properties(s, dtype, shape, seed):
    """Hypothesis: the drop-in (myops.enable) gives torch's results for the Python forms with a
    number first: s * x and s + x (the number second to aten), torch.mul(s, x), s - x and
    torch.div(s, x) (a wrapped number first: torch's CPU kernels round it to the result dtype)."""
    g = torch.Generator().manual_seed(seed)
    x = (torch.randn(shape, generator=g, dtype=torch.float64) * 200).to(dtype)
    calls = [lambda: s * x, lambda: s + x, lambda: torch.mul(s, x), lambda: torch.add(s, x, alpha=2)]
    if not isinstance(s, bool):
        calls += [lambda: s - x, lambda: torch.div(s, x)]
    for call in calls:
        want, e_err = outcome(call)
        with myops.enable():
            got, a_err = outcome(call)
        if e_err is not None:
            assert type(a_err) is type(e_err), (e_err, a_err)
        else:
            assert a_err is None, a_err
            assert_same(got, want)


# ---- a number operand that is not a number -------------------------------------------------------


def test_mul_scalar_non_number_is_type_error():
    with pytest.raises(TypeError, match="other"):
        myops.mul_scalar(torch.ones(2), "x")
    with pytest.raises(TypeError):
        myops.add(torch.ones(2), "x")
