// Direct Python entry points (myops._C.<op>) for the common call forms of the myops ops.
//
// `torch.ops.myops.<op>(...)` matches its arguments against the schema in Python and calls
// the op boxed: ~1.5 us per call on a CPU, more than a whole torch.add on 10^3 elements. The
// typed wrappers in python/myops/ops.py try these entry points first: each takes exact
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

#include "myops/ops.h"

#include <tuple>
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
#define MYOPS_FAST_UNARY(name)                                                       \
  PyObject* py_##name(PyObject*, PyObject* const* args, Py_ssize_t nargs) {          \
    HANDLE_TH_ERRORS                                                                 \
    return tensors_only<1>(args, nargs, [](const Tensor& a) { return myops::name(a); }); \
    END_HANDLE_TH_ERRORS                                                             \
  }
#define MYOPS_FAST_BINARY(name)                                                                            \
  PyObject* py_##name(PyObject*, PyObject* const* args, Py_ssize_t nargs) {                                \
    HANDLE_TH_ERRORS                                                                                       \
    return tensors_only<2>(args, nargs, [](const Tensor& a, const Tensor& b) { return myops::name(a, b); }); \
    END_HANDLE_TH_ERRORS                                                                                   \
  }
#define MYOPS_FAST_TERNARY(name)                                                                          \
  PyObject* py_##name(PyObject*, PyObject* const* args, Py_ssize_t nargs) {                               \
    HANDLE_TH_ERRORS                                                                                      \
    return tensors_only<3>(args, nargs,                                                                   \
                           [](const Tensor& a, const Tensor& b, const Tensor& c) { return myops::name(a, b, c); }); \
    END_HANDLE_TH_ERRORS                                                                                  \
  }

MYOPS_FAST_UNARY(nonzero)
MYOPS_FAST_BINARY(max_pool2d_add)  // kernel 3x3, stride 2, padding 1, no ceil_mode

// N tensors and an optional trailing Python number (add / sub: alpha, addcmul: value); the
// number defaults to 1, as in the schema.
#define MYOPS_FAST_WITH_SCALAR(name, N, ...)                                                        \
  PyObject* py_##name(PyObject*, PyObject* const* args, Py_ssize_t nargs) {                         \
    HANDLE_TH_ERRORS                                                                                \
    c10::Scalar s(int64_t(1));                                                                      \
    if ((nargs != N && nargs != N + 1) || (nargs == N + 1 && !as_scalar(args[N], &s)) ||            \
        !plain_tensors(args, N)) {                                                                  \
      Py_RETURN_NOTIMPLEMENTED;                                                                     \
    }                                                                                               \
    return run(args, [&s](auto&&... t) { return myops::name(t..., s); }, std::make_index_sequence<N>{}); \
    END_HANDLE_TH_ERRORS                                                                            \
  }

// The entry points of the SIG columns with arguments of their own.

// gelu(x) or gelu(x, approximate) with approximate a str
PyObject* py_gelu(PyObject*, PyObject* const* args, Py_ssize_t nargs) {
  HANDLE_TH_ERRORS
  const char* approx = "none";
  if ((nargs != 1 && nargs != 2) || !plain_tensors(args, 1)) Py_RETURN_NOTIMPLEMENTED;
  if (nargs == 2) {
    if (!PyUnicode_CheckExact(args[1])) Py_RETURN_NOTIMPLEMENTED;
    approx = PyUnicode_AsUTF8(args[1]);
    if (approx == nullptr) {
      PyErr_Clear();
      Py_RETURN_NOTIMPLEMENTED;
    }
  }
  const c10::string_view a(approx);  // owned by args[1], alive for the call
  return run(args, [a](const Tensor& x) { return myops::gelu(x, a); }, std::make_index_sequence<1>{});
  END_HANDLE_TH_ERRORS
}

// cast(x, dtype)
PyObject* py_cast(PyObject*, PyObject* const* args, Py_ssize_t nargs) {
  HANDLE_TH_ERRORS
  if (nargs != 2 || !THPDtype_Check(args[1]) || !plain_tensors(args, 1)) Py_RETURN_NOTIMPLEMENTED;
  const auto dtype = reinterpret_cast<THPDtype*>(args[1])->scalar_type;
  return run(args, [dtype](const Tensor& a) { return myops::cast(a, dtype); }, std::make_index_sequence<1>{});
  END_HANDLE_TH_ERRORS
}

// FN(x, number) (mul_scalar, div_scalar, pow_scalar) and FN(x, number[, alpha number])
// (add_scalar, sub_scalar): a Python number as torch's argument parser reads it
#define MYOPS_FAST_SCALAR(FN)                                                                       \
  PyObject* py_##FN(PyObject*, PyObject* const* args, Py_ssize_t nargs) {                          \
    HANDLE_TH_ERRORS                                                                                \
    c10::Scalar s;                                                                                  \
    if (nargs != 2 || !as_scalar(args[1], &s) || !plain_tensors(args, 1)) Py_RETURN_NOTIMPLEMENTED; \
    return run(args, [&s](const Tensor& a) { return myops::FN(a, s); }, std::make_index_sequence<1>{}); \
    END_HANDLE_TH_ERRORS                                                                            \
  }
#define MYOPS_FAST_SCALAR_ALPHA(FN)                                                                  \
  PyObject* py_##FN(PyObject*, PyObject* const* args, Py_ssize_t nargs) {                          \
    HANDLE_TH_ERRORS                                                                                \
    c10::Scalar s, alpha(int64_t(1));                                                               \
    if ((nargs != 2 && nargs != 3) || !as_scalar(args[1], &s) || (nargs == 3 && !as_scalar(args[2], &alpha)) || \
        !plain_tensors(args, 1)) {                                                                  \
      Py_RETURN_NOTIMPLEMENTED;                                                                     \
    }                                                                                               \
    return run(args, [&](const Tensor& a) { return myops::FN(a, s, alpha); }, std::make_index_sequence<1>{}); \
    END_HANDLE_TH_ERRORS                                                                            \
  }

// One entry point per op of the elementwise table (myops/op_table.h), by its SIG column: FN
// with plain tensors (and add / sub's alpha, addcmul's value: a Python number), gelu, cast and
// the number forms above (a Python number second); clamp.Scalar, the number-first and the
// where number forms have none.
#define MYOPS_FAST_SIG_unary(FN) MYOPS_FAST_UNARY(FN)
#define MYOPS_FAST_SIG_binary(FN) MYOPS_FAST_BINARY(FN)
#define MYOPS_FAST_SIG_ternary(FN) MYOPS_FAST_TERNARY(FN)
#define MYOPS_FAST_SIG_alpha(FN) MYOPS_FAST_WITH_SCALAR(FN, 2)
#define MYOPS_FAST_SIG_value(FN) MYOPS_FAST_WITH_SCALAR(FN, 3)
#define MYOPS_FAST_SIG_gelu(FN)
#define MYOPS_FAST_SIG_cast(FN)
#define MYOPS_FAST_SIG_scalar(FN) MYOPS_FAST_SCALAR(FN)
#define MYOPS_FAST_SIG_clamp_scalar(FN)
#define MYOPS_FAST_SIG_scalar_alpha(FN) MYOPS_FAST_SCALAR_ALPHA(FN)
#define MYOPS_FAST_SIG_rscalar(FN)
#define MYOPS_FAST_SIG_rscalar_alpha(FN)
#define MYOPS_FAST_SIG_where_scalar_self(FN)
#define MYOPS_FAST_SIG_where_scalar_other(FN)
#define MYOPS_FAST_SIG_where_scalars(FN)
#define MYOPS_FAST_DEF(FN, NAME, OVERLOAD, KIND, RULE, SIG, ...) MYOPS_FAST_SIG_##SIG(FN)
MYOPS_EW_OPS(MYOPS_FAST_DEF)
#undef MYOPS_FAST_DEF

// diagonal(x, offset, dim1, dim2)
PyObject* py_diagonal(PyObject*, PyObject* const* args, Py_ssize_t nargs) {
  HANDLE_TH_ERRORS
  int64_t v[3];
  if (nargs != 4 || !as_int(args[1], &v[0]) || !as_int(args[2], &v[1]) || !as_int(args[3], &v[2]) ||
      !plain_tensors(args, 1)) {
    Py_RETURN_NOTIMPLEMENTED;
  }
  return run(args, [&v](const Tensor& a) { return myops::diagonal(a, v[0], v[1], v[2]); },
             std::make_index_sequence<1>{});
  END_HANDLE_TH_ERRORS
}

// nonzero_static(x, size, fill_value)
PyObject* py_nonzero_static(PyObject*, PyObject* const* args, Py_ssize_t nargs) {
  HANDLE_TH_ERRORS
  int64_t size, fill;
  if (nargs != 3 || !as_int(args[1], &size) || !as_int(args[2], &fill) || !plain_tensors(args, 1)) {
    Py_RETURN_NOTIMPLEMENTED;
  }
  return run(args, [size, fill](const Tensor& a) { return myops::nonzero_static(a, size, fill); },
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
  return run(args, [size, fill](const Tensor& a) { return myops::nonzero_bounded(a, size, fill); },
             std::make_index_sequence<1>{});
  END_HANDLE_TH_ERRORS
}

#define MYOPS_METHOD(name) {#name, reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(py_##name)), METH_FASTCALL, nullptr}

#define MYOPS_METHOD_SIG_clamp_scalar(FN)
#define MYOPS_METHOD_SIG_rscalar(FN)
#define MYOPS_METHOD_SIG_rscalar_alpha(FN)
#define MYOPS_METHOD_SIG_where_scalar_self(FN)
#define MYOPS_METHOD_SIG_where_scalar_other(FN)
#define MYOPS_METHOD_SIG_where_scalars(FN)
#define MYOPS_METHOD_SIG_scalar_alpha(FN) MYOPS_METHOD(FN),
#define MYOPS_METHOD_SIG_unary(FN) MYOPS_METHOD(FN),
#define MYOPS_METHOD_SIG_gelu MYOPS_METHOD_SIG_unary
#define MYOPS_METHOD_SIG_scalar MYOPS_METHOD_SIG_unary
#define MYOPS_METHOD_SIG_cast MYOPS_METHOD_SIG_unary
#define MYOPS_METHOD_SIG_binary MYOPS_METHOD_SIG_unary
#define MYOPS_METHOD_SIG_alpha MYOPS_METHOD_SIG_unary
#define MYOPS_METHOD_SIG_ternary MYOPS_METHOD_SIG_unary
#define MYOPS_METHOD_SIG_value MYOPS_METHOD_SIG_unary
#define MYOPS_METHOD_OF(FN, NAME, OVERLOAD, KIND, RULE, SIG, ...) MYOPS_METHOD_SIG_##SIG(FN)

PyMethodDef methods[] = {
    MYOPS_EW_OPS(MYOPS_METHOD_OF)
    MYOPS_METHOD(nonzero),  MYOPS_METHOD(nonzero_static), MYOPS_METHOD(max_pool2d_add), MYOPS_METHOD(diagonal),
    MYOPS_METHOD(nonzero_bounded),
    {nullptr, nullptr, 0, nullptr}};
#undef MYOPS_METHOD

}  // namespace

PyMethodDef* python_fast_methods() { return methods; }

}  // namespace myops
