// Direct Python entry points (myops._C.<op>) for the common call forms of the myops ops.
//
// `torch.ops.myops.<op>(...)` matches its arguments against the schema in Python and calls
// the op boxed: ~1.5 us per call on a CPU, more than a whole torch.add on 10^3 elements. The
// typed wrappers in python/myops/_<family>.py try these entry points first: each takes exact
// torch.Tensor arguments (and plain ints / a dtype / a Python number where the op has them),
// calls the op through the dispatcher unboxed (the C++ API, myops/ops.h) (GIL released unless the call is small and on
// the CPU) and returns the result. Anything else (a Tensor subclass, FakeTensor, an active
// __torch_function__ mode, another argument form) returns NotImplemented and the wrapper
// takes torch.ops.myops.<op>, so behaviour never depends on which path ran: the same
// dispatcher call (autograd, dispatch modes, device kernels) happens either way.
#include <ATen/PythonTorchFunctionTLS.h>
#include <pybind11/pybind11.h>
#include <torch/csrc/Dtype.h>
#include <torch/csrc/Exceptions.h>
#include <torch/csrc/autograd/python_variable.h>

#include "myops/op_signatures.h"
#include "myops/op_table.h"
#include "myops/ops.h"

#include <optional>
#include <tuple>
#include <type_traits>
#include <utility>

namespace myops {
namespace {

using at::Tensor;

// The first N arguments as exact torch.Tensor (or Parameter) objects, no torch-function mode.
bool plain_tensors(PyObject* const* args, Py_ssize_t n) {
  if (at::impl::torch_function_mode_enabled()) return false;
  for (Py_ssize_t i = 0; i < n; ++i) {
    if (!THPVariable_CheckExact(args[i])) return false;
  }
  return true;
}

// A Python int (not bool) that fits int64.
bool as_int(PyObject* o, int64_t* v) {
  if (!PyLong_CheckExact(o)) return false;
  int overflow = 0;
  *v = PyLong_AsLongLongAndOverflow(o, &overflow);
  if (overflow || (*v == -1 && PyErr_Occurred())) {
    PyErr_Clear();
    return false;
  }
  return true;
}

// A Python bool, int (fitting int64) or float as a Scalar, as torch's argument parser reads it.
bool as_scalar(PyObject* o, c10::Scalar* s) {
  if (PyBool_Check(o)) {
    *s = c10::Scalar(o == Py_True);
    return true;
  }
  int64_t i;
  if (as_int(o, &i)) {
    *s = c10::Scalar(i);
    return true;
  }
  if (PyFloat_CheckExact(o)) {
    *s = c10::Scalar(PyFloat_AS_DOUBLE(o));
    return true;
  }
  return false;
}

// Small CPU calls keep the GIL: they finish in a few microseconds, less than releasing and
// taking it back costs the other threads; anything on a GPU (which may synchronize) or larger
// releases it, as torch's own bindings do.
constexpr int64_t kKeepGilNumel = 32768;

template <size_t... I>
bool small_cpu_call(PyObject* const* args, std::index_sequence<I...>) {
  return ((THPVariable_Unpack(args[I]).is_cpu() && THPVariable_Unpack(args[I]).numel() <= kKeepGilNumel) && ...);
}

// The Python object of a result: a Tensor, or a tuple of two (the bounded / static ops).
PyObject* wrap(Tensor t) { return THPVariable_Wrap(std::move(t)); }
PyObject* wrap(std::tuple<Tensor, Tensor> t) {
  PyObject* a = THPVariable_Wrap(std::move(std::get<0>(t)));
  if (a == nullptr) return nullptr;
  PyObject* b = THPVariable_Wrap(std::move(std::get<1>(t)));
  if (b == nullptr) {
    Py_DECREF(a);
    return nullptr;
  }
  PyObject* r = PyTuple_Pack(2, a, b);
  Py_DECREF(a);
  Py_DECREF(b);
  return r;
}

template <class F, size_t... I>
PyObject* run(PyObject* const* args, F&& f, std::index_sequence<I...> seq) {
  decltype(f(THPVariable_Unpack(args[I])...)) out;
  if (small_cpu_call(args, seq)) {
    out = f(THPVariable_Unpack(args[I])...);
  } else {
    pybind11::gil_scoped_release no_gil;
    out = f(THPVariable_Unpack(args[I])...);
  }
  return wrap(std::move(out));
}

// Calls f(tensor args...) when exactly N plain tensors were passed, else NotImplemented.
template <size_t N, class F>
PyObject* tensors_only(PyObject* const* args, Py_ssize_t nargs, F&& f) {
  if (nargs != static_cast<Py_ssize_t>(N) || !plain_tensors(args, N)) Py_RETURN_NOTIMPLEMENTED;
  return run(args, std::forward<F>(f), std::make_index_sequence<N>{});
}

// Each entry point calls the C++ API (myops/ops.h, in libmyops): a dispatcher call through a
// typed handle found once.
#define MYOPS_FAST_UNARY(name)                                                           \
  PyObject* py_##name(PyObject*, PyObject* const* args, Py_ssize_t nargs) {              \
    HANDLE_TH_ERRORS                                                                     \
    return tensors_only<1>(args, nargs, [](const Tensor& a) { return myops::name(a); }); \
    END_HANDLE_TH_ERRORS                                                                 \
  }
#define MYOPS_FAST_BINARY(name)                                                                              \
  PyObject* py_##name(PyObject*, PyObject* const* args, Py_ssize_t nargs) {                                  \
    HANDLE_TH_ERRORS                                                                                         \
    return tensors_only<2>(args, nargs, [](const Tensor& a, const Tensor& b) { return myops::name(a, b); }); \
    END_HANDLE_TH_ERRORS                                                                                     \
  }
MYOPS_FAST_UNARY(nonzero)
MYOPS_FAST_BINARY(max_pool2d_add)  // kernel 3x3, stride 2, padding 1, no ceil_mode

// ---- the elementwise ops: one entry point per op of the table with a FAST signature ----------
// (myops/op_table.h, myops/op_signatures.h). The signature's parameters are read in order: its
// tensors (which come first: exact torch.Tensor objects), then each other parameter from a
// Python object as torch's argument parser reads it (read_arg); trailing parameters with a
// default may be left out, and the C++ API's default applies.

bool read_arg(PyObject* o, c10::Scalar* v) { return as_scalar(o, v); }

// None or a number (clamp.Scalar's bounds)
bool read_arg(PyObject* o, std::optional<c10::Scalar>* v) {
  if (o == Py_None) {
    v->reset();
    return true;
  }
  c10::Scalar s;
  if (!as_scalar(o, &s)) return false;
  *v = s;
  return true;
}

// a str (the pointer is owned by `o`, alive for the call)
bool read_arg(PyObject* o, c10::string_view* v) {
  if (!PyUnicode_CheckExact(o)) return false;
  const char* s = PyUnicode_AsUTF8(o);
  if (s == nullptr) {
    PyErr_Clear();
    return false;
  }
  *v = c10::string_view(s);
  return true;
}

// a torch.dtype
bool read_arg(PyObject* o, c10::ScalarType* v) {
  if (!THPDtype_Check(o)) return false;
  *v = reinterpret_cast<THPDtype*>(o)->scalar_type;
  return true;
}

template <class T>
constexpr bool is_tensor = std::is_same_v<std::decay_t<T>, Tensor>;

// Fast<Params...>::call<kRequired>(args, nargs, f): f(the arguments) for a signature with
// parameters Params, the first kRequired of them without a default; NotImplemented for any
// other argument form.
template <class... Params>
struct Fast {
  static constexpr size_t kParams = sizeof...(Params);
  static constexpr size_t kTensors = (size_t{0} + ... + size_t{is_tensor<Params>});
  template <size_t I>
  using Value = std::decay_t<std::tuple_element_t<kTensors + I, std::tuple<Params...>>>;

  static constexpr bool tensors_first() {
    constexpr bool t[] = {is_tensor<Params>...};
    for (size_t i = 0; i < kTensors; ++i) {
      if (!t[i]) return false;
    }
    return true;
  }
  static_assert(tensors_first(), "myops fast entry: the tensor parameters must come first");

  // f(tensors..., values...) with the values of parameters kTensors + V... read from args
  template <class F, size_t... V>
  static PyObject* call_with(PyObject* const* args, F& f, std::index_sequence<V...>) {
    std::tuple<Value<V>...> v;
    if (!(read_arg(args[kTensors + V], &std::get<V>(v)) && ...) || !plain_tensors(args, kTensors)) {
      Py_RETURN_NOTIMPLEMENTED;
    }
    return run(
        args, [&](const auto&... t) { return f(t..., std::get<V>(v)...); }, std::make_index_sequence<kTensors>{});
  }

  // nargs = kRequired + K for one K: the call with that many arguments
  template <size_t kRequired, class F, size_t... K>
  static PyObject* dispatch(PyObject* const* args, Py_ssize_t nargs, F& f, std::index_sequence<K...>) {
    PyObject* out = nullptr;
    const bool matched = ((nargs == static_cast<Py_ssize_t>(kRequired + K) &&
                           (out = call_with(args, f, std::make_index_sequence<kRequired + K - kTensors>{}), true)) ||
                          ...);
    if (!matched) Py_RETURN_NOTIMPLEMENTED;
    return out;
  }

  template <size_t kRequired, class F>
  static PyObject* call(PyObject* const* args, Py_ssize_t nargs, F f) {
    static_assert(kRequired >= kTensors && kRequired <= kParams, "myops fast entry: a tensor has a default");
    return dispatch<kRequired>(args, nargs, f, std::make_index_sequence<kParams - kRequired + 1>{});
  }
};

// the elementwise entry points: the ops with a FAST signature (myops/op_signatures.h), written
// out by tools/gen_ops_elementwise.py
#include "elementwise/generated/fast.inc"

// diagonal(x, offset, dim1, dim2)
PyObject* py_diagonal(PyObject*, PyObject* const* args, Py_ssize_t nargs) {
  HANDLE_TH_ERRORS
  int64_t v[3];
  if (nargs != 4 || !as_int(args[1], &v[0]) || !as_int(args[2], &v[1]) || !as_int(args[3], &v[2]) ||
      !plain_tensors(args, 1)) {
    Py_RETURN_NOTIMPLEMENTED;
  }
  return run(
      args, [&v](const Tensor& a) { return myops::diagonal(a, v[0], v[1], v[2]); }, std::make_index_sequence<1>{});
  END_HANDLE_TH_ERRORS
}

// nonzero_static(x, size, fill_value)
PyObject* py_nonzero_static(PyObject*, PyObject* const* args, Py_ssize_t nargs) {
  HANDLE_TH_ERRORS
  int64_t size, fill;
  if (nargs != 3 || !as_int(args[1], &size) || !as_int(args[2], &fill) || !plain_tensors(args, 1)) {
    Py_RETURN_NOTIMPLEMENTED;
  }
  return run(
      args, [size, fill](const Tensor& a) { return myops::nonzero_static(a, size, fill); },
      std::make_index_sequence<1>{});
  END_HANDLE_TH_ERRORS
}

// nonzero_bounded(x, size, fill_value)
PyObject* py_nonzero_bounded(PyObject*, PyObject* const* args, Py_ssize_t nargs) {
  HANDLE_TH_ERRORS
  int64_t size, fill;
  if (nargs != 3 || !as_int(args[1], &size) || !as_int(args[2], &fill) || !plain_tensors(args, 1)) {
    Py_RETURN_NOTIMPLEMENTED;
  }
  return run(
      args, [size, fill](const Tensor& a) { return myops::nonzero_bounded(a, size, fill); },
      std::make_index_sequence<1>{});
  END_HANDLE_TH_ERRORS
}

#define MYOPS_METHOD(name) \
  {#name, reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(py_##name)), METH_FASTCALL, nullptr}

PyMethodDef methods[] = {
#include "elementwise/generated/fast_methods.inc"
    MYOPS_METHOD(nonzero),  MYOPS_METHOD(nonzero_static),  MYOPS_METHOD(max_pool2d_add),
    MYOPS_METHOD(diagonal), MYOPS_METHOD(nonzero_bounded), {nullptr, nullptr, 0, nullptr}};
#undef MYOPS_METHOD

}  // namespace

PyMethodDef* python_fast_methods() { return methods; }

}  // namespace myops
