"""Exception instances the trace builds: their args, attributes, chaining, and rebuild.

`ExceptionObjectVariable` is `cls(*args)` made in the frame: a builtin exception class, or a
user subclass whose Python `__init__` is inlined (its `self.a = a` stores land in `attrs`,
`super().__init__(*a)` sets `args`, as BaseException.__init__ does).  Raising it sets
`__context__` to the exception being handled, as CPython does (`chain_context`); `raise
exc from cause` sets `__cause__` and `__suppress_context__`.  An object that escapes the
frame is rebuilt by `rebuild_exception` from its class, args and stored attributes: its
`__init__` is not run again (its stores were traced).
"""

from __future__ import annotations

import types

from ..exc import Unsupported
from .base import ConstantVariable, VariableTracker
from .objects import UserDefinedObjectVariable

# attributes every exception has, and what they hold until the code sets them
_CHAIN_DEFAULTS = {"__context__": None, "__cause__": None, "__suppress_context__": False}


class ExceptionObjectVariable(UserDefinedObjectVariable):
    """An exception made by the trace: `cls(*args)`, its instance attributes in `attrs`."""

    made_in_trace = True

    def __init__(self, cls: type, args: list, python_init: bool = False):
        super().__init__(BaseException.__new__(cls), None)  # a stand-in: class lookups only
        self.cls = cls
        self.args = list(args)
        self.attrs: dict[str, VariableTracker] = {}
        self.raised = False  # once raised it has a traceback, which the trace does not model
        # rebuilt without running __init__ (its stores were traced) when it is Python's;
        # else by calling the class (a builtin __init__ fills its fields: StopIteration.value)
        self.python_init = python_init

    def python_type(self) -> type:
        return self.cls

    def var_getattr(self, tx, name: str) -> VariableTracker:
        from .containers import TupleVariable

        if name in self.attrs:
            return self.attrs[name]
        if name == "args":
            return TupleVariable(list(self.args))
        if name in _CHAIN_DEFAULTS:
            return ConstantVariable(_CHAIN_DEFAULTS[name])
        if name == "value" and issubclass(self.cls, StopIteration) and not self.python_init:
            # StopIteration.__init__ sets value to its first argument (a generator's return)
            return self.args[0] if self.args else ConstantVariable(None)
        if name == "__traceback__":
            if self.raised:
                raise Unsupported(f"__traceback__ of a traced {self.cls.__name__}")
            return ConstantVariable(None)
        if name == "with_traceback" and _class_attr(self.cls, name) is _WITH_TRACEBACK:
            from .functions import MethodRef

            return MethodRef(self, name)
        owner = next((k for k in self.cls.__mro__ if name in k.__dict__), None)
        if owner is not None and owner.__module__ == "builtins" and name != "__class__":
            # a builtin class's field or method (StopIteration.value, with_traceback)
            raise Unsupported(f"attribute {name!r} of a traced {self.cls.__name__}")
        return self._lookup(tx, name)

    def call_method(self, tx, name: str, args: list, kwargs: dict) -> VariableTracker:
        if name == "with_traceback" and _class_attr(self.cls, name) is _WITH_TRACEBACK:
            return self._with_traceback(tx, args, kwargs)
        return super().call_method(tx, name, args, kwargs)

    def _with_traceback(self, tx, args: list, kwargs: dict) -> VariableTracker:
        """BaseException.with_traceback(tb): tb stored as __traceback__, the exception back.
        Dropping it (None, as unittest's assertRaises does) or giving back the exception's
        own traceback is modelled; any other traceback is not."""
        from .context_managers import TracebackVariable

        if kwargs or len(args) != 1:
            raise Unsupported("TypeError: with_traceback() takes exactly one argument")
        (tb,) = args
        if isinstance(tb, TracebackVariable) and tb.exc is self:
            return self
        if not _is_none(tb):
            raise Unsupported("with_traceback() given a traceback")
        tx.output.side_effects.writes += 1
        self.attrs["__traceback__"] = tb
        return self

    def store_attr(self, name: str, value: VariableTracker) -> None:
        """`exc.name = value`, checked as BaseException's setters check it."""
        if name in ("__context__", "__cause__"):
            if not (isinstance(value, ExceptionObjectVariable) or _is_none(value)):
                raise Unsupported(f"TypeError: exception {name} must be None or an exception")
            if name == "__cause__":
                self.attrs["__cause__"] = value
                self.attrs["__suppress_context__"] = ConstantVariable(True)
                return
        elif name == "__suppress_context__":
            if not value.is_python_constant():
                raise Unsupported("__suppress_context__ set to a non-constant")
        elif name == "__traceback__":
            from .context_managers import TracebackVariable

            if isinstance(value, TracebackVariable) and value.exc is self:
                return  # its own traceback back (contextlib's __exit__ after a throw())
            if not _is_none(value):
                raise Unsupported("__traceback__ set to a traceback")
        elif name == "args":
            from .containers import BaseListVariable

            if not isinstance(value, BaseListVariable):
                raise Unsupported("exception args set to a non-sequence")
            self.args = list(value.items)  # BaseException stores tuple(value)
            self.attrs.pop("args", None)
            return
        self.attrs[name] = value

    def chain_context(self, handled: VariableTracker | None) -> None:
        """Raised while `handled` is being handled: `self.__context__ = handled`, the cycle
        it would close cut (CPython's _PyErr_SetObject)."""
        self.raised = True
        if handled is None or handled is self or not isinstance(handled, ExceptionObjectVariable):
            return
        link, seen = handled, set()
        while isinstance(link, ExceptionObjectVariable) and id(link) not in seen:
            seen.add(id(link))  # (a chain the code looped by hand is walked once)
            nxt = link.attrs.get("__context__")
            if nxt is self:
                link.attrs["__context__"] = ConstantVariable(None)
                break
            link = nxt
        self.attrs["__context__"] = handled

    def reconstruct(self, cg) -> None:
        cg.reconstruct_once(self, self._build)

    def _build(self, cg) -> None:
        cg.add_push_null(lambda: cg.load_const(rebuild_exception))
        cg.load_const(self.cls)
        for a in self.args:
            a.reconstruct(cg)
        cg.build_tuple(len(self.args))
        for name, value in self.attrs.items():
            cg.load_const(name)
            value.reconstruct(cg)
        cg.build_map(len(self.attrs))
        cg.load_const(self.python_init)
        cg.call(4)

    def __repr__(self) -> str:
        return f"ExceptionObjectVariable({self.cls.__name__})"


_WITH_TRACEBACK = BaseException.__dict__["with_traceback"]


def _class_attr(cls: type, name: str):
    return next((k.__dict__[name] for k in cls.__mro__ if name in k.__dict__), None)


# builtin exceptions with fields of their own whose str() is BaseException's, of args alone
_STR_OF_ARGS = (AttributeError, NameError, StopIteration)


def exception_str(exc: ExceptionObjectVariable) -> VariableTracker | None:
    """str(exc) by its builtin class's __str__, which reads only args (KeyError's repr of
    the key, BaseException's joined args): folded on constant args; None otherwise."""
    method = next(k.__dict__["__str__"] for k in exc.cls.__mro__ if "__str__" in k.__dict__)
    owner = getattr(method, "__objclass__", None)
    if not isinstance(method, types.WrapperDescriptorType) or not (
        is_plain_exception_init(getattr(owner, "__init__", None)) or owner in _STR_OF_ARGS
    ):
        return None
    if not all(a.is_python_constant() for a in exc.args):
        return None
    real = BaseException.__new__(owner)
    real.args = tuple(a.as_python_constant() for a in exc.args)
    return ConstantVariable(method(real))


def _is_none(vt: VariableTracker) -> bool:
    return vt.is_python_constant() and vt.as_python_constant() is None


def rebuild_exception(cls, args, attrs, python_init):
    exc = cls.__new__(cls, *args) if python_init else cls(*args)
    exc.args = args
    for name, value in attrs.items():
        setattr(exc, name, value)
    return exc


def is_plain_exception_init(attr) -> bool:
    """`attr` is a builtin exception class's __init__ that only sets args (not OSError's,
    StopIteration's, ... which fill fields of their own)."""
    cls = getattr(attr, "__objclass__", None)
    if not (isinstance(attr, types.WrapperDescriptorType) and isinstance(cls, type)):
        return False
    if not issubclass(cls, BaseException) or cls.__module__ != "builtins":
        return False
    return not any(
        isinstance(v, (types.MemberDescriptorType, types.GetSetDescriptorType))
        for k in cls.__mro__[: cls.__mro__.index(BaseException)]
        for v in k.__dict__.values()
    )


class ExceptionInit(VariableTracker):
    """BaseException.__init__ reached from a subclass's `super().__init__(*args)`."""

    def __init__(self, obj: ExceptionObjectVariable):
        self.obj = obj

    def call_function(self, tx, args, kwargs) -> VariableTracker:
        if kwargs:
            raise Unsupported(f"TypeError: {self.obj.cls.__name__}() takes no keyword arguments")
        self.obj.args = list(args)
        return ConstantVariable(None)
