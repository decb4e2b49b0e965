"""Weak references: `weakref.ref` objects from the frame's inputs or made in it, and proxies.

- An input `weakref.ref` (its type guarded) called in the trace gives its referent, read
  through `L['w']()` (WeakRefCallSource) and guarded like any value found there: a
  referent that dies between calls (None) or changes recompiles.  Nothing is pinned: the
  guards hold what they check, the referent is loaded at each call.
- `weakref.ref(obj)` in the frame: made, and called to give `obj`, while the trace can see
  that obj is referenced (a local or stack slot of a frame being traced holds it);
  otherwise whether it was freed depends on reference counts the trace does not model: a
  break.
  If it escapes, `weakref.ref(obj)` is made by the generated code.
- A `weakref.proxy` input: plain instance attributes of its referent are read through it
  (the referent's class guarded by identity); anything else is a break.
"""

from __future__ import annotations

import weakref

from framejit.guards import GuardKind, WeakRefCallSource

from ..exc import Unsupported
from ..sources import AttrSource
from .base import ConcreteValueVariable, VariableTracker

PROXY_TYPES = (weakref.ProxyType, weakref.CallableProxyType)


class _WeakInput(ConcreteValueVariable):
    """An input weak reference or proxy (its type guarded): never a constant, since what it
    refers to may die or change between calls."""

    what = "weak reference"

    @classmethod
    def wrap(cls, tx, value, source) -> VariableTracker:
        if source is None:
            raise Unsupported(f"a {cls.what} the trace cannot reread")
        tx.output.add_guard(source, GuardKind.TYPE_MATCH, value, origin=tx.origin())
        return cls(value, source)

    def as_python_constant(self):
        raise Unsupported(f"a {self.what} is not a constant")


class InputWeakRefVariable(_WeakInput):
    def call_function(self, tx, args, kwargs) -> VariableTracker:
        if args or kwargs:
            raise Unsupported("TypeError: a weak reference called with arguments")
        from .builder import wrap

        return wrap(tx, self.value(), WeakRefCallSource(self.source))


def make_weakref(tx, args: list, kwargs: dict) -> VariableTracker:
    if len(args) != 1 or kwargs:
        raise Unsupported("weakref.ref with a callback")
    referent = args[0]
    try:
        kind = referent.python_type()
    except Unsupported:
        kind = None
    if kind is None or getattr(kind, "__weakrefoffset__", 0) == 0:
        raise Unsupported(f"weakref.ref of {referent} (TypeError in eager, or unknown type)")
    if not _still_held(tx, referent):
        # (eager frees a temporary at once: `weakref.ref(x * 2)()` is None)
        raise Unsupported("weakref.ref of a value no local of the frame holds")
    # CPython keeps one callback-less ref per object: `weakref.ref(o) is weakref.ref(o)`,
    # and it is what `o.__weakref__` gives
    holder = _identity(referent)
    made = getattr(holder, "weakref_made", None)
    if made is None:
        made = holder.weakref_made = NewWeakRefVariable(referent)
    return made


_WEAKREF_SLOT = type(type("_Probe", (), {}).__dict__["__weakref__"])


def dunder_weakref(obj: VariableTracker, class_attr) -> VariableTracker | None:
    """`obj.__weakref__` (the class's weakref slot: the first weak reference to obj, or
    None) of an object the trace made: the `weakref.ref(obj)` the trace made, or None.
    None returned (a break) for any other object: an input's weak references live
    outside the trace."""
    from .base import ConstantVariable

    if not (
        isinstance(class_attr, _WEAKREF_SLOT)
        and class_attr.__name__ == "__weakref__"
        and getattr(obj, "made_in_trace", False)
    ):
        return None
    return getattr(_identity(obj), "weakref_made", None) or ConstantVariable(None)


class NewWeakRefVariable(VariableTracker):
    """`weakref.ref(obj)` made in the frame."""

    def __init__(self, referent: VariableTracker):
        self.referent = referent

    def python_type(self) -> type:
        return weakref.ReferenceType

    def call_function(self, tx, args, kwargs) -> VariableTracker:
        if args or kwargs:
            raise Unsupported("TypeError: a weak reference called with arguments")
        if not _still_held(tx, self.referent):
            raise Unsupported("calling a weak reference whose referent the frame may have freed")
        return self.referent

    def truth(self, tx) -> bool:
        return True  # (a weak reference has no __bool__, dead or alive)

    def reconstruct(self, cg) -> None:
        cg.add_push_null(lambda: cg.load_const(weakref.ref))
        self.referent.reconstruct(cg)
        cg.call(1)


def _still_held(tx, referent: VariableTracker) -> bool:
    """A local or stack slot of a frame being traced (this one or a caller) holds it."""
    target = _identity(referent)
    frame = tx
    while frame is not None:
        held = [*frame.symbolic_locals.values(), *frame.stack]
        if any(_identity(v) is target for v in held):
            return True
        frame = frame.parent
    return False


def _identity(vt):
    identity = getattr(vt, "identity", None)
    return identity() if identity is not None else vt


class ProxyVariable(_WeakInput):
    what = "weakref.proxy"

    def var_getattr(self, tx, name: str) -> VariableTracker:
        from .builder import wrap
        from .objects import _MISSING, _class_lookup

        try:
            cls = self.value.__class__  # the referent's class (ReferenceError once it is gone)
            instance_dict = self.value.__dict__
        except (ReferenceError, AttributeError):
            raise Unsupported("attribute of a weakref.proxy whose referent is gone") from None
        plain = all(
            _class_lookup(cls, dunder) is _class_lookup(object, dunder)
            for dunder in ("__getattribute__", "__getattr__")
        )
        if not plain or _class_lookup(cls, name) is not _MISSING or name not in instance_dict:
            raise Unsupported(f"attribute {name!r} of a weakref.proxy (not a plain attribute)")
        class_source = AttrSource(self.source, "__class__")
        tx.output.add_guard(class_source, GuardKind.ID_MATCH, cls, origin=tx.origin())
        return wrap(tx, instance_dict[name], AttrSource(self.source, name))


wrap_weakref = InputWeakRefVariable.wrap
wrap_proxy = ProxyVariable.wrap
