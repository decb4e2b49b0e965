"""collections modelled on trackers: OrderedDict, defaultdict, Counter, deque.

OrderedDict is a DictVariable of that class (plus move_to_end/popitem); defaultdict keeps
its factory and calls it on a missing key; Counter counts constant keys; deque is a list
with a maxlen.  Each is rebuilt with its own constructor when it escapes the frame, and a
mutated one read from the frame's inputs is replayed in place (clear + refill).
"""

from __future__ import annotations

import collections

from ..exc import Unsupported
from .base import ConstantVariable, VariableTracker
from .containers import DictVariable, ListVariable, TupleVariable
from .exceptions import observed
from .sets import load_key, tracker_of_key


def _emit_ctor(cg, fn, build_args) -> None:
    cg.add_push_null(lambda: cg.load_const(fn))
    n = build_args(cg)
    cg.call(n)


def _emit_items(cg, items: dict) -> None:
    for key, value in items.items():
        load_key(cg, key)
        value.reconstruct(cg)
    cg.build_map(len(items))


class DefaultDictVariable(DictVariable):
    def __init__(self, items, factory: VariableTracker, source=None):
        super().__init__(items, source, user_cls=collections.defaultdict)
        self.factory = factory

    def _build(self, cg) -> None:
        def args(cg):
            self.factory.reconstruct(cg)
            _emit_items(cg, self.items)
            return 2

        _emit_ctor(cg, collections.defaultdict, args)

    def _missing(self, tx, key):
        if self.factory.is_python_constant() and self.factory.as_python_constant() is None:
            raise observed(KeyError, key, reason=f"KeyError: {key!r}")
        value = self.factory.call_function(tx, [], {})
        tx.output.side_effects.mutated(self)
        self.items[key] = value
        return value

    def getitem(self, tx, key_vt):
        key = self._key(key_vt, tx)
        if key not in self.items:
            return self._missing(tx, key)
        return self.items[key]

    def var_getattr(self, tx, name: str) -> VariableTracker:
        if name == "default_factory":
            return self.factory
        return super().var_getattr(tx, name)

    def call_method(self, tx, name, args, kwargs):
        if name == "__getitem__":
            return self.getitem(tx, args[0])
        if name == "copy":
            return DefaultDictVariable(self.items, self.factory)
        return super().call_method(tx, name, args, kwargs)


class CounterVariable(DictVariable):
    def __init__(self, items, source=None):
        super().__init__(items, source, user_cls=collections.Counter)

    def _build(self, cg) -> None:
        def args(cg):
            _emit_items(cg, self.items)
            return 1

        _emit_ctor(cg, collections.Counter, args)

    def getitem(self, tx, key_vt):
        return self.items.get(self._key(key_vt, tx), ConstantVariable(0))

    def count_in(self, tx, iterable, sign: int = 1) -> None:
        import operator

        from .builtins import binary_op

        if isinstance(iterable, DictVariable):
            pairs = list(iterable.items.items())
        else:
            pairs = [(self._key(k), ConstantVariable(1)) for k in iterable.unpack(tx)]
        for key, n in pairs:
            old = self.items.get(key, ConstantVariable(0))
            op = operator.add if sign > 0 else operator.sub
            self.items[key] = binary_op(tx, op, old, n)

    def call_method(self, tx, name, args, kwargs):
        if name == "__getitem__":
            return self.getitem(tx, args[0])
        if name in ("update", "subtract"):
            tx.output.side_effects.mutated(self)
            for a in args:
                self.count_in(tx, a, 1 if name == "update" else -1)
            return ConstantVariable(None)
        if name == "most_common":
            values = {k: v.as_python_constant() for k, v in self.items.items()}
            n = args[0].as_python_constant() if args else None
            ranked = collections.Counter(values).most_common(n)
            return ListVariable(
                [TupleVariable([tracker_of_key(k), self.items[k]]) for k, _ in ranked]
            )
        if name == "total":
            return ConstantVariable(sum(v.as_python_constant() for v in self.items.values()))
        if name == "elements":
            from .containers import IteratorVariable

            out = []
            for k, v in self.items.items():
                out.extend([tracker_of_key(k)] * max(0, v.as_python_constant()))
            return IteratorVariable(out)
        if name == "copy":
            return CounterVariable(self.items)
        return super().call_method(tx, name, args, kwargs)


class DequeVariable(ListVariable):
    replay_by_clear = True  # replayed as clear() + extend(): a deque takes no slice store

    def __init__(self, items, maxlen=None, source=None):
        super().__init__(items, source)
        self.maxlen = maxlen
        self._trim(left=True)

    def python_type(self) -> type:
        return collections.deque

    def _trim(self, left: bool) -> None:
        if self.maxlen is not None and len(self.items) > self.maxlen:
            extra = len(self.items) - self.maxlen
            if left:
                del self.items[:extra]
            else:
                del self.items[-extra:]

    def _build(self, cg) -> None:
        def args(cg):
            for item in self.items:
                item.reconstruct(cg)
            cg.build_list(len(self.items))
            cg.load_const(self.maxlen)
            return 2

        _emit_ctor(cg, collections.deque, args)

    def call_method(self, tx, name, args, kwargs):
        items = self.items
        if name == "appendleft":
            self._mutated(tx)
            items.insert(0, args[0])
            self._trim(left=False)
            return ConstantVariable(None)
        if name == "extendleft":
            self._mutated(tx)
            for item in args[0].unpack(tx):
                items.insert(0, item)
            self._trim(left=False)
            return ConstantVariable(None)
        if name == "popleft":
            if not items:
                raise Unsupported("IndexError: pop from an empty deque")
            self._mutated(tx)
            return items.pop(0)
        if name == "rotate":
            n = args[0].as_python_constant() if args else 1
            self._mutated(tx)
            if items:
                n %= len(items)
                items[:] = items[-n:] + items[:-n] if n else items
            return ConstantVariable(None)
        if name == "copy":
            return DequeVariable(items, self.maxlen)
        if name == "__setitem__" and isinstance(args[0].as_python_constant(), slice):
            raise Unsupported("TypeError: deque slice assignment")
        if name == "sort":
            raise Unsupported("AttributeError: deque has no sort")
        result = super().call_method(tx, name, args, kwargs)
        if name in ("append", "extend", "insert"):
            self._trim(left=True)
        return result

    def var_getattr(self, tx, name: str) -> VariableTracker:
        if name == "maxlen":
            return ConstantVariable(self.maxlen)
        return super().var_getattr(tx, name)

    def getitem(self, tx, index):
        if isinstance(index.as_python_constant(), slice):
            raise Unsupported("TypeError: sequence index must be integer, not 'slice'")
        return super().getitem(tx, index)


def _dict_from(tx, args, kwargs) -> dict:
    from .builtins import _dict

    return _dict(tx, *args, **kwargs).items


def _ordered_dict(tx, *args, **kwargs):
    return DictVariable(_dict_from(tx, args, kwargs), user_cls=collections.OrderedDict)


def _defaultdict(tx, factory=None, *args, **kwargs):
    return DefaultDictVariable(
        _dict_from(tx, args, kwargs), factory if factory is not None else ConstantVariable(None)
    )


def _counter(tx, iterable=None, **kwargs):
    counter = CounterVariable({})
    if iterable is not None:
        counter.count_in(tx, iterable)
    for k, v in kwargs.items():
        counter.items[k] = v
    return counter


def _deque(tx, iterable=None, maxlen=None):
    items = [] if iterable is None else iterable.unpack(tx)
    return DequeVariable(items, None if maxlen is None else maxlen.as_python_constant())


def _fromkeys(cls):
    """`cls.fromkeys(iterable, value=None)`: every key maps to the one value object."""

    def handler(tx, iterable, value=None, **kwargs):
        from .sets import key_of

        if value is None:
            value = kwargs.pop("value", ConstantVariable(None))
        if kwargs or getattr(value, "mutable", False) or getattr(value, "made_in_trace", False):
            return None  # one shared mutable value: rebuilt apart per key if the dict escaped
        items = {key_of(k): value for k in iterable.unpack(tx)}
        if cls is collections.defaultdict:
            return DefaultDictVariable(items, ConstantVariable(None))
        return DictVariable(items, user_cls=cls)

    return handler


def _namedtuple(tx, typename, field_names, **kwargs):
    """collections.namedtuple(...) with constant arguments, made at trace time (a pure
    function of them); its __module__ is the traced frame's, as the real call's caller.
    The class is the same object on every call of the compiled code (eager makes a new
    one each time), as torch.compile's is."""
    from .objects import UserDefinedClassVariable

    if set(kwargs) - {"rename", "defaults", "module"}:
        return None
    try:
        name, fields = _literal(typename), _literal(field_names)
        options = {k: _literal(v) for k, v in kwargs.items()}
    except Unsupported:
        return None
    options.setdefault("module", tx.f_globals.get("__name__", "__main__"))
    return UserDefinedClassVariable(collections.namedtuple(name, fields, **options))


def _literal(vt):
    """A constant, or a list of constants (field names, defaults), as its value."""
    if isinstance(vt, ListVariable):
        return [_literal(item) for item in vt.items]
    return vt.as_python_constant()


COLLECTIONS_MODELS = {
    collections.namedtuple: _namedtuple,
    collections.OrderedDict: _ordered_dict,
    collections.defaultdict: _defaultdict,
    collections.Counter: _counter,
    collections.deque: _deque,
    # bound classmethods: a new object per read, equal (and hashed) alike
    dict.fromkeys: _fromkeys(dict),
    collections.OrderedDict.fromkeys: _fromkeys(collections.OrderedDict),
    collections.defaultdict.fromkeys: _fromkeys(collections.defaultdict),
}
