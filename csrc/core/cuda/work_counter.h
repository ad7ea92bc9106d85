#pragma once
// Work counters: MYOPS_EMU_COUNT("name", n) in a kernel adds n to the CUDA emulation's counter
// `name` (core/cuda/emulation.h; read and reset by the test op myops_emu::_emu_work_counter,
// tests/cuda_emulation/emulation.cpp), so that a test can show how much work a kernel did
// (multiclass_nms_static's IoU tests); on the device it is nothing.
#if defined(MYOPS_CUDA_EMULATION)
#include <atomic>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>

namespace myops {
namespace emu {

// The counter `name` (0 on first use; the reference stays valid).
inline std::atomic<int64_t>& work_counter(const std::string& name) {
  static std::mutex mutex;
  static std::map<std::string, std::atomic<int64_t>> counters;
  const std::lock_guard<std::mutex> lock(mutex);
  return counters[name];
}

}  // namespace emu
}  // namespace myops

#define MYOPS_EMU_COUNT(name, n) (::myops::emu::work_counter(name) += (n))
#else
#define MYOPS_EMU_COUNT(name, n) ((void)0)
#endif
