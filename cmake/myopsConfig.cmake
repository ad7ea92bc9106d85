# CMake package of myops, installed in the Python package (myops/share/cmake/myops/):
#
#   find_package(Torch REQUIRED)
#   find_package(myops CONFIG REQUIRED)
#   target_link_libraries(app PRIVATE myops::myops)
#
# with CMAKE_PREFIX_PATH="$(python -c 'import torch, myops; print(torch.utils.cmake_prefix_path + ";" + myops.cmake_prefix_path)')".
#
# myops::myops: the C++ API headers (#include <myops/ops.h>) and libmyops.so (every kernel,
# schema and backward; LibTorch only, no Python). The ops register when libmyops.so loads, so
# the target keeps it linked even when the program names none of its symbols (a program that
# only runs a TorchScript or AOTInductor model using myops): --no-as-needed.
include(CMakeFindDependencyMacro)
find_dependency(Torch)

# This file is <package>/share/cmake/myops/myopsConfig.cmake.
get_filename_component(_myops_pkg "${CMAKE_CURRENT_LIST_DIR}/../../.." ABSOLUTE)
set(_myops_lib "${_myops_pkg}/lib/libmyops.so")
if(NOT EXISTS "${_myops_lib}")
  set(${CMAKE_FIND_PACKAGE_NAME}_FOUND FALSE)
  set(${CMAKE_FIND_PACKAGE_NAME}_NOT_FOUND_MESSAGE "myops: ${_myops_lib} not found (is myops built?)")
  return()
endif()

if(NOT TARGET myops::myops)
  add_library(myops::myops SHARED IMPORTED)
  set_target_properties(myops::myops PROPERTIES
    IMPORTED_LOCATION "${_myops_lib}"
    IMPORTED_SONAME "libmyops.so"
    INTERFACE_INCLUDE_DIRECTORIES "${_myops_pkg}/include"
    INTERFACE_LINK_LIBRARIES "${TORCH_LIBRARIES}"
    INTERFACE_LINK_OPTIONS "LINKER:--no-as-needed"
    INTERFACE_COMPILE_FEATURES cxx_std_20)  # torch 2.14's headers need C++20
endif()

set(myops_INCLUDE_DIRS "${_myops_pkg}/include")
set(myops_LIBRARIES myops::myops)
unset(_myops_lib)
unset(_myops_pkg)
