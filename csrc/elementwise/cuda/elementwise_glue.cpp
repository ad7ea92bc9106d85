// CUDA registration of the elementwise ops: the shared front ends (elementwise/elementwise_front.h)
// plan each call; this file turns a plan into the plain launch descriptor of
// elementwise/cuda/elementwise_launch.h and calls the kernel files (elementwise_*.cu) under a device guard
// on the current stream.
#include <ATen/Dispatch_v2.h>
#include <torch/library.h>

#include <cstring>

#include "elementwise/elementwise_functors.h"
#include "elementwise/elementwise_front.h"
#include "elementwise/cuda/elementwise_launch.h"
#include "core/cuda/glue.h"

namespace myops {
namespace {

using namespace myops::ew;

// The number parameter `s` of op `kind` (alpha, value) for dtype `dt` as torch's CUDA kernels
// convert it (param_to), in the compute type, as raw bytes.
void write_param(EwKind kind, const c10::Scalar& s, at::ScalarType dt, unsigned char* dst) {
  AT_DISPATCH_V2(dt, "myops.elementwise", AT_WRAP([&] {
                   using C = opmath_t<scalar_t>;
                   C v = param_to<scalar_t>(kind, /*cpu_rules=*/false, s);
                   std::memcpy(dst, &v, sizeof(C));
                 }),
                 AT_EXPAND(AT_ALL_TYPES), at::kBool, at::kHalf, at::kBFloat16);
}

// torch's CUDA div by a CPU scalar `b` multiplies by 1 / b, computed on the host in double from
// b's own value (any dtype: a wrapped number keeps its own) and rounded once to the compute type
// of dtype `dt` (the top of elementwise/elementwise_front.h), as raw bytes.
void write_reciprocal(const at::Tensor& b, at::ScalarType dt, unsigned char* dst) {
  const auto c = b.contiguous();
  const double inv = 1.0 / c10::fetch_and_cast<double>(c.scalar_type(), c.const_data_ptr());
  AT_DISPATCH_FLOATING_TYPES_AND2(at::kHalf, at::kBFloat16, dt, "myops.div", [&] {
    using C = opmath_t<scalar_t>;
    const C v = static_cast<C>(inv);
    std::memcpy(dst, &v, sizeof(C));
  });
}

cuda::Desc make_desc(const EwPlan& p) {
  cuda::Desc d;
  d.nin = p.nin;
  d.dtype = static_cast<int>(p.dtype);
  d.out = p.out.mutable_data_ptr();
  for (int k = 0; k < p.nin; ++k) {
    d.in_dtype[k] = static_cast<int>(p.in_dtype[k]);
    d.folded[k] = p.folded[k];
    d.in[k] = p.folded[k] ? nullptr : p.in[k].const_data_ptr();
    std::memcpy(d.scalar[k], p.scalar[k].data(), 16);
  }
  d.numel = p.numel;
  d.linear = p.linear;
  d.ndim = p.shape.dim();
  for (int i = 0; i < d.ndim; ++i) {
    d.sizes[i] = p.shape.sizes[i];
    for (int k = 0; k <= p.nin; ++k) d.strides[i][k] = p.shape.strides[i][k];
  }
  return d;
}

struct CudaBackend {
  static constexpr bool kCpuRules = false;
  static at::Tensor cast(const at::Tensor& t, at::ScalarType dt) { return FrontEnd<CudaBackend>::cast(t, dt); }

  static void run(EwKind kind, const EwPlan& plan, const EwParams& prm) {
    const bool binary = arity_of(kind) == 2;
    const bool reduced = plan.dtype == at::kHalf || plan.dtype == at::kBFloat16;
    int bind = (binary && reduced) ? plan.opmath_fold() : -1;
    // torch's CUDA div by a CPU scalar multiplies by its reciprocal, for every floating dtype:
    // the reciprocal is bound (write_reciprocal; CudaKernel<EwKind::Div> multiplies by it)
    const bool div_by_scalar = kind == EwKind::Div && plan.folded[1];
    if (div_by_scalar) bind = 1;
    cuda::Desc d;
    if (bind >= 0) {
      d = make_desc(plan.without_input(bind));
      d.bind = bind;
      if (div_by_scalar) {
        write_reciprocal(plan.in[1], plan.dtype, d.bound);
      } else {
        std::memcpy(d.bound, plan.scalar_opmath[bind].data(), 16);
      }
    } else {
      d = make_desc(plan);
    }
    write_param(kind, prm.alpha, plan.dtype, d.alpha);
    d.alpha_one = prm.alpha.equal(1);
    d.gelu_tanh = prm.gelu_tanh;
    CudaGuard guard(plan.out.device());
    d.device = plan.out.get_device();
    d.stream = current_stream(d.device);
    switch (unit_of(kind)) {
      case CudaUnit::unary:
        return cuda::launch_unary(kind, d);
      case CudaUnit::binary:
        return cuda::launch_binary(kind, d);
      case CudaUnit::div_pow_minmax:
        return cuda::launch_div_pow_minmax(kind, d);
      case CudaUnit::ternary:
        return cuda::launch_ternary(kind, d);
      case CudaUnit::cast:
        return at::isFloatingType(plan.dtype) ? cuda::launch_cast_to_float(d) : cuda::launch_cast_to_int(d);
    }
  }
};

}  // namespace
}  // namespace myops

MYOPS_CUDA_LIBRARY_IMPL(m) { myops::ew::register_all<myops::CudaBackend>(m); }
