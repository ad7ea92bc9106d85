// nonzero on CUDA: launchers for non-contiguous input (the flag is read through strides with
// 32-bit fast division; see nonzero.cuh). Kept apart from nonzero.cu so both compile in parallel.
#include "nonzero/cuda/nonzero.cuh"

namespace myops {
namespace nonzero_cuda {

void select_coords_strided(const FlagSource& f, const CoordSpec& spec, int64_t numel, int64_t* d_count,
                           cudaStream_t stream) {
  detail::with_bits(f.elem_size, [&](auto tag) {
    using Bits = typename decltype(tag)::type;
    detail::select_coords_impl<false>(detail::strided_flags<Bits>(f), spec, numel, d_count, stream);
  });
}

void count_nonzero_strided(const FlagSource& f, int64_t numel, int64_t* d_count, cudaStream_t stream) {
  detail::with_bits(f.elem_size, [&](auto tag) {
    using Bits = typename decltype(tag)::type;
    detail::count_impl<false>(detail::strided_flags<Bits>(f), numel, d_count, stream);
  });
}

}  // namespace nonzero_cuda
}  // namespace myops
