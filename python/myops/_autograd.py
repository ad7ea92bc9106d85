"""Autograd formulas (torch.library.register_autograd) for the differentiable ops.
Backward passes are built from myops ops where one exists."""
import torch
from torch.library import register_autograd

# ---- elementwise ----------------------------------------------------------------------------

# (elementwise autograd goes here)


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
