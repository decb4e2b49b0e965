"""Objects of user classes: built inside the traced frame, and their Python dunder methods.

`construct` is what calling a class does.  A namedtuple becomes a TupleVariable of its
class; an Enum class called with a constant looks the member up; a plain class (dataclasses
included: frozen, field defaults, default factories, __post_init__) gets a
`NewObjectVariable` whose `__init__` is inlined.  Its attributes live in the tracker;
the real object is made only if it escapes the frame (`object.__new__(cls)` and its
`__dict__` filled, so __init__'s side effects are not run twice: they were traced and are
replayed like any other).

`dunder_binary_op`, `dunder_truth`, `dunder_len`, `dunder_iter`, `dunder_getitem` run a
class's Python `__eq__`/`__lt__`/`__add__`/`__bool__`/`__len__`/`__iter__`/
`__getitem__`/... (inlined, with Python's reflected-operand and NotImplemented rules) for
user objects, made here or read from the frame's inputs.
"""

from __future__ import annotations

import collections.abc
import enum
import functools
import operator
import types
import weakref

import torch

from ..exc import Unsupported
from ..sources import AttrSource
from .autocast import AUTOCAST_CLASSES, make_autocast
from .base import ConstantVariable, VariableTracker, fold
from .builtin_bases import CONTAINER_BASES, container_base, slot_method
from .containers import DictVariable, IteratorVariable, TupleVariable
from .dict_objects import rebuild_dict_object
from .exception_objects import ExceptionObjectVariable, exception_str
from .exceptions import call_until, is_args_only_exception, is_python_init_exception
from .functions import UserFunctionVariable
from .legacy_tensors import LEGACY_TENSOR_TYPE, construct_legacy
from .list_objects import new_storage, rebuild_list_object
from .objects import (
    _MISSING,
    NNModuleVariable,
    UserDefinedClassVariable,
    UserDefinedObjectVariable,
    _class_lookup,
    slot_member,
)
from .set_objects import new_storage as new_set_storage
from .set_objects import rebuild_set_object


def is_namedtuple_class(cls) -> bool:
    return isinstance(cls, type) and issubclass(cls, tuple) and hasattr(cls, "_fields")


def _is_structseq(cls) -> bool:
    """A C struct sequence (torch.return_types.*, os.stat_result): a tuple with named
    fields, made from one sequence."""
    return (
        isinstance(cls, type)
        and issubclass(cls, tuple)
        and cls.__base__ is tuple
        and isinstance(getattr(cls, "n_sequence_fields", None), int)
    )


def _namedtuple(tx, cls, args, kwargs) -> VariableTracker:
    from .builder import wrap

    fields = list(cls._fields)
    if len(args) > len(fields):
        raise Unsupported(f"TypeError: {cls.__name__}() takes {len(fields)} arguments")
    values = dict(zip(fields, args, strict=False))
    for k, v in kwargs.items():
        if k not in fields or k in values:
            raise Unsupported(f"TypeError: {cls.__name__}() got an unexpected/duplicate {k!r}")
        values[k] = v
    defaults = getattr(cls, "_field_defaults", {})
    items = []
    for name in fields:
        if name in values:
            items.append(values[name])
        elif name in defaults:
            items.append(wrap(tx, defaults[name], None))
        else:
            raise Unsupported(f"TypeError: {cls.__name__}() missing argument {name!r}")
    return TupleVariable(items, namedtuple_cls=cls)


def _own_overrides(cls) -> set:
    """Names a namedtuple subclass defines itself (a custom __new__ must run)."""
    out = set()
    for klass in cls.__mro__:
        if klass is tuple or ("_fields" in klass.__dict__ and "_make" in klass.__dict__):
            break
        out.update(klass.__dict__)
    return out


def _plain_class(cls, own_new_traced: bool = False) -> str | None:
    """Why instances of `cls` cannot be built as NewObjectVariables (None: they can);
    `own_new_traced`: the classes' Python __new__ methods are traced (object.__new__ is
    what they reach).
    A metaclass that leaves `type.__call__` alone builds instances as `type` does; a dict,
    OrderedDict, list or set base gives the object contents (dict_objects.py, list_objects.py,
    set_objects.py).
    A Python class's `__slots__` give the instance member slots (held in `attrs` like dict
    attributes, and rebuilt through their descriptors); with every class of the MRO
    declaring them, the instance has no __dict__ (`has_instance_dict`)."""
    if type(cls) not in (type, _ABCMeta()) and type(cls).__call__ is not type.__call__:
        return f"metaclass {type(cls).__name__} with its own __call__"
    if getattr(cls, "__abstractmethods__", None):  # object.__new__ refuses it
        return f"abstract class {cls.__name__}"
    for klass in cls.__mro__[:-1]:
        if klass in CONTAINER_BASES:
            continue
        if klass.__module__ == "builtins":
            return f"base class {klass.__name__} (builtin)"
        if type(klass.__dict__.get("__slots__", ())) not in (tuple, list, str):
            return f"{klass.__name__}.__slots__ is not a tuple, list or str"
        if "__new__" in klass.__dict__ and not own_new_traced:
            return f"{klass.__name__}.__new__"
    return None


def _ABCMeta():
    import abc

    return abc.ABCMeta


# C classes whose instances are immutable facts of constant arguments: folded
# (torch.finfo() without a dtype reads the default dtype, which the global-state guard holds)
FOLDED_CLASSES = (torch.finfo, torch.iinfo, torch.device)


def _is_torch_nn_module_class(cls) -> bool:
    return (
        isinstance(cls, type)
        and issubclass(cls, torch.nn.Module)
        and (cls.__module__ or "").startswith("torch.nn.modules")
    )


class InFrameModuleVariable(NNModuleVariable):
    """A torch.nn module without state (nn.Softmax(dim=-1), nn.ReLU()) built in the frame:
    made for real at trace time (its __init__ only stores the constant arguments), called
    like any module, and built again the same way if it escapes the frame."""

    def __init__(self, module, args: list, kwargs: dict):
        super().__init__(module, None)
        self.args = args
        self.kwargs = kwargs

    def reconstruct(self, cg) -> None:
        cg.reconstruct_once(self, self._build)

    def _build(self, cg) -> None:
        cg.add_push_null(lambda: cg.load_const(type(self.value)))
        for a in self.args:
            a.reconstruct(cg)
        if self.kwargs:
            for v in self.kwargs.values():
                v.reconstruct(cg)
            cg.call_kw(len(self.args) + len(self.kwargs), tuple(self.kwargs))
        else:
            cg.call(len(self.args))


def _construct_stateless_module(cls, args: list, kwargs: dict) -> VariableTracker | None:
    try:
        module = cls(
            *[a.as_python_constant() for a in args],
            **{k: v.as_python_constant() for k, v in kwargs.items()},
        )
    except Exception as e:  # eager raises it, for real, after the break
        raise Unsupported(f"{type(e).__name__} constructing a {cls.__name__}") from e
    # a None entry (CrossEntropyLoss's `weight` buffer when none is given) holds no state
    state = [*module._parameters.values(), *module._buffers.values()]
    if module._modules or any(t is not None for t in state):
        return None  # its initial state came from the RNG or inputs: not rebuilt this way
    return InFrameModuleVariable(module, args, kwargs)


def _profiler_contexts() -> tuple:
    import torch.autograd.profiler as autograd_profiler

    return (
        autograd_profiler.profile,
        autograd_profiler.record_function,
        torch.profiler.profile,
        torch.profiler.record_function,
    )


def _autocast_is_a_no_op(args: list, kwargs: dict) -> bool:
    """`torch.autocast(...)` asking for the autocast state already in force on its device
    (`enabled=False` where autocast is off: LLaMA's rotary embedding).  That state is part
    of the frame's global-state guard, and nothing in the trace before changes it."""
    import inspect

    if not all(a.is_python_constant() for a in [*args, *kwargs.values()]):
        return False
    try:
        bound = inspect.signature(torch.autocast.__init__).bind(
            None, *[a.as_python_constant() for a in args],
            **{k: v.as_python_constant() for k, v in kwargs.items()},
        )  # fmt: skip
        bound.apply_defaults()
        device = bound.arguments["device_type"]
        on = torch.is_autocast_enabled(device)
        dtype = torch.get_autocast_dtype(device)
    except (TypeError, RuntimeError):
        return False
    want = bound.arguments["enabled"]
    if type(want) is not bool or want != on:
        return False
    cache = bound.arguments["cache_enabled"]
    return not on or (
        bound.arguments["dtype"] in (None, dtype)
        and cache in (None, torch.is_autocast_cache_enabled())
    )


def construct(tx, cls_vt, args: list, kwargs: dict) -> VariableTracker:
    cls = cls_vt.value
    if cls in _profiler_contexts() or (
        cls is torch.autocast and _autocast_is_a_no_op(args, kwargs)
    ):
        from .objects import NullContextVariable

        return NullContextVariable()
    if cls is weakref.ref:
        from .weakrefs import make_weakref

        return make_weakref(tx, args, kwargs)
    if cls in AUTOCAST_CLASSES:
        return make_autocast(tx, cls, args, kwargs)
    if isinstance(cls, LEGACY_TENSOR_TYPE):
        return construct_legacy(tx, cls, args, kwargs)
    if _is_torch_nn_module_class(cls) and all(
        a.is_python_constant() for a in [*args, *kwargs.values()]
    ):
        found = _construct_stateless_module(cls, args, kwargs)
        if found is not None:
            return found
    if cls in FOLDED_CLASSES and all(a.is_python_constant() for a in [*args, *kwargs.values()]):
        values = {k: v.as_python_constant() for k, v in kwargs.items()}
        make = functools.partial(cls, **values)
        return ConstantVariable(fold(make, *[a.as_python_constant() for a in args]))
    if is_namedtuple_class(cls) and "__new__" not in _own_overrides(cls):
        return _namedtuple(tx, cls, args, kwargs)
    if _is_structseq(cls) and len(args) == 1 and not kwargs:
        items = args[0].unpack(tx)  # torch.return_types.max((values, indices))
        if len(items) != cls.n_sequence_fields or cls.n_fields != cls.n_sequence_fields:
            raise Unsupported(f"{cls.__name__}() of {len(items)} items")
        return TupleVariable(items, namedtuple_cls=cls)
    if isinstance(cls, enum.EnumMeta):
        return _enum_member(cls, args, kwargs)
    if is_args_only_exception(cls) and not kwargs and all(a.is_python_constant() for a in args):
        return ExceptionObjectVariable(cls, list(args))
    if is_python_init_exception(cls) and all(a.is_python_constant() for a in args):
        # BaseException.__new__ keeps the positional args; the class's __init__ is traced
        exc = ExceptionObjectVariable(cls, list(args), python_init=True)
        init = _class_lookup(cls, "__init__")
        source = _class_attr_source(cls_vt, cls, "__init__")
        result = UserFunctionVariable(init, source).call_function(tx, [exc, *args], kwargs)
        if not (result.is_python_constant() and result.as_python_constant() is None):
            raise Unsupported("TypeError: __init__() should return None")
        return exc
    if issubclass(cls, torch.autograd.Function) and not args and not kwargs:
        from .autograd_function import FunctionInstanceVariable

        return FunctionInstanceVariable(cls_vt)
    new = _class_lookup(cls, "__new__")
    if isinstance(new, staticmethod) and isinstance(new.__func__, types.FunctionType):
        # type.__call__: cls.__new__(cls, ...), then __init__ if it made a cls instance
        obj = UserFunctionVariable(new.__func__).call_function(tx, [cls_vt, *args], kwargs)
        made = obj.python_type() if isinstance(obj, UserDefinedObjectVariable) else None
        if made is None and not isinstance(obj, NNModuleVariable):
            raise Unsupported(f"{cls.__name__}.__new__ returned {obj}")
        if made is None or not issubclass(made, cls):
            return obj  # eager skips __init__ too
        return _init(tx, cls_vt, obj, made, args, kwargs)
    set_base = bare_set_subclass(cls)
    if set_base is not None:
        return _new_set_object(tx, cls, set_base, args, kwargs)
    why = _plain_class(cls)
    if why is not None:
        raise Unsupported(f"constructing a {cls.__qualname__} object ({why})")
    return _init(tx, cls_vt, NewObjectVariable(cls), cls, args, kwargs)


# what a class body with nothing in it defines
_EMPTY_BODY = frozenset(
    {"__module__", "__qualname__", "__doc__", "__dict__", "__weakref__", "__firstlineno__",
     "__static_attributes__"}
)  # fmt: skip


def bare_set_subclass(cls) -> type | None:
    """set or frozenset when `cls` subclasses it and defines nothing of its own (`class
    CustomSet(set): pass`): its instances behave as the base's, with its type."""
    for base in (frozenset, set):
        if isinstance(cls, type) and issubclass(cls, base) and cls is not base:
            below = cls.__mro__[: cls.__mro__.index(base)]
            if all(set(klass.__dict__) <= _EMPTY_BODY for klass in below):
                return base
    return None


def _new_set_object(tx, cls, base, args, kwargs) -> VariableTracker:
    from .sets import build_set

    if kwargs or len(args) > 1:
        raise Unsupported(f"TypeError: {cls.__name__} expected at most 1 argument")
    made = build_set(tx, args[0] if args else None, frozen=base is frozenset)
    made.user_cls = cls
    return made


def _init(tx, cls_vt, obj, cls, args: list, kwargs: dict) -> VariableTracker:
    """type.__call__'s second half: `cls.__init__(obj, *args, **kwargs)`, traced."""
    init = _class_lookup(cls, "__init__")
    base_init = slot_method(obj, cls, init, "__init__")
    if base_init is not None:  # dict's or list's own __init__: the contents from the arguments
        base_init.call_function(tx, args, kwargs)
    elif init is object.__init__:
        if args or kwargs:
            raise Unsupported(f"TypeError: {cls.__name__}() takes no arguments")
    elif isinstance(init, types.FunctionType):
        source = _class_attr_source(cls_vt, cls, "__init__") if cls is cls_vt.value else None
        result = UserFunctionVariable(init, source).call_function(tx, [obj, *args], kwargs)
        if not (result.is_python_constant() and result.as_python_constant() is None):
            raise Unsupported("TypeError: __init__() should return None")
    else:
        raise Unsupported(f"{cls.__name__}.__init__ is not a Python function")
    return obj


def _class_attr_source(cls_vt, cls, name):
    """cls.name as a source, when the class has one and defines `name` itself."""
    if cls_vt.source is None or name not in cls.__dict__:
        return None
    return AttrSource(cls_vt.source, name)


def _enum_member(cls, args, kwargs) -> VariableTracker:
    if kwargs or len(args) != 1 or not args[0].is_python_constant():
        raise Unsupported(f"calling the Enum {cls.__name__} with these arguments")
    try:
        member = cls(args[0].as_python_constant())
    except Exception as e:  # eager raises it
        raise Unsupported(f"{type(e).__name__} looking up a {cls.__name__} member") from e
    return ConstantVariable(member)  # the class is identity-guarded: its members are fixed


class NewObjectVariable(UserDefinedObjectVariable):
    """An instance created by the trace: `value` is an empty stand-in of the right class,
    `attrs` its instance __dict__ (filled by traced stores)."""

    made_in_trace = True

    def __init__(self, cls: type):
        base = container_base(cls)
        super().__init__((base or object).__new__(cls), None)
        self.attrs: dict[str, VariableTracker] = {}
        if base is list:  # a list subclass: its contents (list_objects.py)
            self.list_items = new_storage()
        elif base is set:  # a set subclass: its contents (set_objects.py)
            self.set_items = new_set_storage()
        elif base is not None:  # a dict subclass: its contents (dict_objects.py)
            self.dict_items = DictVariable({}, None, user_cls=base)

    def reconstruct(self, cg) -> None:
        cg.reconstruct_once(self, self._build)

    def _build(self, cg) -> None:
        cls = type(self.value)
        slots = {n: slot_member(cls, n) for n in self.attrs if slot_member(cls, n) is not None}
        if slots and container_base(cls) is not None:
            raise Unsupported(f"a {cls.__name__} (a container with __slots__) escaping")
        if slots:  # __slots__ members: set through their descriptors
            cg.add_push_null(lambda: cg.load_const(_rebuild_slotted_object))
            cg.load_const(cls)
            _build_map(cg, {n: v for n, v in self.attrs.items() if n not in slots})
            cg.load_const(tuple(slots.values()))
            for name in slots:
                self.attrs[name].reconstruct(cg)
            cg.build_tuple(len(slots))
            cg.call(4)
            return
        base = container_base(type(self.value))
        if base is list:
            cg.add_push_null(lambda: cg.load_const(rebuild_list_object))
            cg.load_const(type(self.value))
            _build_map(cg, self.attrs)
            self.list_items._build(cg)
            cg.call(3)
            return
        if base is set:
            cg.add_push_null(lambda: cg.load_const(rebuild_set_object))
            cg.load_const(type(self.value))
            _build_map(cg, self.attrs)
            items = self.set_items.ordered()
            for item in items:
                item.reconstruct(cg)
            cg.build_tuple(len(items))
            cg.call(3)
            return
        if base is not None:
            cg.add_push_null(lambda: cg.load_const(rebuild_dict_object))
            cg.load_const(type(self.value))
            cg.load_const(base)
            _build_map(cg, self.attrs)
            _build_map(cg, self.dict_items.items)
            cg.call(4)
            return
        cg.add_push_null(lambda: cg.load_const(_rebuild_object))
        cg.load_const(type(self.value))
        for name, value in self.attrs.items():
            cg.load_const(name)
            value.reconstruct(cg)
        cg.build_map(len(self.attrs))
        cg.call(2)

    def __repr__(self) -> str:
        return f"NewObjectVariable({type(self.value).__name__})"


def _build_map(cg, items: dict) -> None:
    for name, value in items.items():
        cg.load_const(name)
        value.reconstruct(cg)
    cg.build_map(len(items))


def _rebuild_object(cls, attrs):
    obj = object.__new__(cls)
    obj.__dict__.update(attrs)
    return obj


def _rebuild_slotted_object(cls, attrs, members, values):
    obj = object.__new__(cls)
    if attrs:
        obj.__dict__.update(attrs)
    for member, value in zip(members, values, strict=True):
        member.__set__(obj, value)
    return obj


class ObjectNewVariable(VariableTracker):
    """`object.__new__(cls)`, reached from a class's own __new__ (directly or by super()):
    a new instance, as the trace builds one (NewObjectVariable)."""

    def call_function(self, tx, args, kwargs) -> VariableTracker:
        if len(args) != 1 or kwargs or not isinstance(args[0], UserDefinedClassVariable):
            raise Unsupported("object.__new__ with arguments besides the class")
        cls = args[0].value
        why = _plain_class(cls, own_new_traced=True)
        if why is not None:
            raise Unsupported(f"object.__new__({cls.__qualname__}) ({why})")
        return NewObjectVariable(cls)


class ObjectSlotFunction(VariableTracker):
    """`object.__setattr__` / `object.__getattribute__` called with the object first (frozen
    dataclasses' __init__, classes that override __setattr__): the generic store/lookup."""

    def __init__(self, kind: str):
        self.kind = kind

    def call_function(self, tx, args, kwargs) -> VariableTracker:
        from .objects import GetAttrMixin, _ObjectMethod

        if not args or not isinstance(args[0], GetAttrMixin):
            raise Unsupported(f"object.__{self.kind}__ on {args[0] if args else 'nothing'}")
        return _ObjectMethod(args[0], self.kind).call_function(tx, list(args[1:]), kwargs)


OBJECT_SLOTS = {"__setattr__": "setattr", "__getattribute__": "getattr", "__delattr__": "delattr"}


# ------------------------------------------------------------------ dunder protocol
def _python_method(vt: VariableTracker, name: str):
    """The class's Python function `name` for a user object (None: not a user object, or
    the class does not define it in Python)."""
    if not isinstance(vt, UserDefinedObjectVariable):
        return None
    attr = _class_lookup(type(vt.value), name)
    return attr if isinstance(attr, types.FunctionType) else None


def _has_slot(vt, name: str) -> bool:
    return isinstance(vt, UserDefinedObjectVariable) and _class_lookup(
        type(vt.value), name
    ) not in (_MISSING, getattr(object, name, _MISSING))


def _call(tx, fn, self_vt, *args) -> VariableTracker:
    return UserFunctionVariable(fn).call_function(tx, [self_vt, *args], {})


def _is_not_implemented(vt: VariableTracker) -> bool:
    return vt.is_python_constant() and vt.as_python_constant() is NotImplemented


_COMPARE = {
    operator.eq: ("__eq__", "__eq__"),
    operator.ne: ("__ne__", "__ne__"),
    operator.lt: ("__lt__", "__gt__"),
    operator.le: ("__le__", "__ge__"),
    operator.gt: ("__gt__", "__lt__"),
    operator.ge: ("__ge__", "__le__"),
}
_ARITH = {
    operator.add: "add", operator.sub: "sub", operator.mul: "mul", operator.truediv: "truediv",
    operator.floordiv: "floordiv", operator.mod: "mod", operator.pow: "pow",
    operator.matmul: "matmul", operator.and_: "and", operator.or_: "or", operator.xor: "xor",
    operator.lshift: "lshift", operator.rshift: "rshift",
}  # fmt: skip
_INPLACE = {
    operator.iadd: operator.add, operator.isub: operator.sub, operator.imul: operator.mul,
    operator.itruediv: operator.truediv, operator.ifloordiv: operator.floordiv,
    operator.imod: operator.mod, operator.ipow: operator.pow, operator.imatmul: operator.matmul,
    operator.iand: operator.and_, operator.ior: operator.or_, operator.ixor: operator.xor,
}  # fmt: skip


def dunder_binary_op(tx, op, a: VariableTracker, b: VariableTracker) -> VariableTracker | None:
    """`a op b` through the operands' Python dunders; None: neither operand has one."""
    asked = op
    if op is operator.ne and not (_python_method(a, "__ne__") or _python_method(b, "__ne__")):
        eq = dunder_binary_op(tx, operator.eq, a, b)  # object.__ne__ inverts __eq__
        return None if eq is None else ConstantVariable(not eq.truth(tx))
    if op in _INPLACE:
        fn = _python_method(a, f"__i{_ARITH[_INPLACE[op]]}__")
        if fn is not None:
            result = _call(tx, fn, a, b)
            if not _is_not_implemented(result):
                return result
        op = _INPLACE[op]
    if op in _COMPARE:
        forward, reflected = _COMPARE[op]
    elif op in _ARITH:
        forward, reflected = f"__{_ARITH[op]}__", f"__r{_ARITH[op]}__"
    else:
        return None
    fa, fb = _python_method(a, forward), _python_method(b, reflected)
    if fa is None and fb is None:
        return None
    order = [(fa, a, b), (fb, b, a)]
    if fb is not None and _is_proper_subclass(b, a):
        order.reverse()  # a subclass's reflected method goes first
    for fn, x, y in order:
        if fn is not None:
            result = _call(tx, fn, x, y)
            if not _is_not_implemented(result):
                return result
    if op in (operator.eq, operator.ne):
        from .builtins import identity_compare

        return identity_compare(tx, operator.is_ if op is operator.eq else operator.is_not, a, b)
    _declined(asked, a, b)
    raise Unsupported(f"TypeError: {op.__name__} not supported between these objects")


# constant types whose operators decline (NotImplemented) an operand of a plain class
_DECLINING = (int, float, complex, bool, type(None), str, bytes)


def _declined(op, a, b) -> None:
    """Both operands declined `a op b`: eager's TypeError, raised by the operator on
    stand-ins (a bare class named as the user class, the constant itself) when each
    operand is a plain Python object or a constant that cannot take it."""
    stand_ins = []
    for v in (a, b):
        if isinstance(v, UserDefinedObjectVariable) and all(
            k is object or k.__module__ != "builtins" for k in type(v.value).__mro__
        ):
            stand_ins.append(type(type(v.value).__name__, (), {})())
        elif v.is_python_constant() and type(v.as_python_constant()) in _DECLINING:
            stand_ins.append(v.as_python_constant())
        else:
            return
    if op in (operator.mul, operator.imul, operator.mod, operator.imod) and any(
        isinstance(x, (str, bytes)) for x in stand_ins
    ):
        return  # (a sequence repeats by an __index__, a string formats any object)
    fold(op, *stand_ins)


def _is_proper_subclass(b, a) -> bool:
    try:
        tb, ta = b.python_type(), a.python_type()
    except Unsupported:
        return False
    return tb is not ta and issubclass(tb, ta)


def dunder_truth(tx, vt: VariableTracker) -> bool | None:
    fn = _python_method(vt, "__bool__")
    if fn is not None:
        result = _call(tx, fn, vt)
        if not (result.is_python_constant() and type(result.as_python_constant()) is bool):
            raise Unsupported("__bool__ should return bool")
        return result.as_python_constant()
    fn = _python_method(vt, "__len__")
    if fn is not None:
        return _call(tx, fn, vt).as_python_constant() != 0
    if (
        isinstance(vt, UserDefinedObjectVariable)
        and not _has_slot(vt, "__bool__")
        and not (_has_slot(vt, "__len__"))
    ):
        return True  # an object without __bool__/__len__ is true
    return None


def dunder_str(tx, vt: VariableTracker) -> VariableTracker | None:
    """str(obj) through the class's Python __str__ (or its Python __repr__ where __str__ is
    object's); an exception made in the frame through its builtin class's __str__ on its
    constant args.  None: not answered here (object's default repr holds an address)."""
    if not isinstance(vt, UserDefinedObjectVariable):
        return None
    cls = type(vt.value)
    fn = _python_method(vt, "__str__")
    if fn is None and _class_lookup(cls, "__str__") is object.__str__:
        fn = _python_method(vt, "__repr__")
    if fn is not None:
        result = _call(tx, fn, vt)
        if not (result.is_python_constant() and isinstance(result.as_python_constant(), str)):
            raise Unsupported("TypeError: __str__ returned non-string")
        return result
    if isinstance(vt, ExceptionObjectVariable):
        return exception_str(vt)
    if _class_lookup(cls, "__str__") is object.__str__ and (
        _class_lookup(cls, "__repr__") is object.__repr__
    ):
        from .object_ids import DefaultReprVariable

        return DefaultReprVariable(vt, cls)  # "<m.C object at 0x...>": known once it exists
    return None


def dunder_format(tx, vt: VariableTracker, conv: int, spec: str) -> VariableTracker | None:
    """An f-string field of a user object: `{obj!r}` through its Python __repr__, `{obj}` /
    `{obj!s}` as str(obj) where the class leaves __format__ to object (None: otherwise)."""
    if not isinstance(vt, UserDefinedObjectVariable) or spec:
        return None
    if conv == 2:
        fn = _python_method(vt, "__repr__")
        return None if fn is None else _checked_str(_call(tx, fn, vt))
    if conv == 0 and _class_lookup(type(vt.value), "__format__") is not object.__format__:
        return None
    return dunder_str(tx, vt) if conv in (0, 1) else None


def _checked_str(result: VariableTracker) -> VariableTracker:
    if not (result.is_python_constant() and isinstance(result.as_python_constant(), str)):
        raise Unsupported("TypeError: __repr__ returned non-string")
    return result


def dunder_len(tx, vt: VariableTracker) -> VariableTracker | None:
    fn = _python_method(vt, "__len__")
    if fn is None and isinstance(vt, UserDefinedObjectVariable):
        storage = vt._storage_fallback(tx, "__len__")
        if storage is None:
            return None
        from .sets import SetVariable

        held = storage.keys if isinstance(storage, SetVariable) else storage.items
        return ConstantVariable(len(held))
    return None if fn is None else _call(tx, fn, vt)


def dunder_iter(tx, vt: VariableTracker) -> list[VariableTracker] | None:
    fn = _python_method(vt, "__iter__")
    if fn is None:
        return None
    getitem = _python_method(vt, "__getitem__")
    if fn is collections.abc.Sequence.__iter__ and getitem is not None:
        # the mixin's generator: self[0], self[1], ... until __getitem__ raises IndexError
        return call_until(tx, IndexError, lambda i: _call(tx, getitem, vt, ConstantVariable(i)))
    it = _call(tx, fn, vt)
    lazy = user_iterator(it)
    return (lazy or it).unpack(tx)


def user_iterator_of(tx, vt: VariableTracker) -> IteratorVariable | None:
    """`iter(vt)` for a user object whose class defines `__iter__` in Python (None: not
    one); a `__next__` iterator it returns is consumed lazily (UserIteratorVariable)."""
    fn = _python_method(vt, "__iter__")
    if fn is None or fn is collections.abc.Sequence.__iter__:
        return None
    it = _call(tx, fn, vt)
    if isinstance(it, IteratorVariable):
        return it
    return user_iterator(it) or IteratorVariable(it.unpack(tx))


def user_iterator(it: VariableTracker) -> UserIteratorVariable | None:
    """`it` as an iterator whose items are its Python `__next__` calls (None: not one)."""
    next_fn = _python_method(it, "__next__")
    return None if next_fn is None else UserIteratorVariable(it, next_fn)


class UserIteratorVariable(IteratorVariable):
    """A user object with a Python `__next__` (an `__iter__` returning `self`, omegaconf's
    ListIterator): each item is a traced `__next__` call made when the loop asks for it, so
    the iterator's own state changes interleave with the loop body as in eager; its
    StopIteration ends the loop.  It cannot cross a graph break (the break is refused)."""

    pulls_lazily = True

    def __init__(self, obj: VariableTracker, next_fn):
        super().__init__([])
        self.obj = obj
        self.next_fn = next_fn
        self.exhausted = False

    def next(self, tx) -> VariableTracker | None:
        from .exceptions import ObservedException

        if self.exhausted:
            return None
        try:
            item = _call(tx, self.next_fn, self.obj)
        except ObservedException as e:
            if issubclass(e.exc_type, StopIteration):  # from any depth: it ends the loop
                self.exhausted = True
                return None
            raise
        self.items.append(item)
        self.index += 1
        return item

    unpack = IteratorVariable.drain

    def reconstruct_remaining(self, cg) -> None:
        raise Unsupported("a user-defined iterator live across a graph break")

    def reconstruct(self, cg) -> None:
        raise Unsupported("a user-defined iterator escaping the frame")


def dunder_getitem(tx, vt: VariableTracker, index: VariableTracker) -> VariableTracker | None:
    fn = _python_method(vt, "__getitem__")
    return None if fn is None else _call(tx, fn, vt, index)
