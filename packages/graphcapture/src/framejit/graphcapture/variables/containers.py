"""Tuples, lists, dicts, slices, ranges and iterators of variable trackers."""

from __future__ import annotations

import collections
import collections.abc
import inspect
import operator

import torch

from ..exc import Unsupported
from .base import (
    BoundBuiltinMethodVariable,
    ConstantVariable,
    VariableTracker,
    fold,
    is_constant_value,
)
from .exceptions import observed
from .sets import _ById, key_of, load_key, tracker_of_key
from .sym_node import SymNodeVariable


def _const_index(tx, index: VariableTracker):
    if isinstance(index, SliceVariable) or index.is_python_constant():
        return index.as_python_constant()
    if isinstance(index, SymNodeVariable) and index.python_type() is int:
        return index.as_python_constant()  # specialised: the ShapeEnv guards its value
    constant = _constant_tensor_index(index)
    if constant is not None:
        return constant
    raise Unsupported(f"container index {index} is not a constant")


def _constant_tensor_index(index: VariableTracker) -> int | None:
    """A one-element integer tensor whose value the trace knows (`torch.tensor(1)` made in
    the frame: the fake tensor carries it, and drops it when the tensor is mutated), as
    `operator.index` reads it."""
    from .tensor import TensorVariable

    if not isinstance(index, TensorVariable):
        return None
    constant = getattr(index.example, "constant", None)
    if constant is None or constant.numel() != 1:
        return None
    if constant.dtype.is_floating_point or constant.dtype.is_complex:
        return None  # eager's TypeError
    return int(constant.item())


def _specialised(vt: VariableTracker) -> VariableTracker:
    """A symbolic int where Python needs the number: its value, guarded by the ShapeEnv."""
    if isinstance(vt, SymNodeVariable) and vt.python_type() is int:
        return ConstantVariable(vt.as_python_constant())
    return vt


class BaseListVariable(VariableTracker):
    def __init__(self, items: list[VariableTracker], source=None):
        self.items = list(items)
        self.source = source

    def python_type(self) -> type:
        return tuple

    def is_python_constant(self) -> bool:
        # asked item by item: a symbolic size inside must not be specialised by a probe
        if not all(i.is_python_constant() for i in self.items):
            return False
        return super().is_python_constant()

    def as_python_constant(self):
        return self.python_type()(i.as_python_constant() for i in self.items)

    def as_proxy(self):
        return self.python_type()(i.as_proxy() for i in self.items)

    def as_example(self):
        return self.python_type()(i.as_example() for i in self.items)

    def has_tensors(self) -> bool:
        return any(i.has_tensors() for i in self.items)

    def unpack(self, tx) -> list[VariableTracker]:
        return list(self.items)

    def truth(self, tx) -> bool:
        return bool(self.items)

    def getitem(self, tx, index: VariableTracker) -> VariableTracker:
        key = _const_index(tx, index)
        if isinstance(key, slice):
            return (
                type(self)(self.items[key])
                if type(self) is not SizeVariable
                else SizeVariable(self.items[key])
            )
        try:
            return self.items[key]
        except (IndexError, TypeError):
            # eager's error, as a list or tuple of this length raises it
            stand_in = [None] * len(self.items)
            if not isinstance(self, ListVariable):
                stand_in = tuple(stand_in)
            fold(operator.getitem, stand_in, key)
            raise Unsupported(f"index {key!r} out of range") from None

    def call_method(self, tx, name: str, args: list, kwargs: dict) -> VariableTracker:
        if name == "__getitem__":
            return self.getitem(tx, args[0])
        if name == "__len__":
            return ConstantVariable(len(self.items))
        if name in ("index", "count"):
            args = [_specialised(a) for a in args]
        if name in ("index", "count") and all(a.is_python_constant() for a in args):
            # the items as they are now (a list is never a constant, its current items may be)
            consts = tuple(i.as_python_constant() for i in self.items)
            return ConstantVariable(
                fold(getattr(consts, name), *[a.as_python_constant() for a in args])
            )
        if name == "__contains__":
            return contains(tx, self.items, args[0])
        raise Unsupported(f"{self.python_type().__name__}.{name}")

    def var_getattr(self, tx, name: str) -> VariableTracker:
        if name == "__class__":
            return class_of(tx, self)
        cls = self.python_type()
        if not hasattr(cls, name):  # (list and tuple instances have no __dict__ of their own)
            raise Unsupported(f"AttributeError: {cls.__name__!r} object has no attribute {name!r}")
        return BoundBuiltinMethodVariable(self, name)


def class_of(tx, vt: VariableTracker) -> VariableTracker:
    """`obj.__class__` of a container: its exact type, fixed by the TYPE_MATCH guard of an
    input or by the trace that made it (as `type(obj)`)."""
    from .builtins import _type

    return _type(tx, vt)


def contains(tx, items: list[VariableTracker], needle: VariableTracker) -> VariableTracker:
    """`needle in seq` as list/tuple do it: each item in turn, `item is needle or
    item == needle`, stopping at the first true one (a user __eq__ runs as in eager; an
    answer that needs a tensor's value is a graph break)."""
    from .builtins import binary_op, same_object

    if needle.is_python_constant() and all(i.is_python_constant() for i in items):
        value = needle.as_python_constant()
        return ConstantVariable(any(i.as_python_constant() == value for i in items))
    for item in items:
        if same_object(item, needle) is True:
            return ConstantVariable(True)
        if binary_op(tx, operator.eq, item, needle).truth(tx):
            return ConstantVariable(True)
    return ConstantVariable(False)


def _with_instance_attrs(obj, attrs: dict):
    obj.__dict__.update(attrs)
    return obj


class TupleVariable(BaseListVariable):
    def __init__(self, items, source=None, namedtuple_cls=None):
        super().__init__(items, source)
        self.namedtuple_cls = namedtuple_cls
        self.attrs: dict[str, VariableTracker] = {}  # instance attributes (made in the trace)

    def store_attr(self, tx, name: str, value: VariableTracker) -> None:
        """`tup.c = v` on a named tuple whose class gives instances a __dict__ (a subclass
        without __slots__): recorded (replayed on an input), or kept for the rebuild."""
        cls = self.namedtuple_cls
        if cls is None or not cls.__dictoffset__ or cls.__setattr__ is not object.__setattr__:
            raise Unsupported(f"attribute store on a {self.python_type().__name__}")
        attr = inspect.getattr_static(cls, name, None)
        if attr is not None and hasattr(type(attr), "__set__"):
            raise Unsupported(f"store to {cls.__name__}.{name} through a descriptor")
        if self.source is None:
            self.attrs[name] = value
            return
        tx.output.side_effects.store_attr(self, name, value)

    def python_type(self) -> type:
        return self.namedtuple_cls or tuple

    def as_python_constant(self):
        values = tuple(i.as_python_constant() for i in self.items)
        if self.namedtuple_cls is not None:
            return _build_namedtuple(self.namedtuple_cls, values)
        return values

    def as_proxy(self):
        return tuple(i.as_proxy() for i in self.items)

    def as_example(self):
        values = tuple(i.as_example() for i in self.items)
        if self.namedtuple_cls is not None:
            return _build_namedtuple(self.namedtuple_cls, values)
        return values

    def reconstruct(self, cg) -> None:
        if self.source is not None:
            cg.load_source(self.source)
            return
        if self.namedtuple_cls is not None:

            def load_maker() -> None:
                cg.load_const(self.namedtuple_cls)
                if hasattr(self.namedtuple_cls, "_make"):
                    cg.load_attr("_make")

            if self.attrs:
                cg.add_push_null(lambda: cg.load_const(_with_instance_attrs))
            cg.add_push_null(load_maker)
            for item in self.items:
                item.reconstruct(cg)
            cg.build_tuple(len(self.items))
            cg.call(1)
            if self.attrs:
                for name, value in self.attrs.items():
                    cg.load_const(name)
                    value.reconstruct(cg)
                cg.build_map(len(self.attrs))
                cg.call(2)
            return
        for item in self.items:
            item.reconstruct(cg)
        cg.build_tuple(len(self.items))

    def var_getattr(self, tx, name: str) -> VariableTracker:
        stored = self.attrs.get(name) or tx.output.side_effects.pending_attr(self, name)
        if stored is not None:
            return stored
        if self.namedtuple_cls is not None:
            fields = getattr(self.namedtuple_cls, "_fields", None) or getattr(
                self.namedtuple_cls, "__match_args__", ()
            )
            if name in fields:
                return self.items[list(fields).index(name)]
            method = self._class_method(tx, name)
            if method is not None:
                return method
        return super().var_getattr(tx, name)

    def getitem(self, tx, index: VariableTracker) -> VariableTracker:
        if self.namedtuple_cls is not None:  # the named tuple's own __getitem__, traced
            method = self._class_method(tx, "__getitem__")
            if method is not None:
                return method.call_function(tx, [index], {})
        return super().getitem(tx, index)

    def tuple_method(self, tx, name: str, args: list, kwargs: dict) -> VariableTracker:
        """`tuple.<name>(self, ...)`: tuple's own method, past the named tuple's class."""
        if name == "__getitem__" and len(args) == 1 and not kwargs:
            return BaseListVariable.getitem(self, tx, args[0])
        return BaseListVariable.call_method(self, tx, name, args, kwargs)

    def unpack(self, tx) -> list[VariableTracker]:
        if self.namedtuple_cls is not None and self._class_method(tx, "__iter__") is not None:
            raise Unsupported(f"iteration over a {self.namedtuple_cls.__name__} (own __iter__)")
        return super().unpack(tx)

    def call_method(self, tx, name: str, args: list, kwargs: dict) -> VariableTracker:
        if self.namedtuple_cls is not None:
            method = self._class_method(tx, name)
            if method is not None:
                return method.call_function(tx, args, kwargs)
        return super().call_method(tx, name, args, kwargs)

    def _class_method(self, tx, name: str) -> VariableTracker | None:
        """A method, staticmethod, classmethod or property the named tuple's class (or a
        base above tuple) defines in Python, bound to this tuple; None for tuple's own."""
        import types

        from .functions import UserFunctionVariable, UserMethodVariable
        from .objects import UserDefinedClassVariable, _guard_class_attr

        cls = self.namedtuple_cls
        for klass in cls.__mro__:
            if klass in (tuple, object):
                return None
            if name in klass.__dict__:
                attr = klass.__dict__[name]
                break
        else:
            return None
        if isinstance(attr, property) and isinstance(attr.fget, types.FunctionType):
            call = UserFunctionVariable(attr.fget).call_function
            _guard_class_attr(tx, self, name, attr)
            return call(tx, [self], {})
        if isinstance(attr, staticmethod) and isinstance(attr.__func__, types.FunctionType):
            method = UserFunctionVariable(attr.__func__)
        elif isinstance(attr, classmethod) and isinstance(attr.__func__, types.FunctionType):
            method = UserMethodVariable(attr.__func__, UserDefinedClassVariable(cls))
        elif isinstance(attr, types.FunctionType):
            method = UserMethodVariable(attr, self)
        elif type(attr) in (int, str, bool, tuple) and is_constant_value(attr):
            method = ConstantVariable(attr)  # _fields, a class-level constant
        else:
            return None
        _guard_class_attr(tx, self, name, attr)  # (a method rebound on the class recompiles)
        return method


def _build_namedtuple(cls, values: tuple):
    if hasattr(cls, "_make"):
        return cls._make(values)
    return cls(values)


class SizeVariable(TupleVariable):
    """torch.Size of constant ints (static shapes)."""

    def python_type(self) -> type:
        return torch.Size

    def is_python_constant(self) -> bool:
        return all(i.is_python_constant() for i in self.items)  # symbolic sizes are not

    def as_python_constant(self):
        return torch.Size(i.as_python_constant() for i in self.items)

    def as_proxy(self):
        if not self.is_python_constant():
            return tuple(i.as_proxy() for i in self.items)  # an FX node argument
        return torch.Size(i.as_proxy() for i in self.items)

    def as_example(self):
        return torch.Size(i.as_example() for i in self.items)

    def reconstruct(self, cg) -> None:
        if self.is_python_constant():
            cg.load_const(self.as_python_constant())
            return
        cg.add_push_null(lambda: cg.load_const(torch.Size))
        for item in self.items:
            item.reconstruct(cg)
        cg.build_tuple(len(self.items))
        cg.call(1)

    def call_method(self, tx, name: str, args: list, kwargs: dict) -> VariableTracker:
        if name == "numel" and not args and not kwargs:
            if self.is_python_constant():
                return ConstantVariable(self.as_python_constant().numel())
            from .builtins import binary_op  # (the product of symbolic sizes is one)

            total = ConstantVariable(1)
            for item in self.items:
                total = binary_op(tx, operator.mul, total, item)
            return total
        return super().call_method(tx, name, args, kwargs)


class ListVariable(BaseListVariable):
    mutable = True

    def python_type(self) -> type:
        return list

    def as_python_constant(self):
        raise Unsupported("a list is not a constant")

    def as_proxy(self):
        return [i.as_proxy() for i in self.items]

    def as_example(self):
        return [i.as_example() for i in self.items]

    def reconstruct(self, cg) -> None:
        if self.source is not None:
            cg.load_source(self.source)
            return
        cg.reconstruct_once(self, self._build)

    def _build(self, cg) -> None:
        for item in self.items:
            item.reconstruct(cg)
        cg.build_list(len(self.items))

    def _mutated(self, tx) -> None:
        tx.output.side_effects.mutated(self)

    def call_method(self, tx, name: str, args: list, kwargs: dict) -> VariableTracker:
        items = self.items
        if name == "append":
            self._mutated(tx)
            items.append(args[0])
        elif name == "extend":
            self._mutated(tx)
            items.extend(args[0].unpack(tx))
        elif name == "insert":
            self._mutated(tx)
            items.insert(args[0].as_python_constant(), args[1])
        elif name == "pop":
            index = args[0].as_python_constant() if args else -1
            if not items:
                raise Unsupported("pop from empty list")
            self._mutated(tx)
            return items.pop(index)
        elif name == "clear":
            self._mutated(tx)
            items.clear()
        elif name == "reverse":
            self._mutated(tx)
            items.reverse()
        elif name == "copy":
            return ListVariable(items)
        elif name == "__setitem__":
            key = _const_index(tx, args[0])
            self._mutated(tx)
            if isinstance(key, slice):
                items[key] = args[1].unpack(tx)
            else:
                items[key] = args[1]
        elif name == "__delitem__":
            self._mutated(tx)
            del items[_const_index(tx, args[0])]
        elif name == "remove":
            needle = args[0].as_python_constant()
            for i, item in enumerate(items):
                if item.is_python_constant() and item.as_python_constant() == needle:
                    self._mutated(tx)
                    del items[i]
                    break
            else:
                raise Unsupported("list.remove of a missing/non-constant item")
        elif name == "sort":
            from .builtins import sort_items

            ordered = sort_items(tx, list(items), kwargs)
            self._mutated(tx)
            items[:] = ordered
        else:
            return super().call_method(tx, name, args, kwargs)
        return ConstantVariable(None)


# dict types whose instances have no __dict__: their type has every attribute they have
_NO_INSTANCE_DICT = (dict, collections.OrderedDict, collections.defaultdict, collections.Counter)


class DictVariable(VariableTracker):
    """A dict (insertion order kept) keyed as Python hashes: constants by value, tensors and
    other objects of default hashing by identity (sets.key_of)."""

    mutable = True

    def __init__(self, items: dict, source=None, user_cls=dict):
        self.items = dict(items)
        self.source = source
        self.user_cls = user_cls

    def python_type(self) -> type:
        return self.user_cls

    def as_proxy(self):
        self._constant_keys()
        return {k: v.as_proxy() for k, v in self.items.items()}

    def as_example(self):
        self._constant_keys()
        return {k: v.as_example() for k, v in self.items.items()}

    def _constant_keys(self) -> None:
        if any(isinstance(k, _ById) for k in self.items):
            raise Unsupported("a dict with object keys as an argument of a graph op")

    def has_tensors(self) -> bool:
        return any(v.has_tensors() for v in self.items.values())

    def truth(self, tx) -> bool:
        return bool(self.items)

    def unpack(self, tx) -> list[VariableTracker]:
        return [tracker_of_key(k) for k in self.items]

    def reconstruct(self, cg) -> None:
        if self.source is not None:
            cg.load_source(self.source)
            return
        cg.reconstruct_once(self, self._build)

    def _build(self, cg) -> None:
        if self.user_cls not in (dict, collections.OrderedDict):
            raise Unsupported(f"cannot rebuild a {self.user_cls.__name__}")
        if self.user_cls is not dict:
            cg.add_push_null(lambda: cg.load_const(self.user_cls))
        for key, value in self.items.items():
            load_key(cg, key)
            value.reconstruct(cg)
        cg.build_map(len(self.items))
        if self.user_cls is not dict:
            cg.call(1)

    def _key(self, vt: VariableTracker, tx=None):
        return key_of(vt, tx)

    def getitem(self, tx, key_vt: VariableTracker) -> VariableTracker:
        key = self._key(key_vt, tx)
        if key not in self.items:
            raise observed(KeyError, key, reason=f"KeyError: {key!r}")
        return self.items[key]

    def var_getattr(self, tx, name: str) -> VariableTracker:
        if name == "__class__":
            return class_of(tx, self)
        cls = self.user_cls
        if hasattr(cls, name):
            return BoundBuiltinMethodVariable(self, name)
        if cls in _NO_INSTANCE_DICT:  # (hasattr(d, "to") is False: the dict takes no attributes)
            raise Unsupported(f"AttributeError: {cls.__name__!r} object has no attribute {name!r}")
        raise Unsupported(f"attribute {name!r} of a {cls.__name__} instance")

    def call_method(self, tx, name: str, args: list, kwargs: dict) -> VariableTracker:
        items = self.items
        if name == "__getitem__":
            return self.getitem(tx, args[0])
        if name == "get":
            key = self._key(args[0], tx)
            if key in items:
                return items[key]
            return args[1] if len(args) > 1 else ConstantVariable(None)
        if name in ("keys", "values", "items") and not args and not kwargs:
            return DictViewVariable(self, name)
        if name == "__contains__":
            return ConstantVariable(self._key(args[0], tx) in items)
        if name == "__len__":
            return ConstantVariable(len(items))
        if name == "copy":
            return DictVariable(items)
        if name == "__setitem__":
            tx.output.side_effects.mutated(self)
            items[self._key(args[0], tx)] = args[1]
            return ConstantVariable(None)
        if name == "__delitem__":
            key = self._key(args[0], tx)
            if key not in items:
                raise observed(KeyError, key, reason=f"KeyError: {key!r}")
            tx.output.side_effects.mutated(self)
            del items[key]
            return ConstantVariable(None)
        if name == "update":
            tx.output.side_effects.mutated(self)
            if args:
                other = args[0]
                mapping = mapping_items(tx, other)
                if mapping is not None:
                    items.update(mapping)
                else:
                    for pair in other.unpack(tx):
                        k, v = pair.unpack(tx)
                        items[self._key(k)] = v
            for k, v in kwargs.items():
                items[k] = v
            return ConstantVariable(None)
        if name == "pop":
            key = self._key(args[0], tx)
            if key in items:
                tx.output.side_effects.mutated(self)
                return items.pop(key)
            if len(args) > 1:
                return args[1]
            raise observed(KeyError, key, reason=f"KeyError: {key!r}")
        if name == "setdefault":
            key = self._key(args[0], tx)
            if key not in items:
                tx.output.side_effects.mutated(self)
                items[key] = args[1] if len(args) > 1 else ConstantVariable(None)
            return items[key]
        if name == "clear":
            tx.output.side_effects.mutated(self)
            items.clear()
            return ConstantVariable(None)
        if name == "popitem" and not args and not kwargs:
            if not items:
                raise Unsupported("KeyError: popitem(): dictionary is empty")
            tx.output.side_effects.mutated(self)
            key = next(reversed(items))
            return TupleVariable([tracker_of_key(key), items.pop(key)])
        if name == "move_to_end" and issubclass(self.user_cls, collections.OrderedDict):
            key = self._key(args[0], tx)
            last = args[1] if len(args) > 1 else kwargs.get("last", ConstantVariable(True))
            if key not in items:
                raise observed(KeyError, key, reason=f"KeyError: {key!r}")
            tx.output.side_effects.mutated(self)
            value = items.pop(key)
            if last.as_python_constant():
                items[key] = value
            else:
                self.items = items = {key: value, **items}
            return ConstantVariable(None)
        if name == "__iter__":
            return IteratorVariable(self.unpack(tx))
        raise Unsupported(f"dict.{name}")


def mapping_items(tx, other: VariableTracker) -> dict | None:
    """The items `**other` and dict.update(other) take from a mapping, as PyDict_Merge
    reads them: a dict's own, or `other[k]` for each k of `other.keys()` (a Mapping
    subclass's methods traced; collections.abc's default keys() is a view over
    `iter(other)`).  None when `other` has no keys(): not a mapping."""
    if isinstance(other, DictVariable):
        return other.items
    try:
        cls = other.python_type()
    except Unsupported:
        return None
    keys_method = getattr(cls, "keys", None)
    if keys_method is None:
        return None
    if keys_method is collections.abc.Mapping.keys:
        keys = other.unpack(tx)
    else:
        keys = other.call_method(tx, "keys", [], {}).unpack(tx)
    return {key_of(k): other.call_method(tx, "__getitem__", [k], {}) for k in keys}


def contents_repr(vt: VariableTracker) -> str | None:
    """repr() of a list, tuple, dict or set as it is now, when everything in it is a
    constant (an f-string of one: `f"{s} != {t}"`), spelled as Python spells it (a set
    in its iteration order); None otherwise."""
    from .sets import SetVariable

    if isinstance(vt, SymNodeVariable):  # the number, guarded
        return repr(vt.as_python_constant())
    if vt.is_python_constant():
        return repr(vt.as_python_constant())
    if type(vt) is SizeVariable:
        parts = [contents_repr(i) for i in vt.items]
        return None if None in parts else "torch.Size([" + ", ".join(parts) + "])"
    if isinstance(vt, SetVariable):
        parts = [contents_repr(m) for m in vt.ordered()]
        if None in parts:
            return None
        body = "{" + ", ".join(parts) + "}" if parts else ""
        if vt.user_cls is not None:  # set_repr: "Name({...})" for a subclass
            return f"{vt.user_cls.__name__}({body})"
        if vt.frozen:
            return f"frozenset({body})"
        return body or "set()"
    if type(vt) in (ListVariable, TupleVariable) and getattr(vt, "namedtuple_cls", None) is None:
        parts = [contents_repr(i) for i in vt.items]
        if None in parts:
            return None
        if type(vt) is ListVariable:
            return "[" + ", ".join(parts) + "]"
        return "(" + ", ".join(parts) + ("," if len(parts) == 1 else "") + ")"
    if type(vt) is DictVariable and vt.user_cls is dict:
        pairs = [(contents_repr(tracker_of_key(k)), contents_repr(v)) for k, v in vt.items.items()]
        if any(None in pair for pair in pairs):
            return None
        return "{" + ", ".join(f"{k}: {v}" for k, v in pairs) + "}"
    return None


class DictViewVariable(VariableTracker):
    """d.keys() / d.values() / d.items(): a live view, read through to the dict's current
    contents (a later `d[k] = v` shows in it, as in Python)."""

    def __init__(self, dict_vt: DictVariable, kind: str):
        self.dict_vt = dict_vt
        self.kind = kind

    def python_type(self) -> type:
        return type(getattr({}, self.kind)())

    def unpack(self, tx) -> list[VariableTracker]:
        items = self.dict_vt.items
        if self.kind == "keys":
            return [tracker_of_key(k) for k in items]
        if self.kind == "values":
            return list(items.values())
        return [TupleVariable([tracker_of_key(k), v]) for k, v in items.items()]

    def has_tensors(self) -> bool:
        return self.kind != "keys" and self.dict_vt.has_tensors()

    def truth(self, tx) -> bool:
        return bool(self.dict_vt.items)

    def key_set(self) -> set:
        """The keys, for the set-like comparisons of keys views."""
        if self.kind != "keys":
            raise Unsupported(f"set operation on dict {self.kind}()")
        return set(self.dict_vt.items)

    def reconstruct(self, cg) -> None:
        self.dict_vt.reconstruct(cg)
        cg.load_method(self.kind)
        cg.call_method(0)

    def var_getattr(self, tx, name: str) -> VariableTracker:
        if not hasattr(self.python_type(), name):
            raise Unsupported(f"AttributeError: dict_{self.kind} object has no attribute {name!r}")
        return BoundBuiltinMethodVariable(self, name)

    def call_method(self, tx, name: str, args: list, kwargs: dict) -> VariableTracker:
        if name == "__len__":
            return ConstantVariable(len(self.dict_vt.items))
        if name == "__contains__" and self.kind == "keys":
            return self.dict_vt.call_method(tx, "__contains__", args, kwargs)
        if name == "__contains__":
            from .builtins import binary_op

            needle = args[0]
            return ConstantVariable(
                any(binary_op(tx, operator.eq, v, needle).truth(tx) for v in self.unpack(tx))
            )
        if name == "__iter__":
            return IteratorVariable(self.unpack(tx))
        if name == "isdisjoint" and self.kind == "keys":
            other = {k.as_python_constant() for k in args[0].unpack(tx)}
            return ConstantVariable(self.key_set().isdisjoint(other))
        raise Unsupported(f"dict_{self.kind}.{name}")

    def __repr__(self) -> str:
        return f"DictViewVariable({self.kind})"


class SliceVariable(VariableTracker):
    def __init__(self, start, stop, step):
        self.parts = (start, stop, step)

    def python_type(self) -> type:
        return slice

    def as_python_constant(self):
        return slice(*(p.as_python_constant() for p in self.parts))

    def as_proxy(self):
        return slice(*(p.as_proxy() for p in self.parts))

    def as_example(self):
        return slice(*(p.as_example() for p in self.parts))

    def has_tensors(self) -> bool:
        return any(p.has_tensors() for p in self.parts)

    def reconstruct(self, cg) -> None:
        for p in self.parts:
            p.reconstruct(cg)
        cg.build_slice(3)


def RangeVariable(value: range) -> ConstantVariable:
    return ConstantVariable(value)


def _identity(item):
    return item


def _true(item) -> bool:
    return True


# builtins whose iterators the trace makes (`kind`): how one of the same type is rebuilt over
# the items still to come, so `type(map(...))` and what escapes are eager's
_REBUILD_ITERATOR = {
    map: lambda items: map(_identity, items),
    filter: lambda items: filter(_true, items),
    zip: lambda items: zip(*zip(*items, strict=True), strict=True) if items else zip(),
    enumerate: lambda items: enumerate([v for _, v in items], items[0][0] if items else 0),
}


class IteratorVariable(VariableTracker):
    """An iterator over known items (unrolled `for` loops); rebuilt as iter(tuple of the rest),
    or as an object of its builtin `kind` (map, filter, zip, enumerate) over them."""

    mutable = True
    pulls_lazily = False  # does asking for an item run code (lazy_iterators.py)?

    def __init__(self, items: list[VariableTracker], kind: type | None = None):
        self.items = list(items)
        self.index = 0
        self.kind = kind

    def python_type(self) -> type:
        return self.kind or type(iter(()))

    def next(self, tx) -> VariableTracker | None:
        if self.index >= len(self.items):
            return None
        item = self.items[self.index]
        self.index += 1
        return item

    def unpack(self, tx) -> list[VariableTracker]:
        rest = self.items[self.index :]
        self.index = len(self.items)
        return rest

    def drain(self, tx) -> list[VariableTracker]:
        """Every item still to come, asked for one at a time (for subclasses whose next()
        runs code: their unpack)."""
        out = []
        while (item := self.next(tx)) is not None:
            out.append(item)
        return out

    def reconstruct(self, cg) -> None:
        rebuild = _REBUILD_ITERATOR.get(self.kind, iter)
        cg.add_push_null(lambda: cg.load_const(rebuild))
        self.reconstruct_remaining(cg)
        cg.call(1)

    def reconstruct_remaining(self, cg) -> None:
        """The items still to come, as a tuple."""
        for item in self.items[self.index :]:
            item.reconstruct(cg)
        cg.build_tuple(len(self.items) - self.index)

    def stop_iteration(self) -> Unsupported:
        """What next() of the exhausted iterator raises."""
        return observed(StopIteration, reason="StopIteration from next()")

    def call_method(self, tx, name: str, args, kwargs):
        if name == "__next__":
            item = self.next(tx)
            if item is None:
                raise self.stop_iteration()
            return item
        raise Unsupported(f"iterator.{name}")


class SourcedIteratorVariable(IteratorVariable):
    """A real tuple iterator from the frame's inputs: it is the same object after the frame
    (rebuilt from its source), advanced by as many items as the trace consumed."""

    def __init__(self, items: list[VariableTracker], source):
        super().__init__(items)
        self.source = source

    def next(self, tx) -> VariableTracker | None:
        tx.output.side_effects.mutated(self)
        return super().next(tx)

    def unpack(self, tx) -> list[VariableTracker]:
        tx.output.side_effects.mutated(self)
        return super().unpack(tx)

    def reconstruct(self, cg) -> None:
        cg.load_source(self.source)

    def reconstruct_remaining(self, cg) -> None:
        cg.load_source(self.source)  # a resume prologue's iter() of it is itself


def advance_iterator(it, n: int) -> None:
    """Consume `n` items of `it` (the replay of what a trace consumed)."""
    for _ in range(n):
        next(it)


SEQUENCE_BINARY = {operator.add, operator.mul, operator.iadd, operator.imul}
