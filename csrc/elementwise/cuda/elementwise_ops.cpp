// CUDA registration of the elementwise ops: the shared front ends (elementwise/elementwise_ops.h)
// plan each call; this file turns a plan into the plain launch descriptor of
// elementwise/cuda/elementwise_launch.h and calls the kernel files (elementwise_*.cu) under a device guard
// on the current stream.
#include <ATen/Dispatch_v2.h>
#include <torch/library.h>

#include <cstring>

#include "elementwise/elementwise_functors.h"
#include "elementwise/elementwise_ops.h"
#include "elementwise/cuda/elementwise_launch.h"
#include "core/cuda/glue.h"

namespace myops {
namespace {

using namespace myops::ew;

// `s` converted to the compute type of dtype `dt`, as raw bytes.
void write_opmath(const c10::Scalar& s, at::ScalarType dt, unsigned char* dst) {
  AT_DISPATCH_V2(dt, "myops.elementwise", AT_WRAP([&] {
    using C = opmath_t<scalar_t>;
    C v = s.to<C>();
    std::memcpy(dst, &v, sizeof(C));
  }), AT_EXPAND(AT_ALL_TYPES), at::kBool, at::kHalf, at::kBFloat16);
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
  static at::Tensor cast(const at::Tensor& t, at::ScalarType dt) { return Ops<CudaBackend>::cast(t, dt); }

  static void run(EwKind kind, const EwPlan& plan, const EwParams& prm) {
    const bool binary = arity_of(kind) == 2;
    const bool reduced = plan.dtype == at::kHalf || plan.dtype == at::kBFloat16;
    int bind = (binary && reduced) ? plan.opmath_fold() : -1;
    // torch's CUDA div by a CPU scalar multiplies by its reciprocal (computed in opmath on the
    // host), for every floating dtype: the divisor is bound (CudaKernel<EwKind::Div>)
    if (kind == EwKind::Div && plan.folded[1]) bind = 1;
    cuda::Desc d;
    if (bind >= 0) {
      d = make_desc(plan.without_input(bind));
      d.bind = bind;
      std::memcpy(d.bound, plan.scalar_opmath[bind].data(), 16);
    } else {
      d = make_desc(plan);
    }
    write_opmath(prm.alpha, plan.dtype, d.alpha);
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
