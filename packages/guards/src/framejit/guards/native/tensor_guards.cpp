// framejit.guards native tensor check: the hit-path body of ___check_tensors.
//
// Two types.  TensorGuards: one object holds the expected properties of every tensor a
// guard set checks; check(*tensors) compares them all in one C++ call, reading the
// at::Tensor directly (no Python attribute getters, no temporary torch.Size objects).
// GlobalState: the body of ___check_global_state(), comparing thread/process state
// (default dtype, autocast, torch-function/dispatch mode stacks, ...) in one call.
// Plus check_hasattr(name, expected, *objs) for many HASATTR guards on one name, and
// check_no_aliasing(*objs) for NO_TENSOR_ALIASING over many sources.
// Semantics match the pure-Python TensorSpec.mismatch (tensor_spec.py) and
// make_check_global_state (global_state.py) exactly: the tests run both.
//
// (TensorGuards detail) One TensorGuards object holds the expected properties of every tensor a guard set
// checks; check(*tensors) compares them all in one C++ call, reading the at::Tensor
// directly (no Python attribute getters, no temporary torch.Size objects).  Semantics
// match the pure-Python TensorSpec.matches in tensor_spec.py exactly: the tests run
// both on the same inputs.
#include <Python.h>

#include <ATen/Context.h>
#include <ATen/Parallel.h>
#include <ATen/PythonTorchFunctionTLS.h>
#include <ATen/autocast_mode.h>
#include <c10/core/DefaultDtype.h>
#include <c10/core/impl/LocalDispatchKeySet.h>
#include <c10/core/impl/TorchDispatchModeTLS.h>
#include <torch/csrc/Device.h>
#include <torch/csrc/Dtype.h>
#include <torch/csrc/autograd/python_variable.h>

#include <algorithm>
#include <cstdint>
#include <optional>
#include <vector>

namespace {

struct TensorSpec {
  PyTypeObject* pytype = nullptr;  // strong reference
  c10::DispatchKeySet keys;        // expected, thread-local include/exclude applied
  at::ScalarType dtype = at::ScalarType::Undefined;
  c10::Device device = c10::Device(c10::DeviceType::CPU);
  bool requires_grad = false;
  int64_t ndim = 0;
  std::vector<std::optional<int64_t>> sizes;    // nullopt: dynamic dim, not checked
  std::vector<std::optional<int64_t>> strides;  // empty with has_strides false: not checked
  bool has_strides = true;
  // Dims innermost to outermost; a stride left out (nullopt) because it is a product of
  // dynamic sizes must equal the product of the actual sizes of the dims inside it.
  std::vector<int64_t> dense_order;
};

struct TensorGuardsObject {
  PyObject_HEAD
  std::vector<TensorSpec>* specs;
};

bool parse_dims(PyObject* seq, std::vector<std::optional<int64_t>>& out) {
  PyObject* fast = PySequence_Fast(seq, "sizes/strides must be a sequence");
  if (fast == nullptr) {
    return false;
  }
  Py_ssize_t n = PySequence_Fast_GET_SIZE(fast);
  out.reserve(n);
  for (Py_ssize_t i = 0; i < n; ++i) {
    PyObject* item = PySequence_Fast_GET_ITEM(fast, i);
    if (item == Py_None) {
      out.emplace_back(std::nullopt);
    } else {
      int64_t v = PyLong_AsLongLong(item);
      if (v == -1 && PyErr_Occurred()) {
        Py_DECREF(fast);
        return false;
      }
      out.emplace_back(v);
    }
  }
  Py_DECREF(fast);
  return true;
}

bool parse_spec(PyObject* item, TensorSpec& spec) {
  PyObject *pytype, *keys, *dtype, *device, *requires_grad, *sizes, *strides, *dense_order;
  if (!PyArg_ParseTuple(item, "OOOOOOOO", &pytype, &keys, &dtype, &device, &requires_grad,
                        &sizes, &strides, &dense_order)) {
    return false;
  }
  if (!PyType_Check(pytype) || !THPDtype_Check(dtype) || !THPDevice_Check(device)) {
    PyErr_SetString(PyExc_TypeError, "spec must be (type, int, torch.dtype, torch.device, bool, sizes, strides)");
    return false;
  }
  uint64_t raw = PyLong_AsUnsignedLongLong(keys);
  if (PyErr_Occurred()) {
    return false;
  }
  Py_INCREF(pytype);
  spec.pytype = reinterpret_cast<PyTypeObject*>(pytype);
  spec.keys = c10::DispatchKeySet(c10::DispatchKeySet::RAW, raw);
  spec.dtype = reinterpret_cast<THPDtype*>(dtype)->scalar_type;
  spec.device = reinterpret_cast<THPDevice*>(device)->device;
  spec.requires_grad = PyObject_IsTrue(requires_grad) == 1;
  if (!parse_dims(sizes, spec.sizes)) {
    return false;
  }
  spec.ndim = static_cast<int64_t>(spec.sizes.size());
  spec.has_strides = strides != Py_None;
  if (spec.has_strides && !parse_dims(strides, spec.strides)) {
    return false;
  }
  if (dense_order != Py_None) {
    std::vector<std::optional<int64_t>> order;
    if (!parse_dims(dense_order, order)) {
      return false;
    }
    for (const auto& d : order) {
      if (!d.has_value() || *d < 0 || *d >= spec.ndim) {
        PyErr_SetString(PyExc_ValueError, "dense_order holds a dim out of range");
        return false;
      }
      spec.dense_order.push_back(*d);
    }
  }
  return true;
}

bool dense_strides_match(c10::IntArrayRef sizes, c10::IntArrayRef strides, const TensorSpec& spec) {
  int64_t expected = 1;
  for (int64_t d : spec.dense_order) {
    if (!spec.strides[d].has_value() && strides[d] != expected) {
      return false;
    }
    expected *= sizes[d];
  }
  return true;
}

bool dims_match(c10::IntArrayRef actual, const std::vector<std::optional<int64_t>>& expected) {
  for (size_t i = 0; i < expected.size(); ++i) {
    if (expected[i].has_value() && *expected[i] != actual[i]) {
      return false;
    }
  }
  return true;
}

bool tensor_matches(PyObject* obj, const TensorSpec& spec, const c10::impl::LocalDispatchKeySet& tls) {
  if (Py_TYPE(obj) != spec.pytype || !THPVariable_Check(obj)) {
    return false;
  }
  const at::Tensor& t = THPVariable_Unpack(obj);
  if (!t.defined()) {
    return false;
  }
  c10::TensorImpl* impl = t.unsafeGetTensorImpl();
  if ((impl->key_set() | tls.included_) - tls.excluded_ != spec.keys) {
    return false;
  }
  if (impl->dtype().toScalarType() != spec.dtype || impl->device() != spec.device ||
      t.requires_grad() != spec.requires_grad || impl->dim() != spec.ndim) {
    return false;
  }
  if (impl->has_symbolic_sizes_strides()) {
    return false;  // a symbolic tensor never reaches a runtime guard; refuse it
  }
  if (!dims_match(impl->sizes(), spec.sizes)) {
    return false;
  }
  if (!spec.has_strides) {
    return true;
  }
  return dims_match(impl->strides(), spec.strides) &&
      dense_strides_match(impl->sizes(), impl->strides(), spec);
}

PyObject* TensorGuards_new(PyTypeObject* type, PyObject* args, PyObject* kwargs) {
  PyObject* specs_arg;
  if (!PyArg_ParseTuple(args, "O", &specs_arg)) {
    return nullptr;
  }
  PyObject* fast = PySequence_Fast(specs_arg, "specs must be a sequence of tuples");
  if (fast == nullptr) {
    return nullptr;
  }
  auto* self = reinterpret_cast<TensorGuardsObject*>(type->tp_alloc(type, 0));
  if (self == nullptr) {
    Py_DECREF(fast);
    return nullptr;
  }
  self->specs = new std::vector<TensorSpec>();
  Py_ssize_t n = PySequence_Fast_GET_SIZE(fast);
  self->specs->resize(n);
  for (Py_ssize_t i = 0; i < n; ++i) {
    if (!parse_spec(PySequence_Fast_GET_ITEM(fast, i), (*self->specs)[i])) {
      Py_DECREF(fast);
      Py_DECREF(self);
      return nullptr;
    }
  }
  Py_DECREF(fast);
  return reinterpret_cast<PyObject*>(self);
}

void TensorGuards_dealloc(TensorGuardsObject* self) {
  if (self->specs != nullptr) {
    for (auto& spec : *self->specs) {
      Py_XDECREF(spec.pytype);
    }
    delete self->specs;
  }
  Py_TYPE(self)->tp_free(reinterpret_cast<PyObject*>(self));
}

// check(*tensors, tensor_check_names=None) -> bool; the keyword is accepted (and
// ignored) so the call reads as TorchDynamo's ___check_tensors(...) does.
PyObject* TensorGuards_check(TensorGuardsObject* self, PyObject* const* args, Py_ssize_t nargsf,
                             PyObject* kwnames) {
  Py_ssize_t nargs = PyVectorcall_NARGS(nargsf);
  const auto& specs = *self->specs;
  if (static_cast<size_t>(nargs) != specs.size()) {
    Py_RETURN_FALSE;
  }
  const c10::impl::LocalDispatchKeySet tls = c10::impl::tls_local_dispatch_key_set();
  try {
    for (Py_ssize_t i = 0; i < nargs; ++i) {
      if (!tensor_matches(args[i], specs[i], tls)) {
        Py_RETURN_FALSE;
      }
    }
  } catch (const std::exception&) {
    Py_RETURN_FALSE;  // e.g. strides() of an unusual layout: not the guarded tensor
  }
  Py_RETURN_TRUE;
}

PyObject* TensorGuards_len(TensorGuardsObject* self, PyObject* /*unused*/) {
  return PyLong_FromSize_t(self->specs->size());
}

PyMethodDef TensorGuards_methods[] = {
    {"check", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)(void)>(TensorGuards_check)),
     METH_FASTCALL | METH_KEYWORDS, "check(*tensors, tensor_check_names=None) -> bool"},
    {"count", reinterpret_cast<PyCFunction>(TensorGuards_len), METH_NOARGS,
     "number of tensors checked"},
    {nullptr, nullptr, 0, nullptr}};

PyTypeObject TensorGuardsType = {
    PyVarObject_HEAD_INIT(nullptr, 0)
};

struct AutocastExpect {
  c10::DeviceType device_type;
  bool enabled;
  at::ScalarType dtype;  // compared only when enabled
};

struct GlobalStateObject {
  PyObject_HEAD
  at::ScalarType default_dtype;
  bool warn_only;
  int torch_function_state;
  int num_threads;
  int64_t function_mode_len;
  int64_t dispatch_mode_len;
  int cache_enabled;  // -1: not compared (no autocast enabled)
  std::vector<AutocastExpect>* autocast;
};

// GlobalState((default_dtype, warn_only, torch_function_state, num_threads,
//              function_mode_len, dispatch_mode_len, cache_enabled | None,
//              ((torch.device, enabled, dtype), ...)))
PyObject* GlobalState_new(PyTypeObject* type, PyObject* args, PyObject* kwargs) {
  PyObject *dtype, *warn_only, *cache, *autocast;
  int tf_state, num_threads;
  long long fmodes, dmodes;
  if (!PyArg_ParseTuple(args, "(OOiiLLOO)", &dtype, &warn_only, &tf_state, &num_threads, &fmodes,
                        &dmodes, &cache, &autocast)) {
    return nullptr;
  }
  if (!THPDtype_Check(dtype)) {
    PyErr_SetString(PyExc_TypeError, "default dtype must be a torch.dtype");
    return nullptr;
  }
  PyObject* fast = PySequence_Fast(autocast, "autocast must be a sequence");
  if (fast == nullptr) {
    return nullptr;
  }
  auto* self = reinterpret_cast<GlobalStateObject*>(type->tp_alloc(type, 0));
  if (self == nullptr) {
    Py_DECREF(fast);
    return nullptr;
  }
  self->default_dtype = reinterpret_cast<THPDtype*>(dtype)->scalar_type;
  self->warn_only = PyObject_IsTrue(warn_only) == 1;
  self->torch_function_state = tf_state;
  self->num_threads = num_threads;
  self->function_mode_len = fmodes;
  self->dispatch_mode_len = dmodes;
  self->cache_enabled = cache == Py_None ? -1 : (PyObject_IsTrue(cache) == 1);
  self->autocast = new std::vector<AutocastExpect>();
  for (Py_ssize_t i = 0; i < PySequence_Fast_GET_SIZE(fast); ++i) {
    PyObject *dev, *enabled, *ac_dtype;
    if (!PyArg_ParseTuple(PySequence_Fast_GET_ITEM(fast, i), "OOO", &dev, &enabled, &ac_dtype)) {
      Py_DECREF(fast);
      Py_DECREF(self);
      return nullptr;
    }
    if (!THPDevice_Check(dev) || (ac_dtype != Py_None && !THPDtype_Check(ac_dtype))) {
      PyErr_SetString(PyExc_TypeError, "autocast entries are (torch.device, bool, torch.dtype | None)");
      Py_DECREF(fast);
      Py_DECREF(self);
      return nullptr;
    }
    AutocastExpect e;
    e.device_type = reinterpret_cast<THPDevice*>(dev)->device.type();
    e.enabled = PyObject_IsTrue(enabled) == 1;
    e.dtype = ac_dtype == Py_None ? at::ScalarType::Undefined
                                  : reinterpret_cast<THPDtype*>(ac_dtype)->scalar_type;
    self->autocast->push_back(e);
  }
  Py_DECREF(fast);
  return reinterpret_cast<PyObject*>(self);
}

void GlobalState_dealloc(GlobalStateObject* self) {
  delete self->autocast;
  Py_TYPE(self)->tp_free(reinterpret_cast<PyObject*>(self));
}

bool global_state_matches(const GlobalStateObject* self) {
  if (c10::get_default_dtype_as_scalartype() != self->default_dtype ||
      at::globalContext().deterministicAlgorithmsWarnOnly() != self->warn_only ||
      static_cast<int>(at::impl::PythonTorchFunctionTLS::get_disabled_state()) !=
          self->torch_function_state ||
      at::get_num_threads() != self->num_threads ||
      at::impl::PythonTorchFunctionTLS::stack_len() != self->function_mode_len ||
      c10::impl::TorchDispatchModeTLS::stack_len() != self->dispatch_mode_len) {
    return false;
  }
  for (const auto& e : *self->autocast) {
    bool enabled = at::autocast::is_autocast_enabled(e.device_type);
    if (enabled != e.enabled ||
        (enabled && at::autocast::get_autocast_dtype(e.device_type) != e.dtype)) {
      return false;
    }
  }
  return self->cache_enabled < 0 ||
      at::autocast::is_autocast_cache_enabled() == (self->cache_enabled == 1);
}

PyObject* GlobalState_call(PyObject* self, PyObject* /*args*/, PyObject* /*kwargs*/) {
  try {
    if (global_state_matches(reinterpret_cast<GlobalStateObject*>(self))) {
      Py_RETURN_TRUE;
    }
  } catch (const std::exception&) {
  }
  Py_RETURN_FALSE;
}

PyTypeObject GlobalStateType = {
    PyVarObject_HEAD_INIT(nullptr, 0)
};

// check_hasattr(name, expected, *objs): hasattr(obj, name) == expected for every obj (the
// batched form of many HASATTR guards, e.g. "not marked dynamic" on each input tensor).
// Same result as builtins.hasattr; exceptions other than AttributeError propagate.
PyObject* check_hasattr(PyObject* /*module*/, PyObject* const* args, Py_ssize_t nargs) {
  if (nargs < 2 || !PyUnicode_Check(args[0])) {
    PyErr_SetString(PyExc_TypeError, "check_hasattr(name: str, expected: bool, *objs)");
    return nullptr;
  }
  const int expected = PyObject_IsTrue(args[1]);
  for (Py_ssize_t i = 2; i < nargs; ++i) {
    PyObject* result = nullptr;
#if PY_VERSION_HEX >= 0x030D0000
    int found = PyObject_GetOptionalAttr(args[i], args[0], &result);
#else
    int found = _PyObject_LookupAttr(args[i], args[0], &result);
#endif
    Py_XDECREF(result);
    if (found < 0) {
      return nullptr;
    }
    if (found != expected) {
      Py_RETURN_FALSE;
    }
  }
  Py_RETURN_TRUE;
}

// check_no_aliasing(*objs): true when no two arguments are the same object.
PyObject* check_no_aliasing(PyObject* /*module*/, PyObject* const* args, Py_ssize_t nargs) {
  if (nargs <= 16) {
    for (Py_ssize_t i = 0; i < nargs; ++i) {
      for (Py_ssize_t j = i + 1; j < nargs; ++j) {
        if (args[i] == args[j]) {
          Py_RETURN_FALSE;
        }
      }
    }
    Py_RETURN_TRUE;
  }
  std::vector<PyObject*> sorted(args, args + nargs);
  std::sort(sorted.begin(), sorted.end());
  if (std::adjacent_find(sorted.begin(), sorted.end()) != sorted.end()) {
    Py_RETURN_FALSE;
  }
  Py_RETURN_TRUE;
}

PyMethodDef module_methods[] = {
    {"check_hasattr", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)(void)>(check_hasattr)),
     METH_FASTCALL, "check_hasattr(name, expected, *objs) -> bool"},
    {"check_no_aliasing",
     reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)(void)>(check_no_aliasing)),
     METH_FASTCALL, "check_no_aliasing(*objs) -> bool: no object passed twice"},
    {nullptr, nullptr, 0, nullptr}};

PyModuleDef module_def = {PyModuleDef_HEAD_INIT, "_framejit_tensor_guards",
                          "Native bodies of framejit.guards' hit-path helpers.", -1,
                          module_methods};

}  // namespace

PyMODINIT_FUNC PyInit__framejit_tensor_guards(void) {
  TensorGuardsType.tp_name = "_framejit_tensor_guards.TensorGuards";
  TensorGuardsType.tp_basicsize = sizeof(TensorGuardsObject);
  TensorGuardsType.tp_flags = Py_TPFLAGS_DEFAULT;
  TensorGuardsType.tp_doc = "TensorGuards(specs): batched tensor property check";
  TensorGuardsType.tp_new = TensorGuards_new;
  TensorGuardsType.tp_dealloc = reinterpret_cast<destructor>(TensorGuards_dealloc);
  TensorGuardsType.tp_methods = TensorGuards_methods;
  GlobalStateType.tp_name = "_framejit_tensor_guards.GlobalState";
  GlobalStateType.tp_basicsize = sizeof(GlobalStateObject);
  GlobalStateType.tp_flags = Py_TPFLAGS_DEFAULT;
  GlobalStateType.tp_doc = "GlobalState(expected): ___check_global_state() body";
  GlobalStateType.tp_new = GlobalState_new;
  GlobalStateType.tp_dealloc = reinterpret_cast<destructor>(GlobalState_dealloc);
  GlobalStateType.tp_call = GlobalState_call;
  if (PyType_Ready(&TensorGuardsType) < 0 || PyType_Ready(&GlobalStateType) < 0) {
    return nullptr;
  }
  PyObject* m = PyModule_Create(&module_def);
  if (m == nullptr) {
    return nullptr;
  }
  Py_INCREF(&TensorGuardsType);
  if (PyModule_AddObject(m, "TensorGuards", reinterpret_cast<PyObject*>(&TensorGuardsType)) < 0) {
    Py_DECREF(&TensorGuardsType);
    Py_DECREF(m);
    return nullptr;
  }
  Py_INCREF(&GlobalStateType);
  if (PyModule_AddObject(m, "GlobalState", reinterpret_cast<PyObject*>(&GlobalStateType)) < 0) {
    Py_DECREF(&GlobalStateType);
    Py_DECREF(m);
    return nullptr;
  }
  return m;
}
