"""Elementwise family, every op together: bad input and exception types, inputs left unmodified,
opcheck and fake kernels, gradcheck and backward order, torch's CPU loop quirks (signed-zero ties,
add's alpha tail, gelu's oneDNN edges), gradients at torch's edges."""

import pytest
import torch
import torch.nn.functional as F

import myops
from myops._table import EW_OPS
from helpers import (
    DEVICES,
    FLOAT_DTYPES,
    assert_like_torch,
    assert_same,
    check_add_alpha_scalar_tail,
    check_gelu_edges,
    check_gradient_edges,
    check_signed_zero_ties,
    cuda_only,
    outcome,
)
from elementwise_helpers import (
    assert_exact,
    sample,
)

ops = torch.ops.myops


# ---- bad input --------------------------------------------------------------------------------------


@pytest.mark.parametrize("device", DEVICES)
def test_bad_inputs(device):
    a = torch.randn(3, 4, device=device)
    b = torch.randn(5, 4, device=device)
    with pytest.raises(RuntimeError, match=r"myops.add: shapes do not broadcast: 'self' \[3, 4\], 'other' \[5, 4\]"):
        ops.add(a, b)
    with pytest.raises(RuntimeError, match=r"myops.where: shapes do not broadcast"):
        ops.where(a > 0, a, b)
    with pytest.raises(RuntimeError, match=r"myops.clamp: shapes do not broadcast: .*'max' \[5, 4\]"):
        ops.clamp(a, a, b)
    with pytest.raises(RuntimeError, match=r"myops.gelu: argument 'self' must have dtype in .*got Long"):
        ops.gelu(torch.arange(4, device=device))
    with pytest.raises(RuntimeError, match=r"myops.silu: argument 'self' must have dtype in .*got Int"):
        ops.silu(torch.arange(4, device=device, dtype=torch.int32))
    with pytest.raises(RuntimeError, match=r"myops.gelu: argument 'approximate' must be 'none' or 'tanh', got 'fast'"):
        ops.gelu(a, approximate="fast")
    with pytest.raises(RuntimeError, match=r"myops.relu: argument 'self' must have dtype in .*got Bool"):
        ops.relu(a > 0)
    with pytest.raises(RuntimeError, match=r"myops.mul: argument 'other' must have dtype in .*got ComplexFloat"):
        ops.mul(a, a.to(torch.complex64))
    with pytest.raises(RuntimeError, match=r"myops.cast: argument 'self' must have dtype in .*got UInt16"):
        ops.cast(torch.zeros(3, dtype=torch.uint16, device=device), torch.float32)
    with pytest.raises(
        RuntimeError, match=r"myops.where: argument 'condition' must have dtype in \{Bool, Byte\}, got Float"
    ):
        ops.where(a, a, a)
    # aten's own sub_check (its exception type follows the torch in use; both are RuntimeErrors)
    with pytest.raises(RuntimeError, match=r"Subtraction, the `-` operator, with two bool tensors"):
        ops.sub(a > 0, a > 1)
    with pytest.raises(RuntimeError, match=r"myops.add: argument 'alpha' must not be a floating point number"):
        ops.add(torch.arange(3, device=device), torch.arange(3, device=device), alpha=1.5)
    # bool operands promote (as torch.addcmul); a bool result is refused as torch refuses it
    assert_same(ops.addcmul(a, a > 0, a), torch.addcmul(a, a > 0, a))
    with pytest.raises(NotImplementedError, match=r"myops.addcmul: not implemented for a bool result"):
        ops.addcmul(a > 0, a > 0, a > 1)
    with pytest.raises(NotImplementedError, match=r"myops.clamp: not implemented for a bool result"):
        ops.clamp(a > 0, a > 0, a > 1)


@cuda_only
def test_different_devices():
    a = torch.randn(3, 4, device="cuda")
    with pytest.raises(
        RuntimeError,
        match=r"myops.add: expected all tensors on the same device, got 'self' on cuda:0 and 'other' on cpu",
    ):
        ops.add(a, torch.randn(3, 4))
    with pytest.raises(RuntimeError, match=r"myops.where: expected all tensors on the same device"):
        ops.where(torch.ones(4, dtype=torch.bool), a, a)
    # a 0-d CPU tensor is a scalar and may accompany CUDA tensors, as in PyTorch
    assert_exact(ops.add(a, torch.tensor(2.5)), a + torch.tensor(2.5))


def test_inputs_not_modified():
    a = sample((64, 33), torch.float32, "cpu")
    b = sample((33,), torch.float16, "cpu")
    a0, b0 = a.clone(), b.clone()
    ops.addcmul(a, b, a, value=3)
    ops.div(b, a)
    ops.cast(b, torch.float32)
    assert torch.equal(a.view(torch.int32), a0.view(torch.int32)) and torch.equal(
        b.view(torch.int16), b0.view(torch.int16)
    )


# ---- fake kernels, opcheck, autograd ----------------------------------------------------------------


def op_samples(device):
    """(op, args, kwargs) covering every op with small inputs."""
    x = torch.randn(2, 3, 4, device=device)
    y = torch.randn(3, 1, device=device)
    cl = torch.randn(2, 3, 2, 2, device=device).contiguous(memory_format=torch.channels_last)
    return (
        [
            (ops.relu, (x,), {}),
            (ops.gelu, (x,), {"approximate": "tanh"}),
            (ops.gelu, (cl,), {}),
            (ops.silu, (x.transpose(0, 2),), {}),
            (ops.sigmoid, (x,), {}),
            (ops.sigmoid, (torch.arange(5, device=device),), {}),
            (ops.mul.Scalar, (x, 2.5), {}),
            (ops.mul.Scalar, (torch.arange(5, device=device), 3), {}),
            (ops.mul_scalar, (x, 2.5), {}),  # the compatibility alias of mul.Scalar
            (ops.add.Scalar, (x.transpose(0, 2), 1.5, 2), {}),
            (ops.add.Scalar, (torch.arange(5, device=device, dtype=torch.int8), 300), {}),
            (ops.sub.Scalar, (x, 2), {"alpha": 0.5}),
            (ops.div.Scalar, (x, 3), {}),
            (ops.div.Scalar, (torch.arange(5, device=device), 2), {}),
            (ops.add.ScalarSelf, (2.5, x), {"alpha": 3}),
            (ops.sub.ScalarSelf, (2, x.transpose(1, 2)), {}),
            (ops.mul.ScalarSelf, (-1.5, x.half()), {}),
            (ops.div.ScalarSelf, (3, x.abs() + 1), {}),
            (ops.where.ScalarOther, (x > 0, x, 0.5), {}),
            (ops.where.ScalarSelf, (y > 0, 2, y.t()), {}),
            (ops.where.Scalar, (x > 0, 1.5, 2), {}),
            (ops.cast, (x, torch.float16), {}),
            (ops.cast, (x[:, ::2], torch.int32), {}),
            (ops.add.default, (x, y), {"alpha": 2}),
            (ops.add.default, (x.half(), torch.tensor(1.5)), {}),
            (ops.sub.default, (x, y.double()), {}),
            (ops.mul.default, (cl, cl[:1, :, :1]), {}),
            (ops.div.default, (torch.arange(1, 7, device=device), torch.arange(1, 7, device=device).flip(0)), {}),
            (ops.maximum, (x, y), {}),
            (ops.minimum, (x.transpose(1, 2), y.t()), {}),
            (ops.where.default, (x > 0, x, y), {}),
            (ops.addcmul, (x, y, x), {"value": 0.5}),
            (ops.clamp.default, (x, y - 1, torch.tensor(1.0, device=device)), {}),
            (ops.clamp.Scalar, (x, -0.5, None), {}),
            (ops.clamp.Scalar, (x.transpose(1, 2), -0.5, 0.5), {}),
            (ops.pow.default, (x.abs(), y), {}),
            (ops.pow.Scalar, (x.abs().transpose(0, 2), 2.5), {}),
        ]
        + [  # positive: in every unary op's domain (no NaN, which opcheck's comparisons reject)
            (op.packet, ((x.abs() + 0.5).transpose(0, 2),), {}) for op in EW_OPS.values() if op.sig == "unary"
        ]
        + [
            (op.packet, (torch.arange(6, device=device),), {})
            for op in EW_OPS.values()
            if op.sig == "unary" and torch.int64 in op.accepted
        ]
        + [  # the generic binary ops and their Scalar overloads (positive operands, as above)
            (op.packet, {"binary": (p, q), "scalar": (p, 2.5), "rscalar": (2.5, p)}[op.sig], {})
            for p, q in [((x.abs() + 0.5).transpose(0, 2), y.abs() + 0.5)]
            for op in EW_OPS.values()
            if op.entry == "generic" and op.sig in ("binary", "scalar", "rscalar")
        ]
    )


def test_op_samples_cover_the_table():
    sampled = {
        getattr(op, "default", op) if isinstance(op, torch._ops.OpOverloadPacket) else op
        for op, _, _ in op_samples("cpu")
    }
    missing = [op.qualname for op in EW_OPS.values() if op.packet not in sampled]
    assert not missing, f"op_samples has no call of {missing}"


@pytest.mark.parametrize("device", DEVICES)
def test_opcheck(device):
    for op, args, kwargs in op_samples(device):
        torch.library.opcheck(op, args, kwargs)
        if all(not isinstance(a, torch.Tensor) or a.dtype.is_floating_point for a in args):
            args_g = tuple(a.detach().requires_grad_() if isinstance(a, torch.Tensor) and a.dim() else a for a in args)
            if op not in (ops.cast,):
                torch.library.opcheck(op, args_g, kwargs)


@pytest.mark.parametrize("device", DEVICES)
def test_fake_matches_real(device):
    from torch._subclasses.fake_tensor import FakeTensorMode

    cases = list(op_samples(device))
    a = torch.randn(4, 1, 3, 5, device=device)
    cases += [
        (ops.add, (a.half().contiguous(memory_format=torch.channels_last), a.permute(0, 2, 1, 3)), {}),
        (ops.mul, (torch.randn(6, 5, device=device)[::2].half(), torch.randn(5, device=device)), {}),
        (
            ops.where,
            (
                a > 0,
                torch.randn(4, 1, 3, 10, device=device).half()[..., ::2],
                a.double().permute(3, 1, 2, 0).contiguous().permute(3, 1, 2, 0),
            ),
            {},
        ),
        (ops.clamp, (a.expand(4, 2, 3, 5), a.half(), a.int()), {}),
    ]
    for op, args, kwargs in cases:
        real = op(*args, **kwargs)
        with FakeTensorMode() as mode:
            fargs = tuple(mode.from_tensor(t) if isinstance(t, torch.Tensor) else t for t in args)
            fake = op(*fargs, **kwargs)
        assert (fake.shape, fake.stride(), fake.dtype, fake.device) == (
            real.shape,
            real.stride(),
            real.dtype,
            real.device,
        ), op


# ---- torch's CPU loop quirks, followed element by element ----------------------------------------


@pytest.mark.parametrize("dtype", FLOAT_DTYPES, ids=str)
def test_signed_zero_ties(dtype):
    # -0.0 against +0.0: torch's CPU maximum / minimum / clamp (tensor bounds) return the second
    # operand in their vector loop and the first in their scalar loop (a row's tail, rows of
    # other layouts); myops follows that loop structure element by element, directly and under
    # the drop-in (elementwise/cpu/elementwise_torch_order.h, VecTiesOf). Every length 0..80: the split moves
    # with n mod 16 (float32), 8 (float64), 32 (half / bfloat16). test_cpu_build runs it in
    # every CPU build.
    check_signed_zero_ties(dtype)


@pytest.mark.parametrize("dtype", FLOAT_DTYPES, ids=str)
def test_add_alpha_scalar_tail(dtype):
    # add / sub with alpha beside a stride-0 second operand (0-d, [1], a number, a broadcast
    # column): torch fuses a + alpha * b everywhere but in part of such a row's scalar tail, where
    # its compiler hoisted alpha * b (rounded once); myops follows it element by element
    # (elementwise/cpu/elementwise_torch_order.h, AddScalarTail). Every length 0..80, the layouts that decide
    # it; half / bfloat16 take torch's own two orders. test_cpu_build runs it in every CPU build.
    check_add_alpha_scalar_tail(dtype)


@pytest.mark.parametrize("dtype", FLOAT_DTYPES, ids=str)
def test_gelu_edges(dtype):
    # torch's CPU gelu (erf form) runs oneDNN for a contiguous input of more than one element
    # (float32; bfloat16 / float16 where oneDNN supports them): +inf gives NaN there, -inf a
    # positive NaN, 2^127 and above inf; its own kernel (one element, stepped, oneDNN off, the
    # tanh form) gives inf at +inf. myops follows the path torch takes (OneDnnGeluEdges).
    check_gelu_edges(dtype)


GRAD_CASES = [
    # the op table's plain unary and binary ops, then the other forms
    *[(op.fn, getattr(myops, op.fn), op.arity) for op in EW_OPS.values() if op.sig in ("unary", "binary")],
    ("gelu", lambda x: myops.gelu(x), 1),
    ("gelu_tanh", lambda x: myops.gelu(x, "tanh"), 1),
    ("mul_scalar", lambda x: myops.mul_scalar(x, -2.5), 1),
    ("add.Scalar", lambda x: myops.add(x, 2.5, alpha=3), 1),
    ("sub.Scalar", lambda x: myops.sub(x, 1.5, alpha=2), 1),
    ("div.Scalar", lambda x: myops.div(x, -1.5), 1),
    ("add.ScalarSelf", lambda x: myops.add(2.5, x, alpha=3), 1),
    ("sub.ScalarSelf", lambda x: myops.sub(2, x, alpha=1.5), 1),
    ("mul.ScalarSelf", lambda x: myops.mul(-2.5, x), 1),
    ("div.ScalarSelf", lambda x: myops.div(1.5, x * x + 1), 1),
    ("where.ScalarOther", lambda x: myops.where(x > 0, x, 0.5), 1),
    ("where.ScalarSelf", lambda x: myops.where(x > 0, 0.5, x), 1),
    ("cast", lambda x: myops.cast(x, torch.float32).double(), 1),
    ("add", lambda a, b: myops.add(a, b, alpha=-1.5), 2),
    ("sub", lambda a, b: myops.sub(a, b, alpha=2), 2),
    ("where", None, 3),
    ("addcmul", lambda a, b, c: myops.addcmul(a, b, c, value=0.7), 3),
    ("clamp", myops.clamp, 3),
]


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("name,fn,nargs", GRAD_CASES, ids=[c[0] for c in GRAD_CASES])
def test_gradcheck(name, fn, nargs, device):
    shapes = [(3, 4), (4,), (3, 1)][:nargs]
    args = [torch.randn(s, dtype=torch.float64, device=device, requires_grad=True) for s in shapes]
    if name == "cast":
        # float64 -> float32 -> float64 loses precision: check on values exact in float32
        args = [torch.randint(-8, 8, (3, 4), device=device).double().div(4).requires_grad_()]
        fn = lambda x: myops.cast(x, torch.float64)  # noqa: E731 (same-dtype cast: exact)
    if name == "where":
        cond = torch.randn(3, 4, device=device) > 0
        fn = lambda a, b: ops.where(cond, a, b)  # noqa: E731
        args = args[:2]
    if name in ("relu", "abs"):
        args[0] = args[0].detach().masked_fill(args[0].detach().abs() < 0.1, 0.5).requires_grad_()
    if name in EW_OPS and EW_OPS[name].domain == "positive":  # (pow: a positive base)
        args[0] = (args[0].detach().abs() + 0.5).requires_grad_()
    if name == "clamp":
        lo = torch.randn(4, dtype=torch.float64, device=device) - 1
        hi = lo + 1.5
        x = torch.randn(3, 4, dtype=torch.float64, device=device) * 2
        # keep x away from the bounds (the derivative jumps there)
        x = torch.where((x - lo).abs() < 0.05, x + 0.1, x)
        x = torch.where((x - hi).abs() < 0.05, x + 0.1, x)
        args = [x.requires_grad_(), lo.requires_grad_(), hi.requires_grad_()]
    if name in ("maximum", "minimum"):
        args[1] = (args[1].detach() + 0.3).requires_grad_()  # no ties
    assert torch.autograd.gradcheck(fn, tuple(args))


def test_cast_backward_dtype():
    x = torch.randn(5, dtype=torch.float64, requires_grad=True)
    y = myops.cast(x, torch.float16)
    y.sum().backward()
    assert x.grad.dtype == torch.float64 and torch.equal(x.grad, torch.ones(5, dtype=torch.float64))
    # integer results are not differentiable
    assert not myops.cast(x, torch.int32).requires_grad


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64], ids=str)
def test_sub_alpha_gradient(dtype):
    # sub's gradient of `other` is -grad * alpha, as torch computes it: for alpha = -2**63 the
    # negation does not exist in int64 (it wrapped to -2**63 and flipped the gradient's sign)
    a, b = torch.randn(6, dtype=dtype), torch.randn(3, 6, dtype=dtype)
    g = torch.randn(3, 6, dtype=dtype)
    for alpha in (-(2**63), 2**63 - 1, -3, 7, 0.3, -2.5):
        got = torch.autograd.grad(myops.sub(a.requires_grad_(), b.requires_grad_(), alpha=alpha), (a, b), g)
        want = torch.autograd.grad(torch.sub(a, b, alpha=alpha), (a, b), g)
        for x, y in zip(got, want):
            assert_same(x, y)
        if alpha == -(2**63):
            assert torch.equal(got[1] > 0, g > 0)  # -grad * alpha: grad's sign


def test_addcmul_gradient_order():
    # torch's order: grad_t1 = grad * (t2 * value), grad_t2 = grad * (t1 * value). (grad * value)
    # * t2 rounds differently (about 1 ulp), and in half it overflows where torch's does not.
    t1 = torch.full((4,), 0.25, dtype=torch.float16, requires_grad=True)
    t2 = torch.full((4,), 0.25, dtype=torch.float16, requires_grad=True)
    s = torch.zeros(4, dtype=torch.float16, requires_grad=True)
    g = torch.full((4,), -60000.0, dtype=torch.float16)  # g * 4 is -inf in half, g * (0.25 * 4) is not
    got = torch.autograd.grad(myops.addcmul(s, t1, t2, value=4), (s, t1, t2), g)
    want = torch.autograd.grad(torch.addcmul(s, t1, t2, value=4), (s, t1, t2), g)
    assert want[1].isfinite().all()
    for x, y in zip(got, want):
        assert_same(x, y)
    for value in (0.3, -1.7, 1, 3):  # random float32, broadcast: bit for bit
        s, t1, t2 = torch.randn(5, 1, 7), torch.randn(7), torch.randn(5, 4, 1)
        g = torch.randn(5, 4, 7)
        args = [x.requires_grad_() for x in (s, t1, t2)]
        got = torch.autograd.grad(myops.addcmul(*args, value=value), args, g)
        want = torch.autograd.grad(torch.addcmul(*args, value=value), args, g)
        for x, y in zip(got, want):
            assert_same(x, y)


# ---- exception types --------------------------------------------------------------------------------

UNSUPPORTED_DTYPES = [torch.complex64, torch.complex128, torch.uint16, torch.uint32, torch.uint64, torch.float8_e4m3fn]


def _every_op(x, c):
    """(name, myops call, torch call) for every elementwise op on x (c: a bool condition)."""
    return [
        ("relu", lambda: myops.relu(x), lambda: torch.relu(x)),
        ("gelu", lambda: myops.gelu(x), lambda: F.gelu(x)),
        ("silu", lambda: myops.silu(x), lambda: F.silu(x)),
        ("sigmoid", lambda: myops.sigmoid(x), lambda: torch.sigmoid(x)),
        ("cast", lambda: myops.cast(x, torch.float32), lambda: x.to(torch.float32, copy=True)),
        ("mul_scalar", lambda: myops.mul_scalar(x, 2), lambda: torch.mul(x, 2)),
        ("add", lambda: myops.add(x, x), lambda: torch.add(x, x)),
        ("add_alpha", lambda: myops.add(x, x, alpha=2), lambda: torch.add(x, x, alpha=2)),
        ("sub", lambda: myops.sub(x, x), lambda: torch.sub(x, x)),
        ("mul", lambda: myops.mul(x, x), lambda: torch.mul(x, x)),
        ("div", lambda: myops.div(x, x), lambda: torch.div(x, x)),
        ("maximum", lambda: myops.maximum(x, x), lambda: torch.maximum(x, x)),
        ("minimum", lambda: myops.minimum(x, x), lambda: torch.minimum(x, x)),
        ("where", lambda: myops.where(c, x, x), lambda: torch.where(c, x, x)),
        ("where_int", lambda: myops.where(c, x, 1), lambda: torch.where(c, x, 1)),
        ("where_float", lambda: myops.where(c, 1.5, x), lambda: torch.where(c, 1.5, x)),
        ("addcmul", lambda: myops.addcmul(x, x, x), lambda: torch.addcmul(x, x, x)),
        ("clamp", lambda: myops.clamp(x, x, x), lambda: torch.clamp(x, x, x)),
        ("clamp_numbers", lambda: myops.clamp(x, 0, 1), lambda: torch.clamp(x, 0, 1)),
        ("clamp_float", lambda: myops.clamp(x, 0.5), lambda: torch.clamp(x, 0.5)),
        ("clamp_mixed", lambda: myops.clamp(x, x, 1), lambda: torch.clamp(x, x, torch.tensor(1))),
    ]


@pytest.mark.parametrize("dtype", UNSUPPORTED_DTYPES + [torch.bool], ids=str)
def test_unsupported_dtypes_raise_torchs_exception_type(dtype):
    """Where torch raises, myops raises the same type (NotImplementedError for a dtype without a
    kernel, RuntimeError for complex maximum / minimum); where torch computes a dtype myops
    does not take, myops raises NotImplementedError. Never an internal TypeError."""
    x = torch.ones(4, dtype=torch.float32).to(dtype)
    c = torch.tensor([True, False, True, False])
    for name, fm, ft in _every_op(x, c):
        expected, e_err = outcome(ft)
        if e_err is None and dtype != torch.bool:
            with pytest.raises(NotImplementedError, match="myops"):
                fm()
        else:
            assert_like_torch(fm, ft)


# ---- gradients at torch's edges (issue #47) ------------------------------------------------------


@pytest.mark.parametrize("dtype", FLOAT_DTYPES, ids=str)
def test_gradient_edges_like_torch(dtype):
    """Gradients at torch's edges (helpers.check_gradient_edges): sub with an int alpha of 0
    gives other -0 ((-grad) * 0, as torch's maybe_multiply), with a number first and with a
    broadcast one-element first operand too; an int alpha past int64 raises torch's overflow
    error in add's / sub's backward (where torch's maybe_multiply reads it as an int64), not in
    add.Scalar's (whose gradient has no alpha) nor addcmul's; clamp with bool self, float32 min
    and float16 max (and maximum / minimum) sums a broadcast bound's gradient in torch's order."""
    x = torch.tensor([1.5, -2.0], dtype=dtype)
    g = torch.ones(2, dtype=dtype)
    for fm in (lambda t: myops.sub(2.0, t, alpha=0), lambda t: myops.sub(torch.tensor([3.0], dtype=dtype), t, alpha=0)):
        t = x.clone().requires_grad_()
        (gx,) = torch.autograd.grad(fm(t), t, g)
        assert gx.signbit().all(), gx  # -0.0
    d = torch.tensor([1.0, 2.0], dtype=dtype)
    # no number form: torch's TypeError
    for call in (lambda m: m.addcmul(1.0, x, x), lambda m: m.addcmul(x, 2, x), lambda m: m.addcmul(x, x, True)):
        assert_like_torch(lambda: call(myops), lambda: call(torch))
    if dtype != torch.float16:  # float16: alpha 2^63 fails the forward's check (as torch's)
        for call in (
            lambda a, b: myops.add(a, b, alpha=2**63),
            lambda a, b: myops.sub(a, b, alpha=2**63),
            lambda a, b: myops.add(2.0, b, alpha=2**63),
        ):
            a, b = d.clone().requires_grad_(), d.clone().requires_grad_()
            out = call(a, b)
            with pytest.raises(RuntimeError, match="value cannot be converted to type int64_t without overflow"):
                torch.autograd.grad(out.sum(), b)
        a = d.clone().requires_grad_()
        torch.autograd.grad(myops.add(a, d, alpha=2**63).sum(), a)  # only self's gradient: no alpha, no error
        torch.autograd.grad(myops.addcmul(d, a, d, value=2**63).sum(), a)
    check_gradient_edges(dtype)
