"""Which dims of an input tensor are traced as symbols: marks, `dynamic=`, automatic dynamic.

The rule, as TorchDynamo's (first match wins, per dim):
- `fj.mark_static(t, d)`: static;  `fj.mark_dynamic(t, d, min=, max=)`: a symbol, and forcing
  it to a constant is an error;
- `dynamic=False`: static;  `dynamic=True`: a symbol (equal sizes share one: duck shaping);
- `dynamic=None` (automatic): the first compile of a code object specialises every size and
  remembers them per input source; a later compile of the same code (a guard failed) makes
  symbolic every dim whose size differs from the one remembered, for good.
- `config.dynamic_sources` (names or regexes of input sources, `:dim` optional): a symbol
  from the first compile, over `dynamic=False` (but not over `fj.mark_static`); an int
  argument named there too.
Sizes 0 and 1 are always specialised (the ShapeEnv does it), so a dynamic entry is guarded
``2 <= size``.

A Python int argument of the frame (``L['n']``, `int_dynamic`) follows the same rule as one
size: `dynamic=False` specialises it (EQUALS_MATCH), `dynamic=True` makes it a symbol from
the first compile, automatic makes it one once a later compile sees another value (as
torch.compile's automatic dynamic does with specialize_int=False).  A symbolic int may be
any value (0, 1 and negatives included: torch's unspecified symbol).
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field

import torch

from .code_keyed import CodeKeyed
from .config import config
from .dynamic_shapes import DimSpec
from .logs import logger

DYNAMIC_DIMS_ATTR = "_framejit_dynamic_dims"  # fj.mark_dynamic: set of dims
DYNAMIC_BOUNDS_ATTR = "_framejit_dynamic_bounds"  # fj.mark_dynamic min/max: dim -> (min, max)
STATIC_DIMS_ATTR = "_framejit_static_dims"  # fj.mark_static: set of dims


@dataclass
class FrameSizes:
    """Sizes seen per input source of one code object (None: that dim became dynamic)."""

    sizes: dict[str, list[int | None]] = field(default_factory=dict)
    ints: dict[str, int | None] = field(default_factory=dict)  # int arguments, likewise


_frame_sizes: CodeKeyed[FrameSizes] = CodeKeyed()


def reset() -> None:
    global _frame_sizes
    _frame_sizes = CodeKeyed()


def propagate(code, values: list[tuple[str, object]]) -> None:
    """Dynamism crosses graph breaks: a tensor passed to the resume function `code` with
    symbolic dims is traced with those dims symbolic from that function's first compile
    (as AOTAutograd's propagated dynamic indices do for torch.compile)."""
    frame = None
    for name, example in values:
        if not isinstance(example, torch.Tensor):
            continue
        dims = [isinstance(s, torch.SymInt) for s in example.shape]
        if not any(dims):
            continue
        if frame is None:
            frame = _frame_sizes.setdefault(code, FrameSizes)
        key = f"L[{name!r}]"
        seen = frame.sizes.get(key)
        if seen is None or len(seen) != len(dims):
            seen = frame.sizes[key] = [
                None if sym else int(s) for sym, s in zip(dims, example.shape, strict=True)
            ]
        for d, sym in enumerate(dims):
            if sym:
                seen[d] = None


_DIM_SUFFIX = re.compile(r"^(.+):(\d+)$")


@functools.lru_cache(maxsize=8)
def _configured_sources(text: str) -> tuple[tuple[str, int | None], ...]:
    """`config.dynamic_sources` as (pattern, dim) entries; a trailing `:N` (the last colon:
    a regex may hold others) restricts an entry to dim N."""
    entries = []
    for entry in text.replace(" ", "").split(","):
        m = _DIM_SUFFIX.match(entry)
        if m:
            entries.append((m.group(1), int(m.group(2))))
        elif entry:
            entries.append((entry, None))
    return tuple(entries)


def configured_dynamic(name: str, dim: int | None = None) -> bool:
    """Whether `config.dynamic_sources` names source `name` (dim `dim`; None: any dim)."""
    if not config.dynamic_sources:
        return False
    for pattern, pat_dim in _configured_sources(config.dynamic_sources):
        if (pattern == name or _matches(pattern, name)) and (dim is None or pat_dim in (None, dim)):
            return True
    return False


def _matches(pattern: str, name: str) -> bool:
    try:
        return re.match(pattern, name) is not None
    except re.error:
        return False  # an exact name with brackets, not a regex


def marked_dims(tensor: torch.Tensor) -> frozenset[int]:
    return frozenset(getattr(tensor, DYNAMIC_DIMS_ATTR, ()) or ())


@dataclass
class DimPolicy:
    """One compile's choices; `changes` says which dims became dynamic and why (for logs)."""

    dynamic: bool | None = None
    frame: FrameSizes | None = None
    changes: list[str] = field(default_factory=list)

    @classmethod
    def for_code(cls, code, dynamic: bool | None) -> DimPolicy:
        frame = None
        if code is not None and dynamic is None:
            frame = _frame_sizes.get(code)
            if frame is None:
                frame = FrameSizes()
                _frame_sizes[code] = frame
        return cls(dynamic, frame)

    def dims(self, name: str, tensor: torch.Tensor) -> dict[int, DimSpec]:
        """The symbolic dims of the input at source `name`."""
        marked = marked_dims(tensor)
        static = frozenset(getattr(tensor, STATIC_DIMS_ATTR, ()) or ())
        bounds = getattr(tensor, DYNAMIC_BOUNDS_ATTR, None) or {}
        shape = [int(s) for s in tensor.shape]
        automatic = self._automatic(name, shape)
        out: dict[int, DimSpec] = {}
        for d in range(len(shape)):
            if d in static:
                continue
            if d in marked:
                lo, hi = bounds.get(d, (None, None))
                out[d] = DimSpec(marked=True, min=lo, max=hi)
            elif configured_dynamic(name, d):
                out[d] = DimSpec()
            elif self.dynamic is True:
                out[d] = DimSpec(duck=True)
            elif d in automatic:
                out[d] = DimSpec()
        return out

    def int_dynamic(self, name: str, value: int) -> bool:
        """Whether the int argument at source `name` is traced as a symbol."""
        if configured_dynamic(name):
            return True
        if self.dynamic is not None:
            return self.dynamic
        if self.frame is None:
            return False
        ints = self.frame.ints
        if name not in ints:
            ints[name] = value
            return False
        seen = ints[name]
        if seen is None:
            return True
        if seen == value:
            return False
        self.changes.append(
            f"automatic dynamic: {name} changed from {seen} to {value}; "
            "traced as a symbol from now on"
        )
        logger("recompiles").debug("%s", self.changes[-1])
        ints[name] = None
        return True

    def _automatic(self, name: str, shape: list[int]) -> frozenset[int]:
        if self.frame is None:
            return frozenset()
        seen = self.frame.sizes.get(name)
        if seen is None or len(seen) != len(shape):
            self.frame.sizes[name] = list(shape)
            return frozenset()
        out = set()
        for d, size in enumerate(shape):
            if seen[d] is None:
                out.add(d)
            elif seen[d] != size:
                self.changes.append(
                    f"automatic dynamic: {name}.size()[{d}] changed from {seen[d]} to {size}; "
                    "traced as a symbol from now on"
                )
                logger("recompiles").debug("%s", self.changes[-1])
                seen[d] = None
                out.add(d)
        return frozenset(out)
