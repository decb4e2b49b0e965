"""Which nn.Modules a trace specialises on, and which it traces for any instance of their class.

A specialised module is guarded by identity and its parameters and buffers reach the graph
as get_attr constants.  That makes one cache entry per instance for code entered with a
module argument: a layer's `forward` or its resume function, entered once per layer after a
graph break inside the layer, recompiles for every layer and, past the cache size limit,
runs eagerly.  So, as automatic dynamic shapes does for sizes (dim_policy.py): the first
compile of a code object specialises every module; a later compile of the same code that
finds another module of the same class at a frame argument where one was before traces the
modules reached from that argument unspecialised, for good.  An unspecialised module is
guarded by its class and the keys of its parameter, buffer and submodule tables, and its
parameters and buffers are graph inputs (with their tensor guards), as torch.compile lifts
them: one compiled code serves every instance.
"""

from __future__ import annotations

import weakref
from dataclasses import dataclass, field

from framejit.guards import LocalSource

from .code_keyed import CodeKeyed
from .logs import logger


@dataclass
class SeenModules:
    """Per code object: the module first seen at each argument (its class and the module
    itself, both held weakly), and the arguments where another instance of that class came
    since.  The module is held by a weak reference, not its id: a module made afresh for each
    call (a deepcopy per step) often lands where the dead one was, and by id it passed for
    the first one, specialised and recompiled on every call."""

    first: dict[str, tuple[weakref.ref, weakref.ref]] = field(default_factory=dict)
    varying: set[str] = field(default_factory=set)


_seen: CodeKeyed[SeenModules] = CodeKeyed()


def reset() -> None:
    global _seen
    _seen = CodeKeyed()


def _root_local(source) -> str | None:
    """The frame argument a source starts from (L['self']._modules['fc'] -> 'self')."""
    while source is not None and not isinstance(source, LocalSource):
        base = getattr(source, "base_source", None)
        source = base() if base is not None else None
    return None if source is None else source.local_name


@dataclass
class ModulePolicy:
    """One compile's choices over the code's SeenModules (None: nothing remembered)."""

    seen: SeenModules | None = None

    @classmethod
    def for_code(cls, code) -> ModulePolicy:
        if code is None:
            return cls()
        return cls(_seen.setdefault(code, SeenModules))

    def specialize(self, source, module) -> bool:
        """Whether the module found at `source` is traced as that very object."""
        if self.seen is None or source is None:
            return True
        root = _root_local(source)
        if root is None:
            return True
        if root in self.seen.varying:
            return False
        if not isinstance(source, LocalSource):
            return True
        first = self.seen.first.setdefault(root, (weakref.ref(type(module)), weakref.ref(module)))
        if first[0]() is type(module) and first[1]() is not module:
            self.seen.varying.add(root)
            logger("recompiles").debug(
                "L[%r] is another %s than at the first compile: its modules are traced "
                "for any instance from now on (parameters as graph inputs)",
                root,
                type(module).__name__,
            )
            return False
        return True
