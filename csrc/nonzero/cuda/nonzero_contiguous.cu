// nonzero on CUDA: launchers for contiguous input (see nonzero.cuh). Kept apart from the glue in
// nonzero.cu and the strided launchers so that the CUB instantiations compile in parallel.
#include "nonzero/cuda/nonzero.cuh"

namespace myops {
namespace nonzero_cuda {

void select_coords_contiguous(const FlagSource& f, const CoordSpec& spec, int64_t numel, int64_t* d_count,
                              cudaStream_t stream) {
  detail::with_bits(f.elem_size, [&](auto tag) {
    using Bits = typename decltype(tag)::type;
    detail::select_coords_impl<true>(detail::contiguous_flags<Bits>(f), spec, numel, d_count, stream);
  });
}

void count_nonzero_contiguous(const FlagSource& f, int64_t numel, int64_t* d_count, cudaStream_t stream) {
  detail::with_bits(f.elem_size, [&](auto tag) {
    using Bits = typename decltype(tag)::type;
    detail::count_impl<true>(detail::contiguous_flags<Bits>(f), numel, d_count, stream);
  });
}

}  // namespace nonzero_cuda
}  // namespace myops
