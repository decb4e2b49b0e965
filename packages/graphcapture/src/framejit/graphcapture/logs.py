"""Logging artifacts under `framejit.*`, switched on by FRAMEJIT_LOGS (the seed's TORCH_LOGS)."""

from __future__ import annotations

import logging
import os
import sys

ARTIFACTS = (
    "dynamo",
    "guards",
    "bytecode",
    "graph",
    "graph_code",
    "graph_breaks",
    "recompiles",
    "output_code",
)

_handler: logging.Handler | None = None


def logger(artifact: str) -> logging.Logger:
    return logging.getLogger(f"framejit.{artifact}")


def set_logs(spec: str | list[str] | None) -> None:
    """Enable the named artifacts ("dynamo,guards,...") on stderr; anything else is an error."""
    global _handler
    names = [s.strip() for s in spec.split(",")] if isinstance(spec, str) else list(spec or [])
    names = [n for n in names if n]
    unknown = [n for n in names if n not in ARTIFACTS]
    if unknown:
        raise ValueError(
            f"FRAMEJIT_LOGS: unknown artifact(s) {unknown}; known: {', '.join(ARTIFACTS)}"
        )
    if _handler is None:
        _handler = logging.StreamHandler(sys.stderr)
        _handler.setFormatter(logging.Formatter("[%(name)s] %(message)s"))
    for name in ARTIFACTS:
        log = logger(name)
        if name in names:
            log.setLevel(logging.DEBUG)
            if _handler not in log.handlers:
                log.addHandler(_handler)
            log.propagate = False
        elif _handler in log.handlers:
            log.removeHandler(_handler)
            log.propagate = True


def configure_from_env() -> None:
    spec = os.environ.get("FRAMEJIT_LOGS")
    if spec:
        set_logs(spec)
