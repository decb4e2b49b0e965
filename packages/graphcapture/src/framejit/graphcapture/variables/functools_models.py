"""functools and operator's helpers on trackers: partial, reduce, wraps, itemgetter, ....

A partial made in the frame (or read from a guarded source) is a `PartialVariable`: calls
merge its arguments, `.func/.args/.keywords` read back, and it is rebuilt as
functools.partial(func, *args, **keywords) when it escapes.  lru_cache'd functions are
inlined through `__wrapped__` by the builder (the cache is skipped, as TorchDynamo does:
only pure functions give the same answer either way).
"""

from __future__ import annotations

import functools
import operator

from ..exc import Unsupported
from .base import ConstantVariable, VariableTracker


class PartialVariable(VariableTracker):
    def __init__(self, func: VariableTracker, args: list, kwargs: dict, source=None, real=None):
        if isinstance(func, PartialVariable):  # partial(partial(f, a), b) is partial(f, a, b)
            args = [*func.args, *args]
            kwargs = {**func.kwargs, **kwargs}
            func = func.func
        self.func = func
        self.args = list(args)
        self.kwargs = dict(kwargs)
        self.source = source
        self.real = real  # the partial read from `source` (only while tracing)

    def python_type(self) -> type:
        return type(self.real) if self.real is not None else functools.partial

    def call_function(self, tx, args, kwargs) -> VariableTracker:
        return self.func.call_function(tx, [*self.args, *args], {**self.kwargs, **kwargs})

    def var_getattr(self, tx, name: str) -> VariableTracker:
        from .containers import DictVariable, TupleVariable

        if name == "func":
            return self.func
        if name == "args":
            return TupleVariable(list(self.args))
        if name == "keywords":
            return DictVariable(dict(self.kwargs))
        return self._other_attribute(tx, name)

    def _other_attribute(self, tx, name: str) -> VariableTracker:
        """An attribute of the partial object itself (`hasattr(p, "__name__")`): its instance
        dict (keys guarded; empty for a partial made in the frame), then its class's."""
        from framejit.guards import GuardKind

        from ..sources import AttrSource
        from .builder import wrap
        from .exceptions import observed

        cls = self.python_type()
        if self.source is not None:
            if self.real is None:
                raise Unsupported(f"attribute {name!r} of functools.partial")
            own = self.real.__dict__
            if not all(type(k) is str for k in own):
                raise Unsupported("a functools.partial __dict__ with non-str keys")
            tx.output.add_guard(
                AttrSource(self.source, "__dict__"), GuardKind.DICT_KEYS, own, origin=tx.origin()
            )
            if name in own:
                return wrap(tx, own[name], AttrSource(self.source, name))
        if not any(name in klass.__dict__ for klass in cls.__mro__):  # (not type's __name__)
            raise observed(
                AttributeError,
                f"{cls.__qualname__!r} object has no attribute {name!r}",
                reason=f"attribute {name!r} of functools.partial",
            )
        if name in ("__doc__", "__module__"):
            return ConstantVariable(getattr(cls, name))
        raise Unsupported(f"attribute {name!r} of functools.partial")

    def has_attribute(self, name: str) -> bool | None:
        """hasattr() of a partial made in the frame: its instance dict is empty (the trace
        sets no attributes on it), so functools.partial's own attributes decide."""
        if self.source is not None:
            return None
        return hasattr(_PROBE, name)

    def reconstruct(self, cg) -> None:
        if self.source is not None:
            cg.load_source(self.source)
            return
        cg.add_push_null(lambda: cg.load_const(_make_partial))
        self.func.reconstruct(cg)
        for a in self.args:
            a.reconstruct(cg)
        cg.build_tuple(len(self.args))
        for k, v in self.kwargs.items():
            cg.load_const(k)
            v.reconstruct(cg)
        cg.build_map(len(self.kwargs))
        cg.call(3)

    def __repr__(self) -> str:
        return f"PartialVariable({self.func!r})"


_PROBE = functools.partial(print)


def _make_partial(func, args, keywords):
    return functools.partial(func, *args, **keywords)


def _partial(tx, fn=None, *args, **kwargs):
    if fn is None:
        raise Unsupported("TypeError: partial() without a function")
    return PartialVariable(fn, list(args), kwargs)


def _reduce(tx, fn, iterable, initial=None):
    items = iterable.unpack(tx)
    if initial is None:
        if not items:
            raise Unsupported("TypeError: reduce() of an empty iterable with no initial value")
        acc, items = items[0], items[1:]
    else:
        acc = initial
    for item in items:
        acc = fn.call_function(tx, [acc, item], {})
    return acc


class _WrapsVariable(VariableTracker):
    """functools.wraps(wrapped) applied to a function made in the frame: update_wrapper's
    copies (WRAPPER_ASSIGNMENTS, the wrapped function's `__dict__`, `__wrapped__`) are
    stored on the tracker, so they are read back in the trace and set when it is rebuilt.

    A real function as the wrapper would be changed in place by update_wrapper: refused.
    """

    def __init__(self, wrapped: VariableTracker):
        self.wrapped = wrapped

    def call_function(self, tx, args, kwargs) -> VariableTracker:
        from .functions import NestedUserFunctionVariable

        if len(args) != 1 or kwargs:
            raise Unsupported("functools.wraps(...) applied to other than one function")
        wrapper = args[0]
        if not isinstance(wrapper, NestedUserFunctionVariable):
            raise Unsupported(f"functools.wraps(...) applied to {wrapper} (changed in place)")
        for name in functools.WRAPPER_ASSIGNMENTS:
            value = _wrapped_attribute(tx, self.wrapped, name)
            if value is not None:
                wrapper.store_attr(name, value)
        for name, value in _wrapped_dict_items(tx, self.wrapped):
            wrapper.store_attr(name, value)
        wrapper.store_attr("__wrapped__", self.wrapped)
        return wrapper


def _wrapped_attribute(tx, wrapped, name: str):
    """update_wrapper's `getattr(wrapped, name)`, None where it raises AttributeError."""
    from .functions import NestedUserFunctionVariable, UserFunctionVariable

    if isinstance(wrapped, NestedUserFunctionVariable):
        if name == "__annotations__":
            if wrapped.has_annotations:
                raise Unsupported(
                    "functools.wraps of a function made in the frame with annotations"
                )
            return None  # both sides' are empty dicts: the wrapper keeps its own
        if name == "__type_params__":
            return ConstantVariable(())
        return wrapped.var_getattr(tx, name)
    if isinstance(wrapped, UserFunctionVariable):
        real = wrapped.value
        if not hasattr(real, name):
            return None
        if name in ("__annotations__", "__type_params__"):
            from ..sources import AttrSource
            from .builder import wrap

            if wrapped.source is None:
                raise Unsupported(f"{name} of a function without a source")
            return wrap(tx, getattr(real, name), AttrSource(wrapped.source, name))
        return wrapped.var_getattr(tx, name)
    raise Unsupported(f"functools.wraps({wrapped})")


def _wrapped_dict_items(tx, wrapped):
    """update_wrapper's `wrapper.__dict__.update(wrapped.__dict__)`, its keys guarded."""
    from framejit.guards import GuardKind

    from ..sources import AttrSource
    from .functions import NestedUserFunctionVariable

    if isinstance(wrapped, NestedUserFunctionVariable):
        return list(wrapped.attrs.items())
    real_dict = wrapped.value.__dict__
    if wrapped.source is None:
        raise Unsupported("__dict__ of a function without a source")
    tx.output.add_guard(
        AttrSource(wrapped.source, "__dict__"), GuardKind.DICT_KEYS, real_dict, origin=tx.origin()
    )
    return [(name, wrapped.var_getattr(tx, name)) for name in real_dict]


def _wraps(tx, wrapped, *args, **kwargs):
    if args or kwargs:
        raise Unsupported("functools.wraps with assigned=/updated=")
    return _WrapsVariable(wrapped)


def _setitem(tx, obj, index, value):
    obj.call_method(tx, "__setitem__", [index, value], {})
    return ConstantVariable(None)


def _contains(tx, container, item):
    from .builtins import contains_op

    return ConstantVariable(contains_op(tx, container, item))


class _ItemGetter(VariableTracker):
    def __init__(self, keys):
        self.keys = keys

    def call_function(self, tx, args, kwargs):
        from .builtins import getitem
        from .containers import TupleVariable

        (obj,) = args
        items = [getitem(tx, obj, k) for k in self.keys]
        return items[0] if len(items) == 1 else TupleVariable(items)


class _AttrGetter(VariableTracker):
    def __init__(self, names):
        self.names = [n.as_python_constant() for n in names]

    def call_function(self, tx, args, kwargs):
        from .containers import TupleVariable

        (obj,) = args
        out = []
        for dotted in self.names:
            value = obj
            for part in dotted.split("."):
                value = value.var_getattr(tx, part)
            out.append(value)
        return out[0] if len(out) == 1 else TupleVariable(out)


class _MethodCaller(VariableTracker):
    def __init__(self, name, args, kwargs):
        self.name = name.as_python_constant()
        self.args = args
        self.kwargs = kwargs

    def call_function(self, tx, args, kwargs):
        (obj,) = args
        return obj.call_method(tx, self.name, list(self.args), dict(self.kwargs))


FUNCTOOLS_MODELS = {
    functools.partial: _partial,
    functools.reduce: _reduce,
    functools.wraps: _wraps,
    # operator's arithmetic/comparison functions are builtins handlers (stdlib_ops.py)
    operator.setitem: _setitem,
    operator.contains: _contains,
    operator.itemgetter: lambda tx, *keys: _ItemGetter(keys),
    operator.attrgetter: lambda tx, *names: _AttrGetter(names),
    operator.methodcaller: lambda tx, name, *a, **k: _MethodCaller(name, a, k),
}
