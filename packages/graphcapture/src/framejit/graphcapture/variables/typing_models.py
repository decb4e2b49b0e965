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
