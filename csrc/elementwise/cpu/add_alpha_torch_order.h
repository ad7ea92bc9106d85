#pragma once
// add / sub with alpha != 1 on half / bfloat16, on the CPU, element for element as PyTorch's
// CPU kernel computes it (bit-identical results).
//
// PyTorch's CPU add (ufunc `add`, cpu_kernel_vec) rounds alpha to the storage type first and
// then has two paths of different precision:
//   - the vectorized one (Vectorized<T>::fmadd): float(b) * float(alpha_T) + float(a) in
//     float, rounded once to T;
//   - the scalar one (the loop tail, and every element of a row whose inner strides are
//     neither contiguous nor contiguous-with-one-scalar): `a + alpha_T * b` in T's own
//     arithmetic, rounded to T after the product and again after the sum.
// Which elements take which path depends on TensorIterator's loop structure: the iteration
// range is split across threads (at::parallel_for, grain 32768) and each piece walks rows of
// the innermost dim; in a vectorizable row the first floor(n / (2 V)) * 2 V elements are
// vectorized (V: lanes of Vectorized<T>, 16; see below) and the rest are
// scalar. This loop replays that structure over the plan's merged iteration space (the same
// dims TensorIterator coalesces to), so every element takes the formula PyTorch gives it.
// Every half / bfloat16 `sub` comes here too (sub is add with alpha = -alpha, as in PyTorch).
//
// Each CPU build instantiates this with its own VecRow (elementwise/cpu/elementwise_kernels.h, a type in
// that build's anonymous namespace, so no two builds' instantiations can be merged): it
// computes the vectorized formula on a row's first elements with the build's SIMD
// conversions and returns how many it did; the rest of those elements take the same formula
// one at a time. Its kTorchFuses is false in the baseline build: torch's default build (what a
// CPU without AVX2 runs) computes its vector loop in T's own arithmetic too, as its scalar one.
#include <ATen/Parallel.h>

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "elementwise/elementwise_host.h"

namespace myops {
namespace ew {

// Lanes of PyTorch's Vectorized<T> for a 2-byte T in the kernel its add runs: 16 on x86 in
// every CPU build torch picks (add_stub is not one of the kernels registered for AVX-512, so
// an AVX-512 machine runs the AVX2 kernel; the default build's vectors are 32 bytes too).
constexpr int64_t kTorchVecLanes16 = 16;

template <typename T, class VecRow>
void add_alpha_torch_order(const EwPlan& p, const c10::Scalar& alpha, const VecRow& vec_row_fn) {
  const T alpha_t = alpha.to<T>();  // rounded to T first, as PyTorch does
  const float alpha_f = static_cast<float>(alpha_t);
  const auto& sh = p.shape;
  const int nd = sh.dim();
  const int64_t n0 = sh.sizes[nd - 1];
  const int64_t numel = p.numel;
  const int64_t step = 2 * kTorchVecLanes16;

  T* out = p.out.data_ptr<T>();
  const T* in[2];
  T sval[2];
  for (int k = 0; k < 2; ++k) {
    in[k] = static_cast<const T*>(p.in_ptr(k));
    std::memcpy(&sval[k], p.scalar[k].data(), sizeof(T));
  }
  const auto& inner = sh.strides[nd - 1];
  // TensorIterator's is_contiguous / is_contiguous_scalar checks on the inner strides
  // (a folded operand has stride 0)
  const bool contig = inner[0] == 1 && inner[1] == 1 && inner[2] == 1;
  const bool scalar1 = inner[0] == 1 && inner[1] == 0 && inner[2] == 1;
  const bool scalar2 = inner[0] == 1 && inner[1] == 1 && inner[2] == 0;
  // (torch's default build, the baseline's peer, has no fused path: every element in T)
  const bool vec_row = VecRow::kTorchFuses && (contig || scalar1 || scalar2);

  auto row_offsets = [&](int64_t row, int64_t (&off)[3]) {
    off[0] = off[1] = off[2] = 0;
    for (int d = nd - 2; d >= 0; --d) {
      int64_t i = row % sh.sizes[d];
      row /= sh.sizes[d];
      for (int a = 0; a < 3; ++a) off[a] += i * sh.strides[d][a];
    }
  };
  auto elem = [&](int64_t (&off)[3], int64_t j, bool vectorized) {
    T a = in[0] ? in[0][off[1] + j * inner[1]] : sval[0];
    T b = in[1] ? in[1][off[2] + j * inner[2]] : sval[1];
    T r;
    if (vectorized) {
      r = static_cast<T>(std::fma(static_cast<float>(b), alpha_f, static_cast<float>(a)));  // Vectorized fmadd
    } else {
      r = a + alpha_t * b;  // T arithmetic: rounded after the product and after the sum
    }
    out[off[0] + j * inner[0]] = r;
  };
  // One piece [begin, end) of the linear range, as TensorIterator's serial_for_each walks it.
  auto run_range = [&](int64_t begin, int64_t end) {
    int64_t pos = begin;
    while (pos < end) {
      int64_t row = pos / n0, col = pos % n0;
      int64_t n = std::min(n0 - col, end - pos);
      int64_t off[3];
      row_offsets(row, off);
      for (int a = 0; a < 3; ++a) off[a] += col * inner[a];
      int64_t nvec = vec_row ? (n / step) * step : 0;
      int64_t j = 0;
      if (nvec > 0) {  // inner strides are 0 or 1 here
        const T* a = in[0] ? in[0] + off[1] : &sval[0];
        const T* b = in[1] ? in[1] + off[2] : &sval[1];
        j = vec_row_fn(a, inner[1], b, inner[2], out + off[0], nvec, alpha_f);
      }
      for (; j < n; ++j) elem(off, j, j < nvec);
      pos += n;
    }
  };
  constexpr int64_t kGrain = 32768;  // at::internal::GRAIN_SIZE
  const int64_t threads = at::get_num_threads();
  if (numel < kGrain || threads == 1 || numel == kGrain || at::in_parallel_region()) {
    run_range(0, numel);
    return;
  }
  const int64_t pieces = std::min<int64_t>(threads, (numel + kGrain - 1) / kGrain);
  const int64_t chunk = (numel + pieces - 1) / pieces;
  at::parallel_for(0, pieces, 1, [&](int64_t b, int64_t e) {
    for (int64_t t = b; t < e; ++t) {
      int64_t lo = t * chunk;
      if (lo < numel) run_range(lo, std::min(numel, lo + chunk));
    }
  });
}

// True when the plan is an add / sub with alpha != 1 on half / bfloat16 (run by the loop above).
inline bool add_alpha_needs_torch_order(EwKind kind, const EwPlan& p, const EwParams& prm) {
  return kind == EwKind::Add && (p.dtype == at::kHalf || p.dtype == at::kBFloat16) && !prm.alpha.equal(1);
}

template <class VecRow>
void run_add_alpha_torch_order(const EwPlan& p, const EwParams& prm, const VecRow& vec_row_fn) {
  if (p.dtype == at::kHalf) {
    add_alpha_torch_order<c10::Half>(p, prm.alpha, vec_row_fn);
  } else {
    add_alpha_torch_order<c10::BFloat16>(p, prm.alpha, vec_row_fn);
  }
}

}  // namespace ew
}  // namespace myops
