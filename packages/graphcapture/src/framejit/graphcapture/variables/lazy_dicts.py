"""A dict read from the frame whose keys are objects (classes, functions): values wrapped
when the trace reads them.

Registries are such dicts: torch.utils._pytree's SUPPORTED_NODES maps ~100 classes to
their NodeDef, and a tree_map reads two or three of them.  Wrapping every value guards
every NodeDef (its functions' code, defaults, closures: some 2,000 guards checked on each
call).  Here the keys are wrapped and guarded at once (membership is exact), and a value
is wrapped, with its guards, only when `d[k]`, `d.get(k)` or `d.pop(k)` reads it; anything
else that looks at the values (iteration, items(), copies, mutation) reads `items`, which
wraps them all first, as an eagerly wrapped dict would have.  A value is wrapped from the
object seen when the dict was read, at the same source, so the guards are the same ones
an eager wrap makes, only fewer.
"""

from __future__ import annotations

from .base import ConstantVariable, VariableTracker
from .containers import DictVariable


class LazyValuesDictVariable(DictVariable):
    def __init__(self, tx, keys: dict, pending: dict, source):
        # keys: key_of(key) -> None, in order; pending: key_of(key) -> (value, value source)
        self._tx = tx
        self._order = list(keys)
        self._pending = dict(pending)
        self._items: dict = {}
        self.source = source
        self.user_cls = dict

    @property
    def items(self) -> dict:
        if self._pending:
            for key in self._order:
                self._realize(self._tx, key)
        return self._items

    @items.setter
    def items(self, value: dict) -> None:
        self._pending = {}
        self._items = value

    def _realize(self, tx, key) -> VariableTracker:
        """The value of `key`, wrapped now if it was not (keys in their dict order)."""
        if key in self._pending:
            from .builder import wrap

            value, source = self._pending.pop(key)
            done = dict(self._items)
            done[key] = wrap(tx, value, source)
            self._items = {k: done[k] for k in self._order if k in done}
        return self._items[key]

    def _known(self, tx, key_vt):
        key = self._key(key_vt)
        if self._pending and (key in self._pending or key in self._items):
            return key, self._realize(tx, key)
        return key, None

    def getitem(self, tx, key_vt: VariableTracker) -> VariableTracker:
        _, value = self._known(tx, key_vt)
        return value if value is not None else super().getitem(tx, key_vt)

    def call_method(self, tx, name: str, args: list, kwargs: dict) -> VariableTracker:
        if self._pending and not kwargs:
            if name in ("__contains__", "__len__"):
                keys = set(self._order)
                if name == "__len__":
                    return ConstantVariable(len(keys))
                return ConstantVariable(self._key(args[0]) in keys)
            if name in ("__getitem__", "get") and args:
                key, value = self._known(tx, args[0])
                if value is not None:
                    return value
                if name == "get" and key not in self._order:
                    return args[1] if len(args) > 1 else ConstantVariable(None)
        return super().call_method(tx, name, args, kwargs)

    def __repr__(self) -> str:
        return f"LazyValuesDictVariable({len(self._order)} keys)"
