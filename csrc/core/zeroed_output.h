#pragma once
// A CPU output whose padding rows are zero for free: the bounded ops (roi_align_levels,
// paste_masks) write their real rows only.
#include <ATen/core/Tensor.h>
#include <ATen/ops/empty.h>
#include <c10/core/CPUAllocator.h>
#include <c10/util/accumulate.h>
#include <sys/mman.h>

#include <cstddef>

namespace myops {

// Outputs from this size on, with padding rows, are fresh anonymous pages (mmap): the OS hands
// them out zeroed, on first touch, so the padding's zeros cost nothing (a static detector pads
// 1000 RoIs per image for RoIAlign, ~50 MB, of which a few hundred are real, and 100 pasted
// masks per image, 350 MB at 800x1088; zeroing freshly mapped memory cost as much as the real
// rows' work). Smaller outputs, and a failed mmap, take
// at::empty and write the zeros.
inline constexpr size_t kZeroedPagesFrom = size_t(4) << 20;

// The mapping behind such an output, unmapped when its storage lets go of it.
struct ZeroedPages {
  void* p;
  size_t bytes;
  static void release(void* ctx) {
    auto* z = static_cast<ZeroedPages*>(ctx);
    munmap(z->p, z->bytes);
    delete z;
  }
};

// `sizes` contiguous; *zeroed: whether every element already reads 0. The storage is
// resizable as at::empty's is (resize_ moves it to the CPU allocator's memory, then unmaps).
inline at::Tensor zeroed_output(at::IntArrayRef sizes, const at::TensorOptions& options, bool padding, bool* zeroed) {
  const size_t bytes =
      static_cast<size_t>(c10::multiply_integers(sizes)) * c10::elementSize(options.dtype().toScalarType());
  *zeroed = false;
  if (padding && bytes >= kZeroedPagesFrom) {
    void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p != MAP_FAILED) {
      *zeroed = true;
      c10::DataPtr data(p, new ZeroedPages{p, bytes}, &ZeroedPages::release, c10::Device(c10::kCPU));
      c10::Storage storage(c10::Storage::use_byte_size_t(), bytes, std::move(data), c10::GetCPUAllocator(),
                           /*resizable=*/true);
      return at::empty({0}, options).set_(std::move(storage), 0, sizes);
    }
  }
  return at::empty(sizes, options.memory_format(at::MemoryFormat::Contiguous));
}

}  // namespace myops
