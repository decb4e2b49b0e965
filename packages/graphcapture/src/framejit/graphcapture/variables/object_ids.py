"""id() of an object the trace made: a token that only answers ==/!= with another one.

Its number is not known while tracing (the object exists only as a tracker), but whether
two ids are equal is: they are ids of one object exactly when the trackers are the same
object (builtins._same_object).  Any other use of the token is a graph break; one that
escapes the frame is `id()` of the object as rebuilt.  str() of an object whose class
keeps object's repr ("<m.C object at 0x...>", an address) is a token of the same kind:
it escapes as that text made from the object as rebuilt, any other use breaks the graph.
"""

from __future__ import annotations

import operator

from ..exc import Unsupported
from .base import ConstantVariable, VariableTracker


class ObjectIdVariable(VariableTracker):
    def __init__(self, obj: VariableTracker):
        self.obj = obj

    def python_type(self) -> type:
        return int

    def reconstruct(self, cg) -> None:
        cg.add_push_null(lambda: cg.load_const(id))
        self.obj.reconstruct(cg)
        cg.call(1)

    def __repr__(self) -> str:
        return f"ObjectIdVariable({self.obj})"


def compare_ids(tx, op, a: VariableTracker, b: VariableTracker) -> VariableTracker:
    """`id(x) == id(y)` / `!=` where one side is the id of an object the trace made."""
    from .builtins import identity_compare

    if op not in (operator.eq, operator.ne) or not (
        isinstance(a, ObjectIdVariable) and isinstance(b, ObjectIdVariable)
    ):
        raise Unsupported(f"{op.__name__} on the id() of an object made in the trace")
    if a.obj is b.obj:
        same = True
    elif made_here(a.obj) or made_here(b.obj):
        same = False  # a new object has this one tracker
    else:
        same = identity_compare(tx, operator.is_, a.obj, b.obj).as_python_constant()
    return ConstantVariable(same == (op is operator.eq))


def made_here(obj: VariableTracker) -> bool:
    """An object the trace made, which its one tracker stands for: a new user object or
    exception, a new list, dict or set (not a tuple or frozenset: CPython may hand back
    the very same one, `tuple(t) is t`, where the trace makes another tracker)."""
    from .containers import DictVariable, ListVariable
    from .sets import SetVariable

    if getattr(obj, "made_in_trace", False):
        return True
    if isinstance(obj, SetVariable):
        return obj.fresh or (not obj.frozen and obj.source is None)
    return isinstance(obj, (ListVariable, DictVariable)) and obj.source is None


def has_id_token(obj: VariableTracker) -> bool:
    """id(obj) is a token: obj is made here, or a frozenset the trace built (one tracker per
    frozenset object; `fs.copy()` hands back the same tracker, as CPython the same object)."""
    from .sets import SetVariable

    return made_here(obj) or (isinstance(obj, SetVariable) and obj.source is None)


def builtin_id(tx, obj: VariableTracker) -> VariableTracker:
    """id() of an object read from the frame's inputs (a tensor, a container, any object):
    folded, with that very object guarded (ID_MATCH), so another object there recompiles;
    of an object the trace made, a token (ObjectIdVariable)."""
    from framejit.guards import GuardKind

    from .base import ConcreteValueVariable, LazyVariable
    from .containers import BaseListVariable, DictVariable
    from .sets import SetVariable
    from .tensor import TensorVariable

    source = getattr(obj, "source", None)
    if source is None and not isinstance(obj, LazyVariable) and has_id_token(obj):
        return ObjectIdVariable(obj)
    if source is None or isinstance(obj, LazyVariable):
        raise Unsupported("id() of a traced value")
    if isinstance(obj, ConcreteValueVariable):
        value = obj.value
    elif isinstance(obj, (BaseListVariable, DictVariable, SetVariable, TensorVariable)):
        # read from the inputs (mutated in place or not, the same object)
        try:
            value = source.get(tx.root.f_locals, tx.root.f_globals)
        except Exception:  # the trace cannot name it: not folded
            raise Unsupported(f"id() of a value read through {source.name()}") from None
    else:
        raise Unsupported("id() of a traced value")
    tx.output.add_guard(source, GuardKind.ID_MATCH, value, origin=tx.origin())
    return ConstantVariable(id(value))


class DefaultReprVariable(VariableTracker):
    """str(obj) / repr(obj) where obj's class leaves both to object: the text holds the
    object's address, known once the object exists.  The class is taken when str() runs."""

    def __init__(self, obj: VariableTracker, cls: type):
        self.obj = obj
        self.cls = cls

    def python_type(self) -> type:
        return str

    def reconstruct(self, cg) -> None:
        cg.add_push_null(lambda: cg.load_const(_default_repr))
        self.obj.reconstruct(cg)
        cg.load_const(self.cls.__module__)
        cg.load_const(self.cls.__qualname__)
        cg.call(3)

    def __repr__(self) -> str:
        return f"DefaultReprVariable({self.obj})"


def _default_repr(obj, module: str, qualname: str) -> str:
    """object.__repr__'s text for a class named `module.qualname` (Objects/typeobject.c)."""
    if module == "builtins":
        return f"<{qualname} object at {id(obj):#x}>"
    return f"<{module}.{qualname} object at {id(obj):#x}>"
