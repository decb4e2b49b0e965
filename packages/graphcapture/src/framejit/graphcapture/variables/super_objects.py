"""`super(cls, obj)` in the trace: attribute lookup past cls in obj's MRO, each found class
attribute guarded; rebuilt after a graph break as `super(cls, obj)`, and wrapped again
(builder._wrap_super) when a resume function receives one."""

from __future__ import annotations

import types

from ..exc import Unsupported
from ..sources import AttrSource, ItemSource
from .base import VariableTracker
from .builtin_bases import slot_method
from .classmethods import bind_classmethod
from .functions import UserFunctionVariable, UserMethodVariable
from .objects import (
    _MODULE_CALL,
    _OBJECT_COMPARE,
    _OBJECT_DELATTR,
    _OBJECT_GETATTRIBUTE,
    _OBJECT_INIT,
    _OBJECT_NEW,
    _OBJECT_SETATTR,
    GetAttrMixin,
    NNModuleVariable,
    UserDefinedClassVariable,
    UserDefinedObjectVariable,
    _ModuleCall,
    _ObjectCompare,
    _ObjectMethod,
)


class SuperVariable(VariableTracker):
    """`super(cls, obj)`: attribute lookup in the MRO of obj's type after cls."""

    def __init__(self, cls: type, obj: VariableTracker, source=None):
        self.cls = cls
        self.obj = obj
        self.source = source

    def python_type(self) -> type:
        return super

    def reconstruct(self, cg) -> None:
        """`super(cls, obj)` again after the graph (the zero-argument form's __class__ cell
        and first argument are the same pair): cls is the class the trace looked up in,
        fixed by the guards on the function it came from; built once per generated code."""
        if self.source is not None:
            cg.load_source(self.source)
            return
        cg.reconstruct_once(self, self._build)

    def _build(self, cg) -> None:
        cg.add_push_null(lambda: cg.load_const(super))
        cg.load_const(self.cls)
        self.obj.reconstruct(cg)
        cg.call(2)

    def var_getattr(self, tx, name: str) -> VariableTracker:
        # super() in a classmethod has the class itself as its object
        is_class = isinstance(self.obj, UserDefinedClassVariable) and (
            isinstance(self.obj.value, type) and issubclass(self.obj.value, self.cls)
        )  # else a class as an instance (of a metaclass: super() in its __call__)
        obj_type = self.obj.value if is_class else self.obj.python_type()
        mro = obj_type.__mro__
        if self.cls not in mro:
            raise Unsupported("TypeError: super(type, obj): obj is not an instance of type")
        start = mro.index(self.cls) + 1
        for at, klass in enumerate(mro[start:], start):
            if name in klass.__dict__:
                attr = klass.__dict__[name]
                self._guard_found(tx, is_class, at, name, attr)
                if isinstance(attr, classmethod):
                    owner = self.obj if is_class else UserDefinedClassVariable(obj_type)
                    return bind_classmethod(tx, attr, owner)
                if isinstance(attr, staticmethod):
                    return UserFunctionVariable(attr.__func__)
                if is_class and isinstance(attr, types.FunctionType):
                    return UserFunctionVariable(attr)  # super(C, C).f: the plain function
                if attr is _MODULE_CALL and isinstance(self.obj, NNModuleVariable):
                    return _ModuleCall(self.obj)
                if attr is _OBJECT_GETATTRIBUTE and isinstance(self.obj, GetAttrMixin):
                    return _ObjectMethod(self.obj, "getattr")
                if attr is _OBJECT_SETATTR and isinstance(self.obj, GetAttrMixin):
                    return _ObjectMethod(self.obj, "setattr")
                if attr is _OBJECT_DELATTR and isinstance(self.obj, GetAttrMixin):
                    return _ObjectMethod(self.obj, "delattr")
                if attr is _OBJECT_INIT and not is_class:
                    return _ObjectMethod(self.obj, "init")
                if attr in _OBJECT_COMPARE and not is_class:
                    return _ObjectCompare(self.obj, _OBJECT_COMPARE[attr])
                if attr is _OBJECT_NEW:
                    from .user_classes import ObjectNewVariable

                    return ObjectNewVariable()
                if name == "__init__" and isinstance(self.obj, UserDefinedObjectVariable):
                    from . import exception_objects as eo

                    if isinstance(self.obj, eo.ExceptionObjectVariable) and (
                        eo.is_plain_exception_init(attr)
                    ):
                        return eo.ExceptionInit(self.obj)
                if isinstance(attr, types.FunctionType):
                    return UserMethodVariable(attr, self.obj)
                bound = None if is_class else slot_method(self.obj, obj_type, attr, name)
                if bound is not None:
                    return bound
                return self._plain_attribute(tx, is_class, at, name, attr)
        raise Unsupported(f"AttributeError: super() has no {name!r}")

    def _plain_attribute(self, tx, is_class: bool, at: int, name: str, attr):
        """`super().a` of a class attribute that is no method: a value (read where it
        lives, guarded by _guard_found), or a property's Python getter on obj."""
        from .builder import wrap

        if self.obj.source is None:
            raise Unsupported(f"super().{name} of an object the guards cannot reach")
        if isinstance(attr, property) and isinstance(attr.fget, types.FunctionType):
            if is_class:
                return wrap(tx, attr, None)
            return UserFunctionVariable(attr.fget).call_function(tx, [self.obj], {})
        if hasattr(type(attr), "__get__"):
            raise Unsupported(f"super().{name} is a {type(attr).__name__} descriptor")
        return wrap(tx, attr, self._found_source(is_class, at, name))

    def _found_source(self, is_class: bool, at: int, name: str):
        from framejit.guards import TypeSource

        owner = self.obj.source if is_class else TypeSource(self.obj.source)
        klass = ItemSource(AttrSource(owner, "__mro__"), at)
        return ItemSource(AttrSource(klass, "__dict__"), name)

    def _guard_found(self, tx, is_class: bool, at: int, name: str, attr) -> None:
        """`type(obj).__mro__[at].__dict__[name] is attr`: the class attribute super()
        found, which the program may rebind between calls (`Base.helper = other`)."""
        if self.obj.source is None:
            return
        from framejit.guards import GuardKind

        source = self._found_source(is_class, at, name)
        tx.output.add_guard(source, GuardKind.ID_MATCH, attr, origin=tx.origin())
