// A torchvision detector run from C++ with no Python and no torchvision library: an
// AOTInductor package of myops.detection.make_static(model) (see the README, "Deploying a
// detector"). Its NMS and its RoIAlign (roi_align_levels) are myops' ops, in libmyops.so.
//
//   myops_detect package.pt2 images.pt out.pt [repeats]
//
// images.pt: torch.save of a float32 [N, 3, H, W] tensor (the shape the package was made for).
// out.pt: the package's outputs (a list of tensors in the order of the module's output dict:
// boxes, scores, labels, count, overflow[, masks][, keypoints, keypoints_scores]), for
// torch.load. With repeats > 0 it also times that many runs after one untimed run (each run
// waits for the device) and prints each run's milliseconds and their median
// (benchmarks/bench_deploy.py reads them). The images go to the device the package was
// compiled for (its metadata's AOTI_DEVICE_KEY); the outputs come back to the CPU.
#include <ATen/ATen.h>
#include <c10/core/impl/DeviceGuardImplInterface.h>
#include <torch/csrc/inductor/aoti_package/model_package_loader.h>
#include <torch/csrc/jit/serialization/pickle.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <iostream>
#include <iterator>
#include <string>
#include <vector>

#include "process.h"

namespace {

std::vector<char> read_file(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) throw std::runtime_error("cannot read " + path);
  return {std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
}

void write_file(const std::string& path, const std::vector<char>& data) {
  std::ofstream f(path, std::ios::binary);
  f.write(data.data(), static_cast<std::streamsize>(data.size()));
  if (!f) throw std::runtime_error("cannot write " + path);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 4) {
    std::cerr << "usage: myops_detect package.pt2 images.pt out.pt [repeats]" << std::endl;
    return 2;
  }
  const int repeats = argc > 4 ? std::stoi(argv[4]) : 0;
  torch::inductor::AOTIModelPackageLoader loader(argv[1]);
  const auto metadata = loader.get_metadata();
  const auto key = metadata.find("AOTI_DEVICE_KEY");
  const at::Device device(key == metadata.end() ? std::string("cpu") : key->second);
  at::Tensor images = torch::jit::pickle_load(read_file(argv[2])).toTensor().to(device);
  const auto wait = [&images] {  // a device's runs are asynchronous: time them to the end
    if (!images.device().is_cpu())
      c10::impl::getDeviceGuardImpl(images.device().type())->synchronizeDevice(images.device().index());
  };
  std::vector<at::Tensor> out = loader.run({images});
  wait();

  std::vector<double> ms;
  for (int i = 0; i < repeats; ++i) {
    auto t0 = std::chrono::steady_clock::now();
    loader.run({images});
    wait();
    ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  }
  if (!ms.empty()) {
    std::cout << "run_ms";
    for (double m : ms) std::cout << " " << m;
    std::cout << std::endl;
    std::sort(ms.begin(), ms.end());
    std::cout << "median_ms " << ms[ms.size() / 2] << " runs " << ms.size() << std::endl;
  }

  c10::List<at::Tensor> list;
  for (const auto& t : out) list.push_back(t.cpu());
  write_file(argv[3], torch::jit::pickle_save(list));
  std::cout << "outputs " << out.size() << std::endl;

  const bool python = mapped("libpython"), torchvision = mapped("torchvision");
  std::cout << (python ? "FAILED  libpython in this process" : "ok      no libpython in this process") << std::endl;
  std::cout << (torchvision ? "FAILED  torchvision in this process" : "ok      no torchvision in this process")
            << std::endl;
  return python || torchvision ? 1 : 0;
}
