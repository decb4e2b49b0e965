"""Sources: where a guarded value came from, as a small immutable expression language.

A source renders (``name()``) to a Python expression over ``L`` (the frame's locals
dict) and ``G`` (its globals dict) — ``AttrSource(GlobalSource("torch"), "abs")``
renders ``G['torch'].abs`` — and evaluates (``get(L, G)``) to the same value in plain
Python without ``eval``: the generated guard uses the first, the mirror evaluator and
the tests use the second.

Every string that comes from user code (local/global names, attribute names, dict
keys) reaches the rendered text only through ``repr()`` of an exact ``str``/``int``
(see ``literals.py``), or as an ASCII attribute name that ``str.isidentifier()``
accepts and is not a keyword; anything else is rendered ``getattr(base, 'name')``.  Rendered
text is therefore always a plain expression, never code of the user's choosing.

Sources are frozen dataclasses: hashable, comparable, usable as dict keys.
"""

from __future__ import annotations

import builtins
import itertools
import keyword
import os
import sys
import types
from dataclasses import dataclass
from typing import Any, ClassVar

from .literals import check_key_literal, is_literal, render_literal


class Source:
    """Base of every source.  Subclasses are frozen dataclasses."""

    #: Names the rendered expression needs bound besides ``L``/``G`` (closure helpers).
    helpers: ClassVar[tuple[str, ...]] = ()

    def name(self) -> str:
        # rendered once per source: wrap/guard code asks for it again and again
        cached = self.__dict__.get("_name")
        if cached is None:
            base = self.base_source()
            cached = self.__dict__["_name"] = self.spell(base.name() if base is not None else "")
        return cached

    def spell(self, base: str) -> str:
        """This source's expression with ``base`` as the text of its base (ignored by roots):
        ``name()`` spells it over the base's name, a compiled check over a local variable."""
        raise NotImplementedError

    def get(self, L: dict[str, Any], G: dict[str, Any]) -> Any:
        raise NotImplementedError

    def base_source(self) -> Source | None:
        """The source this one is derived from (None for a root)."""
        return None

    def root(self) -> Source:
        src: Source = self
        while (base := src.base_source()) is not None:
            src = base
        return src

    def depth(self) -> int:
        found = self.__dict__.get("_depth")
        if found is None:
            base = self.base_source()
            found = self.__dict__["_depth"] = 0 if base is None else 1 + base.depth()
        return found

    def __getstate__(self) -> dict[str, Any]:
        # str hashes differ between processes: a copied source hashes afresh
        return {k: v for k, v in self.__dict__.items() if k != "_hash"}

    def all_helpers(self) -> tuple[str, ...]:
        cached = self.__dict__.get("_helpers")
        if cached is None:
            cached = self.__dict__["_helpers"] = self._collect_helpers()
        return cached

    def _collect_helpers(self) -> tuple[str, ...]:
        base = self.base_source()
        inherited = base.all_helpers() if base is not None else ()
        if not self.helpers:
            return inherited
        return inherited + tuple(h for h in self.helpers if h not in inherited)

    def is_local(self) -> bool:
        return isinstance(self.root(), LocalSource)

    def __str__(self) -> str:
        return self.name()


def _source(cls: type) -> type:
    """A frozen dataclass whose hash is computed once: sources key dicts all through a
    trace and a guard compile, and the generated hash walks the whole chain each time."""
    cls = dataclass(frozen=True)(cls)
    fields_hash = cls.__hash__

    def __hash__(self) -> int:
        found = self.__dict__.get("_hash")
        if found is None:
            found = self.__dict__["_hash"] = fields_hash(self)
        return found

    cls.__hash__ = __hash__
    return cls


def _check_name(value: object, what: str) -> str:
    if type(value) is not str:
        raise TypeError(f"{what} must be a str, got {type(value).__name__}: {value!r}")
    return value


# ---------------------------------------------------------------------------- roots


@_source
class LocalSource(Source):
    """A frame local / argument: ``L['a']``."""

    local_name: str

    def __post_init__(self) -> None:
        _check_name(self.local_name, "LocalSource name")

    def spell(self, base: str) -> str:
        return f"L[{self.local_name!r}]"

    def get(self, L, G):
        return L[self.local_name]


@_source
class GlobalSource(Source):
    """A module global of the compiled frame: ``G['torch']``."""

    global_name: str
    helpers: ClassVar[tuple[str, ...]] = ("G",)

    def __post_init__(self) -> None:
        _check_name(self.global_name, "GlobalSource name")

    def spell(self, base: str) -> str:
        return f"G[{self.global_name!r}]"

    def get(self, L, G):
        return G[self.global_name]


@_source
class GlobalsSource(Source):
    """The compiled frame's globals dict itself: ``G`` (``'len' not in G``: no global of
    an exec'd namespace, which no module's ``__dict__`` reaches, shadows a builtin)."""

    helpers: ClassVar[tuple[str, ...]] = ("G",)

    def spell(self, base: str) -> str:
        return "G"

    def get(self, L, G):
        return G


@_source
class BuiltinSource(Source):
    """A builtin reached through the frame's globals: ``B['len']`` (B = the builtins dict)."""

    builtin_name: str
    helpers: ClassVar[tuple[str, ...]] = ("B",)

    def __post_init__(self) -> None:
        _check_name(self.builtin_name, "BuiltinSource name")

    def spell(self, base: str) -> str:
        return f"B[{self.builtin_name!r}]"

    def get(self, L, G):
        return builtins_dict(G)[self.builtin_name]


def builtins_dict(G: dict[str, Any]) -> dict[str, Any]:
    """The builtins dict a frame with globals ``G`` sees."""
    b = G.get("__builtins__", builtins)
    return b if isinstance(b, dict) else vars(b)


@_source
class GlobalStateSource(Source):
    """The process/thread-wide torch state (grad mode, default dtype, ...): no value path."""

    def spell(self, base: str) -> str:
        return "___global_state"

    def get(self, L, G):
        from .global_state import GlobalStateSnapshot

        return GlobalStateSnapshot.capture()


# ---------------------------------------------------------------------------- chains


@_source
class AttrSource(Source):
    """``base.member`` (``getattr(base, 'member')`` when member is not a plain identifier)."""

    base: Source
    member: str

    def __post_init__(self) -> None:
        _check_name(self.member, "AttrSource member")

    def base_source(self) -> Source:
        return self.base

    def spell(self, base: str) -> str:
        # ASCII only: the parser NFKC-normalises identifiers, so "x.\ufb01le" would read x.file
        if (
            self.member.isascii()
            and self.member.isidentifier()
            and not keyword.iskeyword(self.member)
        ):
            return f"{base}.{self.member}"
        return f"getattr({base}, {self.member!r})"

    def get(self, L, G):
        return getattr(self.base.get(L, G), self.member)


@_source
class ItemSource(Source):
    """``base[key]`` for an int, str, bool, None, bytes key (or a tuple of those)."""

    base: Source
    key: Any

    def __post_init__(self) -> None:
        check_key_literal(self.key)

    def base_source(self) -> Source:
        return self.base

    def spell(self, base: str) -> str:
        return f"{base}[{render_literal(self.key)}]"

    def get(self, L, G):
        return self.base.get(L, G)[self.key]


@_source
class DictItemSource(Source):
    """``dict.__getitem__(base, key)``: a dict subclass's own item, not read through a
    ``__getitem__`` the class overrides."""

    base: Source
    key: Any
    helpers: ClassVar[tuple[str, ...]] = ("___dict_getitem",)

    def __post_init__(self) -> None:
        check_key_literal(self.key)

    def base_source(self) -> Source:
        return self.base

    def spell(self, base: str) -> str:
        return f"___dict_getitem({base}, {render_literal(self.key)})"

    def get(self, L, G):
        return dict.__getitem__(self.base.get(L, G), self.key)


@_source
class ListItemSource(Source):
    """``list.__getitem__(base, index)``: a list subclass's own item, not read through a
    ``__getitem__`` the class overrides."""

    base: Source
    index: int
    helpers: ClassVar[tuple[str, ...]] = ("___list_getitem",)

    def __post_init__(self) -> None:
        if type(self.index) is not int:
            raise TypeError(f"ListItemSource index must be an int, got {self.index!r}")

    def base_source(self) -> Source:
        return self.base

    def spell(self, base: str) -> str:
        return f"___list_getitem({base}, {self.index})"

    def get(self, L, G):
        return list.__getitem__(self.base.get(L, G), self.index)


@_source
class ListLenSource(Source):
    """``list.__len__(base)``: a list subclass's own length, not its class's ``__len__``."""

    base: Source
    helpers: ClassVar[tuple[str, ...]] = ("___list_len",)

    def base_source(self) -> Source:
        return self.base

    def spell(self, base: str) -> str:
        return f"___list_len({base})"

    def get(self, L, G):
        return list.__len__(self.base.get(L, G))


def _dict_view(d, view):
    # a class's __dict__ is a mappingproxy, which dict's own methods refuse (and which no
    # subclass can override); any other mapping is read through dict's, never an override
    return getattr(d, view.__name__)() if type(d) is types.MappingProxyType else view(d)


def dict_key_at(d: dict, index: int) -> Any:
    """The key at position ``index`` of a dict or mappingproxy (insertion order)."""
    return next(itertools.islice(_dict_view(d, dict.keys), index, None))


def dict_value_at(d: dict, index: int) -> Any:
    """The value at position ``index`` of a dict or mappingproxy (insertion order)."""
    return next(itertools.islice(_dict_view(d, dict.values), index, None))


@_source
class DictKeyAtSource(Source):
    """The key at position ``index`` of the dict ``base``: how a key that cannot be rendered
    as a literal (a class, ``typing.Union``, a function) is reached, to be ID_MATCHed."""

    base: Source
    index: int
    helpers: ClassVar[tuple[str, ...]] = ("___dict_key_at",)

    def base_source(self) -> Source:
        return self.base

    def spell(self, base: str) -> str:
        return f"___dict_key_at({base}, {int(self.index)})"

    def get(self, L, G):
        return dict_key_at(self.base.get(L, G), self.index)


@_source
class DictValueAtSource(Source):
    """The value at position ``index`` of the dict ``base`` (its key guarded by a
    ``DictKeyAtSource`` at the same position)."""

    base: Source
    index: int
    helpers: ClassVar[tuple[str, ...]] = ("___dict_value_at",)

    def base_source(self) -> Source:
        return self.base

    def spell(self, base: str) -> str:
        return f"___dict_value_at({base}, {int(self.index)})"

    def get(self, L, G):
        return dict_value_at(self.base.get(L, G), self.index)


def set_item_at(s, index: int) -> Any:
    """The member at position ``index`` of a set or frozenset, in its iteration order."""
    return next(itertools.islice(iter(s), index, None))


@_source
class SetItemAtSource(Source):
    """The member at position ``index`` of the set ``base`` in its iteration order: a set
    read from the frame is guarded by its type, its length and each member's value (or
    identity) here, which is its contents and the order a loop over it sees."""

    base: Source
    index: int
    helpers: ClassVar[tuple[str, ...]] = ("___set_item_at",)

    def base_source(self) -> Source:
        return self.base

    def spell(self, base: str) -> str:
        return f"___set_item_at({base}, {int(self.index)})"

    def get(self, L, G):
        return set_item_at(self.base.get(L, G), self.index)


@_source
class SubclassesSource(Source):
    """``type.__subclasses__(base)``: a class's live direct subclasses, in creation order."""

    base: Source
    helpers: ClassVar[tuple[str, ...]] = ("___type_subclasses",)

    def base_source(self) -> Source:
        return self.base

    def spell(self, base: str) -> str:
        return f"___type_subclasses({base})"

    def get(self, L, G):
        return type.__subclasses__(self.base.get(L, G))


@_source
class TypeSource(Source):
    """``type(base)``."""

    base: Source

    def base_source(self) -> Source:
        return self.base

    def spell(self, base: str) -> str:
        return f"type({base})"

    def get(self, L, G):
        return type(self.base.get(L, G))


@_source
class WeakRefCallSource(Source):
    """``base()``: a zero-argument call: the object a weak reference refers to (None once
    it is gone), or a state query's answer (``G['torch']._C._get_mkldnn_enabled()``)."""

    base: Source

    def base_source(self) -> Source:
        return self.base

    def spell(self, base: str) -> str:
        return f"{base}()"

    def get(self, L, G):
        return self.base.get(L, G)()


@_source
class CallSource(Source):
    """``base(*args)`` with literal arguments: a state query's answer
    (``G['torch'].get_autocast_dtype('cpu')``), asked again on every check."""

    base: Source
    args: tuple

    def __post_init__(self) -> None:
        if type(self.args) is not tuple or not all(is_literal(a) for a in self.args):
            raise TypeError(f"CallSource arguments must be a tuple of literals, got {self.args!r}")

    def base_source(self) -> Source:
        return self.base

    def spell(self, base: str) -> str:
        return f"{base}({', '.join(render_literal(a) for a in self.args)})"

    def get(self, L, G):
        return self.base.get(L, G)(*self.args)


@_source
class NNModuleSource(Source):
    """Marks ``base`` as an ``nn.Module`` instance; renders as the base itself."""

    base: Source

    def base_source(self) -> Source:
        return self.base

    def spell(self, base: str) -> str:
        return base

    def get(self, L, G):
        return self.base.get(L, G)


@_source
class ParamSource(Source):
    """A module's registered parameter: ``base._parameters['weight']``."""

    base: Source
    param_name: str
    table: ClassVar[str] = "_parameters"

    def __post_init__(self) -> None:
        _check_name(self.param_name, f"{type(self).__name__} name")

    def base_source(self) -> Source:
        return self.base

    def spell(self, base: str) -> str:
        return f"{base}.{self.table}[{self.param_name!r}]"

    def get(self, L, G):
        return getattr(self.base.get(L, G), self.table)[self.param_name]


@_source
class BufferSource(ParamSource):
    """A module's registered buffer: ``base._buffers['running_mean']``."""

    table: ClassVar[str] = "_buffers"


@_source
class ClosureCellSource(Source):
    """The contents of closure cell ``index`` of a function: ``base.__closure__[0].cell_contents``."""

    base: Source
    index: int

    def __post_init__(self) -> None:
        if type(self.index) is not int:
            raise TypeError(f"ClosureCellSource index must be an int, got {self.index!r}")

    def base_source(self) -> Source:
        return self.base

    def spell(self, base: str) -> str:
        return f"{base}.__closure__[{self.index}].cell_contents"

    def get(self, L, G):
        return self.base.get(L, G).__closure__[self.index].cell_contents


@_source
class CellContentsSource(Source):
    """``base.cell_contents`` for a cell object (e.g. a frame's free variable cell)."""

    base: Source

    def base_source(self) -> Source:
        return self.base

    def spell(self, base: str) -> str:
        return f"{base}.cell_contents"

    def get(self, L, G):
        return self.base.get(L, G).cell_contents


@_source
class TupleIteratorSource(Source):
    """Element ``index`` still to come from a tuple iterator, without advancing it."""

    base: Source
    index: int
    helpers: ClassVar[tuple[str, ...]] = ("___tuple_iterator_getitem",)

    def __post_init__(self) -> None:
        if type(self.index) is not int:
            raise TypeError(f"TupleIteratorSource index must be an int, got {self.index!r}")

    def base_source(self) -> Source:
        return self.base

    def spell(self, base: str) -> str:
        return f"___tuple_iterator_getitem({base}, {self.index})"

    def get(self, L, G):
        return tuple_iterator_getitem(self.base.get(L, G), self.index)


@_source
class TupleIteratorLenSource(Source):
    """How many items a tuple iterator has left, without advancing it."""

    base: Source
    helpers: ClassVar[tuple[str, ...]] = ("___tuple_iterator_len",)

    def base_source(self) -> Source:
        return self.base

    def spell(self, base: str) -> str:
        return f"___tuple_iterator_len({base})"

    def get(self, L, G):
        return tuple_iterator_len(self.base.get(L, G))


def tuple_iterator_getitem(it: Any, index: int) -> Any:
    """Item ``index`` of what a tuple iterator has left, read through ``__reduce__``."""
    _, (obj,), start = it.__reduce__()
    return obj[start + index]


def tuple_iterator_len(it: Any) -> int:
    """How many items a tuple iterator has left."""
    return it.__length_hint__()


@_source
class ShapeSource(Source):
    """Size of dimension ``dim`` of a tensor: ``L['x'].size()[0]`` (a dynamic-shape symbol)."""

    base: Source
    dim: int

    def __post_init__(self) -> None:
        if type(self.dim) is not int:
            raise TypeError(f"ShapeSource dim must be an int, got {self.dim!r}")

    def base_source(self) -> Source:
        return self.base

    def spell(self, base: str) -> str:
        return f"{base}.size()[{self.dim}]"

    def get(self, L, G):
        return self.base.get(L, G).size()[self.dim]


@_source
class StrideSource(Source):
    """Stride of dimension ``dim`` of a tensor: ``L['x'].stride()[0]``."""

    base: Source
    dim: int

    def __post_init__(self) -> None:
        if type(self.dim) is not int:
            raise TypeError(f"StrideSource dim must be an int, got {self.dim!r}")

    def base_source(self) -> Source:
        return self.base

    def spell(self, base: str) -> str:
        return f"{base}.stride()[{self.dim}]"

    def get(self, L, G):
        return self.base.get(L, G).stride()[self.dim]


@_source
class NumelSource(Source):
    """``base.numel()``."""

    base: Source

    def base_source(self) -> Source:
        return self.base

    def spell(self, base: str) -> str:
        return f"{base}.numel()"

    def get(self, L, G):
        return self.base.get(L, G).numel()


def from_numpy(array: Any) -> Any:
    """``torch.from_numpy(array)``: the tensor over an ndarray's memory; over a copy for a
    read-only array (torch cannot view one: it warns, and eager numpy refuses writes, so a
    trace that reads such an array refuses its writes too)."""
    import torch

    if not array.flags.writeable:
        array = array.copy()
    return torch.from_numpy(array)


@_source
class NumpyTensorSource(Source):
    """``torch.from_numpy(base)``: an ndarray argument as the tensor a graph takes (the
    array itself is guarded; this source only loads the tensor for the call)."""

    base: Source
    helpers: ClassVar[tuple[str, ...]] = ("___from_numpy",)

    def base_source(self) -> Source:
        return self.base

    def spell(self, base: str) -> str:
        return f"___from_numpy({base})"

    def get(self, L, G):
        return from_numpy(self.base.get(L, G))


@_source
class EnvironSource(Source):
    """``os.environ.get(key)``: an environment variable's value, None when unset (a root:
    the process environment, not a frame's)."""

    key: str
    helpers: ClassVar[tuple[str, ...]] = ("___environ_get",)

    def __post_init__(self) -> None:
        _check_name(self.key, "EnvironSource key")

    def spell(self, base: str) -> str:
        return f"___environ_get({render_literal(self.key)})"

    def get(self, L, G):
        return os.environ.get(self.key)


@_source
class HandledExceptionSource(Source):
    """``sys.exception()``: the exception the caller is handling when the frame starts, None
    outside an except block (a root: the thread's state, not a frame's)."""

    helpers: ClassVar[tuple[str, ...]] = ("___handled_exception",)

    def spell(self, base: str) -> str:
        return "___handled_exception()"

    def get(self, L, G):
        return handled_exception()


def handled_exception() -> BaseException | None:
    return sys.exc_info()[1]


#: Helper callables a rendered source may reference, by the closure name it uses.
SOURCE_HELPERS: dict[str, Any] = {
    "___tuple_iterator_getitem": tuple_iterator_getitem,
    "___environ_get": os.environ.get,
    "___handled_exception": handled_exception,
    "___tuple_iterator_len": tuple_iterator_len,
    "___dict_getitem": dict.__getitem__,
    "___list_getitem": list.__getitem__,
    "___list_len": list.__len__,
    "___type_subclasses": type.__subclasses__,
    "___dict_key_at": dict_key_at,
    "___dict_value_at": dict_value_at,
    "___set_item_at": set_item_at,
    "___from_numpy": from_numpy,
}
