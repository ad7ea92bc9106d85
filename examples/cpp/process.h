// What the example programs check about their own process.
#pragma once

#include <fstream>
#include <iostream>
#include <string>

// True when a shared object whose path contains `name` (e.g. "libpython", "torchvision") is
// mapped into this process.
inline bool mapped(const std::string& name) {
  std::ifstream maps("/proc/self/maps");
  std::string line;
  while (std::getline(maps, line)) {
    if (line.find(name) != std::string::npos) {
      std::cout << "mapped: " << line << std::endl;
      return true;
    }
  }
  return false;
}
