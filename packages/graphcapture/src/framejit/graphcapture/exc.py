"""Exceptions of the capture layer: what makes a graph break, and what the user sees."""

from __future__ import annotations


class Unsupported(Exception):
    """Tracing cannot continue symbolically here: the construct becomes a graph break."""

    def __init__(self, reason: str):
        super().__init__(reason)
        self.reason = reason


class SkipFrame(Exception):
    """The whole frame runs eagerly (nothing to capture, or no safe place to break)."""


class RestartAnalysis(Exception):
    """Trace the frame again from the start, stopping for a graph break at `offset`."""

    def __init__(self, offset: int, reason: str, lineno: int, visit: int = 1, index: int = -1):
        super().__init__(reason)
        self.offset = offset
        self.index = (
            index  # the instruction's index in the decoded code (offsets repeat in split ones)
        )
        self.reason = reason
        self.lineno = lineno
        self.visit = visit  # which arrival at `offset` (loops are unrolled)


class GraphBreakInFullgraph(RuntimeError):
    """`fullgraph=True` was asked for and the frame needs a graph break."""


class BackendCompilerFailed(RuntimeError):
    """A backend raised while compiling a graph (re-raised when config.raise_backend_errors)."""


class UnknownBackendError(ValueError):
    """A backend name that is neither registered nor found through entry points."""


class ConstraintViolationError(RuntimeError):
    """A dim marked dynamic (fj.mark_dynamic) that the code forces to a constant, or whose
    size breaks the bounds it was marked with (torch's ConstraintViolationError)."""
