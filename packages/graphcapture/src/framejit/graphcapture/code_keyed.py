"""CodeKeyed: a cache keyed by code objects by identity, that forgets a code when it dies.

Code objects compare (and hash) by value: two ``exec``s of the same source give equal but
distinct codes, with different globals.  A plain dict keyed by code would hand one's
resume functions or decoded bytecode to the other (the NameError of a ``__compiled_fn_<n>``
that lives in the other namespace), and would keep every code it has seen alive.
"""

from __future__ import annotations

import types
import weakref
from collections.abc import Callable
from typing import Generic, TypeVar

V = TypeVar("V")


class CodeKeyed(Generic[V]):
    __slots__ = ("__weakref__", "_items")

    def __init__(self) -> None:
        self._items: dict[int, tuple[weakref.ref, V]] = {}

    def get(self, code: types.CodeType, default: V | None = None) -> V | None:
        item = self._items.get(id(code))
        if item is not None and item[0]() is code:
            return item[1]
        return default

    def __contains__(self, code: types.CodeType) -> bool:
        item = self._items.get(id(code))
        return item is not None and item[0]() is code

    def __setitem__(self, code: types.CodeType, value: V) -> None:
        key = id(code)
        items = self._items

        def forget(ref: weakref.ref, key: int = key) -> None:
            item = items.get(key)
            if item is not None and item[0] is ref:
                del items[key]

        items[key] = (weakref.ref(code, forget), value)

    def setdefault(self, code: types.CodeType, make: Callable[[], V]) -> V:
        found = self.get(code)
        if found is None:
            found = make()
            self[code] = found
        return found

    def discard(self, code: types.CodeType) -> None:
        if code in self:
            del self._items[id(code)]

    def clear(self) -> None:
        self._items.clear()

    def __len__(self) -> int:
        return len(self._items)
