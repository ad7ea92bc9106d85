#pragma once
// The torch this library is compiled against (the build pins it): where torch changed a result
// between versions, myops follows the torch it is built for. Host code only.
#include <torch/version.h>

#define MYOPS_TORCH_AT_LEAST(major, minor) \
  (TORCH_VERSION_MAJOR > (major) || (TORCH_VERSION_MAJOR == (major) && TORCH_VERSION_MINOR >= (minor)))
