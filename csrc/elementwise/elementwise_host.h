#pragma once
// Host-side planning shared by the CPU and CUDA elementwise kernels, after the op's rule
// (elementwise/elementwise_rules.h: the checks, the result dtype and device): the output's shape
// and layout (the rule's broadcast_shape and TensorIterator's strides, core/output_strides.h), the
// iteration space with merged dimensions, and one-element operands folded into scalars.
//
// Used from .cpp files only (csrc/elementwise/cpu/elementwise.cpp, csrc/elementwise/cuda/elementwise_glue.cpp); the
// .cu files see only the plain EwLaunch descriptor built from an EwPlan.
#include <ATen/EmptyTensor.h>
#include <ATen/ExpandUtils.h>
#include <ATen/core/Tensor.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/empty_strided.h>
#include <c10/core/DynamicCast.h>
#include <c10/core/ScalarType.h>
#include <c10/util/TypeCast.h>
#include <c10/util/accumulate.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <numeric>
#include <string>
#include <vector>

#include "core/checks.h"
#include "core/dtypes.h"
#include "core/output_strides.h"
#include "core/strided.h"
#include "elementwise/elementwise_rules.h"
#include "myops/op_table.h"

namespace myops {
namespace ew {

// The output's strides (TensorIterator's rule, core/output_strides.h) for inputs `ts`
// broadcast to `shape`.
inline std::vector<int64_t> output_strides(at::IntArrayRef shape, c10::ArrayRef<const at::Tensor*> ts) {
  return output_strides_of<int64_t>(shape, ts);
}

// An empty tensor for `t.to(dtype)` on `dev`, with the strides of memory_format=preserve
// (core/output_strides.h).
inline at::Tensor empty_preserve(const at::Tensor& t, at::ScalarType dtype, c10::Device dev) {
  auto opt = t.options().dtype(dtype).device(dev);
  return at::empty_strided(t.sizes(), preserve_strides_of<int64_t>(&t), opt);
}

// Everything a kernel needs: output, inputs (already in the compute dtype, except where's
// condition and cast's source), the merged iteration space and the folded scalars.
struct EwPlan {
  int nin = 0;
  at::Tensor out;
  std::array<at::Tensor, kMaxIn> in;  // keeps casted inputs alive
  std::array<bool, kMaxIn> folded{};  // one-element operand read on the host
  // raw bytes of a folded operand's value in its operand dtype (in_dtype[k])
  alignas(16) std::array<std::array<unsigned char, 16>, kMaxIn> scalar{};
  // the same value converted straight to the compute type (float for half/bfloat16), used
  // where PyTorch applies a scalar operand at opmath precision (see opmath_scalar)
  alignas(16) std::array<std::array<unsigned char, 16>, kMaxIn> scalar_opmath{};
  std::array<bool, kMaxIn> opmath_scalar{};  // set by the op front end
  std::array<at::ScalarType, kMaxIn> in_dtype{};
  at::ScalarType dtype = at::kFloat;  // output dtype
  // merged iteration space: arg 0 is the output, arg k+1 input k (stride 0 when folded)
  StridedShape<kMaxIn + 1> shape;
  int64_t numel = 0;
  // every unfolded operand (output included) is addressed by the same linear index
  bool linear = false;

  const void* in_ptr(int k) const { return folded[k] ? nullptr : in[k].const_data_ptr(); }

  // Index of a folded input to apply at opmath precision, or -1.
  int opmath_fold() const {
    for (int k = nin - 1; k >= 0; --k) {
      if (folded[k] && opmath_scalar[k]) return k;
    }
    return -1;
  }

  template <typename C>
  C opmath_value(int k) const {
    C v;
    std::memcpy(&v, scalar_opmath[k].data(), sizeof(C));
    return v;
  }

  // The same plan with input k removed (its value bound into the functor by the caller).
  EwPlan without_input(int k) const {
    EwPlan q = *this;
    q.nin = nin - 1;
    for (int j = k; j < nin - 1; ++j) {
      q.in[j] = in[j + 1];
      q.folded[j] = folded[j + 1];
      q.scalar[j] = scalar[j + 1];
      q.scalar_opmath[j] = scalar_opmath[j + 1];
      q.opmath_scalar[j] = opmath_scalar[j + 1];
      q.in_dtype[j] = in_dtype[j + 1];
      for (auto& st : q.shape.strides) st[j + 1] = st[j + 2];
    }
    q.in[nin - 1] = at::Tensor();
    for (auto& st : q.shape.strides) st[nin] = 0;
    return q;
  }
  template <int NARGS>
  StridedShape<NARGS> shape_n() const {
    StridedShape<NARGS> s;
    s.sizes = shape.sizes;
    for (auto& st : shape.strides) {
      std::array<int64_t, NARGS> a{};
      for (int i = 0; i < NARGS; ++i) a[i] = st[i];
      s.strides.push_back(a);
    }
    return s;
  }
};

// Converts the single element of host tensor `t` to dtype `to`, as raw bytes.
inline void read_scalar(const at::Tensor& t, at::ScalarType to, unsigned char* dst) {
  auto c = t.contiguous();
  const void* src = c.const_data_ptr();
#define MYOPS_EW_TO(T, NAME)                            \
  case at::k##NAME: {                                   \
    T v = c10::fetch_and_cast<T>(c.scalar_type(), src); \
    std::memcpy(dst, &v, sizeof(T));                    \
    break;                                              \
  }
  switch (to) {
    AT_FORALL_SCALAR_TYPES_AND3(Bool, Half, BFloat16, MYOPS_EW_TO)
    default:
      TORCH_CHECK(false, "myops: internal error: unsupported scalar dtype ", to);
  }
#undef MYOPS_EW_TO
}

// Reads folded operand k (a one-element host tensor) into the plan's scalar slots.
inline void read_folded(EwPlan& p, int k) {
  read_scalar(p.in[k], p.in_dtype[k], p.scalar[k].data());
  auto op_dt = (p.in_dtype[k] == at::kHalf || p.in_dtype[k] == at::kBFloat16) ? at::kFloat : p.in_dtype[k];
  read_scalar(p.in[k], op_dt, p.scalar_opmath[k].data());
}

// The common case planned without the general machinery (no shape vectors, no stride
// ordering): every operand that is not folded is contiguous, already in its kernel dtype and
// of one shape, and every folded one has no more dims than that. The output is then
// contiguous (as TensorIterator makes it) and the iteration space one linear dim. Returns
// false, touching nothing but `p.in`/`p.out` it may not keep, when the call needs the general plan.
inline bool plan_same_shape_contiguous(EwPlan& p, const std::array<at::Tensor, kMaxIn>& ins,
                                       const at::Tensor& out_given, c10::Device dev) {
  int main = -1;
  for (int k = 0; k < p.nin; ++k) {
    if (!p.folded[k]) {
      main = k;
      break;
    }
  }
  if (main < 0) return false;
  const auto sizes = ins[main].sizes();
  bool same_shape = true;  // TensorIterator's fast setup: a contiguous output
  for (int k = 0; k < p.nin; ++k) {
    const auto& t = ins[k];
    if (p.folded[k]) {
      if (t.dim() > static_cast<int64_t>(sizes.size())) return false;
      same_shape &= t.sizes().equals(sizes);
    } else if (t.scalar_type() != p.in_dtype[k] || !t.is_contiguous() || !t.sizes().equals(sizes)) {
      return false;
    }
  }
  if (!same_shape) {
    // Beside a broadcast scalar the output follows the operands' strides; it is contiguous
    // for sure only when they are exactly row-major (size-1 dims included), and not empty:
    // there TensorIterator's permutation can differ (beside a 0-d operand, [0, 1] gets strides
    // (1, 0)), so an empty output takes the general rule.
    if (c10::multiply_integers(sizes) == 0) return false;
    for (int k = 0; k < p.nin; ++k) {
      if (!p.folded[k] && !ins[k].strides().equals(contiguous_strides(sizes))) return false;
    }
  }
  if (out_given.defined() && !out_given.is_contiguous()) return false;
  if (out_given.defined()) {
    p.out = out_given;
  } else if (dev.is_cpu()) {
    p.out = at::Tensor(at::detail::empty_cpu(sizes, p.dtype));  // no dispatcher round trip
  } else {
    p.out = at::empty(sizes, at::TensorOptions().dtype(p.dtype).device(dev));
  }
  p.numel = p.out.numel();
  if (p.numel == 0) return true;
  std::array<int64_t, kMaxIn + 1> st{};
  st[0] = 1;
  for (int k = 0; k < p.nin; ++k) {
    p.in[k] = ins[k];
    if (p.folded[k]) {
      read_folded(p, k);
    } else {
      st[k + 1] = 1;
    }
  }
  p.shape.sizes.assign(1, p.numel);
  p.shape.strides.assign(1, st);
  p.linear = true;
  return true;
}

// Plans an elementwise op as its rule decided (`s`, elementwise/elementwise_rules.h): `ins` are the
// operands in the spec's order, each cast to s.in_dtype[k] (by `cast`, a device cast with .to()
// semantics) unless it is folded; the result of dtype s.dtype on s.device. s.cast_first: the
// output layout is computed from the cast inputs. For unary ops that keep the input's strides
// (cast), pass the preallocated output as `out_given`.
template <typename CastFn>
EwPlan make_plan(const EwSpec& s, c10::ArrayRef<at::Tensor> ins_in, CastFn cast,
                 const at::Tensor& out_given = at::Tensor()) {
  const char* op = s.op;
  const c10::ArrayRef<at::ScalarType> in_dtype(s.in_dtype.data(), s.nin);
  const at::ScalarType out_dtype = s.dtype;
  const c10::Device dev = s.device;
  const bool cast_first = s.cast_first;
  EwPlan p;
  p.nin = static_cast<int>(ins_in.size());
  p.dtype = out_dtype;
  std::array<at::Tensor, kMaxIn> ins;
  std::array<const at::Tensor*, kMaxIn> ptr_arr{};
  for (int k = 0; k < p.nin; ++k) {
    ins[k] = ins_in[k];
    ptr_arr[k] = &ins[k];
    p.in_dtype[k] = in_dtype[k];
    // one-element operands that live on the host are folded into the kernel as scalars
    p.folded[k] = host_scalar(ins[k]);
  }
  const c10::ArrayRef<const at::Tensor*> ptrs(ptr_arr.data(), p.nin);
  if (plan_same_shape_contiguous(p, ins, out_given, dev)) return p;
  std::array<at::IntArrayRef, kMaxIn> sizes;
  for (int k = 0; k < p.nin; ++k) sizes[k] = ins[k].sizes();
  auto shape = broadcast_shape<int64_t>(op, c10::ArrayRef<at::IntArrayRef>(sizes.data(), p.nin),
                                        c10::ArrayRef<const char*>(s.names.data(), p.nin));
  int64_t numel = 1;
  for (auto d : shape) numel *= d;
  p.numel = numel;
  auto do_cast = [&](int k) {
    if (!p.folded[k] && ins[k].scalar_type() != in_dtype[k]) ins[k] = cast(ins[k], in_dtype[k]);
  };
  if (cast_first) {
    for (int k = 0; k < p.nin; ++k) do_cast(k);
  }
  std::vector<int64_t> st;
  if (out_given.defined()) {
    p.out = out_given;
    st = out_given.strides().vec();
  } else {
    st = output_strides(shape, ptrs);
    p.out = at::empty_strided(shape, st, at::TensorOptions().dtype(out_dtype).device(dev));
  }
  if (numel == 0) return p;
  if (!cast_first) {
    for (int k = 0; k < p.nin; ++k) do_cast(k);
  }
  for (int k = 0; k < p.nin; ++k) {
    p.in[k] = ins[k];
    if (p.folded[k]) read_folded(p, k);
  }
  // Iteration space: dims ordered by the output's strides (outermost first), then merged.
  const int64_t nd = static_cast<int64_t>(shape.size());
  std::vector<int64_t> order(nd);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) { return st[a] > st[b]; });
  auto merged = [&]() {
    StridedShape<kMaxIn + 1> ss;
    for (int64_t d : order) {
      ss.sizes.push_back(shape[d]);
      std::array<int64_t, kMaxIn + 1> a{};
      a[0] = st[d];
      for (int k = 0; k < p.nin; ++k) {
        if (p.folded[k]) continue;
        const auto& t = p.in[k];
        int64_t kd = d - (nd - t.dim());
        a[k + 1] = (kd < 0 || t.size(kd) == 1) ? 0 : t.stride(kd);
      }
      ss.strides.push_back(a);
    }
    ss.coalesce();
    return ss;
  };
  auto ss = merged();
  if (ss.dim() > MYOPS_MAX_DIMS) {
    // More dims than the kernels' offset calculators hold (inputs strided differently in
    // more than 16 dims): copy every input into the output's layout, which then merges
    // into the output's own (dense) order. Rare; costs one copy per input.
    for (int k = 0; k < p.nin; ++k) {
      if (p.folded[k]) continue;
      auto c = at::empty_strided(shape, st, p.in[k].options());
      c.copy_(p.in[k].expand(shape));
      p.in[k] = c;
    }
    ss = merged();
  }
  p.shape = std::move(ss);
  bool lin = p.shape.dim() == 1 && p.shape.strides[0][0] == 1;
  for (int k = 0; k < p.nin; ++k) {
    if (!p.folded[k]) lin &= p.shape.strides[0][k + 1] == 1;
  }
  p.linear = lin;
  TORCH_CHECK(p.shape.dim() <= MYOPS_MAX_DIMS, "myops.", op, ": internal error: ", p.shape.dim(),
              " dimensions after merging (at most ", MYOPS_MAX_DIMS, ")");
  return p;
}

}  // namespace ew
}  // namespace myops
