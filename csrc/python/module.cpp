// The Python module myops._C: the only code that includes Python.h (with fast.cpp and dropin.cpp beside it).
//
// Every kernel, schema and backward lives in libmyops.so, which this module links (RUNPATH
// $ORIGIN/lib): `from myops import _C` loads it, which runs its static registrations
// (torch.ops.myops.*). The module's own functions are the typed wrappers' direct entry points
// for their common call forms (fast.cpp) and the drop-in's scope entries (dropin.cpp).
#include <Python.h>

namespace myops {
PyMethodDef* python_fast_methods();    // csrc/python/fast.cpp
PyMethodDef* python_dropin_methods();  // csrc/python/dropin.cpp
}  // namespace myops

extern "C" {
PyObject* PyInit__C(void) {
  static struct PyModuleDef module_def = {PyModuleDef_HEAD_INIT, "_C",
                                          "myops Python entry points (use torch.ops.myops.* or the myops wrappers)", -1,
                                          myops::python_fast_methods()};
  PyObject* m = PyModule_Create(&module_def);
  if (m && PyModule_AddFunctions(m, myops::python_dropin_methods()) < 0) {
    Py_DECREF(m);
    return nullptr;
  }
  return m;
}
}
