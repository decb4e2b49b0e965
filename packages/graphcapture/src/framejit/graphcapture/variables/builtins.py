"""Python builtins and operators applied to trackers: one handler per builtin, in a table."""

from __future__ import annotations

import functools
import math
import operator
import sys
import types

import torch

from ..exc import Unsupported
from . import numpy_arrays
from .base import ConcreteValueVariable, ConstantVariable, VariableTracker, fold, is_constant_value
from .class_dicts import ClassDictVariable
from .containers import (
    BaseListVariable,
    DictVariable,
    DictViewVariable,
    IteratorVariable,
    ListVariable,
    SizeVariable,
    SliceVariable,
    TupleVariable,
    contents_repr,
)
from .dict_equality import dicts_equal, plain_dicts
from .functools_models import PartialVariable
from .iterators import zip_items
from .lazy_iterators import (
    lazy_enumerate,
    lazy_filter,
    lazy_map,
    lazy_zip,
    pull_items,
    pulls_lazily,
)
from .numpy_arrays import NdarrayVariable
from .object_ids import ObjectIdVariable, builtin_id, compare_ids
from .objects import InstanceDictVariable
from .sets import SetVariable, build_set, set_binary_op, tracker_of_key
from .sym_builtins import captured_bool, constant_repeat, specialised_arguments
from .sym_builtins import install as _install_symbolic_handlers
from .sym_node import SymNodeVariable, specialised, sym_binary_op
from .tensor import TensorVariable, setitem_tensor  # noqa: F401 (re-exported)
from .typing_models import subscript_class


def _all_const(args, kwargs=None) -> bool:
    return all(a.is_python_constant() for a in args) and all(
        v.is_python_constant() for v in (kwargs or {}).values()
    )


def _consts(args):
    return [a.as_python_constant() for a in args]


def _iterate(tx, vt: VariableTracker) -> list[VariableTracker]:
    return vt.unpack(tx)


# ---------------------------------------------------------------------------- operators


_REPEATED = {ListVariable: ListVariable, TupleVariable: TupleVariable, SizeVariable: SizeVariable}


def _repeat_sequence(tx, op, a, b):
    """`seq * n`, `n * seq` (a new list or tuple) and `lst *= n` (in place, as a list's
    __imul__ is); None when neither side is a sequence repeated by a constant int."""
    if type(b) in _REPEATED and op is operator.mul and type(a) not in _REPEATED:
        a, b = b, a
    if type(a) in _REPEATED:
        b = specialised(b)  # `[0] * n`: a list of n items, n guarded
    if type(a) not in _REPEATED or not b.is_python_constant():
        return None
    n = b.as_python_constant()
    if type(n) not in (int, bool):
        return None
    if op is operator.imul and type(a) is ListVariable:
        a.call_method(tx, "extend", [ListVariable(a.items * (max(n, 1) - 1))], {})
        if n <= 0:
            a.call_method(tx, "clear", [], {})
        return a
    return _REPEATED[type(a)](a.items * n)  # (a named tuple repeated is a plain tuple)


def binary_op(tx, op, a: VariableTracker, b: VariableTracker) -> VariableTracker:
    """`a op b` for any operator in the operator module (in-place forms included)."""
    from .objects import UserDefinedObjectVariable
    from .user_classes import dunder_binary_op

    if isinstance(a, ObjectIdVariable) or isinstance(b, ObjectIdVariable):
        return compare_ids(tx, op, a, b)
    if isinstance(a, UserDefinedObjectVariable) or isinstance(b, UserDefinedObjectVariable):
        result = dunder_binary_op(tx, op, a, b)
        if result is not None:
            return result
        if op in _ON_CONTENTS:
            # a dict or list subclass leaving == (or a list's + and *) to its base: the
            # base's operator on its contents (`l + [x]` is a plain list, as in eager)
            dunder = _ON_CONTENTS[op]
            contents_a, contents_b = _base_contents(tx, a, dunder), _base_contents(tx, b, dunder)
            if contents_a is not None or contents_b is not None:
                return binary_op(tx, op, contents_a or a, contents_b or b)
        if op in _IN_PLACE_ON_CONTENTS:
            contents_a = _base_contents(tx, a, _IN_PLACE_ON_CONTENTS[op])
            if isinstance(contents_a, ListVariable):  # `l += [x]`: extends l, which it returns
                binary_op(tx, op, contents_a, b)
                return a
    if isinstance(a, DictViewVariable) or isinstance(b, DictViewVariable):
        return _view_binary_op(tx, op, a, b)
    if isinstance(a, SetVariable):
        return set_binary_op(tx, op, a, b)
    if isinstance(b, SetVariable) and op in (operator.eq, operator.ne):
        return ConstantVariable(op is operator.ne)
    if op in (operator.is_, operator.is_not):
        return identity_compare(tx, op, a, b)
    if isinstance(a, NdarrayVariable) or isinstance(b, NdarrayVariable):
        return numpy_arrays.binary_op(tx, op, a, b)
    if isinstance(a, TensorVariable) or isinstance(b, TensorVariable):
        if not isinstance(a, TensorVariable):
            # `n += t` with n a Python number: no in-place update, Python runs n + t
            op = _NOT_IN_PLACE.get(op, op)
        return tx.output.call_op("call_function", op, [a, b], {})
    if isinstance(a, SymNodeVariable) or isinstance(b, SymNodeVariable):
        repeated = _repeat_sequence(tx, op, a, b) if op in (operator.mul, operator.imul) else None
        return repeated or constant_repeat(op, a, b) or sym_binary_op(tx, op, a, b)
    a, b = _as_tuple_if_paired(a, b), _as_tuple_if_paired(b, a)
    if op is operator.iadd and isinstance(a, ListVariable):
        a.call_method(tx, "extend", [b], {})
        return a
    if (
        op in (operator.add, operator.iadd)
        and isinstance(a, BaseListVariable)
        and isinstance(b, BaseListVariable)
        and isinstance(a, ListVariable) == isinstance(b, ListVariable)
    ):
        cls = ListVariable if isinstance(a, ListVariable) else TupleVariable
        return cls([*a.items, *b.items])
    if op in (operator.mul, operator.imul):
        repeated = _repeat_sequence(tx, op, a, b)
        if repeated is not None:
            return repeated
    if a.is_python_constant() and b.is_python_constant():
        return wrap_const(fold(op, a.as_python_constant(), b.as_python_constant()))
    if op in (operator.eq, operator.ne) and _sequence_pair(a, b):
        equal = len(a.items) == len(b.items) and all(
            binary_op(tx, operator.eq, x, y).truth(tx)
            for x, y in zip(a.items, b.items, strict=True)
        )
        return ConstantVariable(equal if op is operator.eq else not equal)
    if op in (operator.eq, operator.ne) and plain_dicts(a, b):
        return ConstantVariable(dicts_equal(tx, a, b) == (op is operator.eq))
    if a.has_tensors() or b.has_tensors():
        raise Unsupported(f"{op.__name__} between containers holding tensors")
    if op in (operator.eq, operator.ne, operator.is_, operator.is_not):
        return identity_compare(tx, op, a, b)
    raise Unsupported(f"{op.__name__} on {a} and {b}")


_ON_CONTENTS = {operator.eq: "__eq__", operator.ne: "__ne__", operator.add: "__add__",
                operator.mul: "__mul__", operator.or_: "__or__", operator.and_: "__and__",
                operator.sub: "__sub__", operator.xor: "__xor__"}  # fmt: skip
_IN_PLACE_ON_CONTENTS = {operator.iadd: "__iadd__", operator.imul: "__imul__"}


def _base_contents(tx, vt: VariableTracker, dunder: str):
    fallback = getattr(vt, "_storage_fallback", None)
    return fallback(tx, dunder) if fallback is not None else None


def contains_op(tx, container: VariableTracker, needle: VariableTracker) -> bool:
    """`needle in container`."""
    if isinstance(container, SetVariable):
        return container.contains(tx, needle)
    if isinstance(container, (DictVariable, BaseListVariable, DictViewVariable)):
        return container.call_method(tx, "__contains__", [needle], {}).as_python_constant()
    if isinstance(container, (InstanceDictVariable, ClassDictVariable)):  # `key in obj.__dict__`
        return container.call_method(tx, "__contains__", [needle], {}).as_python_constant()
    if isinstance(container, IteratorVariable):  # pulled until found, as eager stops
        return any(
            binary_op(tx, operator.eq, item, needle).truth(tx) for item in pull_items(tx, container)
        )
    if container.is_python_constant():
        needle = specialised(needle)  # `n in {3, 5}`: the number, guarded
    if container.is_python_constant() and needle.is_python_constant():
        return fold(operator.contains, container.as_python_constant(), needle.as_python_constant())
    method = getattr(container, "call_method", None)
    if method is not None and _has_python_dunder(container, "__contains__"):
        return container.call_method(tx, "__contains__", [needle], {}).truth(tx)
    storage = getattr(container, "_storage_fallback", None)
    storage = storage(tx, "__contains__") if storage is not None else None
    if storage is not None:  # a dict/list subclass leaving `in` to its base
        return contains_op(tx, storage, needle)
    raise Unsupported(f"`in` on {container}")


def _has_python_dunder(vt, name: str) -> bool:
    import types

    try:
        cls = vt.python_type()
    except Unsupported:
        return False
    for klass in cls.__mro__:
        if name in klass.__dict__:
            return isinstance(klass.__dict__[name], types.FunctionType)
    return False


_NOT_IN_PLACE = {
    operator.iadd: operator.add, operator.isub: operator.sub, operator.imul: operator.mul,
    operator.itruediv: operator.truediv, operator.ifloordiv: operator.floordiv,
    operator.imod: operator.mod, operator.ipow: operator.pow, operator.imatmul: operator.matmul,
    operator.iand: operator.and_, operator.ior: operator.or_, operator.ixor: operator.xor,
    operator.ilshift: operator.lshift, operator.irshift: operator.rshift,
}  # fmt: skip


def _view_binary_op(tx, op, a, b) -> VariableTracker:
    """Keys views compare and combine like sets; values/items views only by identity."""
    views = [v for v in (a, b) if isinstance(v, DictViewVariable)]
    if all(v.kind == "keys" for v in views):

        def as_set(v):
            if isinstance(v, DictViewVariable):
                return SetVariable([tracker_of_key(k) for k in v.key_set()])
            if isinstance(v, SetVariable):
                return v
            raise Unsupported(f"{op.__name__} between a keys view and {v}")

        return set_binary_op(tx, op, as_set(a), as_set(b))
    if op in (operator.eq, operator.ne):
        return ConstantVariable((a is b) == (op is operator.eq))
    raise Unsupported(f"{op.__name__} on dict views")


def _as_tuple_if_paired(x, other):
    """A constant tuple beside a tuple of trackers, as a TupleVariable (`() + (a, b)`)."""
    if (
        isinstance(other, TupleVariable)
        and not isinstance(x, BaseListVariable)
        and x.is_python_constant()
        and type(x.as_python_constant()) is tuple
    ):
        return TupleVariable([ConstantVariable(v) for v in x.as_python_constant()])
    return x


def _sequence_pair(a, b) -> bool:
    """Both lists, or both tuples (a tuple never equals a list)."""
    if not (isinstance(a, BaseListVariable) and isinstance(b, BaseListVariable)):
        return False
    return isinstance(a, ListVariable) == isinstance(b, ListVariable)


def identity_compare(tx, op, a, b) -> VariableTracker:
    same = same_object(a, b)
    if same is None:
        raise Unsupported(f"{op.__name__} on {a} and {b}")
    _guard_identity(tx, a, b, same)
    if op in (operator.is_, operator.eq):
        return ConstantVariable(same)
    return ConstantVariable(not same)


def _guard_identity(tx, a, b, same: bool) -> None:
    """Two user objects (or nn.Modules traced for any instance, module_policy.py) read from
    the inputs, of one type (so TYPE_MATCH alone does not tell them apart): the folded
    `is` holds only while they stay (not) the same object."""
    from framejit.guards import GuardKind

    from .objects import NNModuleVariable, UserDefinedObjectVariable

    def by_type(vt) -> bool:
        return isinstance(vt, UserDefinedObjectVariable) or (
            isinstance(vt, NNModuleVariable) and not vt.specialized
        )

    if not (
        by_type(a)
        and by_type(b)
        and a.source is not None
        and b.source is not None
        and type(a.value) is type(b.value)
        and a is not b
    ):
        return
    if same:
        tx.output.add_guard(a.source, GuardKind.TENSOR_ALIASING, b.source, origin=tx.origin())
    else:
        tx.output.add_guard(
            None, GuardKind.NO_TENSOR_ALIASING, (a.source, b.source), origin=tx.origin()
        )


def same_object(a, b) -> bool | None:
    if a is b:
        return True
    if getattr(a, "made_in_trace", False) or getattr(b, "made_in_trace", False):
        return False  # an object the trace made has this one tracker
    if isinstance(a, ConcreteValueVariable) and isinstance(b, ConcreteValueVariable):
        va, vb = a.value, b.value
        if not is_constant_value(va):
            return va is vb
    if isinstance(a, TensorVariable) and isinstance(b, TensorVariable):
        return a.identity() is b.identity()
    if a.is_python_constant() and b.is_python_constant():
        return a.as_python_constant() is b.as_python_constant()
    if (a.is_python_constant() and a.as_python_constant() is None) or (
        b.is_python_constant() and b.as_python_constant() is None
    ):
        return False  # one side is None, the other a tracked non-constant object
    type_a, type_b = _known_type(a), _known_type(b)
    if type_a is not None and type_b is not None and _unrelated(type_a, type_b):
        return False  # no object is an instance of two unrelated classes
    return None


def _known_type(vt) -> type | None:
    """The class the tracked object is an instance of (maybe a base of its exact class)."""
    if isinstance(vt, TensorVariable):
        return torch.Tensor
    try:
        return vt.python_type()
    except Unsupported:
        return None


def _unrelated(a: type, b: type) -> bool:
    return not issubclass(a, b) and not issubclass(b, a)


def unary_op(tx, op, a: VariableTracker) -> VariableTracker:
    if isinstance(a, NdarrayVariable):
        return numpy_arrays.unary_op(tx, op, a)
    if isinstance(a, (TensorVariable, SymNodeVariable)) and op is not operator.not_:
        return tx.output.call_op("call_function", op, [a], {})
    if op is operator.not_:
        return ConstantVariable(not a.truth(tx))
    if a.is_python_constant():
        return wrap_const(fold(op, a.as_python_constant()))
    raise Unsupported(f"{op.__name__} on {a}")


def getitem(tx, obj: VariableTracker, index: VariableTracker) -> VariableTracker:
    if isinstance(obj, TensorVariable):
        return tx.output.call_op("call_function", operator.getitem, [obj, index], {})
    if isinstance(obj, (BaseListVariable, DictVariable)):
        return obj.getitem(tx, index)
    if hasattr(obj, "getitem"):
        return obj.getitem(tx, index)
    if obj.is_python_constant():
        index = specialised(index)  # (1, 2, 3)[n]
    if obj.is_python_constant() and index.is_python_constant():
        return wrap_const(
            fold(operator.getitem, obj.as_python_constant(), index.as_python_constant())
        )
    hint = subscript_class(obj, index)
    if hint is not None:
        return hint
    if _has_python_dunder(obj, "__getitem__"):  # a Mapping written in Python (AttentionInterface)
        return obj.call_method(tx, "__getitem__", [index], {})
    raise Unsupported(f"indexing {obj}")


def wrap_const(value) -> VariableTracker:
    from .builder import wrap_constant_or_unsupported

    return wrap_constant_or_unsupported(value)


# ---------------------------------------------------------------------------- builtins


class BuiltinVariable(ConcreteValueVariable):
    """A Python builtin (len, isinstance, range, min, ...) or a builtin type used as a function."""

    def reconstruct(self, cg) -> None:
        cg.load_const(self.value)

    def call_function(self, tx, args, kwargs) -> VariableTracker:
        handler = BUILTIN_HANDLERS.get(self.value)
        if handler is not None:
            result = handler(tx, *args, **kwargs)
            if result is not None:
                return result
        if self.value in FOLDABLE and (respecified := specialised_arguments(args, kwargs)):
            args, kwargs = respecified  # str(n), hash(n), round(n / 3), math.sqrt(n)
        if self.value in FOLDABLE and _all_const(args, kwargs):
            values = _consts(args)
            kw = {k: v.as_python_constant() for k, v in kwargs.items()}
            return wrap_const(fold(self.value, *values, **kw))
        name = getattr(self.value, "__name__", repr(self.value))
        raise Unsupported(f"call to builtin {name}")

    def var_getattr(self, tx, name: str) -> VariableTracker:
        if isinstance(self.value, type) and hasattr(self.value, name):
            attr = getattr(self.value, name)
            if self.value is dict and name == "fromkeys":
                from .stdlib import ModelledFunctionVariable

                return ModelledFunctionVariable(dict.fromkeys, None)
            if self.value is object and name in ("__setattr__", "__getattribute__"):
                from .user_classes import OBJECT_SLOTS, ObjectSlotFunction

                return ObjectSlotFunction(OBJECT_SLOTS[name])
            if self.value is object and name == "__new__":
                from .user_classes import ObjectNewVariable

                return ObjectNewVariable()
            if name == "__dict__" and is_static_type(self.value):
                return ClassDictVariable(self)  # (a builtin type's namespace never changes)
            if is_constant_value(attr):
                return ConstantVariable(attr)
            return _UnboundBuiltinMethod(self.value, name)
        if is_static_type(self.value):
            # a builtin type gains no attributes: the absence is as fixed as its identity
            # (pytree's `getattr(cls, "_fields", None)` over tuple, list, dict)
            from .exceptions import observed

            raise observed(
                AttributeError,
                f"type object {self.value.__name__!r} has no attribute {name!r}",
                reason=f"attribute {name!r} of builtin {self.value!r}",
            )
        raise Unsupported(f"attribute {name!r} of builtin {self.value!r}")

    def __repr__(self) -> str:
        return f"BuiltinVariable({getattr(self.value, '__name__', self.value)})"


class _UnboundBuiltinMethod(VariableTracker):
    """`list.append`, `dict.get`, `str.join`, ... called with the object first."""

    def __init__(self, cls, name):
        self.cls = cls
        self.name = name

    def call_function(self, tx, args, kwargs) -> VariableTracker:
        from .builtin_bases import slot_method
        from .objects import UserDefinedObjectVariable

        if not args:
            raise Unsupported(f"{self.cls.__name__}.{self.name}() without an object")
        obj = args[0]
        if isinstance(obj, UserDefinedObjectVariable):
            # `dict.__getitem__(obj, k)` is the base's own method, never a subclass override
            cls, method = type(obj.value), getattr(self.cls, self.name)
            bound = slot_method(obj, cls, method, self.name) if issubclass(cls, self.cls) else None
            if bound is not None:
                return bound.call_function(tx, list(args[1:]), kwargs)
            if getattr(cls, self.name, None) is not method:
                raise Unsupported(
                    f"{self.cls.__name__}.{self.name} on a {cls.__name__} that overrides it"
                )
        if self.cls is tuple and isinstance(obj, TupleVariable):
            return obj.tuple_method(tx, self.name, list(args[1:]), kwargs)
        return obj.call_method(tx, self.name, list(args[1:]), kwargs)


FOLDABLE = {
    abs, all, any, bool, chr, complex, divmod, float, format, hash, int, len, max, min, ord, pow,
    repr, round, str, sum, sys.intern,
    # every function of math is pure: on constant arguments it folds
    *(f for f in vars(math).values() if isinstance(f, types.BuiltinFunctionType)),
}  # fmt: skip


def _len(tx, obj):
    if isinstance(obj, (BaseListVariable, DictVariable)):
        return ConstantVariable(len(obj.items))
    if isinstance(obj, SetVariable):
        return ConstantVariable(len(obj.keys))
    if isinstance(obj, DictViewVariable):
        return ConstantVariable(len(obj.dict_vt.items))
    if isinstance(obj, ClassDictVariable):
        return obj.length(tx)
    from .user_classes import dunder_len

    result = dunder_len(tx, obj)
    if result is not None:
        return result
    if isinstance(obj, TensorVariable):
        if obj.example.dim() == 0:
            raise Unsupported("TypeError: len() of a 0-d tensor")
        return obj.size_items(tx.output)[0]
    if isinstance(obj, NdarrayVariable):
        if obj.example.dim() == 0:
            raise Unsupported("TypeError: len() of a 0-d array or a numpy scalar")
        return obj.var_getattr(tx, "shape").items[0]
    from .objects import NNModuleVariable

    if isinstance(obj, NNModuleVariable):
        if type(obj.value).__len__ in _MODULE_CONTAINER_LEN:  # len(self._modules)
            return ConstantVariable(len(obj.table(tx, "_modules")))
        if not obj.specialized:
            raise Unsupported(f"len() of a {type(obj.value).__name__} traced for any instance")
        return ConstantVariable(len(obj.value))
    if obj.is_python_constant():
        return ConstantVariable(fold(len, obj.as_python_constant()))
    raise Unsupported(f"len() of {obj}")


_MODULE_CONTAINER_LEN = {
    c.__len__ for c in (torch.nn.Sequential, torch.nn.ModuleList, torch.nn.ModuleDict)
}


def _isinstance(tx, obj, classes):
    from .instance_checks import is_instance

    return ConstantVariable(is_instance(tx, obj, classes.as_python_constant(), classes))


def isinstance_of_type(t: type, cls) -> bool:
    return issubclass(t, cls)


def _issubclass(tx, a, b):
    return ConstantVariable(fold(issubclass, a.as_python_constant(), b.as_python_constant()))


def _type(tx, obj):
    from framejit.guards import TypeSource

    from .builder import wrap
    from .objects import UserDefinedObjectVariable

    # a user object's class read through `type(src)`: what is read off the class is guarded
    source = None
    if isinstance(obj, UserDefinedObjectVariable) and obj.source is not None:
        source = TypeSource(obj.source)
    return wrap(tx, obj.python_type(), source)


def _range(tx, *args):
    return ConstantVariable(fold(range, *_consts(args)))


def _enumerate(tx, iterable, start=None):
    first = start.as_python_constant() if start is not None else 0
    if pulls_lazily(iterable):
        return lazy_enumerate(tx, iterable, first)
    items = _iterate(tx, iterable)
    return IteratorVariable(
        [TupleVariable([ConstantVariable(first + i), v]) for i, v in enumerate(items)], enumerate
    )


def _zip(tx, *iterables, strict=None):
    if any(pulls_lazily(it) for it in iterables):
        if strict is not None and strict.truth(tx):
            raise Unsupported("zip(strict=True) over a generator")
        return lazy_zip(tx, list(iterables))
    lists = zip_items(tx, list(iterables)) if iterables else []
    if strict is not None and strict.as_python_constant() and len({len(x) for x in lists}) > 1:
        raise Unsupported("ValueError: zip() arguments of different lengths")
    return IteratorVariable(
        [TupleVariable(list(group)) for group in zip(*lists, strict=False)], zip
    )


def _reversed(tx, obj):
    return IteratorVariable(list(reversed(_iterate(tx, obj))))


def _iter(tx, obj):
    if isinstance(obj, IteratorVariable):
        return obj
    return IteratorVariable(_iterate(tx, obj))


def _next(tx, it, default=None):
    if isinstance(it, IteratorVariable):
        item = it.next(tx)
        if item is None:
            if default is not None:
                return default
            raise it.stop_iteration()
        return item
    raise Unsupported(f"next() on {it}")


def _list(tx, obj=None):
    return ListVariable([] if obj is None else _iterate(tx, obj))


def _tuple(tx, obj=None):
    if obj is None:
        return TupleVariable([])
    if (
        isinstance(obj, TupleVariable)
        and obj.namedtuple_cls is None
        and not isinstance(obj, SizeVariable)
    ):
        return obj
    return TupleVariable(_iterate(tx, obj))


def _dict(tx, obj=None, **kwargs):
    items: dict = {}
    if obj is not None:
        if isinstance(obj, ClassDictVariable):
            obj = obj.snapshot(tx)
        if isinstance(obj, DictVariable):
            items.update(obj.items)
        else:
            for pair in _iterate(tx, obj):
                k, v = pair.unpack(tx)
                items[k.as_python_constant()] = v
    items.update(kwargs)
    return DictVariable(items)


def _scalar_minmax_operands(x, y) -> bool:
    """max(x, y)/min(x, y) on one-element tensors (and a number) whose answer a tensor op can
    give exactly: tensors of one shape and dtype; a number that keeps the tensor's dtype."""
    tensors = [v for v in (x, y) if isinstance(v, TensorVariable)]
    examples = [t.example for t in tensors]
    if any(getattr(t, "dynamic", False) for t in tensors) or any(e.numel() != 1 for e in examples):
        return False
    if len({(tuple(e.shape), e.dtype) for e in examples}) != 1:
        return False
    others = [v for v in (x, y) if not isinstance(v, TensorVariable)]
    if not others:
        return True
    if not others[0].is_python_constant():
        return False
    number = others[0].as_python_constant()
    if examples[0].dtype.is_floating_point:
        return type(number) in (int, float)
    return type(number) is int and examples[0].dtype not in (torch.bool, torch.uint8)


def _tensor_minmax(tx, fn, x, y) -> VariableTracker:
    """Python's own rule, `y if y > x else x` for max (`<` for min), as torch.where: the
    same value in every case, NaN included; a winning number comes back as a tensor."""
    compare = operator.gt if fn is max else operator.lt
    cond = tx.output.call_op("call_function", compare, [y, x], {})
    return tx.output.call_op("call_function", torch.where, [cond, y, x], {})


def _minmax(fn):
    def handler(tx, *args, **kwargs):
        if kwargs:
            return None
        values = _iterate(tx, args[0]) if len(args) == 1 else list(args)
        if any(isinstance(v, TensorVariable) for v in values):
            if len(args) == 2 and _scalar_minmax_operands(*args):
                return _tensor_minmax(tx, fn, *args)
            # max(a, b) compares with bool(a > b): data-dependent, and returns a or b itself
            raise Unsupported(f"data-dependent: {fn.__name__}() over tensors")
        if all(v.is_python_constant() for v in values):
            return wrap_const(fold(fn, _consts(values)))
        return None

    return handler


def _sum(tx, iterable, start=None):
    values = _iterate(tx, iterable)
    if all(v.is_python_constant() for v in values) and (
        start is None or start.is_python_constant()
    ):
        return wrap_const(fold(sum, _consts(values), start.as_python_constant() if start else 0))
    total = start if start is not None else ConstantVariable(0)
    for v in values:
        total = binary_op(tx, operator.add, total, v)
    return total


def _abs(tx, x):
    if isinstance(x, TensorVariable):
        return tx.output.call_op("call_function", torch.abs, [x], {})
    return None


def _number(fn):
    def handler(tx, *args, **kwargs):
        if args and isinstance(args[0], TensorVariable):
            if len(args) == 1 and not kwargs and tx.output.fullgraph:
                return _number_of_item(tx, fn, args[0])
            raise Unsupported(f"data-dependent: {fn.__name__}() of a Tensor")
        return None

    return handler


def _number_of_item(tx, fn, tensor):
    """float(t) / int(t) of a one-element tensor in a fullgraph trace: t.item() captured
    (as torch.compile captures scalar outputs), converted as eager converts the number."""
    from .tensor import captured_item

    dtype = tensor.example.dtype
    if dtype.is_complex or dtype is torch.bool or (fn is int and dtype.is_floating_point):
        raise Unsupported(f"data-dependent: {fn.__name__}() of a {dtype} Tensor")
    item = captured_item(tx, tensor)
    if fn is float and not dtype.is_floating_point:
        return tx.output.call_op("call_function", torch.sym_float, [item], {})
    return item


def _bool(tx, x=None):
    if x is None:
        return ConstantVariable(False)
    if isinstance(x, TensorVariable) and tx.output.fullgraph:
        # bool(t) of a one-element tensor: its item captured, as float(t) / int(t) are
        from .tensor import captured_item

        return captured_bool(tx, captured_item(tx, x))
    return ConstantVariable(x.truth(tx))


def _getattr(tx, obj, name, default=None):
    attr = name.as_python_constant()
    if default is None:
        return obj.var_getattr(tx, attr)
    if tx.output.side_effects.is_deleted(obj, attr):
        return default
    try:
        return obj.var_getattr(tx, attr)
    except Unsupported as e:
        raised = getattr(e, "exc_type", None)  # (an exception the traced lookup raised)
        if raised is not None and not issubclass(raised, AttributeError):
            raise
        if raised is not None or "AttributeError" in e.reason or "has no attribute" in e.reason:
            _guard_absent(tx, obj, attr)
            return default
        raise


def _hasattr(tx, obj, name):
    attr = name.as_python_constant()
    if tx.output.side_effects.is_deleted(obj, attr):
        return ConstantVariable(False)  # (no class attribute of that name: attr_delete.py)
    known = getattr(obj, "has_attribute", None)
    answer = known(attr) if known is not None else None
    if answer is not None:
        return ConstantVariable(answer)
    try:
        obj.var_getattr(tx, attr)
        return ConstantVariable(True)
    except Unsupported as e:
        raised = getattr(e, "exc_type", None)  # (an exception the traced lookup raised)
        if raised is not None and not issubclass(raised, AttributeError):
            raise
        if raised is not None or "AttributeError" in e.reason or "has no attribute" in e.reason:
            _guard_absent(tx, obj, attr)
            return ConstantVariable(False)
        raise


# instances that cannot gain attributes: their type decides hasattr (`hasattr(None, "x")`)
_NO_INSTANCE_ATTRS = frozenset(
    {type(None), bool, int, float, complex, str, bytes, tuple, frozenset}
)


_Py_TPFLAGS_HEAPTYPE = 1 << 9


def is_static_type(value) -> bool:
    """A type defined in C (tuple, dict, torch.Size): it cannot gain attributes."""
    return isinstance(value, type) and not value.__flags__ & _Py_TPFLAGS_HEAPTYPE


def _guard_absent(tx, obj, attr: str) -> None:
    """hasattr() False / getattr()'s default: the attribute must still be missing (an
    attribute or a buffer added later changes the answer).  Present attributes are guarded
    by their value's own guards."""
    source = getattr(obj, "source", None)
    if source is None:
        from .base import ConcreteValueVariable

        if (
            isinstance(obj, ConcreteValueVariable)
            and not getattr(obj, "mutable", False)
            and type(obj.value) not in _NO_INSTANCE_ATTRS
            and not is_static_type(obj.value)
        ):
            raise Unsupported(f"hasattr/getattr default on {obj}, which cannot be guarded")
        return  # a tensor, container or object made by the trace: its type decides
    from framejit.guards import GuardKind

    from ..sources import AttrSource

    tx.output.add_guard(AttrSource(source, attr), GuardKind.HASATTR, False, origin=tx.origin())


def _setattr(tx, obj, name, value):
    tx.store_attr(obj, name.as_python_constant(), value)
    return ConstantVariable(None)


def _delattr(tx, obj, name):
    from .attr_delete import delete_attr

    return delete_attr(tx, obj, name.as_python_constant())


def _callable(tx, obj):
    from .functions import BaseUserFunctionVariable, UserMethodVariable
    from .objects import NNModuleVariable, TorchFunctionVariable

    if isinstance(
        obj,
        (
            BaseUserFunctionVariable,
            UserMethodVariable,
            TorchFunctionVariable,
            BuiltinVariable,
            NNModuleVariable,
        ),
    ):
        return ConstantVariable(True)
    if isinstance(obj, PartialVariable):
        return ConstantVariable(True)
    from .objects import UserDefinedObjectVariable

    if isinstance(obj, UserDefinedObjectVariable):
        return ConstantVariable(callable(obj.value))  # decided by the (guarded) class
    if obj.is_python_constant():
        return ConstantVariable(callable(obj.as_python_constant()))
    try:
        cls = obj.python_type()
    except (NotImplementedError, Unsupported):
        return None
    # callable() asks the type for __call__; a tracker's type is its value's (guarded) type
    return ConstantVariable(any("__call__" in vars(c) for c in cls.__mro__))


def _slice(tx, *args):
    parts = list(args) + [ConstantVariable(None)] * (3 - len(args))
    if len(args) == 1:
        parts = [ConstantVariable(None), args[0], ConstantVariable(None)]
    return SliceVariable(*parts)


def _map(tx, fn, *iterables):
    if any(pulls_lazily(it) for it in iterables):
        return lazy_map(tx, fn, list(iterables))
    lists = [_iterate(tx, it) for it in iterables]
    return IteratorVariable(
        [fn.call_function(tx, list(group), {}) for group in zip(*lists, strict=False)], map
    )


def _filter(tx, fn, iterable):
    if pulls_lazily(iterable):
        return lazy_filter(tx, fn, iterable)
    out = []
    for item in _iterate(tx, iterable):
        keep = (
            item
            if fn.is_python_constant() and fn.as_python_constant() is None
            else fn.call_function(tx, [item], {})
        )
        if keep.truth(tx):
            out.append(item)
    return IteratorVariable(out, filter)


def _sorted(tx, iterable, **kwargs):
    return ListVariable(sort_items(tx, _iterate(tx, iterable), kwargs))


def sort_items(tx, items: list, kwargs: dict) -> list:
    """sorted(items, key=..., reverse=...) over trackers: the key function is traced once
    per item in order, as Python calls it, and the items (tensors, modules, anything) are
    put in the order of their keys, which must be constants; stable, as Python's sort."""
    if set(kwargs) - {"key", "reverse"}:
        raise Unsupported(f"sorted() with {sorted(kwargs)}")
    key_fn = kwargs.get("key")
    if key_fn is not None and key_fn.is_python_constant() and key_fn.as_python_constant() is None:
        key_fn = None
    reverse = kwargs.get("reverse", ConstantVariable(False))
    if not reverse.is_python_constant():
        raise Unsupported("sorted() with a non-constant reverse")
    keys = [item if key_fn is None else key_fn.call_function(tx, [item], {}) for item in items]
    if not all(k.is_python_constant() for k in keys):
        raise Unsupported("sorted() by non-constant keys")
    values = [k.as_python_constant() for k in keys]
    rev = reverse.as_python_constant()
    order = fold(lambda: sorted(range(len(items)), key=values.__getitem__, reverse=rev))
    return [items[i] for i in order]


def _any_all(fn):
    def handler(tx, iterable):
        # item by item: any() stops at the first true one, all() at the first false one
        stop_at = fn is any
        for v in pull_items(tx, iterable):
            if v.truth(tx) is stop_at:
                return ConstantVariable(stop_at)
        return ConstantVariable(not stop_at)

    return handler


def _print(tx, *args, **kwargs):
    raise Unsupported("call to print (I/O)")


def _partial(tx, fn, *args, **kwargs):
    return PartialVariable(fn, list(args), kwargs)


def _super(tx, *args):
    return tx.make_super(args)


def _str(tx, obj=None):
    if obj is None:
        return ConstantVariable("")
    obj = specialised(obj)
    if obj.is_python_constant():
        return ConstantVariable(fold(str, obj.as_python_constant()))
    from .user_classes import dunder_str

    result = dunder_str(tx, obj)
    if result is not None:
        return result
    text = contents_repr(obj)  # (a list, tuple, dict or set: str is its repr)
    if text is not None:
        return ConstantVariable(text)
    raise Unsupported(f"str() of {obj}")


def _repr(tx, obj):
    obj = specialised(obj)
    if obj.is_python_constant():
        return ConstantVariable(fold(repr, obj.as_python_constant()))
    from .user_classes import dunder_format

    result = dunder_format(tx, obj, 2, "")
    if result is not None:
        return result
    text = contents_repr(obj)
    if text is not None:
        return ConstantVariable(text)
    raise Unsupported(f"repr() of {obj}")


def _locals(tx):
    """`locals()` (and `vars()` without an argument): a fresh dict of the frame's bound names,
    in CPython's order (fast locals, then cells, then free variables)."""
    from ..exc import SkipFrame
    from ..resume import is_internal_local

    code = tx.code
    cells = (*code.co_cellvars, *code.co_freevars)
    items = {}
    try:
        for name in dict.fromkeys((*code.co_varnames, *cells)):
            if is_internal_local(name):
                continue
            if name in cells:
                cell = tx.cells.get(name)
                if cell is None and hasattr(tx, "free_var_cell"):
                    cell = tx.free_var_cell(name)
                if cell is None:
                    raise Unsupported(f"locals() over the closure variable {name!r}")
                if cell.contents is not None or cell.real_cell is None:
                    value = cell.contents
                else:
                    value = cell.load(tx)
                if value is not None:
                    items[name] = value
            elif name in tx.symbolic_locals:
                items[name] = tx.symbolic_locals[name]
    except Unsupported as exc:
        if tx.parent is None:
            # a break would run locals() in the rebuilt frame, which lacks the dead names
            raise SkipFrame(f"locals() in the compiled frame: {exc}") from None
        raise
    return DictVariable(items)


def _vars(tx, *args):
    if not args:
        return _locals(tx)
    if len(args) == 1 and isinstance(getattr(args[0], "value", None), type):
        return args[0].var_getattr(tx, "__dict__")  # a class's namespace
    return None


def _set(frozen: bool):
    def handler(tx, iterable=None):
        return build_set(tx, iterable, frozen)

    return handler


BUILTIN_HANDLERS = {
    len: _len,
    isinstance: _isinstance,
    issubclass: _issubclass,
    type: _type,
    range: _range,
    enumerate: _enumerate,
    zip: _zip,
    reversed: _reversed,
    iter: _iter,
    next: _next,
    list: _list,
    tuple: _tuple,
    dict: _dict,
    min: _minmax(min),
    max: _minmax(max),
    sum: _sum,
    abs: _abs,
    int: _number(int),
    float: _number(float),
    bool: _bool,
    getattr: _getattr,
    hasattr: _hasattr,
    setattr: _setattr,
    delattr: _delattr,
    callable: _callable,
    slice: _slice,
    map: _map,
    filter: _filter,
    sorted: _sorted,
    any: _any_all(any),
    all: _any_all(all),
    print: _print,
    id: builtin_id,
    functools.partial: _partial,
    super: _super,
    str: _str,
    repr: _repr,
    set: _set(False),
    frozenset: _set(True),
    locals: _locals,
    vars: _vars,
}
from .stdlib_ops import OPERATOR_HANDLERS  # noqa: E402  (it builds on the operators above)

BUILTIN_HANDLERS.update(OPERATOR_HANDLERS)
from .sys_models import SYS_HANDLERS  # noqa: E402

BUILTIN_HANDLERS.update(SYS_HANDLERS)
_install_symbolic_handlers(BUILTIN_HANDLERS)
