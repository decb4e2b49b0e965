"""Sets and frozensets of trackers (BUILD_SET, SET_ADD, SET_UPDATE, set(), the set methods).

Members (and dict keys, containers.py) are keyed as Python would hash them: a constant by its value, anything else
(tensors, user objects, functions) by identity, which is how their default __hash__/__eq__
behave.  A real set of the keys is kept and mutated in program order, so iterating a set
of constants yields eager's order.  Objects whose class defines __hash__/__eq__ in Python
are refused (a graph break), as are sets read from the frame's inputs (no guard covers a
mutable set's contents); frozensets of literals read from inputs are constants.
"""

from __future__ import annotations

import operator
import types

import torch

from ..exc import Unsupported
from .base import ConstantVariable, VariableTracker, fold, is_constant_value
from .exceptions import observed
from .sym_node import specialised
from .value_keys import frozen_dataclass_key, is_value_hashed


class _ById:
    """A set key for a non-constant member: equal only to itself (identity hashing)."""

    __slots__ = ("obj", "vt")

    def __init__(self, vt: VariableTracker):
        self.vt = vt
        self.obj = _identity(vt)

    def __hash__(self) -> int:
        return id(self.obj)

    def __eq__(self, other) -> bool:
        return isinstance(other, _ById) and other.obj is self.obj


class ValueKey(_ById):
    """A key equal to another instance of its class whose compared fields are equal
    (value_keys.py: frozen dataclasses); else, as any object, only to itself."""

    __slots__ = ("cls", "compared", "hashed")

    def __init__(self, vt: VariableTracker, cls: type, hashed: tuple, compared: tuple):
        super().__init__(vt)
        self.cls = cls
        self.hashed = hashed
        self.compared = compared

    def __hash__(self) -> int:
        return hash(self.hashed)

    def __eq__(self, other) -> bool:
        if isinstance(other, ValueKey) and other.cls is self.cls:
            return other.compared == self.compared
        return isinstance(other, _ById) and other.obj is self.obj


def _identity(vt: VariableTracker):
    """The object a tracker's identity is: its real value, its FX node, or the tracker."""
    from .tensor import TensorVariable

    if isinstance(vt, TensorVariable):
        return vt.identity()
    value = getattr(vt, "value", None)
    if value is not None and not is_constant_value(value):
        return value
    return vt


def key_of(vt: VariableTracker, tx=None):
    """The key a set member or dict key is kept under (`tx`: the translator, which a key
    hashed by its fields' values reads them through)."""
    vt = specialised(vt)  # a symbolic int as a key: the number, guarded
    if vt.is_python_constant():
        value = vt.as_python_constant()
        fold(hash, value)  # (an unhashable constant raises TypeError, as eager does)
        return value
    cls = _type_of(vt)
    if cls is not None and cls.__hash__ is None:  # a list, dict, set: eager's TypeError
        raise observed(TypeError, f"unhashable type: {cls.__name__!r}", reason="unhashable")
    if tx is not None and cls is not None and is_value_hashed(cls):
        return frozen_dataclass_key(tx, vt, key_of)
    if cls is not None and not issubclass(cls, torch.Tensor):  # Tensor hashes by identity
        for name in ("__hash__", "__eq__"):
            if isinstance(_class_attr(cls, name), types.FunctionType):
                raise Unsupported(f"set member of {cls.__name__}, which defines {name}")
        if not _compares_by_identity(cls, getattr(vt, "value", None)):
            # (a bound method equals another bound to the same object: keyed by identity,
            # a lookup with the other would miss where Python finds it)
            raise Unsupported(f"set member or dict key of {cls.__name__}, compared by value")
    if getattr(vt, "mutable", False) and not _hashable_mutable(vt):
        raise Unsupported(f"TypeError: unhashable type: {vt}")
    return _ById(vt)


def lookup_key(vt: VariableTracker, tx=None):
    """The key `x in s`, s.remove(x) and s.discard(x) look up: a set (or frozenset) of
    constants is looked up as the frozenset of its members, as CPython retries an
    unhashable set key; any other member as key_of keys it."""
    if isinstance(vt, SetVariable) and vt.fixed_order is None:
        items = vt.ordered()
        if all(m.is_python_constant() for m in items):
            return frozenset(m.as_python_constant() for m in items)
    return key_of(vt, tx)


def _compares_by_identity(cls, value) -> bool:
    if cls.__eq__ is object.__eq__:
        return True
    # a module-level builtin function exists once: it equals only itself
    return cls is types.BuiltinFunctionType and isinstance(
        getattr(value, "__self__", None), (types.ModuleType, type(None))
    )


def _table_size(s) -> int:
    """The bytes of a set's hash table (its memory less its object header, which a
    subclass makes bigger)."""
    return s.__sizeof__() - type(s).__basicsize__


def replay_set(s: set, changes: tuple) -> None:
    """The generated code's replay of a traced set's mutations on the real set."""
    removed, added = changes
    s.difference_update(removed)
    s.update(added)


def tracker_of_key(key) -> VariableTracker:
    """The tracker a set member's or dict key's key stands for."""
    return key.vt if isinstance(key, _ById) else ConstantVariable(key)


def load_key(cg, key) -> None:
    """Push a dict key in rebuilt code: a constant, or the object itself (a tensor key)."""
    if isinstance(key, _ById):
        key.vt.reconstruct(cg)
    else:
        cg.load_const(key)


def _type_of(vt):
    try:
        return vt.python_type()
    except Unsupported:
        return None


def _class_attr(cls, name):
    for klass in cls.__mro__:
        if name in klass.__dict__:
            return klass.__dict__[name]
    return None


def _hashable_mutable(vt) -> bool:
    cls = _type_of(vt)
    return cls is not None and cls not in (list, dict, set) and cls.__hash__ is not None


class SetVariable(VariableTracker):
    mutable = True
    user_cls = None  # a subclass of set/frozenset that adds nothing (user_classes.py)
    # a new object CPython made (frozenset(iterable), a subclass's copy): no other tracker
    # stands for it, so `is` and id() with any other answer False (object_ids.made_here)
    fresh = False

    def __init__(
        self,
        items: list[VariableTracker] = (),
        frozen: bool = False,
        source=None,
        real=None,
        tx=None,
    ):
        self.frozen = frozen
        self.source = source
        self.keys: set = set()
        self.members: dict = {}  # key -> tracker (the first one added, as a set keeps it)
        for item in items:
            self._add(item, tx)
        self.fixed_order = None
        self.initial_keys = None  # a set from the inputs: what it held, for the replay
        if real is not None:
            self._follow(real, items)

    def _follow(self, real, items) -> None:
        """Take a real set's iteration order (its members are guarded at their positions).
        A set of constants is keyed by those very values: a copy of the same table size
        lays them out as the original (checked: same order, same size in memory), and
        later adds land where Python puts them in the original.  Otherwise the order is
        kept as it was and the set cannot be mutated in the trace."""
        order = [key_of(item) for item in items]
        copy = set(real)
        if (
            all(not isinstance(k, _ById) for k in order)
            and list(copy) == order
            and _table_size(copy) == _table_size(real)
        ):
            self.keys = copy
        elif order != list(self.keys):
            self.fixed_order = order
        self.initial_keys = set(self.keys)

    # -------------------------------------------------------------- contents
    def _add(self, item: VariableTracker, tx=None) -> None:
        key = key_of(item, tx)
        if key not in self.keys:
            self.keys.add(key)
            self.members[key] = item

    def _discard(self, item: VariableTracker, tx=None) -> bool:
        key = lookup_key(item, tx)
        if key in self.keys:
            self.keys.discard(key)
            del self.members[key]
            return True
        return False

    def ordered(self) -> list[VariableTracker]:
        return [self.members[k] for k in (self.fixed_order or self.keys)]

    def python_type(self) -> type:
        return self.user_cls or (frozenset if self.frozen else set)

    def as_python_constant(self):
        if not self.frozen or self.user_cls is not None:
            raise Unsupported("a set is not a constant")
        return frozenset(m.as_python_constant() for m in self.ordered())

    def as_proxy(self):
        return self.python_type()(m.as_proxy() for m in self.ordered())

    def has_tensors(self) -> bool:
        return any(m.has_tensors() for m in self.members.values())

    def unpack(self, tx) -> list[VariableTracker]:
        return self.ordered()

    def truth(self, tx) -> bool:
        return bool(self.keys)

    def reconstruct(self, cg) -> None:
        if self.source is not None:
            cg.load_source(self.source)
            return
        cg.reconstruct_once(self, self._build)

    def _build(self, cg) -> None:
        items = self.ordered()
        ctor = self.user_cls or (frozenset if self.frozen else None)
        if ctor is not None:
            cg.add_push_null(lambda: cg.load_const(ctor))
        for m in items:
            m.reconstruct(cg)
        cg.emit("BUILD_SET", len(items))
        if ctor is not None:
            cg.call(1)

    def _mutate(self, tx) -> None:
        if self.frozen:
            raise Unsupported("AttributeError: frozenset is immutable")
        if self.fixed_order is not None:
            raise Unsupported("mutation of a set whose iteration order the trace cannot follow")
        tx.output.side_effects.mutated(self)

    def contains(self, tx, needle: VariableTracker) -> bool:
        return lookup_key(needle, tx) in self.keys

    def var_getattr(self, tx, name: str) -> VariableTracker:
        from .base import BoundBuiltinMethodVariable

        if not hasattr(self.python_type(), name):
            raise Unsupported(f"AttributeError: {self.python_type().__name__} has no {name!r}")
        return BoundBuiltinMethodVariable(self, name)

    # -------------------------------------------------------------- methods
    def replay_changes(self) -> tuple[list, list]:
        """(members removed, members added) since the trace read the real set: replayed
        on it as discards then adds, in the order the trace's copy iterates them."""
        removed = [k for k in self.initial_keys if k not in self.keys]
        added = [k for k in self.keys if k not in self.initial_keys]
        return [tracker_of_key(k) for k in removed], [self.members[k] for k in added]

    def _new(self, items) -> SetVariable:
        return SetVariable(items, frozen=self.frozen)

    def call_method(self, tx, name: str, args: list, kwargs: dict) -> VariableTracker:
        if kwargs:
            raise Unsupported(f"set.{name} with keyword arguments")
        dunder = _DUNDER_OPS.get(name)
        if dunder is not None and len(args) == 1:
            # set.__and__(p, q): the operator, or NotImplemented for a non-set operand
            if not isinstance(args[0], SetVariable):
                return ConstantVariable(NotImplemented)
            return set_binary_op(tx, dunder, self, args[0])
        handler = _METHODS.get(name)
        if handler is None:
            raise Unsupported(f"set.{name}")
        low, high = _ARITY.get(name, (0, None))
        if len(args) < low or (high is not None and len(args) > high):
            # the TypeError eager raises: the real method's own, on an empty set
            fold(getattr(self.python_type()(), name), *[None] * len(args))
            raise Unsupported(f"set.{name} with {len(args)} arguments")
        return handler(self, tx, *args)

    def _other_keys(self, tx, other: VariableTracker) -> dict:
        if isinstance(other, SetVariable):
            return dict(zip(other.keys, (other.members[k] for k in other.keys), strict=True))
        out: dict = {}
        for item in other.unpack(tx):
            out.setdefault(key_of(item, tx), item)
        return out

    def __repr__(self) -> str:
        return f"SetVariable({len(self.keys)} items{', frozen' if self.frozen else ''})"


def _m_add(s: SetVariable, tx, item):
    s._mutate(tx)
    s._add(item, tx)
    return ConstantVariable(None)


def _m_discard(s: SetVariable, tx, item):
    s._mutate(tx)
    s._discard(item, tx)
    return ConstantVariable(None)


def _m_remove(s: SetVariable, tx, item):
    if lookup_key(item, tx) not in s.keys:
        if not item.is_python_constant():
            raise Unsupported("KeyError from set.remove of a non-constant")
        raise observed(KeyError, item.as_python_constant(), reason="KeyError from set.remove")
    return _m_discard(s, tx, item)


def _m_pop(s: SetVariable, tx):
    if not s.keys:
        raise observed(KeyError, "pop from an empty set", reason="set.pop of an empty set")
    s._mutate(tx)
    key = next(iter(s.keys))
    s.keys.discard(key)
    return s.members.pop(key)


def _m_clear(s: SetVariable, tx):
    s._mutate(tx)
    s.keys.clear()
    s.members.clear()
    return ConstantVariable(None)


def _m_update(s: SetVariable, tx, *others):
    s._mutate(tx)
    for other in others:
        for item in s._other_keys(tx, other).values():
            s._add(item)
    return ConstantVariable(None)


def _combine(op):
    """union/intersection/difference/symmetric_difference on the keys, members kept."""

    def handler(s: SetVariable, tx, *others):
        keys = set(s.keys)
        members = dict(s.members)
        for other in others:
            other_members = s._other_keys(tx, other)
            keys = op(keys, set(other_members))
            for k, v in other_members.items():
                members.setdefault(k, v)
        result = s._new([])
        for k in keys:
            result.keys.add(k)
            result.members[k] = members[k]
        return result

    return handler


def _in_place(op_name):
    def handler(s: SetVariable, tx, *others):
        result = _METHODS[op_name](s, tx, *others)
        s._mutate(tx)
        s.keys, s.members = result.keys, result.members
        return ConstantVariable(None)

    return handler


def _predicate(fn):
    def handler(s: SetVariable, tx, other):
        from .lazy_iterators import pull_items, pulls_lazily

        if fn in _STOPS_EARLY and pulls_lazily(other):
            # item by item, as set_isdisjoint/set_issuperset stop at the first that settles it
            want = fn is set.issuperset
            for item in pull_items(tx, other):
                if s.contains(tx, item) is not want:
                    return ConstantVariable(False)
            return ConstantVariable(True)
        return ConstantVariable(fn(s.keys, set(s._other_keys(tx, other))))

    return handler


# predicates that iterate a non-set argument and stop at the first item that decides
_STOPS_EARLY = (set.isdisjoint, set.issuperset)


def _m_copy(s: SetVariable, tx):
    if s.frozen and s.user_cls is None:
        return s  # a frozenset's copy is itself
    copy = s._new(s.ordered())  # (a subclass's copy is of the base type, as set_copy's)
    copy.fresh = True
    return copy


def _m_len(s: SetVariable, tx):
    return ConstantVariable(len(s.keys))


def _m_contains(s: SetVariable, tx, item):
    return ConstantVariable(s.contains(tx, item))


_METHODS = {
    "add": _m_add,
    "discard": _m_discard,
    "remove": _m_remove,
    "pop": _m_pop,
    "clear": _m_clear,
    "update": _m_update,
    "union": _combine(set.union),
    "intersection": _combine(set.intersection),
    "difference": _combine(set.difference),
    "symmetric_difference": _combine(set.symmetric_difference),
    "issubset": _predicate(set.issubset),
    "issuperset": _predicate(set.issuperset),
    "isdisjoint": _predicate(set.isdisjoint),
    "copy": _m_copy,
    "__len__": _m_len,
    "__contains__": _m_contains,
}
# (fewest, most) positional arguments of the methods that do not take any number
_ARITY = {
    **dict.fromkeys(("pop", "clear", "copy", "__len__"), (0, 0)),
    **dict.fromkeys(
        ("add", "discard", "remove", "issubset", "issuperset", "isdisjoint", "__contains__",
         "symmetric_difference", "symmetric_difference_update"),
        (1, 1),
    ),
}  # fmt: skip
_METHODS["intersection_update"] = _in_place("intersection")
_METHODS["difference_update"] = _in_place("difference")
_METHODS["symmetric_difference_update"] = _in_place("symmetric_difference")

_NAMED = {
    operator.or_: "union",
    operator.and_: "intersection",
    operator.sub: "difference",
    operator.xor: "symmetric_difference",
    operator.ior: "union",
    operator.iand: "intersection",
    operator.isub: "difference",
    operator.ixor: "symmetric_difference",
}
_IN_PLACE = {
    operator.ior: "update",
    operator.iand: "intersection_update",
    operator.isub: "difference_update",
    operator.ixor: "symmetric_difference_update",
}
_DUNDER_OPS = {
    f"__{op.__name__.strip('_')}__": op
    for op in (operator.and_, operator.or_, operator.xor, operator.sub, operator.eq,
               operator.ne, operator.lt, operator.le, operator.gt, operator.ge)
}  # fmt: skip
_COMPARE = {operator.eq, operator.ne, operator.le, operator.lt, operator.ge, operator.gt}


def set_binary_op(tx, op, a: SetVariable, b: VariableTracker) -> VariableTracker:
    """`a op b` where a is a set: b must be a set too (else Python raises TypeError)."""
    if op in (operator.is_, operator.is_not):
        # one tracker per real set: identity of trackers (a constant is never a set)
        if not isinstance(b, SetVariable) and not b.is_python_constant():
            raise Unsupported(f"{op.__name__} between a set and {b}")
        return ConstantVariable((a is b) == (op is operator.is_))
    if not isinstance(b, SetVariable):
        if op in (operator.eq, operator.ne):
            return ConstantVariable(op is operator.ne)
        if b.is_python_constant():
            # a constant of a type that does not take sets: eager's TypeError, as the
            # operator raises it on an empty set of a's type (which defines nothing of its own)
            fold(op, a.python_type()(), b.as_python_constant())
        raise Unsupported(f"TypeError: {op.__name__} between a set and {b}")
    if op in _IN_PLACE and not a.frozen:
        a.call_method(tx, _IN_PLACE[op], [b], {})
        return a
    if op in _NAMED:
        return a.call_method(tx, _NAMED[op], [b], {})
    if op in _COMPARE:
        return ConstantVariable(op(a.keys, b.keys))
    raise Unsupported(f"{op.__name__} on sets")


def build_set(tx, iterable: VariableTracker | None, frozen: bool) -> SetVariable:
    if frozen and _exact_frozenset(iterable):
        return iterable  # frozenset(fs) is fs itself, as CPython hands it back
    items = [] if iterable is None else iterable.unpack(tx)
    made = SetVariable(items, frozen=frozen, tx=tx)
    made.fresh = True
    return made


def _exact_frozenset(vt: VariableTracker | None) -> bool:
    if isinstance(vt, SetVariable):
        return vt.frozen and vt.user_cls is None
    return vt is not None and vt.is_python_constant() and type(vt.as_python_constant()) is frozenset
