"""The stdlib callables modelled on trackers (functools, operator, itertools, collections,
inspect, copy, traceback, re, warnings; packaging.version).

One table, `MODELS`: real callable -> handler(tx, *args, **kwargs).  The builder wraps a
listed callable (identity-guarded) as a `ModelledFunctionVariable`; calling it runs the
handler, which returns a tracker or None (None: not modelled for these arguments, a
graph break).  Attribute reads look the attribute up in the same table
(itertools.chain.from_iterable, ...).
"""

from __future__ import annotations

from typing import Any

from ..exc import Unsupported
from ..sources import AttrSource
from .base import ConcreteValueVariable, VariableTracker
from .collections_models import COLLECTIONS_MODELS
from .context_managers import TRACEBACK_MODELS
from .copy_models import COPY_MODELS
from .functools_models import FUNCTOOLS_MODELS
from .inspect_models import INSPECT_MODELS
from .iterators import ITERTOOLS_MODELS
from .re_models import RE_MODELS
from .version_models import version_models
from .warnings_models import WARNINGS_MODELS

MODELS: dict[Any, Any] = {
    **FUNCTOOLS_MODELS,
    **ITERTOOLS_MODELS,
    **COLLECTIONS_MODELS,
    **INSPECT_MODELS,
    **COPY_MODELS,
    **TRACEBACK_MODELS,
    **RE_MODELS,
    **WARNINGS_MODELS,
    **version_models(),
}


def is_modelled(value: Any) -> bool:
    try:
        return value in MODELS
    except TypeError:
        return False


class ModelledFunctionVariable(ConcreteValueVariable):
    """A stdlib callable whose behaviour on trackers is written in `MODELS`."""

    def call_function(self, tx, args, kwargs) -> VariableTracker:
        result = MODELS[self.value](tx, *args, **kwargs)
        if result is None:
            name = getattr(self.value, "__qualname__", repr(self.value))
            raise Unsupported(f"{name} with these arguments is not modelled")
        return result

    def var_getattr(self, tx, name: str) -> VariableTracker:
        from .builder import wrap

        try:
            attr = getattr(self.value, name)
        except AttributeError:
            raise Unsupported(f"AttributeError: {self.value!r} has no {name!r}") from None
        if is_modelled(attr) and isinstance(self.value, type):
            # a C type's attribute is fixed once the type is (identity-guarded); a bound
            # classmethod is a new object per read, so it could not be identity-guarded
            return ModelledFunctionVariable(attr, None)
        source = AttrSource(self.source, name) if self.source is not None else None
        return wrap(tx, attr, source)
