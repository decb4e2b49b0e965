"""Wrap a real value reached through a Source into a tracker, installing the guards it needs.

Guards are installed only for values the trace actually touches (lazily, as torch does):
a tensor gets TENSOR_MATCH, a constant EQUALS_MATCH, functions/modules/classes ID_MATCH,
containers TYPE_MATCH plus their length or keys, other objects TYPE_MATCH.
"""

from __future__ import annotations

import builtins
import collections
import contextlib
import enum
import functools
import inspect
import os
import re
import types
import weakref
from typing import Any

import torch

from framejit.guards import GuardKind, numpy_number

from .. import trace_rules
from ..dim_policy import DYNAMIC_DIMS_ATTR, marked_dims
from ..dynamic_shapes import ShapeTracker
from ..exc import Unsupported
from ..sources import (
    AttrSource,
    DictKeyAtSource,
    DictValueAtSource,
    ItemSource,
    SetItemAtSource,
    param_source,
    source_name,
)
from . import grad_mode_objects, numpy_arrays, weakrefs
from .autograd_function import AutogradFunctionApplyVariable, is_function_apply
from .base import (
    ConcreteValueVariable,
    ConstantVariable,
    VariableTracker,
    is_constant_value,
    numpy_record,
)
from .builtins import BuiltinVariable
from .collections_models import CounterVariable, DefaultDictVariable, DequeVariable
from .containers import DictVariable, ListVariable, SizeVariable, TupleVariable
from .environ import EnvironVariable
from .functions import CodeMatchedFunctionVariable, UserFunctionVariable, UserMethodVariable
from .functools_models import PartialVariable
from .nested_compile import NESTED_COMPILE_MARK, NestedCompileVariable
from .objects import (
    NNModuleVariable,
    PythonModuleVariable,
    TorchFunctionVariable,
    UserDefinedClassVariable,
    UserDefinedObjectVariable,
)
from .sets import SetVariable, key_of
from .stdlib import MODELS, ModelledFunctionVariable
from .sym_node import wrap_int_argument
from .tensor import TensorVariable
from .torch_calls import GRAD_MODE_CLASSES, is_torch_callable
from .typing_models import TypingFormVariable, is_typing_form
from .user_classes import bare_set_subclass
from .version_models import VersionVariable, is_version

_BUILTIN_CALLABLES = {
    v for v in vars(builtins).values() if callable(v) and not isinstance(v, type)
} | {int, float, bool, complex, str, list, tuple, dict, range, enumerate, zip, reversed, type,
     slice, map, filter, super, set, frozenset, iter, object}  # fmt: skip


def wrap_constant_or_unsupported(value: Any) -> VariableTracker:
    if is_constant_value(value):
        return ConstantVariable(value)
    if type(value) is torch.Size:
        return SizeVariable([ConstantVariable(v) for v in value])
    if isinstance(value, (re.Pattern, re.Match)):  # immutable records of constants
        return ConstantVariable(value)
    if type(value) in (tuple, list):
        items = [wrap_constant_or_unsupported(v) for v in value]
        return TupleVariable(items) if type(value) is tuple else ListVariable(items)
    if type(value) is dict:
        return DictVariable({k: wrap_constant_or_unsupported(v) for k, v in value.items()})
    if is_typing_form(value):  # `list[C]`, `C | None`: an immutable hint of constants
        return TypingFormVariable(value, None)
    if type(value) in _CONSTANT_ITERATORS:
        # `range(3).__iter__()`: a fresh iterator over constants, read out here (finite)
        from .containers import IteratorVariable

        return IteratorVariable([wrap_constant_or_unsupported(v) for v in value])
    raise Unsupported(f"value of type {type(value).__name__} from a constant operation")


# iterators a method of a constant returns (range, tuple, str, bytes): new and finite
_CONSTANT_ITERATORS = frozenset(
    type(iter(c)) for c in (range(1), range(1 << 64), (), "", "\u20ac", b"", frozenset())
)


def wrap(tx, value: Any, source) -> VariableTracker:
    """The tracker for `value`, found at `source` (None: a value made by the trace itself)."""
    output = tx.output
    if source is not None:
        key = source_name(source)
        cached = output.wrapped.get(key)
        if cached is not None:
            return cached
    if not is_constant_value(value):
        by_id = output.wrapped_by_id.get(id(value))
        if by_id is not None and by_id[0] is value:
            seen = by_id[1]
            seen_source = getattr(seen, "source", None)
            if source is None:
                return seen
            if seen_source is not None:
                # The same object reached through another source (f(t, t), a closure cell
                # holding an argument): reuse the tracker, and guard that it stays the same
                # object, or the graph would read one input for both.
                tx.output.add_guard(
                    source, GuardKind.TENSOR_ALIASING, seen_source, origin=tx.origin()
                )
                output.wrapped[key] = seen
                return seen
    vt = _build(tx, value, source)
    if source is not None:
        output.wrapped[source_name(source)] = vt
    if not is_constant_value(value) and not isinstance(vt, (ConstantVariable, TupleVariable)):
        output.wrapped_by_id[id(value)] = (value, vt)
    return vt


def _guard(tx, source, kind: GuardKind, value: Any) -> None:
    if source is not None:
        tx.output.add_guard(source, kind, value, origin=tx.origin())


def _build(tx, value: Any, source) -> VariableTracker:
    if isinstance(value, torch.Tensor):
        return wrap_tensor(tx, value, source)
    if type(value) is weakref.ReferenceType:
        return weakrefs.wrap_weakref(tx, value, source)
    if type(value) in weakrefs.PROXY_TYPES:
        return weakrefs.wrap_proxy(tx, value, source)
    if isinstance(value, enum.Enum):
        # members are singletons: folded, with the member itself guarded (a rebound global
        # or attribute holding another member recompiles)
        _guard(tx, source, GuardKind.ID_MATCH, value)
        return ConstantVariable(value, source)
    if type(value) is frozenset:
        return _wrap_set(tx, value, source)
    if numpy_arrays.is_ndarray(value):
        return numpy_arrays.wrap_ndarray(tx, value, source)
    if numpy_record(value):
        return numpy_arrays.wrap_record(tx, value, source)
    if value is Ellipsis:
        _guard(tx, source, GuardKind.ID_MATCH, value)
        return ConstantVariable(value, source)
    if is_version(value):  # torch.__version__, a packaging Version: immutable, by identity
        _guard(tx, source, GuardKind.ID_MATCH, value)
        return VersionVariable(value, source)
    if type(value) is int:
        symbolic = wrap_int_argument(tx, value, source)  # dim_policy.py: int arguments
        if symbolic is not None:
            return symbolic
    if is_constant_value(value) and not (
        type(value) is tuple and source is not None and not _literal_tuple(value)
    ):  # a tuple of other constants (`(0, ...)`, dtypes) is guarded item by item below
        if type(value) in (int, float, complex, bool, str, bytes, type(None)) or (
            (type(value) is tuple and _literal_tuple(value)) or numpy_number(value) is not None
        ):
            _guard(tx, source, GuardKind.EQUALS_MATCH, value)
        elif isinstance(
            value, (torch.dtype, torch.device, torch.layout, torch.memory_format)
        ) or type(value) in (
            range,
            slice,
        ):
            if isinstance(value, (range, slice, torch.device)) and source is not None:
                if not _guard_by_fields(tx, value, source):
                    reason = f"{type(value).__name__} read from {source_name(source)} cannot be guarded by value"
                    return OpaqueVariable(value, source, reason)
            else:
                _guard(tx, source, GuardKind.ID_MATCH, value)
        elif type(value) is torch.torch_version.TorchVersion:
            # torch.__version__: a str whose comparisons parse versions; fixed by identity
            _guard(tx, source, GuardKind.ID_MATCH, value)
        elif source is not None:
            reason = f"constant of type {type(value).__name__} cannot be guarded"
            return OpaqueVariable(value, source, reason)
        return ConstantVariable(value, source)
    if isinstance(value, torch.nn.Module):
        if not tx.output.module_policy.specialize(source, value):
            _guard(tx, source, GuardKind.TYPE_MATCH, value)  # module_policy.py
            module = NNModuleVariable(value, source)
            module.specialized = False
            return module
        _guard(tx, source, GuardKind.ID_MATCH, value)
        return NNModuleVariable(value, source)
    if type(value) is torch.Size:
        _guard(tx, source, GuardKind.TYPE_MATCH, value)
        if source is not None:
            _guard(tx, source, GuardKind.LENGTH_CHECK, value)
            items = [wrap(tx, v, ItemSource(source, i)) for i, v in enumerate(value)]
        else:
            items = [ConstantVariable(v) for v in value]
        return SizeVariable(items)
    if type(value) is tuple or (isinstance(value, tuple) and hasattr(type(value), "_fields")):
        _guard(tx, source, GuardKind.TYPE_MATCH, value)
        _guard(tx, source, GuardKind.LENGTH_CHECK, value)
        sources = _tuple_item_sources(value, source)
        items = [wrap(tx, v, s) for v, s in zip(value, sources, strict=True)]
        cls = None if type(value) is tuple else type(value)
        return TupleVariable(items, source, namedtuple_cls=cls)
    if type(value) is list:
        _guard(tx, source, GuardKind.TYPE_MATCH, value)
        _guard(tx, source, GuardKind.LENGTH_CHECK, value)
        items = [
            wrap(tx, v, ItemSource(source, i) if source else None) for i, v in enumerate(value)
        ]
        return ListVariable(items, source)
    if type(value) in _DICT_TYPES:
        _guard(tx, source, GuardKind.TYPE_MATCH, value)
        if type(value) is dict and source is not None and not _literal_keys(value):
            return _wrap_object_keyed_dict(tx, value, source)
        items = _wrap_dict_items(tx, value, source)
        if type(value) is collections.defaultdict:
            factory_source = AttrSource(source, "default_factory") if source else None
            factory = wrap(tx, value.default_factory, factory_source)
            return DefaultDictVariable(items, factory, source)
        if type(value) is collections.Counter:
            return CounterVariable(items, source)
        return DictVariable(items, source, user_cls=type(value))
    if type(value) is collections.deque:
        _guard(tx, source, GuardKind.TYPE_MATCH, value)
        _guard(tx, source, GuardKind.LENGTH_CHECK, value)
        items = [
            wrap(tx, v, ItemSource(source, i) if source else None) for i, v in enumerate(value)
        ]
        maxlen_source = AttrSource(source, "maxlen") if source else None
        wrap(tx, value.maxlen, maxlen_source)  # guards the bound
        return DequeVariable(items, value.maxlen, source)
    if type(value) in (set, frozenset) or bare_set_subclass(type(value)) is not None:
        return _wrap_set(tx, value, source)
    if type(value) is re.Pattern:  # immutable: its methods fold (re_models.py)
        _guard(tx, source, GuardKind.ID_MATCH, value)
        return ConstantVariable(value, source)
    if value is os.environ:
        _guard(tx, source, GuardKind.ID_MATCH, value)
        return EnvironVariable(value, source)
    if type(value) is _TUPLE_ITERATOR and source is not None:
        return _wrap_tuple_iterator(tx, value, source)
    if type(value) is _RANGE_ITERATOR and source is not None:
        return _wrap_range_iterator(tx, value, source)
    if _hashable_in(value, MODELS):
        _guard(tx, source, GuardKind.ID_MATCH, value)
        return ModelledFunctionVariable(value, source)
    if isinstance(value, functools._lru_cache_wrapper) and isinstance(
        getattr(value, "__wrapped__", None), types.FunctionType
    ):
        # the cached function is inlined (the cache is skipped: pure functions only)
        _guard(tx, source, GuardKind.ID_MATCH, value)
        wrapped_source = AttrSource(source, "__wrapped__") if source else None
        return wrap(tx, value.__wrapped__, wrapped_source)
    if grad_mode_objects.is_grad_mode_object(value):
        return grad_mode_objects.wrap_grad_mode_object(tx, value, source)
    if (
        _hashable_in(value, GRAD_MODE_CLASSES)
        or value is torch.set_grad_enabled
        or value is torch.Size
    ):
        _guard(tx, source, GuardKind.ID_MATCH, value)
        return TorchFunctionVariable(value, source)
    if isinstance(value, types.ModuleType):
        _guard(tx, source, GuardKind.ID_MATCH, value)
        return PythonModuleVariable(value, source)
    if numpy_arrays.numpy_callable(value):
        _guard(tx, source, GuardKind.ID_MATCH, value)
        return numpy_arrays.NumpyFunctionVariable(value, source)
    numpy_reason = numpy_arrays.unmodelled_reason(value)
    if numpy_reason is not None:  # never folded: the break runs whatever it is then
        return OpaqueVariable(value, source, numpy_reason)
    if _is_builtin(value):
        _guard(tx, source, GuardKind.ID_MATCH, value)
        return BuiltinVariable(value, source)
    if type(value) is super and value.__self__ is not None and source is not None:
        return _wrap_super(tx, value, source)
    if isinstance(value, types.MethodType) and _is_grad_mode_exit(value):
        return _wrap_grad_mode_exit(tx, value, source)
    if isinstance(value, types.MethodType):
        self_source = AttrSource(source, "__self__") if source is not None else None
        obj = wrap(tx, value.__self__, self_source)
        func_source = AttrSource(source, "__func__") if source is not None else None
        _guard(tx, func_source, GuardKind.ID_MATCH, value.__func__)
        if isinstance(value.__self__, types.ModuleType) and is_torch_callable(value.__func__):
            # torch.backends.mkldnn.is_available(): a method of a torch module subclass
            # (PropModule) is a torch call, a flag query folded as torch.compile folds it
            return TorchFunctionVariable(value, source)
        if not isinstance(value.__func__, types.FunctionType):
            return OpaqueVariable(value, source, "bound method of a non-Python function")
        if isinstance(obj, UserDefinedClassVariable) and is_function_apply(
            obj.value, value.__func__
        ):
            return AutogradFunctionApplyVariable(obj)  # `self.fn = F.apply`, called later
        return UserMethodVariable(value.__func__, obj, source)
    if isinstance(value, types.FunctionType):
        if source is not None and _code_matched(value):
            _guard_by_code(tx, source, value)
            return CodeMatchedFunctionVariable(value, source, tx.output)
        _guard(tx, source, GuardKind.ID_MATCH, value)
        if getattr(value, NESTED_COMPILE_MARK, False):
            return NestedCompileVariable(value, source)
        original = _script_if_tracing_original(value) or _optimize_wrapper_original(value)
        if original is not None:
            # torch.jit.script_if_tracing's wrapper just calls it when not tracing with jit
            return UserFunctionVariable(original, None)
        decorated = _grad_mode_decorated(value)
        if decorated is not None:
            from .objects import GradModeDecoratedVariable

            func, target = decorated
            return GradModeDecoratedVariable(UserFunctionVariable(func, None), target, source)
        if getattr(value, "_framejit_disabled", False):
            return SkippedFunctionVariable(value, source)
        if is_torch_callable(value) and not _is_module_method(value):
            return TorchFunctionVariable(value, source)
        return UserFunctionVariable(value, source)
    scripted = _script_function_original(value)
    if scripted is not None:
        # a torch.jit.script'ed function: its Python original is inlined, as torch.compile
        # inlines it (the ScriptFunction is identity-guarded; its original is read through it)
        _guard(tx, source, GuardKind.ID_MATCH, value)
        inline_source = AttrSource(source, "_torchdynamo_inline") if source else None
        return wrap(tx, scripted, inline_source)
    if is_torch_callable(value):
        _guard(tx, source, GuardKind.ID_MATCH, value)
        return TorchFunctionVariable(value, source)
    if isinstance(value, functools.partial):
        _guard(tx, source, GuardKind.TYPE_MATCH, value)
        func = wrap(tx, value.func, AttrSource(source, "func") if source else None)
        args = [
            wrap(tx, a, ItemSource(AttrSource(source, "args"), i) if source else None)
            for i, a in enumerate(value.args)
        ]
        kwargs = {
            k: wrap(tx, v, ItemSource(AttrSource(source, "keywords"), k) if source else None)
            for k, v in value.keywords.items()
        }
        return PartialVariable(func, args, kwargs, source, real=value)
    if isinstance(value, type):
        _guard(tx, source, GuardKind.ID_MATCH, value)
        return UserDefinedClassVariable(value, source)
    if isinstance(value, (types.BuiltinFunctionType, types.BuiltinMethodType)):
        _guard(tx, source, GuardKind.ID_MATCH, value)
        return OpaqueVariable(
            value, source, f"call into the C function {getattr(value, '__qualname__', value)!r}"
        )
    if isinstance(value, (types.GeneratorType, types.CoroutineType)):
        return OpaqueVariable(value, source, f"{type(value).__name__} object")
    if is_typing_form(value):
        _guard(tx, source, GuardKind.ID_MATCH, value)
        return TypingFormVariable(value, source)
    _guard(tx, source, GuardKind.TYPE_MATCH, value)
    return UserDefinedObjectVariable(value, source)


# immutable values equal to any other with the same fields: guarded field by field
_VALUE_FIELDS = {
    range: ("start", "stop", "step"),
    slice: ("start", "stop", "step"),
    torch.device: ("type", "index"),
}


def _guard_by_fields(tx, value, source) -> bool:
    """Guard a range/slice/device by its type and fields; False when a field is not a
    literal (a slice of tensors), which cannot be guarded by value."""
    fields = _VALUE_FIELDS[type(value)]
    values = [getattr(value, f) for f in fields]
    if not all(type(v) in (int, str, type(None)) for v in values):
        return False
    _guard(tx, source, GuardKind.TYPE_MATCH, value)
    for name, v in zip(fields, values, strict=True):
        _guard(tx, AttrSource(source, name), GuardKind.EQUALS_MATCH, v)
    return True


_TUPLE_ITERATOR = type(iter(()))


_TUPLEGETTER = type(collections.namedtuple("_Probe", "a").a)


def _tuple_item_sources(value: tuple, source) -> list:
    """Where each item of a tuple is read: `source[i]`, or for a namedtuple whose class
    overrides __getitem__ the field's own getter `source.<field>` (the tuple's slot)."""
    if source is None:
        return [None] * len(value)
    cls = type(value)
    if cls.__getitem__ is tuple.__getitem__:
        return [ItemSource(source, i) for i in range(len(value))]
    fields = cls._fields
    if len(fields) != len(value):
        raise Unsupported(f"a {cls.__name__} whose length is not its fields' count")
    for i, name in enumerate(fields):
        getter = inspect.getattr_static(cls, name, None)
        if not isinstance(getter, _TUPLEGETTER) or getter.__reduce__()[1][0] != i:
            raise Unsupported(f"{cls.__name__}.{name} is not the tuple's field {i}")
    return [AttrSource(source, name) for name in fields]


def _wrap_tuple_iterator(tx, value, source) -> VariableTracker:
    """iter(some tuple) from the frame's inputs (a resume function gets the one its frame
    was iterating): the items still to come, each guarded through
    ___tuple_iterator_getitem, and their number; what the trace consumes is replayed on
    the real iterator (containers.SourcedIteratorVariable)."""
    from framejit.guards import TupleIteratorLenSource, TupleIteratorSource

    from .containers import SourcedIteratorVariable

    n = value.__length_hint__()
    _guard(tx, source, GuardKind.TYPE_MATCH, value)
    _guard(tx, TupleIteratorLenSource(source), GuardKind.EQUALS_MATCH, n)
    _, (items,), start = value.__reduce__()
    trackers = [wrap(tx, items[start + i], TupleIteratorSource(source, i)) for i in range(n)]
    return SourcedIteratorVariable(trackers, source)


_RANGE_ITERATOR = type(iter(range(0)))


def _wrap_range_iterator(tx, value, source) -> VariableTracker:
    """iter(range(...)) from the frame's inputs (what a comprehension's frame gets, or a
    resume function for its loop): the ints still to come, pinned by three guards (how
    many are left, the first two of them), since they step evenly; what the trace consumes
    is replayed on the real iterator."""
    from framejit.guards import TupleIteratorLenSource, TupleIteratorSource

    from .containers import SourcedIteratorVariable

    n = value.__length_hint__()
    _, (rng,), start = value.__reduce__()
    rest = rng[start:]
    _guard(tx, source, GuardKind.TYPE_MATCH, value)
    _guard(tx, TupleIteratorLenSource(source), GuardKind.EQUALS_MATCH, n)
    for i in range(min(n, 2)):
        _guard(tx, TupleIteratorSource(source, i), GuardKind.EQUALS_MATCH, rest[i])
    return SourcedIteratorVariable([ConstantVariable(v) for v in rest], source)


def _is_grad_mode_exit(method: types.MethodType) -> bool:
    cls = type(method.__self__)
    if cls is contextlib.nullcontext:  # what a resume function gets for a profiler context
        return method.__func__ is contextlib.nullcontext.__exit__
    return (
        cls in GRAD_MODE_CLASSES
        and method.__func__ is getattr(cls.__exit__, "__func__", cls.__exit__)
        and isinstance(getattr(method.__self__, "prev", None), bool)
    )


def _wrap_grad_mode_exit(tx, method: types.MethodType, source) -> VariableTracker:
    """The `__exit__` of an entered no_grad()/enable_grad() (a resume function gets it for
    the with-block it continues in): traced as the grad-mode switch back to the `prev` it
    saved, which is guarded; the object's identity does not matter."""
    from .objects import GradModeVariable, NullContextVariable, WithExitVariable

    if type(method.__self__) is contextlib.nullcontext:
        if source is not None:
            _guard(tx, AttrSource(source, "__self__"), GuardKind.TYPE_MATCH, method.__self__)
            _guard(tx, AttrSource(source, "__func__"), GuardKind.ID_MATCH, method.__func__)
        return WithExitVariable(NullContextVariable())
    ctx = GradModeVariable(GRAD_MODE_CLASSES[type(method.__self__)])
    ctx.previous = method.__self__.prev
    if source is not None:
        self_source = AttrSource(source, "__self__")
        _guard(tx, self_source, GuardKind.TYPE_MATCH, method.__self__)
        _guard(tx, AttrSource(source, "__func__"), GuardKind.ID_MATCH, method.__func__)
        _guard(tx, AttrSource(self_source, "prev"), GuardKind.EQUALS_MATCH, ctx.previous)
    return WithExitVariable(ctx)


_DICT_TYPES = (dict, collections.OrderedDict, collections.defaultdict, collections.Counter)


def _wrap_super(tx, value: super, source) -> VariableTracker:
    """A bound `super(cls, obj)` made before the frame (a resume function's argument, kept
    across a graph break): the class guarded by identity, the object wrapped under it."""
    from .super_objects import SuperVariable

    _guard(tx, source, GuardKind.TYPE_MATCH, value)
    _guard(tx, AttrSource(source, "__thisclass__"), GuardKind.ID_MATCH, value.__thisclass__)
    obj = wrap(tx, value.__self__, AttrSource(source, "__self__"))
    return SuperVariable(value.__thisclass__, obj, source)


def _wrap_set(tx, value, source) -> VariableTracker:
    """A set from the frame's inputs, as torch guards one: its type, its length, and each
    member at its position in the iteration order (SetItemAtSource), by value for a
    constant and by identity otherwise, which pins both its contents and the order a loop
    over it sees.  Tensors hash by address: their order would change from call to call."""
    if source is None:
        if not all(is_constant_value(v) for v in value):
            raise Unsupported("a set of non-constants made outside the trace")
        return SetVariable([ConstantVariable(v) for v in value], frozen=type(value) is frozenset)
    if type(value) is frozenset and all(_fixed_member(v) for v in value):
        # immutable, identity-guarded: its members are fixed objects (constants, functions,
        # classes, modules), safe without guards of their own
        _guard(tx, source, GuardKind.ID_MATCH, value)
        return SetVariable([wrap(tx, v, None) for v in value], frozen=True, source=source)
    if any(isinstance(v, torch.Tensor) for v in value):
        raise Unsupported(f"a set of tensors read from {source_name(source)} (order not stable)")
    _guard(tx, source, GuardKind.TYPE_MATCH, value)
    _guard(tx, source, GuardKind.LENGTH_CHECK, value)
    members = [_wrap_member(tx, v, SetItemAtSource(source, i)) for i, v in enumerate(value)]
    frozen = isinstance(value, frozenset)
    made = SetVariable(members, frozen=frozen, source=source, real=value)
    if type(value) not in (set, frozenset):
        made.user_cls = type(value)  # a subclass that adds nothing (TYPE_MATCH holds it)
    return made


def _wrap_member(tx, value, source) -> VariableTracker:
    """A dict key or set member found at `source`: wrapped as a value would be, and held to
    be that very object unless it is a constant (compared by value) or a tensor (whose
    identity the trace tracks: aliasing guards)."""
    vt = wrap(tx, value, source)
    if not vt.is_python_constant() and not isinstance(vt, TensorVariable):
        _guard(tx, source, GuardKind.ID_MATCH, value)
    return vt


def _fixed_member(value) -> bool:
    return is_constant_value(value) or isinstance(
        value, (types.FunctionType, types.ModuleType, type, types.BuiltinFunctionType)
    )


def _code_matched(fn: types.FunctionType) -> bool:
    """Can `fn` be guarded by its code rather than its identity (CodeMatchedFunctionVariable)?
    A function defined inside another (`<locals>`: closures and lambdas, made anew by each
    call of their maker; a module-level function keeps its one identity guard) with no
    attributes of its own (no functools.wraps metadata, no marks, no framejit wrapper
    flags) that is traced inline (not torch's, not a wrapper the builder unwraps)."""
    return (
        "<locals>" in fn.__code__.co_qualname
        and not fn.__dict__
        and _grad_mode_decorated(fn) is None
        and not is_torch_callable(fn)
        and trace_rules.is_inlined(fn.__code__.co_filename)
    )


def _guard_by_code(tx, source, fn: types.FunctionType) -> None:
    _guard(tx, source, GuardKind.TYPE_MATCH, fn)
    _guard(tx, AttrSource(source, "__code__"), GuardKind.ID_MATCH, fn.__code__)
    _guard(tx, AttrSource(source, "__globals__"), GuardKind.ID_MATCH, fn.__globals__)
    _guard(tx, AttrSource(source, "__dict__"), GuardKind.LENGTH_CHECK, 0)
    # how many defaults there are decides the binding (their values are guarded when used)
    if fn.__defaults__ is None:
        _guard(tx, AttrSource(source, "__defaults__"), GuardKind.IS_NONE, None)
    else:
        _guard(tx, AttrSource(source, "__defaults__"), GuardKind.LENGTH_CHECK, fn.__defaults__)
    if fn.__kwdefaults__ is None:
        _guard(tx, AttrSource(source, "__kwdefaults__"), GuardKind.IS_NONE, None)
    else:
        _guard(tx, AttrSource(source, "__kwdefaults__"), GuardKind.DICT_KEYS, fn.__kwdefaults__)


def _script_if_tracing_original(fn: types.FunctionType):
    """The function under a torch.jit.script_if_tracing wrapper (fixed: the wrapper is
    identity-guarded and its original is set once, when the wrapper is made)."""
    if not getattr(fn, "__script_if_tracing_wrapper", False):
        return None
    original = getattr(fn, "__original_fn", None)
    return original if isinstance(original, types.FunctionType) else None


def _script_function_original(value) -> types.FunctionType | None:
    """The Python function torch.jit.script compiled into `value` (it keeps it, for
    torch.compile, as `_torchdynamo_inline`)."""
    if type(value) is not torch.jit.ScriptFunction:
        return None
    original = inspect.getattr_static(value, "_torchdynamo_inline", None)
    return original if isinstance(original, types.FunctionType) else None


def _grad_mode_decorated(fn: types.FunctionType):
    """(function, grad mode) under a `@torch.no_grad()` / `@torch.enable_grad()` decorator
    (torch.utils._contextlib.context_decorator's wrapper, fixed once it is made: the wrapper
    is identity-guarded)."""
    if fn.__code__ is not _decorate_context_code() or not fn.__closure__:
        return None
    cells = dict(zip(fn.__code__.co_freevars, fn.__closure__, strict=True))
    try:
        func, factory = cells["func"].cell_contents, cells["ctx_factory"].cell_contents
    except (KeyError, ValueError):
        return None
    owner = getattr(factory, "__self__", None)
    if not isinstance(func, types.FunctionType) or type(owner) not in GRAD_MODE_CLASSES:
        return None
    if getattr(factory, "__func__", None) is not type(owner).clone:
        return None
    return func, GRAD_MODE_CLASSES[type(owner)]


@functools.cache
def _decorate_context_code() -> types.CodeType | None:
    import torch.utils._contextlib as tcl

    return getattr(tcl.context_decorator(torch.no_grad().clone, lambda: None), "__code__", None)


def _optimize_wrapper_original(fn: types.FunctionType):
    """The function under an fj.optimize/fj.run wrapper called from traced code: traced
    inline, as torch._dynamo does (the frame being traced decides how it is compiled)."""
    from framejit import frameeval as fe

    original = getattr(fn, "_framejit_orig", None)
    if original is None or getattr(fn, "_framejit_disabled", False):
        return None
    if getattr(fn, "_framejit_callback", None) is fe.SKIP:
        return None
    return original if isinstance(original, types.FunctionType) else None


def _is_module_method(fn: types.FunctionType) -> bool:
    """Methods of torch.nn modules (forward, helpers) and torch.nn.modules.utils' Python
    helpers (_pair, _ntuple) are inlined like user code."""
    module = getattr(fn, "__module__", "") or ""
    if module == "torch.nn.modules.utils":
        return True
    return module.startswith("torch.nn.modules") and "." in fn.__qualname__


def _hashable_in(value: Any, table) -> bool:
    """`value in table` for tables of classes and builtins, never running user code: a
    Python-level __hash__ (a frozen dataclass's reads its fields, which an __init__ being
    traced has not set yet) cannot belong to a table member and may raise anything."""
    if isinstance(getattr(type(value), "__hash__", None), types.FunctionType):
        return False
    try:
        return value in table
    except Exception:
        return False


def _literal_tuple(value: tuple) -> bool:
    return all(
        type(v) in (int, float, complex, bool, str, bytes, type(None))
        or (type(v) is tuple and _literal_tuple(v))
        for v in value
    )


def _is_builtin(value: Any) -> bool:
    from .builtins import FOLDABLE
    from .stdlib_ops import OPERATOR_HANDLERS
    from .sys_models import SYS_HANDLERS

    return (
        _hashable_in(value, _BUILTIN_CALLABLES)
        or _hashable_in(value, FOLDABLE)
        or _hashable_in(value, OPERATOR_HANDLERS)
        or _hashable_in(value, SYS_HANDLERS)
    )


def wrap_tensor(tx, value: torch.Tensor, source) -> VariableTracker:
    if source is None:
        raise Unsupported("a tensor that did not come from the frame's inputs")
    if type(value) not in (
        torch.Tensor,
        torch.nn.Parameter,
        torch.nn.Buffer if hasattr(torch.nn, "Buffer") else torch.Tensor,
    ):
        raise Unsupported(f"tensor subclass {type(value).__name__}")
    if value.is_sparse or value.layout != torch.strided:
        raise Unsupported("non-strided (sparse/...) tensor")
    graph_input = tx.output.graph_input(source, value)
    # the symbolic dims are left to the shape guards (2 <= L['x'].size()[0], relations)
    dims = ShapeTracker.symbolic_dims(graph_input.example)
    tx.output.add_guard(
        source, GuardKind.TENSOR_MATCH, value, origin=tx.origin(), dynamic_dims=dims
    )
    if not marked_dims(value):
        tx.output.add_guard(
            AttrSource(source, DYNAMIC_DIMS_ATTR), GuardKind.HASATTR, False, origin=tx.origin()
        )
    return TensorVariable(
        graph_input.node, graph_input.example, source, type(value), own_attrs=dict(vars(value))
    )


def _literal_keys(value: dict) -> bool:
    return all(type(k) in (str, int) for k in value)


def _wrap_object_keyed_dict(tx, value: dict, source):
    """A dict keyed by objects (a registry: pytree's SUPPORTED_NODES): its keys wrapped and
    guarded as _wrap_dict_items does, each value when the trace reads it (lazy_dicts)."""
    from .lazy_dicts import LazyValuesDictVariable

    _guard(tx, source, GuardKind.LENGTH_CHECK, value)
    keys, pending = {}, {}
    for i, (k, v) in enumerate(value.items()):
        key = key_of(_wrap_member(tx, k, DictKeyAtSource(source, i)))
        keys[key] = None
        pending[key] = (v, DictValueAtSource(source, i))
    return LazyValuesDictVariable(tx, keys, pending, source)


def _wrap_dict_items(tx, value: dict, source) -> dict:
    """The items of a real dict, each wrapped with its source.  Literal keys (str, int) are
    guarded all at once (DICT_KEYS) and their values read by key.  Any other dict has each
    key wrapped like a value, at its position (DictKeyAtSource: a literal, a torch.Size or
    a tuple guarded by value, a class or function by identity, a tensor or Parameter as a
    graph input whose identity the trace keys by), its values read by position, and is
    keyed as Python hashes those keys (sets.key_of: a key that compares by value through
    user code is a graph break)."""
    if all(type(k) in (str, int) for k in value):
        _guard(tx, source, GuardKind.DICT_KEYS, value)
        return {k: wrap(tx, v, ItemSource(source, k) if source else None) for k, v in value.items()}
    if source is None:
        return {key_of(wrap(tx, k, None)): wrap(tx, v, None) for k, v in value.items()}
    _guard(tx, source, GuardKind.LENGTH_CHECK, value)
    items = {}
    for i, (k, v) in enumerate(value.items()):
        key = key_of(_wrap_member(tx, k, DictKeyAtSource(source, i)))
        items[key] = wrap(tx, v, DictValueAtSource(source, i))
    return items


def wrap_parameter(
    tx, module_vt: NNModuleVariable, name: str, value, buffer: bool
) -> VariableTracker:
    source = param_source(module_vt.source, name, buffer) if module_vt.source is not None else None
    if value is None:
        if not module_vt.specialized:  # another instance may hold a tensor there (bias=False)
            _guard(tx, source, GuardKind.IS_NONE, value)
        return ConstantVariable(None)
    if source is not None:
        key = source_name(source)
        cached = tx.output.wrapped.get(key)
        if cached is not None:
            return cached
    if type(value) not in (torch.Tensor, torch.nn.Parameter) and not isinstance(
        value, torch.nn.Parameter
    ):
        raise Unsupported(f"parameter/buffer of type {type(value).__name__}")
    if not module_vt.specialized and source is not None:
        return wrap(tx, value, source)  # a graph input, with its tensor guards
    _guard(tx, source, GuardKind.ID_MATCH, value)
    # the same tensor object may have had requires_grad flipped (requires_grad_(False)),
    # or its dtype/shape changed in place (`module.double()`, `p.data = other`): the
    # trace folds the flag (`if self.w.requires_grad:`), the graph was specialised on
    # the dtype and sizes.  TENSOR_MATCH checks them all, in the batched tensor check.
    _guard(tx, source, GuardKind.TENSOR_MATCH, value)
    node = tx.output.get_attr(
        source if source is not None else AttrSource(module_vt.source, name), value
    )
    vt = TensorVariable(
        node, node.meta["example_value"], source, type(value), own_attrs=dict(vars(value))
    )
    if source is not None:
        tx.output.wrapped[source_name(source)] = vt
    return vt


class OpaqueVariable(ConcreteValueVariable):
    """A value the trace can carry (and rebuild from its source) but not look into."""

    def __init__(self, value, source, reason: str):
        super().__init__(value, source)
        self.reason = reason

    def as_python_constant(self):
        raise Unsupported(self.reason)

    def var_getattr(self, tx, name: str) -> VariableTracker:
        raise Unsupported(self.reason)

    def call_function(self, tx, args, kwargs) -> VariableTracker:
        raise Unsupported(self.reason)

    def call_method(self, tx, name, args, kwargs) -> VariableTracker:
        raise Unsupported(self.reason)

    def unpack(self, tx):
        raise Unsupported(self.reason)

    def truth(self, tx) -> bool:
        raise Unsupported(self.reason)


class SkippedFunctionVariable(ConcreteValueVariable):
    """A function framejit was told to leave alone (fj.disable, frameeval.skip): a graph break."""

    def as_python_constant(self):
        raise Unsupported(f"{self.value.__qualname__} is skipped")

    def call_function(self, tx, args, kwargs) -> VariableTracker:
        raise Unsupported(f"call to {self.value.__qualname__}, which framejit was told to skip")
