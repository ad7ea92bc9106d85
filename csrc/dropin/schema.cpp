// The drop-in's control ops (core/schema.h): its registry, implemented in aten_override.cpp (the
// CUDA emulation copies these schemas into myops_emu, tests/cuda_emulation/loader.py). No
// tensors: their kernels register as CompositeImplicitAutograd.
#include "core/schema.h"

MYOPS_SCHEMAS(m) {
  m.def("_override_ops() -> str[]");
  m.def("_override_defaults() -> str[]");
  m.def("_override_enable(str[] ops) -> ()");
  m.def("_override_disable() -> ()");
  m.def("_override_enabled() -> str[]");
  m.def("_override_scoped() -> str[]");
  m.def("_override_registered() -> str[]");
  m.def("_override_unregister() -> ()");
  m.def("_override_scope_enter(str[] ops) -> int");
  m.def("_override_scope_exit(str[] ops, int token) -> ()");
  m.def("_override_stats(bool this_thread=False) -> int[]");
  m.def("_override_why() -> str[]");
  m.def("_override_stats_why(bool this_thread=False) -> int[]");
}
