#pragma once
// The loop of the CPU elementwise kernels (elementwise/cpu/elementwise_kernels.h): contiguous, strided and
// broadcast rows over the plan's merged iteration space, at::parallel_for, and the drivers that
// run a functor on one dtype (run_same) or with a cast.
#include "elementwise/cpu/elementwise_store.h"

namespace myops {
namespace {

// ---- the loop ---------------------------------------------------------------------------------

// How the loop runs the rows of row functor G: a functor that declares kSplitsRows (the
// torch-order wrappers, elementwise/cpu/elementwise_torch_order.h) splits each row itself (G::split_row);
// any other runs whole rows, and whole blocks of contiguous rows (plain_rows).
template <class G, class = void>
constexpr bool kSplitsRows = false;
template <class G>
constexpr bool kSplitsRows<G, std::void_t<decltype(G::kSplitsRows)>> = G::kSplitsRows;

template <typename Out, typename... In>
struct CpuLoop {
  using out_type = Out;
  static constexpr int NIN = sizeof...(In);
  static constexpr int NARGS = NIN + 1;
  static constexpr bool kSame = (std::is_same<In, Out>::value && ...);
  // rows of this op go through vec_row / vec_row_plain (Vectorized<Out>) when dense
  template <class VF>
  static constexpr bool kVecRow = kSame && is_vec_float<Out> && !std::is_same<VF, NoVec>::value;

  // One row of n elements; strides in elements (0: broadcast).
  template <class G, class VF>
  static void row(char* const* ptr, const int64_t* st, int64_t n, const G& g, const VF& vf, bool stream) {
    Out* out = reinterpret_cast<Out*>(ptr[0]);
    bool dense = st[0] == 1;
    for (int k = 1; k < NARGS; ++k) dense &= st[k] == 0 || st[k] == 1;
    if constexpr (NIN == 1 && !kSame) {
      if (st[0] == 1 && st[1] == 1 &&
          vec_cast(reinterpret_cast<const In*>(ptr[1])..., reinterpret_cast<Out*>(ptr[0]), n)) {
        return;
      }
    }
    if constexpr (kVecRow<VF>) {
      if (dense) {
        vec_row(ptr, st, n, g, vf, stream, std::make_index_sequence<NIN>{});
        return;
      }
    } else {
      if (dense) {
        dense_row(ptr, st, n, g, std::make_index_sequence<NIN>{});
        return;
      }
    }
    strided_row(ptr, st, n, g, std::make_index_sequence<NIN>{});
    (void)out;
    (void)stream;
  }

  template <class G, size_t... I>
  static void strided_row(char* const* ptr, const int64_t* st, int64_t n, const G& g, std::index_sequence<I...>) {
    Out* out = reinterpret_cast<Out*>(ptr[0]);
    const int64_t so = st[0];
    for (int64_t i = 0; i < n; ++i) {
      out[i * so] = g(reinterpret_cast<const In*>(ptr[I + 1])[i * st[I + 1]]...);
    }
  }

  // Contiguous output, inputs contiguous or broadcast (stride 0). The broadcast pattern is
  // made a compile-time constant so that the compiler hoists the broadcast loads and
  // vectorizes the loop (a branch-free select for where: its condition is random data).
  template <class G, size_t... I>
  static void dense_row(char* const* ptr, const int64_t* st, int64_t n, const G& g, std::index_sequence<I...> seq) {
    unsigned mask = 0;
    ((mask |= (st[I + 1] == 0 ? 1u : 0u) << I), ...);
    dense_row_dispatch<0>(mask, ptr, n, g, seq);
  }

  template <unsigned M, class G, size_t... I>
  static void dense_row_dispatch(unsigned mask, char* const* ptr, int64_t n, const G& g,
                                 std::index_sequence<I...> seq) {
    if constexpr (M + 1 < (1u << NIN)) {  // every pattern but "all inputs broadcast"
      if (mask == M) return dense_row_bc<M>(ptr, n, g, seq);
      return dense_row_dispatch<M + 1>(mask, ptr, n, g, seq);
    } else {
      // all inputs broadcast: one value for the whole row
      Out* out = reinterpret_cast<Out*>(ptr[0]);
      const Out v = g(reinterpret_cast<const In*>(ptr[I + 1])[0]...);
      for (int64_t i = 0; i < n; ++i) out[i] = v;
    }
  }

  template <unsigned M, class G, size_t... I>
  static void dense_row_bc(char* const* ptr, int64_t n, const G& g, std::index_sequence<I...>) {
    Out* __restrict out = reinterpret_cast<Out*>(ptr[0]);
    const std::tuple<const In*...> in{reinterpret_cast<const In*>(ptr[I + 1])...};
    const std::tuple<In...> bv{reinterpret_cast<const In*>(ptr[I + 1])[0]...};
    for (int64_t i = 0; i < n; ++i) {
      out[i] = g(((M >> I) & 1u ? std::get<I>(bv) : std::get<I>(in)[i])...);
    }
  }

  // Vectorized over the float types: loads (or broadcasts) Vectorized<Out>, computes on
  // Vectorized<opmath>, stores; the tail goes through the scalar functor.
  template <class G, class VF, size_t... I>
  static void vec_row(char* const* ptr, const int64_t* st, int64_t n, const G& g, const VF& vf, bool stream,
                      std::index_sequence<I...>) {
    using T = Out;
    using V = Vectorized<T>;
    constexpr int64_t W = V::size();
    T* out = reinterpret_cast<T*>(ptr[0]);
    const T* in[NIN] = {reinterpret_cast<const T*>(ptr[I + 1])...};
    bool bc[NIN] = {(st[I + 1] == 0)...};
    if (!(bc[I] || ...)) return vec_row_plain(out, in, n, g, vf, stream, std::index_sequence<I...>{});
    V bv[NIN] = {V(in[I][0])...};
    int64_t i = 0;
    if constexpr (kCanStream<T>) {
      if (stream) {
        for (; i < n && reinterpret_cast<uintptr_t>(out + i) % sizeof(V) != 0; ++i) {
          out[i] = g((bc[I] ? in[I][0] : in[I][i])...);
        }
        for (; i + W <= n; i += W) stream_store(out + i, vf((bc[I] ? bv[I] : V::loadu(in[I] + i))...));
      }
    }
    if constexpr (std::is_same<T, float>::value || std::is_same<T, double>::value) {
      // two vectors per iteration: independent dependency chains for the long ones (erf, exp)
      for (; i + 2 * W <= n; i += 2 * W) {
        V r0 = vf((bc[I] ? bv[I] : V::loadu(in[I] + i))...);
        V r1 = vf((bc[I] ? bv[I] : V::loadu(in[I] + i + W))...);
        r0.store(out + i);
        r1.store(out + i + W);
      }
      for (; i + W <= n; i += W) {
        V r = vf((bc[I] ? bv[I] : V::loadu(in[I] + i))...);
        r.store(out + i);
      }
    } else {
      using VFl = Vectorized<float>;
      VFl blo[NIN], bhi[NIN];
      for (int k = 0; k < NIN; ++k) {
        // widened once per row, and only for broadcast operands: short rows (channels_last
        // with a per-channel operand: rows of C elements) would otherwise pay it per row
        if (bc[k]) std::tie(blo[k], bhi[k]) = at::vec::convert_to_float<T>(bv[k]);
      }
      for (; i + W <= n; i += W) {
        VFl lo[NIN], hi[NIN];
        for (int k = 0; k < NIN; ++k) {
          if (bc[k]) {
            lo[k] = blo[k];
            hi[k] = bhi[k];
          } else {
            std::tie(lo[k], hi[k]) = at::vec::convert_to_float<T>(V::loadu(in[k] + i));
          }
        }
        VFl rlo = vf(lo[I]...);
        VFl rhi = vf(hi[I]...);
        at::vec::convert_from_float<T>(rlo, rhi).store(out + i);
      }
    }
    for (; i < n; ++i) out[i] = g((bc[I] ? in[I][0] : in[I][i])...);
  }

  // vec_row without broadcast operands: no per-row setup, which matters for short rows (a
  // channels_last tensor times a per-channel operand runs rows of C elements).
  template <class G, class VF, size_t... I>
  static void vec_row_plain(Out* out, const Out* const* in, int64_t n, const G& g, const VF& vf, bool stream,
                            std::index_sequence<I...>) {
    using T = Out;
    using V = Vectorized<T>;
    constexpr int64_t W = V::size();
    int64_t i = 0;
    if constexpr (kCanStream<T>) {
      if (stream) {
        for (; i < n && reinterpret_cast<uintptr_t>(out + i) % sizeof(V) != 0; ++i) out[i] = g(in[I][i]...);
        for (; i + W <= n; i += W) stream_store(out + i, vf(V::loadu(in[I] + i)...));
      }
    }
    (void)stream;
#ifdef MYOPS_EW_HAVE_HW_BF16
    if constexpr (kHwBf16<T, VF>) {
      if (hw_bf16()) i = bf16_unary_hw(in[0], out, n, vf);
    }
#endif
    if constexpr (kHasRow16<VF, T>) {
      i = row16<typename VF::template Row16<T>>(in[0], out, n);
    } else if constexpr (std::is_same<T, float>::value || std::is_same<T, double>::value) {
      for (; i + 2 * W <= n; i += 2 * W) {
        V r0 = vf(V::loadu(in[I] + i)...);
        V r1 = vf(V::loadu(in[I] + i + W)...);
        r0.store(out + i);
        r1.store(out + i + W);
      }
      for (; i + W <= n; i += W) vf(V::loadu(in[I] + i)...).store(out + i);
    } else {
      using VFl = Vectorized<float>;
      // two vectors per iteration, as PyTorch's vectorized loop
      for (; i + 2 * W <= n; i += 2 * W) {
        VFl lo[NIN], hi[NIN], lo2[NIN], hi2[NIN];
        ((std::tie(lo[I], hi[I]) = at::vec::convert_to_float<T>(V::loadu(in[I] + i))), ...);
        ((std::tie(lo2[I], hi2[I]) = at::vec::convert_to_float<T>(V::loadu(in[I] + i + W))), ...);
        const V r0 = at::vec::convert_from_float<T>(vf(lo[I]...), vf(hi[I]...));
        const V r1 = at::vec::convert_from_float<T>(vf(lo2[I]...), vf(hi2[I]...));
        r0.store(out + i);
        r1.store(out + i + W);
      }
      for (; i + W <= n; i += W) {
        VFl lo[NIN], hi[NIN];
        ((std::tie(lo[I], hi[I]) = at::vec::convert_to_float<T>(V::loadu(in[I] + i))), ...);
        at::vec::convert_from_float<T>(vf(lo[I]...), vf(hi[I]...)).store(out + i);
      }
    }
    for (; i < n; ++i) out[i] = g(in[I][i]...);
  }

  template <class G, class VF = NoVec>
  static void run(const EwPlan& p, const G& g, const VF& vf = VF()) {
    auto shape = p.shape_n<NARGS>();
    const int nd = shape.dim();
    const int64_t W = shape.sizes[nd - 1];
    int64_t elsize[NARGS] = {int64_t(sizeof(Out)), int64_t(sizeof(In))...};
    char* base[NARGS];
    base[0] = static_cast<char*>(p.out.mutable_data_ptr());
    for (int k = 0; k < NIN; ++k) {
      base[k + 1] = p.folded[k] ? const_cast<char*>(reinterpret_cast<const char*>(p.scalar[k].data()))
                                : static_cast<char*>(const_cast<void*>(p.in[k].const_data_ptr()));
    }
    int64_t inner[NARGS];
    for (int k = 0; k < NARGS; ++k) inner[k] = shape.strides[nd - 1][k];
    const int64_t out_bytes = p.numel * int64_t(sizeof(Out));
    int64_t total = out_bytes;
    for (int k = 0; k < NIN; ++k) total += p.folded[k] ? 0 : int64_t(p.in[k].nbytes());
    const bool stream =
        kCanStream<Out> && !kNeverStream<VF> && streams(out_bytes, total) && pages_resident(base[0], out_bytes);
    at::parallel_for(0, p.numel, kGrain, [&](int64_t begin, int64_t end) {
      // odometer over the outer dims
      int64_t idx[MYOPS_MAX_DIMS] = {0};
      int64_t row = begin / W, col = begin % W;
      for (int d = nd - 2; d >= 0; --d) {
        idx[d] = row % shape.sizes[d];
        row /= shape.sizes[d];
      }
      while (begin < end) {
        int64_t n = std::min(W - col, end - begin);
        char* ptr[NARGS];
        for (int k = 0; k < NARGS; ++k) {
          int64_t off = col * inner[k];
          for (int d = 0; d < nd - 1; ++d) off += idx[d] * shape.strides[d][k];
          ptr[k] = base[k] + off * elsize[k];
        }
        if (col == 0 && nd >= 2) {
          // whole rows along the next dim: step the pointers instead of recomputing them
          // (short rows, e.g. channels_last times a per-channel operand: rows of C elements)
          const int64_t rows = std::min((end - begin) / W, shape.sizes[nd - 2] - idx[nd - 2]);
          if (rows > 1) {
            int64_t step[NARGS];
            for (int k = 0; k < NARGS; ++k) step[k] = shape.strides[nd - 2][k] * elsize[k];
            if (!plain_rows(ptr, inner, step, rows, W, g, vf, stream)) {
              for (int64_t r = 0; r < rows; ++r) {
                row_dispatch(ptr, inner, W, g, vf, stream);
                for (int k = 0; k < NARGS; ++k) ptr[k] += step[k];
              }
            }
            begin += rows * W;
            idx[nd - 2] += rows - 1;  // the last row's carry is done below
            n = 0;
          }
        }
        if (n > 0) {
          row_dispatch(ptr, inner, n, g, vf, stream);
          begin += n;
        }
        col = 0;
        for (int d = nd - 2; d >= 0; --d) {
          if (++idx[d] < shape.sizes[d]) break;
          idx[d] = 0;
        }
      }
      if (stream) stream_fence();  // the streamed lines are visible before the join
    });
  }

  // Whole rows, every operand contiguous along them (no broadcast inside a row): the row kind
  // is decided once for all of them, and each row goes straight to vec_row_plain. Returns
  // false (nothing done) for any other row kind.
  template <class G, class VF>
  static bool plain_rows(char* const* ptr0, const int64_t* st, const int64_t* step, int64_t rows, int64_t n, const G& g,
                         const VF& vf, bool stream) {
    if constexpr (kVecRow<VF> && !kSplitsRows<G>) {
      for (int k = 0; k < NARGS; ++k) {
        if (st[k] != 1) return false;
      }
      return plain_rows_impl(ptr0, step, rows, n, g, vf, stream, std::make_index_sequence<NIN>{});
    } else {
      (void)ptr0, (void)st, (void)step, (void)rows, (void)n, (void)g, (void)vf, (void)stream;
      return false;
    }
  }

  template <class G, class VF, size_t... I>
  static bool plain_rows_impl(char* const* ptr0, const int64_t* step, int64_t rows, int64_t n, const G& g, const VF& vf,
                              bool stream, std::index_sequence<I...>) {
    Out* out = reinterpret_cast<Out*>(ptr0[0]);
    const Out* in[NIN] = {reinterpret_cast<const Out*>(ptr0[I + 1])...};
    for (int64_t r = 0; r < rows; ++r) {
      vec_row_plain(out, in, n, g, vf, stream, std::index_sequence<I...>{});
      out = reinterpret_cast<Out*>(reinterpret_cast<char*>(out) + step[0]);
      ((in[I] = reinterpret_cast<const Out*>(reinterpret_cast<const char*>(in[I]) + step[I + 1])), ...);
    }
    return true;
  }

  template <class G, class VF>
  static void row_dispatch(char* const* ptr, const int64_t* st, int64_t n, const G& g, const VF& vf, bool stream) {
    if constexpr (kSplitsRows<G>) {
      g.template split_row<CpuLoop>(ptr, st, n, vf, stream);
    } else {
      row(ptr, st, n, g, vf, stream);
    }
  }
};

template <typename T, int NIN, class F>
void run_same_impl(const EwPlan& p, const F& f);

// Runs functor F (on compute types) with output and inputs all of dtype T. A binary op on
// half/bfloat16 with a scalar the plan marks for opmath precision runs as a unary op with the
// scalar bound into the functor.
template <typename T, int NIN, class F>
void run_same(const EwPlan& p, const F& f) {
  if constexpr (NIN == 2 && !std::is_same<T, opmath_t<T>>::value) {
    using C = opmath_t<T>;
    int k = p.opmath_fold();
    if (k == 0) return run_same_impl<T, 1>(p.without_input(0), BindLeft<F, C>{f, p.opmath_value<C>(0)});
    if (k == 1) return run_same_impl<T, 1>(p.without_input(1), BindRight<F, C>{f, p.opmath_value<C>(1)});
  }
  run_same_impl<T, NIN>(p, f);
}

// The loop over NIN inputs, every operand of type T.
template <typename T, int NIN>
struct SameLoop;
template <typename T>
struct SameLoop<T, 1> {
  using type = CpuLoop<T, T>;
};
template <typename T>
struct SameLoop<T, 2> {
  using type = CpuLoop<T, T, T>;
};
template <typename T>
struct SameLoop<T, 3> {
  using type = CpuLoop<T, T, T, T>;
};

// F's row functor (InOpMath, or its op's torch-order wrapper: TorchRowOf) with its vector form.
template <typename T, int NIN, class F>
void run_same_impl(const EwPlan& p, const F& f) {
  using VF = typename VecOf<F>::type;
  if constexpr (std::is_same<VF, NoVec>::value) {
    SameLoop<T, NIN>::type::run(p, TorchRowOf<T, F>::make(f));
  } else {
    SameLoop<T, NIN>::type::run(p, TorchRowOf<T, F>::make(f), VF{f});
  }
}

}  // namespace
}  // namespace myops
