"""framejit.graphcapture: capture PyTorch programs from bytecode into torch.fx graphs.

The user API (DESIGN.md "graphcapture"): compile/optimize/disable/run/reset, mark_dynamic,
the backend registry, events and CompileRecords.
"""

from . import events, testing
from .api import (
    OptimizedModule,
    compile,
    disable,
    mark_dynamic,
    mark_static,
    optimize,
    reset,
    run,
)
from .backends import list_backends, lookup_backend, register_backend
from .config import config
from .convert_frame import convert_frame
from .exc import (
    BackendCompilerFailed,
    ConstraintViolationError,
    GraphBreakInFullgraph,
    UnknownBackendError,
)
from .logs import configure_from_env as _configure_logs
from .logs import set_logs
from .records import CompileRecord, GraphBreakRecord, GraphRecord

_configure_logs()

__all__ = [
    "BackendCompilerFailed",
    "CompileRecord",
    "ConstraintViolationError",
    "GraphBreakInFullgraph",
    "GraphBreakRecord",
    "GraphRecord",
    "OptimizedModule",
    "UnknownBackendError",
    "compile",
    "config",
    "convert_frame",
    "disable",
    "events",
    "list_backends",
    "lookup_backend",
    "mark_dynamic",
    "mark_static",
    "optimize",
    "register_backend",
    "reset",
    "run",
    "set_logs",
    "testing",
]
