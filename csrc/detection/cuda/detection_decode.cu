// heatmaps_to_keypoints / paste_masks on CUDA (detection/detection_decode.h). The bound is read on
// the device (no host sync): a padding row's threads write 0 and read nothing else.
//
// heatmaps_to_keypoints: one block per (RoI, keypoint). Its threads walk the RoI's resampled
// map (h x w, the RoI's own ceil size) without storing it: each position's value is computed as
// torch's CUDA upsample_bicubic2d computes it (four horizontal cubic interpolations of the
// clamped source rows, then one vertical; the cubic coefficients of A = -0.75; source index
// scale * (dst + 0.5) - 0.5 with scale = in / out, in the accumulate type), and the block keeps
// the first maximum (torch's argmax rule, a NaN winning). Memory: the outputs only.
//
// A real RoI that is not a finite box (the CPU raises, as torchvision does) gives NaN keypoints.
//
// paste_masks: one thread per canvas pixel (grid-stride): inside its row's box and image, the
// value torch's CUDA upsample_bilinear2d gives the mask resized to the box's size at that
// position; elsewhere 0.
#include <ATen/core/Tensor.h>
#include <ATen/ops/empty.h>
#include <c10/cuda/CUDAException.h>
#include <torch/library.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <tuple>
#include <vector>

#include "detection/detection_decode.h"
#include "core/cuda/glue.h"
#include "core/cuda/launch.h"

namespace myops {
namespace {

using namespace device_math;  // ceil, floor, isfinite (core/cuda/launch.h)

// keypoints_kernel's threads meet at barriers: it launches with MYOPS_LAUNCH_COOP (the emulation
// runs its 256 threads as fibers) and keeps its shared memory in MYOPS_SHARED
constexpr int kThreads = 256;
constexpr int kPasteThreads = 256;

template <typename A>
__device__ __forceinline__ A cubic_near(A x, A a) {  // |x| <= 1
  return ((a + 2) * x - (a + 3)) * x * x + 1;
}

template <typename A>
__device__ __forceinline__ A cubic_far(A x, A a) {  // 1 < |x| < 2
  return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a;
}

template <typename A>
__device__ __forceinline__ A cubic_1d(A x0, A x1, A x2, A x3, A t) {
  const A a = A(-0.75);
  const A c0 = cubic_far<A>(t + A(1), a), c1 = cubic_near<A>(t, a);
  const A u = A(1) - t;
  const A c2 = cubic_near<A>(u, a), c3 = cubic_far<A>(u + A(1), a);
  return x0 * c0 + x1 * c1 + x2 * c2 + x3 * c3;
}

template <typename T>
__device__ __forceinline__ T bounded_at(const T* plane, int64_t H, int64_t W, int64_t y, int64_t x) {
  y = y < 0 ? 0 : (y > H - 1 ? H - 1 : y);
  x = x < 0 ? 0 : (x > W - 1 ? W - 1 : x);
  return plane[y * W + x];
}

// T is float or double: torch's accumulate type for both is T itself.
template <typename T>
__global__ void __launch_bounds__(kThreads)
    keypoints_kernel(const T* maps, const T* rois, const int64_t* count, int64_t R, int64_t K, int64_t H, int64_t W,
                     float* xy, float* scores) {
  MYOPS_SHARED(T, best_v, kThreads);
  MYOPS_SHARED(int64_t, best_i, kThreads);
  const int64_t r = blockIdx.x / K, k = blockIdx.x % K;
  float* p = xy + blockIdx.x * 3;
  const int64_t real = *count;
  if (r >= real) {  // padding (or past R: not launched)
    if (threadIdx.x == 0) {
      p[0] = p[1] = p[2] = 0.f;
      scores[blockIdx.x] = 0.f;
    }
    return;
  }
  const T* roi = rois + r * 4;
  const T width = decode::roi_extent(roi[0], roi[2]), height = decode::roi_extent(roi[1], roi[3]);
  if (!(isfinite(width) && isfinite(height))) {  // the CPU raises; no host sync here: NaN
    if (threadIdx.x == 0) {
      p[0] = p[1] = p[2] = scores[blockIdx.x] = std::numeric_limits<float>::quiet_NaN();
    }
    return;
  }
  const int64_t w = static_cast<int64_t>(ceil(width)), h = static_cast<int64_t>(ceil(height));
  const T* plane = maps + (r * K + k) * H * W;
  const T sx = static_cast<T>(W) / static_cast<T>(w), sy = static_cast<T>(H) / static_cast<T>(h);
  T bv = T(0);
  int64_t bi = -1;
  for (int64_t i = threadIdx.x; i < h * w; i += blockDim.x) {
    const int64_t oy = i / w, ox = i % w;
    const T ry = sy * (static_cast<T>(oy) + T(0.5)) - T(0.5);
    const T rx = sx * (static_cast<T>(ox) + T(0.5)) - T(0.5);
    const int64_t iy = static_cast<int64_t>(floor(ry)), ix = static_cast<int64_t>(floor(rx));
    const T ty = ry - static_cast<T>(iy), tx = rx - static_cast<T>(ix);
    T rows[4];
    for (int j = 0; j < 4; ++j) {
      const int64_t y = iy - 1 + j;
      rows[j] = cubic_1d<T>(bounded_at(plane, H, W, y, ix - 1), bounded_at(plane, H, W, y, ix),
                            bounded_at(plane, H, W, y, ix + 1), bounded_at(plane, H, W, y, ix + 2), tx);
    }
    const T v = cubic_1d<T>(rows[0], rows[1], rows[2], rows[3], ty);
    if (bi < 0 || decode::beats(v, i, bv, bi)) {
      bv = v;
      bi = i;
    }
  }
  best_v[threadIdx.x] = bv;
  best_i[threadIdx.x] = bi;
  __syncthreads();
  for (unsigned s = blockDim.x / 2; s > 0; s /= 2) {
    if (threadIdx.x < s) {
      const T v = best_v[threadIdx.x + s];
      const int64_t i = best_i[threadIdx.x + s];
      if (i >= 0 && (best_i[threadIdx.x] < 0 || decode::beats(v, i, best_v[threadIdx.x], best_i[threadIdx.x]))) {
        best_v[threadIdx.x] = v;
        best_i[threadIdx.x] = i;
      }
    }
    __syncthreads();
  }
  if (threadIdx.x == 0) {
    const int64_t i = best_i[0];  // h * w >= 1: some position was seen
    p[0] = decode::keypoint_coord(i % w, width, w, roi[0]);
    p[1] = decode::keypoint_coord(i / w, height, h, roi[1]);
    p[2] = 1.f;
    scores[blockIdx.x] = static_cast<float>(best_v[0]);
  }
}

constexpr int64_t kMaxImages = 64;
struct Sizes {
  int64_t h[2 * kMaxImages];  // the images' (height, width) pairs, by value
};

template <typename T>
__global__ void __launch_bounds__(kPasteThreads)
    paste_kernel(int64_t total, const T* masks, const int64_t* boxes, const int64_t* count, Sizes sizes, int64_t D,
                 int64_t S0, int64_t S1, int64_t H, int64_t W, T* out) {
  const int64_t step = int64_t(gridDim.x) * blockDim.x;
  for (int64_t index = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; index < total; index += step) {
    const int64_t x = index % W, y = (index / W) % H, row = index / W / H;
    const int64_t n = row / D, d = row % D;
    T val = T(0);
    if (d < count[n] && y < sizes.h[2 * n] && x < sizes.h[2 * n + 1]) {
      const int64_t* b = boxes + row * 4;
      if (x >= b[0] && x <= b[2] && y >= b[1] && y <= b[3]) {
        const int64_t bw = b[2] - b[0] + 1 > 1 ? b[2] - b[0] + 1 : 1;
        const int64_t bh = b[3] - b[1] + 1 > 1 ? b[3] - b[1] + 1 : 1;
        const T rh = static_cast<T>(S0) / static_cast<T>(bh), rw = static_cast<T>(S1) / static_cast<T>(bw);
        T h1r = rh * (static_cast<T>(y - b[1]) + T(0.5)) - T(0.5);
        T w1r = rw * (static_cast<T>(x - b[0]) + T(0.5)) - T(0.5);
        h1r = h1r < T(0) ? T(0) : h1r;
        w1r = w1r < T(0) ? T(0) : w1r;
        const int64_t h1 = static_cast<int64_t>(h1r), w1 = static_cast<int64_t>(w1r);
        const int64_t h1p = h1 < S0 - 1 ? 1 : 0, w1p = w1 < S1 - 1 ? 1 : 0;
        const T h1l = h1r - static_cast<T>(h1), h0l = T(1) - h1l;
        const T w1l = w1r - static_cast<T>(w1), w0l = T(1) - w1l;
        const T* m = masks + row * S0 * S1;
        val = h0l * (w0l * m[h1 * S1 + w1] + w1l * m[h1 * S1 + w1 + w1p]) +
              h1l * (w0l * m[(h1 + h1p) * S1 + w1] + w1l * m[(h1 + h1p) * S1 + w1 + w1p]);
      }
    }
    out[index] = val;
  }
}

int64_t blocks_for(int64_t total, int threads, const at::Tensor& t) {
  int sms = 0;
  C10_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, t.device().index()));
  const int64_t cap = int64_t(sms) * (2048 / threads) * 8;
  const int64_t need = (total + threads - 1) / threads;
  return need < cap ? need : cap;
}

std::tuple<at::Tensor, at::Tensor> heatmaps_to_keypoints_cuda(const at::Tensor& maps, const at::Tensor& rois,
                                                              const at::Tensor& count) {
  decode::check_keypoints(maps, rois, count);
  CudaGuard guard(maps.device());
  const int64_t R = maps.size(0), K = maps.size(1), H = maps.size(2), W = maps.size(3);
  const auto f32 = maps.options().dtype(at::kFloat);
  at::Tensor xy = at::empty({R, K, 3}, f32);
  at::Tensor scores = at::empty({R, K}, f32);
  if (R * K == 0) return {xy, scores};
  TORCH_CHECK(R * K < (int64_t(1) << 31), "myops.heatmaps_to_keypoints: R * K must be < 2^31, got ", R * K);
  const at::Tensor m = maps.contiguous(), r = rois.contiguous();
  const auto go = [&](auto tag) {
    using T = decltype(tag);
    MYOPS_LAUNCH_COOP(unsigned(R * K), kThreads, current_stream(), keypoints_kernel<T>)(
        m.const_data_ptr<T>(), r.const_data_ptr<T>(), count.const_data_ptr<int64_t>(), R, K, H, W,
        xy.mutable_data_ptr<float>(), scores.mutable_data_ptr<float>());
    C10_CUDA_KERNEL_LAUNCH_CHECK();
  };
  if (maps.scalar_type() == at::kFloat) {
    go(float{});
  } else {
    go(double{});
  }
  return {xy, scores};
}

at::Tensor paste_masks_cuda(const at::Tensor& masks, const at::Tensor& boxes, const at::Tensor& count,
                            at::IntArrayRef image_size) {
  decode::check_paste(masks, boxes, count, image_size);
  const int64_t N = masks.size(0), D = masks.size(1);
  TORCH_CHECK(N <= kMaxImages, "myops.paste_masks: at most ", kMaxImages, " images on CUDA, got ", N);
  CudaGuard guard(masks.device());
  const auto [H, W] = decode::canvas(image_size);
  at::Tensor out = at::empty({N, D, H, W}, masks.options().memory_format(at::MemoryFormat::Contiguous));
  const int64_t total = out.numel();
  if (total == 0) return out;
  Sizes sizes{};
  for (size_t i = 0; i < image_size.size(); ++i) sizes.h[i] = image_size[i];
  const at::Tensor m = masks.contiguous(), b = boxes.contiguous(), c = count.contiguous();
  const auto go = [&](auto tag) {
    using T = decltype(tag);
    MYOPS_LAUNCH(unsigned(blocks_for(total, kPasteThreads, out)), kPasteThreads, current_stream(), paste_kernel<T>)(
        total, m.const_data_ptr<T>(), b.const_data_ptr<int64_t>(), c.const_data_ptr<int64_t>(), sizes, D, masks.size(2),
        masks.size(3), H, W, out.mutable_data_ptr<T>());
    C10_CUDA_KERNEL_LAUNCH_CHECK();
  };
  if (masks.scalar_type() == at::kFloat) {
    go(float{});
  } else {
    go(double{});
  }
  return out;
}

}  // namespace
}  // namespace myops

MYOPS_CUDA_LIBRARY_IMPL(m) {
  m.impl("heatmaps_to_keypoints", &myops::heatmaps_to_keypoints_cuda);
  m.impl("paste_masks", &myops::paste_masks_cuda);
}
