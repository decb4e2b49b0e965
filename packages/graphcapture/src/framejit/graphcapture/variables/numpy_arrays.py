"""NumPy in compiled frames: ndarrays held as graph tensors, numpy calls traced as torch._numpy's.

An ndarray the frame holds (`t.numpy()`, an ndarray argument, a numpy result) is a tensor
of the graph behind an `NdarrayVariable`.  A numpy function, ndarray method, attribute or
operator on it becomes one FX node whose target (`numpy_target`) wraps the tensors in
`torch._numpy.ndarray`, calls torch._numpy's counterpart and unwraps what comes back:
torch ops only, so every backend compiles it.  An ndarray argument enters the graph as
`torch.from_numpy(arg)` (the same memory: writes reach the caller's array), guarded by its
type, shape, strides, dtype and writeability; an ndarray the graph returns leaves it as
`tensor.numpy()` (a numpy scalar as `tensor.numpy()[()]`).

torch._numpy follows numpy's promotion rules, but not everything of numpy: before a call is
recorded, real numpy runs it once on stand-in arrays of the same shapes and dtypes (the
probe).  A call numpy refuses, or whose result torch._numpy does not reproduce (type,
dtype, shape, scalar or array, a view of an operand or not, the operand itself), stays a
graph break with the reason; a copy where torch._numpy gives a view is cloned.
numpy's dtypes, iinfo/finfo and scalar types on constants fold (`numpy_record`).  What is
not modelled (np.random: numpy's own RNG stream; functions torch._numpy lacks) is a break.
"""

from __future__ import annotations

import operator
import sys
import warnings
from typing import Any

import torch

from ..exc import Unsupported
from .base import ConstantVariable, VariableTracker, is_constant_value, numpy_record  # noqa: F401
from .containers import ListVariable, TupleVariable
from .sym_node import SymNodeVariable, size_variable
from .tensor import TensorVariable

PROBE_MAX_ELEMENTS = 1 << 22  # operands bigger than this are a break (not probed)

# numpy submodules mirrored by torch._numpy (np.random is not: numpy's RNG stream would differ)
_MIRRORED = ("", "linalg", "fft")
# numpy callables folded on constant arguments (results are immutable records or numbers)
_FOLDED_NAMES = ("dtype", "iinfo", "finfo", "result_type", "promote_types", "can_cast",
                 "issubdtype", "min_scalar_type")  # fmt: skip
# ndarray attributes that are arrays (traced like a method without arguments)
_ARRAY_ATTRS = {"T", "mT", "real", "imag"}


def _np():
    return sys.modules.get("numpy")


def _tnp():
    import torch._numpy as tnp

    return tnp


# ---------------------------------------------------------------------- classification
_TABLE: dict[int, tuple[Any, Any, str]] | None = None  # id(np obj) -> (np obj, tnp obj, name)


def _table() -> dict[int, tuple[Any, Any, str]]:
    global _TABLE
    np = _np()
    if _TABLE is None and np is not None:
        import importlib

        tnp = _tnp()
        table: dict[int, tuple[Any, Any, str]] = {}
        for sub in _MIRRORED:
            np_mod = importlib.import_module(f"numpy.{sub}") if sub else np
            tnp_mod = getattr(tnp, sub) if sub else tnp
            for name in dir(tnp_mod):
                if name.startswith("_"):
                    continue
                np_obj, tnp_obj = getattr(np_mod, name, None), getattr(tnp_mod, name)
                if callable(np_obj) and callable(tnp_obj) and not isinstance(np_obj, type):
                    table.setdefault(id(np_obj), (np_obj, tnp_obj, f"{sub}.{name}".lstrip(".")))
        for name in _FOLDED_NAMES:
            obj = getattr(np, name, None)
            if obj is not None:
                table[id(obj)] = (obj, None, name)
        for obj in set(np.sctypeDict.values()):  # np.float32, np.int64, ... (scalar types)
            table.setdefault(id(obj), (obj, None, obj.__name__))
        _TABLE = table
    return _TABLE or {}


def numpy_callable(value) -> bool:
    """A numpy function or class this module models (by identity)."""
    if _np() is None:
        return False
    found = _table().get(id(value))
    return found is not None and found[0] is value


def unmodelled_reason(value) -> str | None:
    """Why a numpy callable that is not modelled is a graph break (None: not numpy's)."""
    if _np() is None or not callable(value) or isinstance(value, type):
        return None
    owner = getattr(value, "__self__", None)
    module = getattr(value, "__module__", None) or type(owner).__module__ or ""
    if not module.startswith("numpy"):
        return None
    name = getattr(value, "__name__", type(value).__name__)
    if module.startswith("numpy.random"):
        return f"numpy.random.{name}: numpy's own RNG stream is not traced"
    return f"numpy {name} has no torch._numpy counterpart"


def is_ndarray(value) -> bool:
    np = _np()
    return np is not None and type(value) is np.ndarray


# ---------------------------------------------------------------------- FX targets
_TARGETS: dict[tuple, Any] = {}


def _to_tnp(value):
    if isinstance(value, torch.Tensor):
        return _tnp().ndarray(value)
    if type(value) in (tuple, list):
        return type(value)(_to_tnp(v) for v in value)
    return value


def _from_tnp(value):
    if isinstance(value, _tnp().ndarray):
        return value.tensor
    if type(value) in (tuple, list):
        return type(value)(_from_tnp(v) for v in value)
    return value


def numpy_target(kind: str, name: str, fn=None):
    """The FX target for numpy's `name` ("function": `fn` of torch._numpy or an operator;
    "method"/"attr": of the ndarray): tensors in, tensors out."""
    key = (kind, name, fn)
    found = _TARGETS.get(key)
    if found is not None:
        return found
    if kind == "function":

        def target(*args, **kwargs):
            return _from_tnp(fn(*_to_tnp(args), **{k: _to_tnp(v) for k, v in kwargs.items()}))

    elif kind == "method":

        def target(self, *args, **kwargs):
            method = getattr(_tnp().ndarray(self), name)
            return _from_tnp(method(*_to_tnp(args), **{k: _to_tnp(v) for k, v in kwargs.items()}))

    else:

        def target(self):
            return _from_tnp(getattr(_tnp().ndarray(self), name))

    target.__name__ = target.__qualname__ = "numpy_" + "".join(
        c if c.isalnum() else "_" for c in name
    ).strip("_")
    _TARGETS[key] = target
    return target


def to_numpy(t: torch.Tensor):
    """A graph's ndarray output, back to numpy (sharing the tensor's memory)."""
    return t.numpy()


def to_numpy_readonly(t: torch.Tensor):
    """A graph's ndarray output that eager gives read-only (a view of a read-only array)."""
    array = t.numpy()
    array.flags.writeable = False
    return array


def to_numpy_scalar(t: torch.Tensor):
    """A graph's output that is a numpy scalar in eager (np.sum(a), a.max())."""
    return t.numpy()[()]


# ---------------------------------------------------------------------- the tracker
class NdarrayVariable(VariableTracker):
    """A numpy array (or, with `scalar`, a numpy scalar) held as a tensor of the graph.

    Not a TensorVariable: torch ops and Tensor methods do not take it (eager numpy and
    torch differ); only this module's numpy calls and torch.from_numpy read `node`."""

    def __init__(
        self, node, example: torch.Tensor, source=None, scalar=False, strides=None, writeable=True
    ):
        self.node = node
        self.example = example
        self.source = source
        self.scalar = scalar
        self.strides = strides  # eager numpy's strides, when known
        # False: eager's array is read-only (np.broadcast_to, a view of a read-only array);
        # its stand-in is too, so the probe refuses every write numpy would refuse
        self.writeable = writeable

    def python_type(self) -> type:
        np = _np()
        if not self.scalar:
            return np.ndarray
        return type(np.zeros((), dtype=numpy_dtype(self.example.dtype))[()])

    def as_proxy(self):
        raise Unsupported("a numpy array passed where torch expects a tensor")

    def as_example(self):
        raise Unsupported("a numpy array passed where torch expects a tensor")

    def has_tensors(self) -> bool:
        return True

    def as_python_constant(self):
        raise Unsupported("a numpy array is not a Python constant")

    def truth(self, tx) -> bool:
        raise Unsupported("data-dependent branch: if on a numpy array")

    def unpack(self, tx):
        if self.example.dim() == 0:
            raise Unsupported("TypeError: iteration over a 0-d array or a numpy scalar")
        length = self.var_getattr(tx, "shape").items[0].as_python_constant()  # guarded
        return [self.getitem(tx, ConstantVariable(i)) for i in range(length)]

    def reconstruct(self, cg) -> None:
        if self.source is not None and self.node.op == "placeholder":
            cg.load_source(self.source)  # the caller's own array
            return
        convert = (
            to_numpy_scalar if self.scalar else to_numpy if self.writeable else to_numpy_readonly
        )
        cg.add_push_null(lambda: cg.load_const(convert))
        cg.load_graph_output(self)
        cg.call(1)

    def standin(self):
        """The probe's stand-in: same shape and dtype, harmless values."""
        value = _standin(self.example, self.scalar)
        if not self.writeable:
            value.flags.writeable = False
        return value

    def var_getattr(self, tx, name: str) -> VariableTracker:
        example, output = self.example, tx.output
        if name == "ndim":
            return ConstantVariable(example.dim())
        if name == "shape":
            return TupleVariable(
                [
                    size_variable(output, self.node, v, torch.ops.aten.sym_size.int, d)
                    for d, v in enumerate(example.shape)
                ]
            )
        if name == "size":
            return size_variable(
                output, self.node, example.numel(), torch.ops.aten.sym_numel.default, None
            )
        if name == "itemsize":
            return ConstantVariable(example.element_size())
        if name == "dtype":
            return ConstantVariable(numpy_dtype(example.dtype))
        if name == "strides" and self.strides is not None:
            return TupleVariable([ConstantVariable(s) for s in self.strides])
        if name in _ARRAY_ATTRS:
            return numpy_call(tx, numpy_target("attr", name), _attr_probe(name), [self], {})
        if _has_method(name):
            return NdarrayMethodVariable(self, name)
        raise Unsupported(f"ndarray attribute {name!r} is not traced")

    def call_method(self, tx, name: str, args: list, kwargs: dict) -> VariableTracker:
        if name == "__setitem__":
            target = numpy_target("function", "setitem", operator.setitem)
            return numpy_call(tx, target, operator.setitem, [self, *args], kwargs)
        return self.var_getattr(tx, name).call_function(tx, args, kwargs)

    def getitem(self, tx, index: VariableTracker) -> VariableTracker:
        target = numpy_target("function", "getitem", operator.getitem)
        return numpy_call(tx, target, operator.getitem, [self, index], {})

    def __repr__(self) -> str:
        return f"NdarrayVariable({self.node.name})"


def _has_method(name: str) -> bool:
    np = _np()
    return (
        not name.startswith("_")
        and callable(getattr(np.ndarray, name, None))
        and callable(getattr(_tnp().ndarray, name, None))
    )


def _attr_probe(name: str):
    def probe(a):
        return getattr(a, name)

    return probe


def _method_probe(name: str):
    def probe(a, *args, **kwargs):
        return getattr(a, name)(*args, **kwargs)

    return probe


class NdarrayMethodVariable(VariableTracker):
    def __init__(self, array: NdarrayVariable, name: str):
        self.array = array
        self.name = name

    def call_function(self, tx, args, kwargs) -> VariableTracker:
        if self.name == "tolist" and not args and not kwargs and tx.output.fullgraph:
            from .tensor import captured_list  # numpy's Python numbers are Tensor.tolist()'s

            return captured_list(tx, TensorVariable(self.array.node, self.array.example))
        target = numpy_target("method", self.name)
        return numpy_call(tx, target, _method_probe(self.name), [self.array, *args], kwargs)


class NumpyFunctionVariable(VariableTracker):
    """A numpy function, ufunc or class: traced through torch._numpy, or folded."""

    def __init__(self, value, source=None):
        self.value = value
        self.source = source

    def python_type(self) -> type:
        return type(self.value)

    def as_python_constant(self):
        return self.value

    def call_function(self, tx, args, kwargs) -> VariableTracker:
        _, tnp_fn, name = _table()[id(self.value)]
        if tnp_fn is None:  # a dtype, iinfo, finfo, scalar type or dtype query
            return _fold(self.value, name, args, kwargs)
        if name in ("array", "asarray") and _array_list(args, kwargs):
            # np.array([a, b]) of traced arrays: torch._numpy reads a list's items as data
            # (a break); the same rows stacked (the probe checks numpy agrees)
            tnp_fn, name = _tnp().stack, "array_of_arrays"
        target = numpy_target("function", name, tnp_fn)
        return numpy_call(tx, target, self.value, args, kwargs)

    def var_getattr(self, tx, name: str) -> VariableTracker:
        if isinstance(self.value, type):  # np.int64.__name__: read as any class's
            from .objects import UserDefinedClassVariable

            return UserDefinedClassVariable(self.value, self.source).var_getattr(tx, name)
        raise Unsupported(f"attribute {name!r} of numpy.{_table()[id(self.value)][2]}")

    def __repr__(self) -> str:
        return f"NumpyFunctionVariable({_table()[id(self.value)][2]})"


def _array_list(args, kwargs) -> bool:
    items = getattr(args[0], "items", None) if len(args) == 1 else None
    return (
        (
            type(args[0]) in (ListVariable, TupleVariable)
            and bool(items)
            and all(isinstance(v, NdarrayVariable) for v in items)
            and set(kwargs) <= {"dtype"}
        )
        if items is not None
        else False
    )


def _fold(fn, name: str, args, kwargs) -> VariableTracker:
    if not all(a.is_python_constant() for a in [*args, *kwargs.values()]):
        raise Unsupported(f"numpy.{name} of values that are not constants")
    try:
        value = fn(
            *[a.as_python_constant() for a in args],
            **{k: v.as_python_constant() for k, v in kwargs.items()},
        )
    except Exception as e:
        raise Unsupported(f"numpy.{name} on constants raised {type(e).__name__}") from e
    if is_constant_value(value):
        return ConstantVariable(value)
    raise Unsupported(f"numpy.{name} gave a {type(value).__name__}")


# ---------------------------------------------------------------------- recording a call
def numpy_dtype(dtype: torch.dtype):
    try:
        return torch.empty((), dtype=dtype).numpy().dtype
    except TypeError as e:
        raise Unsupported(f"{dtype} has no numpy dtype") from e


def _torch_dtype(np_dtype) -> torch.dtype:
    np = _np()
    try:
        return torch.from_numpy(np.empty((0,), dtype=np_dtype)).dtype
    except TypeError as e:
        raise Unsupported(f"numpy dtype {np_dtype} has no torch dtype") from e


def _hint(size) -> int:
    if isinstance(size, torch.SymInt):
        hint = size.node.hint
        if hint is None:
            raise Unsupported("a numpy array of data-dependent size")
        return int(hint)
    return int(size)


def _standin(example: torch.Tensor, scalar: bool = False):
    np = _np()
    shape = tuple(_hint(s) for s in example.shape)
    dtype = numpy_dtype(example.dtype)
    rng = np.random.default_rng(0)  # fixed, generic values: a matrix is invertible, a log finite
    if dtype.kind in "fc":
        value = rng.uniform(0.5, 1.5, size=shape).astype(dtype)
    elif dtype.kind in "iu":
        value = rng.integers(1, 3, size=shape).astype(dtype)
    else:
        value = np.ones(shape, dtype=dtype)
    return value[()] if scalar else value


def _lower(tx, vt: VariableTracker, sizes: list):
    """(FX argument, fake argument, probe argument) of one argument of a numpy call."""
    np = _np()
    if isinstance(vt, NdarrayVariable):
        sizes.append(vt.example.numel())
        return vt.node, vt.example, _Lazy(vt.standin)
    if isinstance(vt, TensorVariable):  # numpy reads a tensor through __array__
        sizes.append(vt.example.numel())
        example = vt.example

        def tensor_standin():
            t = torch.from_numpy(_standin(example))
            return t.requires_grad_() if example.requires_grad else t

        return vt.node, example, _Lazy(tensor_standin)
    if isinstance(vt, SymNodeVariable):
        return vt.as_proxy(), vt.as_example(), _hint(vt.as_example())
    if type(vt) in (TupleVariable, ListVariable) and getattr(vt, "namedtuple_cls", None) is None:
        parts = [_lower(tx, item, sizes) for item in vt.items]
        cls = tuple if isinstance(vt, TupleVariable) else list
        return tuple(cls(p[i] for p in parts) for i in range(3))
    if not vt.is_python_constant():
        raise Unsupported(f"numpy call with argument {vt}")
    value = vt.as_python_constant()
    if isinstance(value, np.generic) and not isinstance(value, np.bool_):
        # a numpy scalar is typed like a 0-d array (NEP 50), unlike a Python number
        dtype = _torch_dtype(value.dtype)
        example = tx.output.run_fake(
            "call_function", torch.tensor, (value.item(),), {"dtype": dtype}
        )
        node = tx.output.create_node(
            "call_function", torch.tensor, (value.item(),), {"dtype": dtype}, example
        )
        return node, example, value
    if (
        isinstance(value, np.dtype)
        or (isinstance(value, type) and issubclass(value, np.generic))
        or value in (int, float, bool, complex)
    ):  # a dtype, by its name (what FX code can spell): `astype(int)` is int64
        name = np.dtype(value).name
        return name, name, value
    if is_constant_value(value) or value is Ellipsis:
        return value, value, value
    raise Unsupported(f"numpy call with a {type(value).__name__} argument")


class _Lazy:
    """A probe argument built only when the probe runs."""

    def __init__(self, make):
        self.make = make


def _build_probe(value):
    if isinstance(value, _Lazy):
        return value.make()
    if type(value) in (tuple, list):
        return type(value)(_build_probe(v) for v in value)
    return value


def _probe(fn, args, kwargs, sizes):
    """What real numpy gives on stand-ins (the exception it raises, if it does), and the
    stand-in arrays it read (to tell which results are views of them)."""
    np = _np()
    if sum(sizes) > PROBE_MAX_ELEMENTS:
        raise Unsupported(f"numpy operands of more than {PROBE_MAX_ELEMENTS} elements (not probed)")
    args, kwargs = _build_probe(args), {k: _build_probe(v) for k, v in kwargs.items()}
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        try:
            result = fn(*args, **kwargs)
        except Exception as e:
            name = getattr(fn, "__name__", repr(fn))
            raise Unsupported(f"numpy {name}: {type(e).__name__} (numpy raises it)") from e
    return result, _flat_arrays([*args, *kwargs.values()])


def _flat_arrays(values) -> list:
    found = []
    for v in values:
        if type(v) in (tuple, list):
            found += _flat_arrays(v)
        else:
            found.append(v)
    return found


def numpy_call(tx, target, real_fn, args: list, kwargs: dict) -> VariableTracker:
    """Record one numpy operation (FX target `target`; `real_fn` is what eager runs)."""
    sizes: list = []
    lowered = [_lower(tx, a, sizes) for a in args]
    lowered_kw = {k: _lower(tx, v, sizes) for k, v in kwargs.items()}
    proxy_args = tuple(p[0] for p in lowered)
    proxy_kwargs = {k: p[0] for k, p in lowered_kw.items()}
    fake_args = tuple(p[1] for p in lowered)
    fake_kwargs = {k: p[1] for k, p in lowered_kw.items()}
    probe_args = [p[2] for p in lowered]
    expected, read = _probe(real_fn, probe_args, {k: p[2] for k, p in lowered_kw.items()}, sizes)
    operand = _returned_operand(expected, read, [*args, *kwargs.values()])
    if operand is not None:  # `a += 1`, np.asarray(a), np.sin(x, out=out)
        return _in_place(tx, target, proxy_args, proxy_kwargs, fake_args, fake_kwargs, operand)
    example = tx.output.run_fake("call_function", target, fake_args, fake_kwargs)
    node = tx.output.create_node("call_function", target, proxy_args, proxy_kwargs, example)
    pairs = [
        (fake, probe)
        for fake, probe in zip(_flat_arrays([*fake_args, *fake_kwargs.values()]), read, strict=True)
        if isinstance(fake, torch.Tensor)
    ]
    return _result(tx.output, node, example, expected, target.__name__, pairs)


def _returned_operand(expected, read: list, trackers: list):
    """The ndarray tracker whose stand-in numpy returned itself (`read`: the probe's
    operands, flattened by `_flat_arrays`, in the order of `trackers` flattened alike)."""
    flat: list = []

    def flatten(item):
        if (
            type(item) in (TupleVariable, ListVariable)
            and getattr(item, "namedtuple_cls", None) is None
        ):
            item = item.items
        elif isinstance(item, ConstantVariable) and type(item.value) in (tuple, list):
            item = item.value  # `_lower` passes a constant sequence on as it is
        if type(item) in (tuple, list):
            for part in item:
                flatten(part)
        else:
            flat.append(item)

    for vt in trackers:
        flatten(vt)
    if len(flat) != len(read):
        return None
    for vt, probe in zip(flat, read, strict=True):
        if probe is expected and isinstance(vt, NdarrayVariable):
            return vt
    return None


def _in_place(tx, target, proxy_args, proxy_kwargs, fake_args, fake_kwargs, array):
    """Eager returns its first argument itself (`a += 1`, np.asarray(a)): the node is kept
    for what it writes, and the result is that array's tracker."""
    example, mine = (
        tx.output.run_fake("call_function", target, fake_args, fake_kwargs),
        array.example,
    )
    if example is not mine and not (
        isinstance(example, torch.Tensor)
        and _same_storage(example, mine)
        and (example.shape, example.stride(), example.storage_offset())
        == (mine.shape, mine.stride(), mine.storage_offset())
    ):  # np.squeeze(a) with nothing to squeeze is `a`; torch._numpy's is a view like it
        raise Unsupported(f"{target.__name__}: numpy returns its argument, torch._numpy does not")
    tx.output.create_node("call_function", target, proxy_args, proxy_kwargs, example)
    return array


def _same_storage(a: torch.Tensor, b: torch.Tensor) -> bool:
    from torch.multiprocessing.reductions import StorageWeakRef

    return StorageWeakRef(a.untyped_storage()) == StorageWeakRef(b.untyped_storage())


def _views_match(output, node, example, expected, pairs, name: str):
    """numpy's result is a view of an operand exactly when torch._numpy's is (a write
    through one must reach the other, or neither); a copy where torch._numpy gives a view
    (a.flatten() of a 1-d array) is cloned, a view it does not give is a break."""
    np = _np()
    clone = False
    for fake, probe in pairs:
        if not isinstance(probe, (np.ndarray, torch.Tensor)):
            continue
        numpy_view = bool(np.may_share_memory(expected, probe))
        torch_view = _same_storage(example, fake)
        if numpy_view and not torch_view:
            raise Unsupported(f"{name}: numpy returns a view of its operand, torch._numpy a copy")
        clone = clone or (torch_view and not numpy_view)
    if not clone:
        return node, example
    with output.fake_mode:
        copied = example.clone()
    return output.create_node("call_method", "clone", (node,), {}, copied), copied


def _result(output, node, example, expected, name: str, pairs) -> VariableTracker:
    """The tracker for what torch._numpy gave, checked against what numpy gave."""
    np = _np()
    if isinstance(example, torch.Tensor):
        if not isinstance(expected, (np.ndarray, np.generic)):
            raise Unsupported(f"{name}: numpy gives a {type(expected).__name__}, not an array")
        shape = tuple(_hint(s) for s in example.shape)
        if shape != expected.shape or _torch_dtype(expected.dtype) != example.dtype:
            raise Unsupported(
                f"{name}: torch._numpy gives {example.dtype}{list(shape)}, numpy "
                f"{expected.dtype}{list(expected.shape)}"
            )
        if isinstance(expected, np.generic):  # immutable: no view to keep
            return NdarrayVariable(node, example, scalar=True)
        node, example = _views_match(output, node, example, expected, pairs, name)
        return NdarrayVariable(node, example, writeable=bool(expected.flags.writeable))
    if type(example) in (tuple, list):
        if type(expected) not in (tuple, list) or len(expected) != len(example):
            raise Unsupported(f"{name}: numpy gives a {type(expected).__name__}")
        items = [
            _result(output, output.getitem_node(node, i, item), item, expected[i], name, pairs)
            for i, item in enumerate(example)
        ]
        return TupleVariable(items) if type(expected) is tuple else ListVariable(items)
    if example is None and expected is None:
        return ConstantVariable(None)  # a store (setitem): the node stays for its effect
    if is_constant_value(example) and type(expected) is type(example) and expected == example:
        return ConstantVariable(example)
    raise Unsupported(f"{name}: result {type(example).__name__} (numpy: {type(expected).__name__})")


# ---------------------------------------------------------------------- entry points
def tensor_numpy(tx, tensor: TensorVariable, args: list, kwargs: dict) -> VariableTracker:
    """`t.numpy()`: the same memory, seen as an ndarray."""
    force = False
    if args or set(kwargs) - {"force"}:
        raise Unsupported("Tensor.numpy() with arguments")
    if "force" in kwargs:
        force = bool(kwargs["force"].as_python_constant())
    example = tensor.example
    if not force and (example.requires_grad or example.device.type != "cpu"):
        raise Unsupported("Tensor.numpy() of a tensor that requires grad or is not on the CPU")
    if example.is_conj() or example.is_neg() or example.device.type != "cpu":
        raise Unsupported("Tensor.numpy() of a conjugated, negated or non-CPU tensor")
    numpy_dtype(example.dtype)  # bfloat16 and friends: eager raises TypeError
    if _np() is None:
        raise Unsupported("Tensor.numpy() without numpy imported")
    with tx.output.fake_mode:
        fake = example.detach()
    node = tx.output.create_node("call_method", "detach", (tensor.node,), {}, fake)
    strides = tuple(s * example.element_size() for s in example.stride())
    if any(isinstance(s, torch.SymInt) for s in strides):
        strides = None
    return NdarrayVariable(node, fake, strides=strides)


def from_numpy(tx, fn, args: list, kwargs: dict) -> VariableTracker:
    """torch.from_numpy / torch.as_tensor / torch.tensor of a traced ndarray."""
    array = args[0] if args else None
    dtype = kwargs.get("dtype")
    if (
        not isinstance(array, NdarrayVariable)
        or len(args) != 1
        or set(kwargs) - {"dtype"}
        or (dtype is not None and fn is torch.from_numpy)
    ):
        raise Unsupported(f"torch.{getattr(fn, '__name__', fn)} with a numpy array argument")
    if array.scalar and fn is torch.from_numpy:
        raise Unsupported("torch.from_numpy of a numpy scalar (eager raises TypeError)")
    if not array.writeable and fn is not torch.tensor:
        raise Unsupported(
            f"torch.{fn.__name__} of a read-only numpy array (torch warns; shares it)"
        )
    method = {torch.from_numpy: "detach", torch.as_tensor: "detach", torch.tensor: "clone"}.get(fn)
    if method is None:
        raise Unsupported(f"torch.{getattr(fn, '__name__', fn)} with a numpy array argument")
    with tx.output.fake_mode:
        fake = getattr(array.example, method)()
    node = tx.output.create_node("call_method", method, (array.node,), {}, fake)
    result = TensorVariable(node, fake)
    if dtype is not None:  # torch.tensor(arr, dtype=torch.long): the copy, cast
        result = tx.output.call_op("call_method", "to", [result], {"dtype": dtype})
    return result


_DATA_CONSTRUCTORS = ("tensor", "as_tensor", "asarray")


def numpy_number_data(fn, args: list, kwargs: dict) -> dict:
    """torch.tensor(np.float64(2.5)) is float64 (the numpy number's dtype), where the Python
    number an FX graph is given would make it float32: the dtype is passed explicitly; a
    numpy number nested in the data is a break."""
    if (
        getattr(fn, "__name__", None) not in _DATA_CONSTRUCTORS
        or getattr(fn, "__self__", None)
        not in (
            torch._C._VariableFunctions,
            None,
        )
        or not args
        or "dtype" in kwargs
    ):
        return kwargs
    data, np = args[0], _np()
    if np is None:
        return kwargs
    if isinstance(data, ConstantVariable) and isinstance(data.value, np.generic):
        return {**kwargs, "dtype": ConstantVariable(_torch_dtype(data.value.dtype))}
    if _holds_numpy_number(data):
        raise Unsupported(f"torch.{fn.__name__} of data holding numpy numbers")
    return kwargs


def _holds_numpy_number(vt) -> bool:
    if isinstance(vt, ConstantVariable):
        value = vt.value
        return isinstance(value, _np().generic) or (
            type(value) in (tuple, list) and any(isinstance(v, _np().generic) for v in value)
        )
    items = getattr(vt, "items", None)
    return type(items) is list and any(_holds_numpy_number(v) for v in items)


def binary_op(tx, op, a: VariableTracker, b: VariableTracker) -> VariableTracker:
    if isinstance(a, TensorVariable) or isinstance(b, TensorVariable):
        return _mixed_binary_op(tx, op, a, b)
    target = numpy_target("function", op.__name__, op)
    return numpy_call(tx, target, op, [a, b], {})


def _mixed_binary_op(tx, op, a: VariableTracker, b: VariableTracker) -> VariableTracker:
    """A torch tensor and a numpy array: eager decides by the operand types (Tensor's
    operator reads the array as a tensor; numpy's converts the tensor), which the probe
    on stand-ins tells; a numpy scalar enters torch as a number (its value): a break."""
    np = _np()
    if any(isinstance(v, NdarrayVariable) and v.scalar for v in (a, b)):
        raise Unsupported(f"{op.__name__} of a torch tensor and a numpy scalar")
    stand = [
        v.standin() if isinstance(v, NdarrayVariable) else torch.from_numpy(_standin(v.example))
        for v in (a, b)
    ]
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        try:
            expected = op(*stand)
        except Exception as e:
            raise Unsupported(f"{op.__name__} of a tensor and an array: {type(e).__name__}") from e
    if not isinstance(expected, torch.Tensor):
        return numpy_call(tx, numpy_target("function", op.__name__, op), op, [a, b], {})
    operands = [
        TensorVariable(v.node, v.example) if isinstance(v, NdarrayVariable) else v for v in (a, b)
    ]
    result = tx.output.call_op("call_function", op, operands, {})
    if not isinstance(result, TensorVariable) or (result.example.dtype, result.example.shape) != (
        expected.dtype,
        expected.shape,
    ):
        raise Unsupported(f"{op.__name__} of a tensor and an array: not torch's result")
    return result


def unary_op(tx, op, a: NdarrayVariable) -> VariableTracker:
    if op is operator.not_:
        raise Unsupported("data-dependent: `not` of a numpy array")
    return numpy_call(tx, numpy_target("function", op.__name__, op), op, [a], {})


def wrap_ndarray(tx, value, source) -> VariableTracker:
    """An ndarray argument: `torch.from_numpy(arg)` in the graph, guarded on its layout."""
    from framejit.guards import GuardKind, ItemSource, NumpyTensorSource
    from framejit.guards.source import from_numpy

    from ..sources import AttrSource

    if source is None:
        raise Unsupported("a numpy array that did not come from the frame's inputs")
    if any(s < 0 for s in value.strides):
        raise Unsupported("a numpy array with negative strides")
    try:
        tensor = from_numpy(value)  # a read-only array's copy: the trace refuses its writes
    except (TypeError, ValueError, RuntimeError) as e:  # its dtype, byte order, strides
        raise Unsupported(f"numpy array torch cannot view: {e}") from e

    def guard(src, kind, expected):
        tx.output.add_guard(src, kind, expected, origin=tx.origin())

    guard(source, GuardKind.TYPE_MATCH, value)
    guard(AttrSource(AttrSource(source, "dtype"), "str"), GuardKind.EQUALS_MATCH, value.dtype.str)
    flags = AttrSource(source, "flags")
    writeable = bool(value.flags.writeable)
    guard(AttrSource(flags, "writeable"), GuardKind.EQUALS_MATCH, writeable)
    if value.flags.c_contiguous and value.ndim:  # its sizes follow the dim policy, as a tensor's
        graph_input = tx.output.graph_input(NumpyTensorSource(source), tensor)
    else:
        graph_input = tx.output.static_graph_input(NumpyTensorSource(source), tensor)
    symbolic = [isinstance(s, torch.SymInt) for s in graph_input.example.shape]
    if not any(symbolic):
        guard(AttrSource(source, "shape"), GuardKind.EQUALS_MATCH, tuple(value.shape))
        guard(AttrSource(source, "strides"), GuardKind.EQUALS_MATCH, tuple(value.strides))
    else:  # the symbols' own guards (the ShapeEnv's) check the dynamic sizes
        guard(AttrSource(flags, "c_contiguous"), GuardKind.EQUALS_MATCH, True)
        guard(AttrSource(source, "ndim"), GuardKind.EQUALS_MATCH, value.ndim)
        for d, size in enumerate(value.shape):
            if not symbolic[d]:
                guard(ItemSource(AttrSource(source, "shape"), d), GuardKind.EQUALS_MATCH, size)
    return NdarrayVariable(
        graph_input.node,
        graph_input.example,
        source,
        strides=None if any(symbolic) else tuple(value.strides),
        writeable=writeable,
    )


def wrap_record(tx, value, source) -> VariableTracker:
    """A numpy dtype/iinfo/finfo from the inputs: its kind and dtype are guarded, so equal
    ones (np.dtype('float16'), np.ones(1, np.float16).dtype) share one graph."""
    from framejit.guards import GuardKind

    from ..sources import AttrSource

    if source is not None:
        dtype_source = source if isinstance(value, _np().dtype) else AttrSource(source, "dtype")
        tx.output.add_guard(source, GuardKind.TYPE_MATCH, value, origin=tx.origin())
        tx.output.add_guard(
            AttrSource(dtype_source, "str"),
            GuardKind.EQUALS_MATCH,
            value.str if isinstance(value, _np().dtype) else value.dtype.str,
            origin=tx.origin(),
        )
    return ConstantVariable(value, source)
