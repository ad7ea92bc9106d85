// The control ops of the CUDA kernel variants (core/variants.h; docs/design.md, "Kernel variants"):
//   myops::_cuda_variants() -> str[]                 every "op:variant", in core/variants.h's order
//   myops::_cuda_variant_defaults(int arch) -> str[] the tuning table's choice per op for `arch`
//   myops::_set_cuda_variant(str spec) -> str        sets the override ("" clears), returns the old
// No tensors: their kernels register as CompositeImplicitAutograd. Built in every build (a
// CPU-only one lists the variants too).
#include <torch/library.h>

#include <string>
#include <vector>

#include "core/schema.h"
#include "core/variants.h"

namespace myops {
namespace {

std::vector<std::string> variants_op() { return cuda_variants(); }
std::vector<std::string> defaults_op(int64_t arch) { return cuda_variant_defaults(static_cast<int>(arch)); }
std::string set_op(std::string spec) { return set_cuda_variant(spec); }

}  // namespace
}  // namespace myops

MYOPS_SCHEMAS(m) {
  m.def("_cuda_variants() -> str[]");
  m.def("_cuda_variant_defaults(int arch) -> str[]");
  m.def("_set_cuda_variant(str spec) -> str");
}

TORCH_LIBRARY_IMPL(myops, CompositeImplicitAutograd, m) {
  m.impl("_cuda_variants", &myops::variants_op);
  m.impl("_cuda_variant_defaults", &myops::defaults_op);
  m.impl("_set_cuda_variant", &myops::set_op);
}
