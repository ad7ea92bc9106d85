#pragma once
// The unsigned integer of N bytes (N = 1, 2, 4, 8): the storage of an element handled as raw
// bits (strided copies by element size, bitwise selects). Host code.
#include <cstdint>

namespace myops {

template <int N>
struct UIntOf;
template <>
struct UIntOf<1> {
  using type = uint8_t;
};
template <>
struct UIntOf<2> {
  using type = uint16_t;
};
template <>
struct UIntOf<4> {
  using type = uint32_t;
};
template <>
struct UIntOf<8> {
  using type = uint64_t;
};

}  // namespace myops
