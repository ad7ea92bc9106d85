"""Autograd formulas (torch.library.register_autograd) for the differentiable ops.
Backward passes are built from myops ops where one exists."""
import torch
from torch.library import register_autograd

# ---- elementwise ----------------------------------------------------------------------------

_ew = torch.ops.myops


def _ew_zero(like):
    # 0-d CPU zero: folded into the kernel as a scalar on any device
    return torch.zeros((), dtype=like.dtype)


def _ew_reduce(grad, inp):
    """Sums a broadcast gradient back to the input's shape and casts it to the input's dtype."""
    if grad.shape != inp.shape:
        grad = grad.sum_to_size(inp.shape) if inp.dim() else grad.sum()
    if grad.dtype != inp.dtype:
        grad = _ew.cast(grad, inp.dtype)
    return grad


def _ew_save_inputs(ctx, inputs, output):
    ctx.save_for_backward(*inputs)


# unary ---------------------------------------------------------------------------------------

def _relu_setup(ctx, inputs, output):
    ctx.save_for_backward(output)


def _relu_backward(ctx, grad):
    (out,) = ctx.saved_tensors
    return _ew.where(out > 0, grad, _ew_zero(grad))


register_autograd("myops::relu", _relu_backward, setup_context=_relu_setup)


def _gelu_setup(ctx, inputs, keyword_only_inputs, output):
    ctx.save_for_backward(inputs[0])
    ctx.approximate = keyword_only_inputs.get("approximate", "none")


def _gelu_backward(ctx, grad):
    (x,) = ctx.saved_tensors
    # no myops op computes gelu's derivative: use ATen's formula
    return torch.ops.aten.gelu_backward(grad, x, approximate=ctx.approximate)


register_autograd("myops::gelu", _gelu_backward, setup_context=_gelu_setup)


def _silu_backward(ctx, grad):
    (x,) = ctx.saved_tensors
    s = _ew.sigmoid(x)
    # d/dx x*s(x) = s * (1 + x * (1 - s))
    one = torch.ones((), dtype=s.dtype)
    d = _ew.mul(s, _ew.add(one, _ew.mul(x, _ew.sub(one, s))))
    return _ew.mul(grad, d)


register_autograd("myops::silu", _silu_backward, setup_context=_ew_save_inputs)


def _sigmoid_setup(ctx, inputs, output):
    ctx.save_for_backward(output)


def _sigmoid_backward(ctx, grad):
    (y,) = ctx.saved_tensors
    one = torch.ones((), dtype=y.dtype)
    return _ew.mul(grad, _ew.mul(y, _ew.sub(one, y)))


register_autograd("myops::sigmoid", _sigmoid_backward, setup_context=_sigmoid_setup)


def _mul_scalar_setup(ctx, inputs, output):
    ctx.other = inputs[1]
    ctx.dtype = inputs[0].dtype


def _mul_scalar_backward(ctx, grad):
    g = _ew.mul_scalar(grad, ctx.other)
    return (_ew.cast(g, ctx.dtype) if g.dtype != ctx.dtype else g), None


register_autograd("myops::mul_scalar", _mul_scalar_backward, setup_context=_mul_scalar_setup)


def _cast_setup(ctx, inputs, output):
    ctx.dtype = inputs[0].dtype


def _cast_backward(ctx, grad):
    return _ew.cast(grad, ctx.dtype), None


register_autograd("myops::cast", _cast_backward, setup_context=_cast_setup)


# binary --------------------------------------------------------------------------------------

def _alpha_setup(ctx, inputs, keyword_only_inputs, output):
    ctx.save_for_backward(*inputs)
    ctx.alpha = keyword_only_inputs.get("alpha", 1)


def _scaled(grad, alpha):
    return grad if alpha == 1 and not isinstance(alpha, bool) else _ew.mul_scalar(grad, alpha)


def _add_backward(ctx, grad):
    self, other = ctx.saved_tensors
    gs = _ew_reduce(grad, self) if ctx.needs_input_grad[0] else None
    go = _ew_reduce(_scaled(grad, ctx.alpha), other) if ctx.needs_input_grad[1] else None
    return gs, go


register_autograd("myops::add", _add_backward, setup_context=_alpha_setup)


def _sub_backward(ctx, grad):
    self, other = ctx.saved_tensors
    gs = _ew_reduce(grad, self) if ctx.needs_input_grad[0] else None
    go = _ew_reduce(_ew.mul_scalar(grad, -ctx.alpha), other) if ctx.needs_input_grad[1] else None
    return gs, go


register_autograd("myops::sub", _sub_backward, setup_context=_alpha_setup)


def _mul_backward(ctx, grad):
    self, other = ctx.saved_tensors
    gs = _ew_reduce(_ew.mul(grad, other), self) if ctx.needs_input_grad[0] else None
    go = _ew_reduce(_ew.mul(grad, self), other) if ctx.needs_input_grad[1] else None
    return gs, go


register_autograd("myops::mul", _mul_backward, setup_context=_ew_save_inputs)


def _div_backward(ctx, grad):
    self, other = ctx.saved_tensors
    gs = _ew_reduce(_ew.div(grad, other), self) if ctx.needs_input_grad[0] else None
    go = None
    if ctx.needs_input_grad[1]:
        # d(a/b)/db = -a / b^2
        go = _ew_reduce(_ew.mul_scalar(_ew.div(_ew.mul(grad, self), _ew.mul(other, other)), -1), other)
    return gs, go


register_autograd("myops::div", _div_backward, setup_context=_ew_save_inputs)


def _minmax_grads(ctx, grad, self_wins, other_wins):
    # ties split the gradient in half, as PyTorch does
    self, other = ctx.saved_tensors
    tie = self == other
    half = _ew.mul_scalar(grad, 0.5)
    z = _ew_zero(grad)
    gs = go = None
    if ctx.needs_input_grad[0]:
        gs = _ew_reduce(_ew.where(self_wins, grad, _ew.where(tie, half, z)), self)
    if ctx.needs_input_grad[1]:
        go = _ew_reduce(_ew.where(other_wins, grad, _ew.where(tie, half, z)), other)
    return gs, go


def _maximum_backward(ctx, grad):
    self, other = ctx.saved_tensors
    return _minmax_grads(ctx, grad, self > other, other > self)


def _minimum_backward(ctx, grad):
    self, other = ctx.saved_tensors
    return _minmax_grads(ctx, grad, self < other, other < self)


register_autograd("myops::maximum", _maximum_backward, setup_context=_ew_save_inputs)
register_autograd("myops::minimum", _minimum_backward, setup_context=_ew_save_inputs)


# ternary -------------------------------------------------------------------------------------

def _where_backward(ctx, grad):
    cond, self, other = ctx.saved_tensors
    z = _ew_zero(grad)
    gs = _ew_reduce(_ew.where(cond, grad, z), self) if ctx.needs_input_grad[1] else None
    go = _ew_reduce(_ew.where(cond, z, grad), other) if ctx.needs_input_grad[2] else None
    return None, gs, go


register_autograd("myops::where", _where_backward, setup_context=_ew_save_inputs)


def _addcmul_setup(ctx, inputs, keyword_only_inputs, output):
    ctx.save_for_backward(*inputs)
    ctx.value = keyword_only_inputs.get("value", 1)


def _addcmul_backward(ctx, grad):
    self, t1, t2 = ctx.saved_tensors
    gv = _scaled(grad, ctx.value)
    g0 = _ew_reduce(grad, self) if ctx.needs_input_grad[0] else None
    g1 = _ew_reduce(_ew.mul(gv, t2), t1) if ctx.needs_input_grad[1] else None
    g2 = _ew_reduce(_ew.mul(gv, t1), t2) if ctx.needs_input_grad[2] else None
    return g0, g1, g2


register_autograd("myops::addcmul", _addcmul_backward, setup_context=_addcmul_setup)


def _clamp_backward(ctx, grad):
    # PyTorch's clamp_backward_min_max
    self, lo, hi = ctx.saved_tensors
    z = _ew_zero(grad)
    g0 = g1 = g2 = None
    if ctx.needs_input_grad[0]:
        g0 = _ew_reduce(_ew.where((self >= lo) & (self <= hi), grad, z), self)
    if ctx.needs_input_grad[1]:
        g1 = _ew_reduce(_ew.where((self < lo) & (lo < hi), grad, z), lo)
    if ctx.needs_input_grad[2]:
        g2 = _ew_reduce(_ew.where((self > hi) | (hi < lo), grad, z), hi)
    return g0, g1, g2


register_autograd("myops::clamp", _clamp_backward, setup_context=_ew_save_inputs)


# ---- max_pool2d_add -------------------------------------------------------------------------

def _max_pool2d_add_setup_context(ctx, inputs, output):
    self, other, kernel_size, stride, padding, ceil_mode = inputs
    ctx.pool_args = (list(kernel_size), list(stride), list(padding), bool(ceil_mode))
    ctx.other_shape = other.shape
    ctx.other_dtype = other.dtype
    # Only `self` is saved: the backward recomputes each window's argmax from it.
    ctx.save_for_backward(self if ctx.needs_input_grad[0] else None)


def _max_pool2d_add_backward(ctx, grad):
    (self,) = ctx.saved_tensors
    grad_self = grad_other = None
    if ctx.needs_input_grad[0]:
        grad_self = torch.ops.myops.max_pool2d_add_backward.default(grad, self, *ctx.pool_args)
    if ctx.needs_input_grad[1]:
        grad_other = grad.sum_to_size(ctx.other_shape).to(ctx.other_dtype)
    return grad_self, grad_other, None, None, None, None


register_autograd(
    "myops::max_pool2d_add", _max_pool2d_add_backward, setup_context=_max_pool2d_add_setup_context
)


# ---- diagonal -------------------------------------------------------------------------------

def _diagonal_setup_context(ctx, inputs, output):
    self, offset, dim1, dim2 = inputs
    ctx.input_sizes = list(self.shape)
    ctx.args = (offset, dim1, dim2)


def _diagonal_backward(ctx, grad):
    if not ctx.needs_input_grad[0]:
        return None, None, None, None
    offset, dim1, dim2 = ctx.args
    g = torch.ops.myops.diagonal_backward.default(grad, ctx.input_sizes, offset, dim1, dim2)
    return g, None, None, None


register_autograd("myops::diagonal", _diagonal_backward, setup_context=_diagonal_setup_context)


def _diagonal_backward_setup_context(ctx, inputs, output):
    _, _, offset, dim1, dim2 = inputs
    ctx.args = (offset, dim1, dim2)


def _diagonal_backward_backward(ctx, grad):
    # diagonal_backward is linear in `grad`: its gradient is the diagonal of the incoming one.
    if not ctx.needs_input_grad[0]:
        return None, None, None, None, None
    offset, dim1, dim2 = ctx.args
    return torch.ops.myops.diagonal.default(grad, offset, dim1, dim2), None, None, None, None


register_autograd(
    "myops::diagonal_backward", _diagonal_backward_backward, setup_context=_diagonal_backward_setup_context
)
