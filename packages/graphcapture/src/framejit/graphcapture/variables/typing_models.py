"""typing's special forms (List, Optional, Dict, Union, ...): subscripts folded.

`typing.List[Variable]` in an annotation runs `_SpecialGenericAlias.__getitem__`, whose
`_tp_cache` closure cannot be guarded.  Subscripting a form is pure (the result depends on
the form, identity-guarded where it was read, and the arguments, constants or classes
folded by identity), so the real subscript runs at trace time and its result is carried
as a constant.
"""

from __future__ import annotations

import operator
import types
from typing import Any

from ..exc import Unsupported
from .base import ConcreteValueVariable, VariableTracker, fold

# the builtin hint objects: `list[int]`, `int | None` (immutable, as typing's forms)
_BUILTIN_HINTS = (types.GenericAlias, types.UnionType)


def is_typing_form(value: Any) -> bool:
    if type(value) in _BUILTIN_HINTS:
        return True
    return type(value).__module__ == "typing" and not isinstance(value, type)


def _hint_argument(vt: VariableTracker):
    """A subscript argument as the form receives it; `Callable[[T], T]`'s argument list is
    a list built in the frame, which the form copies (never a constant tracker)."""
    from .containers import ListVariable, TupleVariable

    if type(vt) is ListVariable:
        return [_hint_argument(item) for item in vt.items]
    if type(vt) is TupleVariable and vt.namedtuple_cls is None:
        return tuple(_hint_argument(item) for item in vt.items)
    return vt.as_python_constant()


# where a class's __class_getitem__ is pure: it builds a hint object from its arguments
# (types.GenericAlias, collections.abc.Callable's alias, typing.Generic's cached subscript)
_PURE_CLASS_GETITEM_MODULES = frozenset({"types", "typing", "typing_extensions", "collections.abc"})


def subscript_class(obj: VariableTracker, index: VariableTracker) -> VariableTracker | None:
    """`Callable[[T], Any]`, `list[int]`, `MyGeneric[T]` evaluated by an annotation in traced
    code, when the argument holds a list built in the frame (a constant subscript folds as
    any constant does).  None when the class's subscript is not a pure hint builder."""
    cls = obj.value if isinstance(obj, ConcreteValueVariable) else None
    if not isinstance(cls, type) or hasattr(type(cls), "__getitem__"):
        return None  # a metaclass __getitem__ (Enum['RED']) is not a hint
    method = getattr(cls, "__class_getitem__", None)
    func = getattr(method, "__func__", method)
    module = getattr(func, "__module__", None)
    if method is None or not (module is None or module in _PURE_CLASS_GETITEM_MODULES):
        return None  # (a builtin method has no module: list.__class_getitem__)
    try:
        argument = _hint_argument(index)
    except Unsupported:
        return None
    return TypingFormVariable(fold(operator.getitem, cls, argument))


class TypingFormVariable(ConcreteValueVariable):
    """A typing special form or an alias made from one (`List[int]`)."""

    def getitem(self, tx, index: VariableTracker) -> VariableTracker:
        return TypingFormVariable(fold(operator.getitem, self.value, _hint_argument(index)))

    def var_getattr(self, tx, name: str) -> VariableTracker:
        # forms and aliases are immutable and identity-guarded: `Optional[int].__origin__`
        # (typing.get_origin) is fixed by the form
        from .builder import wrap

        try:
            value = getattr(self.value, name)
        except AttributeError:
            raise Unsupported(f"AttributeError: {self.value!r} has no attribute {name!r}") from None
        is_method = isinstance(value, types.MethodType) or (
            callable(value) and not isinstance(value, type)
        )
        if is_method and not is_typing_form(value):
            raise Unsupported(f"method {name!r} of a typing form")
        return wrap(tx, value, None)

    def reconstruct(self, cg) -> None:
        if self.source is not None:
            cg.load_source(self.source)
        else:
            cg.load_const(self.value)
