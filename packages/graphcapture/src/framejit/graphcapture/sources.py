"""Adapter over framejit.guards' Source classes: building sources and emitting code that loads them."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from framejit.guards import (
    AttrSource,
    BuiltinSource,
    CallSource,
    DictItemSource,
    DictKeyAtSource,
    DictValueAtSource,
    GlobalSource,
    ItemSource,
    ListItemSource,
    LocalSource,
    NumpyTensorSource,
    SetItemAtSource,
    ShapeSource,
    SubclassesSource,
    WeakRefCallSource,
)
from framejit.guards.source import dict_key_at, dict_value_at, set_item_at

if TYPE_CHECKING:
    from .codegen import PyCodegen

__all__ = [
    "AttrSource",
    "DictItemSource",
    "DictKeyAtSource",
    "DictValueAtSource",
    "GlobalSource",
    "ItemSource",
    "ListItemSource",
    "LocalSource",
    "SetItemAtSource",
    "SubclassesSource",
    "WeakRefCallSource",
    "emit_load",
    "param_source",
    "source_name",
]


_AT_HELPERS = {
    DictKeyAtSource: dict_key_at,
    DictValueAtSource: dict_value_at,
    SetItemAtSource: set_item_at,
}


def _field(obj: Any, *names: str) -> Any:
    for name in names:
        if hasattr(obj, name):
            return getattr(obj, name)
    raise AttributeError(f"{type(obj).__name__} has none of {names}")


def source_name(source: Any) -> str:
    """The rendered form, e.g. G['torch'].abs ; used as a key and in messages."""
    try:
        return source.name()
    except AttributeError:
        return str(source)


def param_source(module_source: Any, name: str, buffer: bool) -> Any:
    """A module's parameter/buffer: base._parameters['w'] (a dict read, faster than getattr)."""
    try:
        from framejit.guards.source import BufferSource, ParamSource
    except ImportError:
        return AttrSource(module_source, name)
    return (BufferSource if buffer else ParamSource)(module_source, name)


def emit_load(cg: PyCodegen, source: Any) -> None:
    table = getattr(type(source), "table", None)
    if table is not None and hasattr(source, "param_name"):
        emit_load(cg, source.base)
        cg.load_attr(table)
        cg.load_const(source.param_name)
        cg.binary_subscr()
    elif isinstance(source, LocalSource):
        cg.load_local(_field(source, "local_name", "name_", "name"))
    elif isinstance(source, GlobalSource):
        cg.load_global(_field(source, "global_name", "name_", "name"))
    elif isinstance(source, BuiltinSource):  # LOAD_GLOBAL finds it (no global shadows it)
        cg.load_global(source.builtin_name)
    elif isinstance(source, AttrSource):
        emit_load(cg, _field(source, "base"))
        cg.load_attr(_field(source, "member", "attr", "name_"))
    elif isinstance(source, ItemSource):
        emit_load(cg, _field(source, "base"))
        cg.load_const(_field(source, "index", "key"))
        cg.binary_subscr()
    elif isinstance(source, DictItemSource):  # dict.__getitem__(base, key), past an override
        cg.add_push_null(lambda: cg.load_const(dict.__getitem__))
        emit_load(cg, source.base)
        cg.load_const(source.key)
        cg.call(2)
    elif isinstance(source, ListItemSource):  # list.__getitem__(base, i), past an override
        cg.add_push_null(lambda: cg.load_const(list.__getitem__))
        emit_load(cg, source.base)
        cg.load_const(source.index)
        cg.call(2)
    elif isinstance(source, NumpyTensorSource):  # torch.from_numpy(base)
        from framejit.guards.source import from_numpy

        cg.add_push_null(lambda: cg.load_const(from_numpy))
        emit_load(cg, source.base)
        cg.call(1)
    elif isinstance(source, SubclassesSource):  # type.__subclasses__(base)
        cg.add_push_null(lambda: cg.load_const(type.__subclasses__))
        emit_load(cg, source.base)
        cg.call(1)
    elif isinstance(source, (DictKeyAtSource, DictValueAtSource, SetItemAtSource)):
        helper = _AT_HELPERS[type(source)]  # by position
        cg.add_push_null(lambda: cg.load_const(helper))
        emit_load(cg, source.base)
        cg.load_const(source.index)
        cg.call(2)
    elif isinstance(source, (WeakRefCallSource, CallSource)):
        # base(): a weak reference's referent; base(*literals): a state query's answer
        args = source.args if isinstance(source, CallSource) else ()
        cg.add_push_null(lambda: emit_load(cg, source.base))
        for arg in args:
            cg.load_const(arg)
        cg.call(len(args))
    elif isinstance(source, ShapeSource):  # a size symbol's value: x.shape[d] (== x.size()[d])
        emit_load(cg, source.base)
        cg.load_attr("shape")
        cg.load_const(source.dim)
        cg.binary_subscr()
    else:
        from .exc import Unsupported

        raise Unsupported(f"cannot load source {source_name(source)} in generated code")


_NON_WORD = re.compile(r"(?:\W|_)+")  # runs of anything but letters and digits


def python_identifier(source: Any) -> str:
    """A readable identifier for a source: L['a'] -> a, L['self'].fc.weight -> self_fc_weight."""
    name = _NON_WORD.sub("_", source_name(source)).strip("_")
    for prefix in ("L_",):
        if name.startswith(prefix):
            name = name[len(prefix) :]
    if not name or name[0].isdigit():
        name = "v_" + name
    return name
