// myops.max_pool2d_add (CPU): result = max_pool2d(self, k, s, p, ceil_mode) + other in one pass.
//
// Exactness. torch scans each window in row-major order (clipped to the input: the padding is
// -inf and never wins) with `if (v > m || isnan(v)) m = v`. That rule is associative (the
// result is the first maximal element, or the last NaN), so a window may be folded row by row:
// we fold each input row horizontally once (hmax over the window's columns, in order), then fold
// the window's rows vertically (in order) and add `other`. Grouping, not reordering: the result
// keeps torch's choice between -0.0 and +0.0 and its NaN. The add is computed like torch's:
// pooled (self's dtype) and other are cast to the result dtype, added in its opmath type, rounded.
//
// Layout. NCHW: work item = (plane, chunk of output rows), rows vectorized along W (for the
// 3-wide / stride-2 case by de-interleaving even and odd columns). channels_last: work item =
// (image, chunk of output rows), everything vectorized along C. `self` is read once from memory
// (row chunks are re-read from cache at chunk edges), `other` through its broadcast strides,
// the result written once. No indices and no pooled temporary beyond a per-thread L2-sized row
// buffer.
#include <ATen/core/Tensor.h>
#include <torch/library.h>

#include <cstdlib>

#include "max_pool2d_add/max_pool2d_add_shape.h"
#include "core/cpu_isa.h"

#define MYOPS_MP_CAP base
#include "max_pool2d_add/cpu/max_pool2d_add_kernels.h"
#undef MYOPS_MP_CAP

#if defined(__GNUC__) && defined(__x86_64__)
#define MYOPS_MP_HAVE_AVX2 1
namespace myops {
namespace max_pool2d_add {
namespace avx2 {  // max_pool2d_add_avx2.cpp
void forward(const Forward& f);
void backward(const Backward& b);
}  // namespace avx2
}  // namespace max_pool2d_add
}  // namespace myops
#endif

namespace myops {
namespace {

using max_pool2d_add::Backward;
using max_pool2d_add::Forward;

// The AVX2 build of the kernels runs at the AVX2 level and above (core/cpu_isa.h: the best the
// CPU runs, or the build MYOPS_CPU_ISA / MYOPS_CPU_BASELINE=1 forces).
bool use_avx2() {
#ifdef MYOPS_MP_HAVE_AVX2
  return cpu_isa() >= CpuIsa::Avx2;
#else
  return false;
#endif
}

at::Tensor max_pool2d_add_cpu(const at::Tensor& self, const at::Tensor& other, at::IntArrayRef kernel_size,
                              at::IntArrayRef stride, at::IntArrayRef padding, bool ceil_mode) {
  Forward f = max_pool2d_add::prepare_forward(self, other, kernel_size, stride, padding, ceil_mode, "max_pool2d_add");
  if (f.result.numel() == 0) return f.result;
#ifdef MYOPS_MP_HAVE_AVX2
  if (use_avx2()) {
    max_pool2d_add::avx2::forward(f);
    return max_pool2d_add::finish_forward(f);
  }
#endif
  max_pool2d_add::base::forward(f);
  return max_pool2d_add::finish_forward(f);
}

at::Tensor max_pool2d_add_backward_cpu(const at::Tensor& grad_output, const at::Tensor& self,
                                       at::IntArrayRef kernel_size, at::IntArrayRef stride, at::IntArrayRef padding,
                                       bool ceil_mode) {
  Backward b = max_pool2d_add::prepare_backward(grad_output, self, kernel_size, stride, padding, ceil_mode,
                                                "max_pool2d_add_backward");
  if (b.grad_self.numel() == 0) return b.grad_self;
#ifdef MYOPS_MP_HAVE_AVX2
  if (use_avx2()) {
    max_pool2d_add::avx2::backward(b);
    return b.grad_self;
  }
#endif
  max_pool2d_add::base::backward(b);
  return b.grad_self;
}

}  // namespace
}  // namespace myops

TORCH_LIBRARY_IMPL(myops, CPU, m) {
  m.impl("max_pool2d_add", &myops::max_pool2d_add_cpu);
  m.impl("max_pool2d_add_backward", &myops::max_pool2d_add_backward_cpu);
}
