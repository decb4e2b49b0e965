"""Mutations the trace made to objects that exist outside it, replayed by the generated code.

Tracing never mutates real objects: list/dict changes, attribute stores, global stores
and stores to the compiled frame's free variables (`nonlocal`) are recorded here, seen by
later reads in the same trace, and replayed (with logging calls of constant arguments,
`record_call`) right after the compiled graph runs (before
any graph-break instruction), in program order; free-variable stores come last, all
values first, so that every replayed value is the one the trace computed.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .exc import Unsupported

if TYPE_CHECKING:
    from .codegen import PyCodegen
    from .variables.base import VariableTracker


# the value of an attribute `del obj.name` removed (no tracker: nothing to rebuild)
DELETED: Any = type("Deleted", (), {"__repr__": lambda self: "<deleted>"})()


class SideEffects:
    def __init__(self) -> None:
        self._order: list[tuple[str, Any]] = []
        self._containers: dict[int, VariableTracker] = {}
        self._attrs: dict[tuple[int, str], tuple[VariableTracker, VariableTracker]] = {}
        self._globals: dict[str, VariableTracker] = {}
        self._cells: dict[str, VariableTracker] = {}
        # every store or mutation seen, replayed or not (objects made by the trace too)
        self.writes = 0
        # what each write was to, in order: the tracker, or None for a global, a free
        # variable or a recorded call (autograd_function checks what a forward wrote)
        self.write_targets: list[VariableTracker | None] = []

    def escaping_values(self) -> list:
        """What the replay stores where it outlives the frame: globals, free variables,
        attributes, and the mutated containers themselves."""
        return [
            *self._globals.values(),
            *self._cells.values(),
            *(value for _, value, _ in self._attrs.values()),
            *self._containers.values(),
        ]

    def __bool__(self) -> bool:
        return bool(self._order) or bool(self._cells)

    def mutated(self, container: VariableTracker) -> None:
        self.writes += 1
        self.write_targets.append(container)
        if container.source is None:
            return  # made by the trace: rebuilt from its final contents when needed
        if id(container) not in self._containers:
            self._containers[id(container)] = container
            self._order.append(("container", container))

    def store_attr(
        self, obj: VariableTracker, name: str, value: VariableTracker, how: str = "setattr"
    ) -> None:
        """`obj.name = value`, replayed as `how` says (_REPLAY_STORE): "setattr" as the
        program wrote it; "object" as object.__setattr__ does it (what a class's own
        __setattr__ ends with), without calling that __setattr__ again; "dict" as
        `obj.__dict__[name] = value`, past any descriptor of the class."""
        self.writes += 1
        self.write_targets.append(obj)
        if getattr(obj, "made_in_trace", False):
            obj.attrs[name] = value  # rebuilt whole if it escapes: nothing to replay
            return
        if getattr(obj, "source", None) is None and not obj.has_tensors():
            # (a tensor the graph made is one of its outputs: the replay stores on that)
            raise Unsupported(f"attribute store on an object without a source ({obj})")
        key = (id(obj), name)
        if key not in self._attrs:
            self._order.append(("attr", key))
        self._attrs[key] = (obj, value, how)

    def delete_attr(self, obj: VariableTracker, name: str, existed: bool) -> None:
        """`del obj.name` on an object with a source, replayed as DELETE_ATTR; later reads
        in the trace find nothing (is_deleted).  `existed`: the real object has the
        attribute now; one only the trace stored leaves nothing to replay."""
        if existed:
            self.store_attr(obj, name, DELETED, how="delete")
            return
        self.writes += 1
        self.write_targets.append(obj)
        key = (id(obj), name)
        if self._attrs.pop(key, None) is not None:
            self._order.remove(("attr", key))

    def is_deleted(self, obj: VariableTracker, name: str) -> bool:
        found = self._attrs.get((id(obj), name))
        return found is not None and found[1] is DELETED

    def pending_attr(self, obj: VariableTracker, name: str) -> VariableTracker | None:
        if getattr(obj, "made_in_trace", False):
            return obj.attrs.get(name)
        found = self._attrs.get((id(obj), name))
        if found is not None and found[1] is DELETED:
            # eager raises AttributeError (or finds a class attribute): that runs at a break
            raise Unsupported(f"AttributeError: {name!r} was deleted earlier in the frame")
        return None if found is None else found[1]

    def has_pending_attrs(self, obj: VariableTracker) -> bool:
        """Some attribute of `obj` (one that exists outside the trace) was stored to."""
        return any(key[0] == id(obj) for key in self._attrs)

    def store_global(self, name: str, value: VariableTracker) -> None:
        self.writes += 1
        self.write_targets.append(None)
        if name not in self._globals:
            self._order.append(("global", name))
        self._globals[name] = value

    def pending_global(self, name: str) -> VariableTracker | None:
        return self._globals.get(name)

    def stores_globals(self) -> bool:
        return bool(self._globals)

    def record_call(self, target: VariableTracker, method: str, args: tuple) -> None:
        """`target.method(*args)` with constant args, made when the replay runs (a logging
        call: variables/logging_models.py); `target` has a source."""
        self.writes += 1
        self.write_targets.append(None)
        self._order.append(("call", (target, method, args)))

    def store_cell(self, name: str, value: VariableTracker) -> None:
        """`name` is a free variable of the compiled frame (a cell of its closure)."""
        self.writes += 1
        self.write_targets.append(None)
        self._cells[name] = value

    def stored_cells(self) -> list[str]:
        return list(self._cells)

    def values(self) -> list[VariableTracker]:
        """Every tracker whose value the replay needs (to collect graph outputs)."""
        out: list[VariableTracker] = []
        for kind, key in self._order:
            if kind == "container":
                out.append(key)
            elif kind == "attr":
                obj, value, _ = self._attrs[key]
                if value is not DELETED:
                    out.append(value)
                if obj.source is None:
                    out.append(obj)
            elif kind == "call":
                continue  # constants on a sourced target
            else:
                out.append(self._globals[key])
        out.extend(self._cells.values())
        return out

    def codegen(self, cg: PyCodegen) -> None:
        # Every new value is built before the first store: a value rebuilt from a source
        # (D['seen'], obj.attr) must be loaded before the replay clears or rebinds it.
        temps = []
        for i, (kind, key) in enumerate(self._order):
            if kind == "call" or (kind == "attr" and self._attrs[key][1] is DELETED):
                temps.append(None)
                continue
            if kind == "container":
                _build_contents(cg, key)
            elif kind == "attr":
                self._attrs[key][1].reconstruct(cg)
            else:
                self._globals[key].reconstruct(cg)
            temps.append(f"___replay_{i}")
            cg.emit("STORE_FAST", temps[-1])
        for (kind, key), temp in zip(self._order, temps, strict=True):
            if kind == "call":
                _replay_call(cg, *key)
            elif kind == "container":
                _apply_contents(cg, key, temp)
            elif kind == "attr":
                obj, _, how = self._attrs[key]
                _REPLAY_STORE[how](cg, obj, key[1], temp)
            else:
                cg.emit("LOAD_FAST", temp)
                cg.store_global(key)
        # Values that were read from a cell before it was reassigned load it by name: build
        # every value before the first store (`a, b = b, a` swaps).
        for value in self._cells.values():
            value.reconstruct(cg)
        for name in reversed(self._cells):
            cg.store_local(name)


def _replay_delete(cg: PyCodegen, obj, name: str, temp: None) -> None:
    _load_target(cg, obj)
    cg.emit("DELETE_ATTR", name)


def _replay_setattr(cg: PyCodegen, obj, name: str, temp: str) -> None:
    cg.emit("LOAD_FAST", temp)
    _load_target(cg, obj)
    cg.store_attr(name)


def _replay_object_setattr(cg: PyCodegen, obj, name: str, temp: str) -> None:
    cg.add_push_null(lambda: cg.load_const(object.__setattr__))
    _load_target(cg, obj)
    cg.load_const(name)
    cg.emit("LOAD_FAST", temp)
    cg.call(3)
    cg.emit("POP_TOP")


def _replay_dict_store(cg: PyCodegen, obj, name: str, temp: str) -> None:
    cg.emit("LOAD_FAST", temp)
    _load_target(cg, obj)
    cg.load_attr("__dict__")
    cg.load_const(name)
    cg.store_subscr()


_REPLAY_STORE = {
    "setattr": _replay_setattr,
    "object": _replay_object_setattr,
    "dict": _replay_dict_store,
    "delete": _replay_delete,
}


def _replay_call(cg: PyCodegen, target, method: str, args: tuple) -> None:
    from .variables.logging_models import replay_log_call

    cg.add_push_null(lambda: cg.load_const(replay_log_call))
    cg.load_source(target.source)
    cg.load_const(method)
    cg.load_const(args)
    cg.call(3)
    cg.emit("POP_TOP")


def _load_target(cg: PyCodegen, obj) -> None:
    if obj.source is not None:
        cg.load_source(obj.source)
    else:
        obj.reconstruct(cg)  # a tensor the graph returns


def _build_contents(cg: PyCodegen, container) -> None:
    """Push the container's new contents: a list of its items, or a dict."""
    from .variables.containers import DictVariable, ListVariable, SourcedIteratorVariable
    from .variables.sets import SetVariable, load_key

    if isinstance(container, SourcedIteratorVariable):
        cg.load_const(container.index)  # how many items to consume
    elif isinstance(container, DictVariable):
        for k, v in container.items.items():
            load_key(cg, k)
            v.reconstruct(cg)
        cg.build_map(len(container.items))
    elif isinstance(container, ListVariable):
        for item in container.items:
            item.reconstruct(cg)
        cg.build_list(len(container.items))
    elif isinstance(container, SetVariable):
        for part in container.replay_changes():  # (removed, added)
            for item in part:
                item.reconstruct(cg)
            cg.build_tuple(len(part))
        cg.build_tuple(2)
    else:
        raise Unsupported(f"cannot replay mutation of {container}")


def _apply_contents(cg: PyCodegen, container, temp: str) -> None:
    """Put the contents held in `temp` into the real container, in place."""
    from .variables.collections_models import DequeVariable
    from .variables.containers import (
        DictVariable,
        ListVariable,
        SourcedIteratorVariable,
        advance_iterator,
    )
    from .variables.sets import SetVariable, replay_set

    # advance_iterator(src, n consumed) / replay_set(src, (removed, added))
    replay = (
        advance_iterator
        if isinstance(container, SourcedIteratorVariable)
        else replay_set
        if isinstance(container, SetVariable)
        else None
    )
    if replay is not None:
        cg.add_push_null(lambda: cg.load_const(replay))
        cg.load_source(container.source)
        cg.emit("LOAD_FAST", temp)
        cg.call(2)
        cg.pop_top()
    elif isinstance(container, DictVariable) or getattr(container, "replay_by_clear", False):
        # src.clear(); src.update(new) / src.extend(new)  (deques take no slice assignment)
        cg.load_source(container.source)
        cg.load_method("clear")
        cg.call_method(0)
        cg.pop_top()
        cg.load_source(container.source)
        cg.load_method("extend" if isinstance(container, DequeVariable) else "update")
        cg.emit("LOAD_FAST", temp)
        cg.call_method(1)
        cg.pop_top()
    elif getattr(container, "replay_past_override", False):
        # list.__setitem__(src, slice(None), new): a list subclass's own __setitem__ is not run
        cg.add_push_null(lambda: cg.load_const(list.__setitem__))
        cg.load_source(container.source)
        cg.load_const(slice(None))
        cg.emit("LOAD_FAST", temp)
        cg.call(3)
        cg.pop_top()
    elif isinstance(container, ListVariable):
        # src[:] = new
        cg.emit("LOAD_FAST", temp)
        cg.load_source(container.source)
        cg.load_const(None)
        cg.load_const(None)
        cg.build_slice(2)
        cg.store_subscr()
