// myops._C's entries for the drop-in's scopes (python/myops/replace.py): a scope's enter and exit
// and a snapshot of the route counters, each one C call with no schema matching, so that a
// `with myops.replace_torch_ops():` block costs about a microsecond (torch.ops' boxed call costs
// more than that by itself). The same state as the control ops' (csrc/dropin/aten_override.cpp).
#include <Python.h>

#include <torch/csrc/Exceptions.h>

#include "dropin/aten_override.h"

namespace myops {
namespace {

namespace ao = aten_override;

bool as_uint64(PyObject* o, uint64_t* v) {
  if (!PyLong_CheckExact(o)) return false;
  *v = PyLong_AsUnsignedLongLong(o);
  if (*v == static_cast<uint64_t>(-1) && PyErr_Occurred()) return false;
  return true;
}

// The one int argument of a call: false (TypeError set) for anything else.
bool one_uint64(PyObject* const* args, Py_ssize_t nargs, const char* usage, uint64_t* v) {
  if (nargs == 1 && as_uint64(args[0], v)) return true;
  if (!PyErr_Occurred()) PyErr_SetString(PyExc_TypeError, usage);
  return false;
}

// _dropin_scope_enter(mask: int) -> int: routes the ops of `mask` in this thread; the token
PyObject* py_scope_enter(PyObject*, PyObject* const* args, Py_ssize_t nargs) {
  HANDLE_TH_ERRORS
  uint64_t mask;
  if (!one_uint64(args, nargs, "_dropin_scope_enter(mask: int)", &mask)) return nullptr;
  return PyLong_FromLongLong(ao::scope_enter_mask(mask));
  END_HANDLE_TH_ERRORS
}

// _dropin_scope_exit(token: int) -> None: ends this thread's innermost scope
PyObject* py_scope_exit(PyObject*, PyObject* const* args, Py_ssize_t nargs) {
  HANDLE_TH_ERRORS
  uint64_t token;
  if (!one_uint64(args, nargs, "_dropin_scope_exit(token: int)", &token)) return nullptr;
  ao::scope_exit_token(static_cast<int64_t>(token));
  Py_RETURN_NONE;
  END_HANDLE_TH_ERRORS
}

// _dropin_counters(this_thread: bool) -> bytes: the counters (ao::counters), native uint64
PyObject* py_counters(PyObject*, PyObject* const* args, Py_ssize_t nargs) {
  HANDLE_TH_ERRORS
  if (nargs != 1 || !PyBool_Check(args[0])) {
    PyErr_SetString(PyExc_TypeError, "_dropin_counters(this_thread: bool)");
    return nullptr;
  }
  uint64_t v[ao::kNumCounters];
  ao::counters(args[0] == Py_True, v);
  return PyBytes_FromStringAndSize(reinterpret_cast<const char*>(v), sizeof(v));
  END_HANDLE_TH_ERRORS
}

#define MYOPS_DROPIN_METHOD(name, fn) \
  {name, reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(fn)), METH_FASTCALL, nullptr}

PyMethodDef methods[] = {MYOPS_DROPIN_METHOD("_dropin_scope_enter", py_scope_enter),
                         MYOPS_DROPIN_METHOD("_dropin_scope_exit", py_scope_exit),
                         MYOPS_DROPIN_METHOD("_dropin_counters", py_counters),
                         {nullptr, nullptr, 0, nullptr}};
#undef MYOPS_DROPIN_METHOD

}  // namespace

PyMethodDef* python_dropin_methods() { return methods; }

}  // namespace myops
