"""Logging artifacts under `framejit.*`, switched on by FRAMEJIT_LOGS (the seed's TORCH_LOGS).

The spec is read as torch users type TORCH_LOGS: comma-separated names, each switched on
at its usual level (``dynamo`` at INFO, every other artifact at DEBUG, where it writes),
``+name`` for DEBUG, ``-name`` for errors only, ``all`` (or ``+all``/``-all``) for every
artifact, and ``help`` to print the artifacts with one line each.  Later items override
earlier ones (``all,-bytecode``).
"""

from __future__ import annotations

import logging
import os
import sys

# name -> (what it shows, the level a plain name switches on)
ARTIFACT_TABLE: dict[str, tuple[str, int]] = {
    "dynamo": ("what the capture layer decides: frames run eagerly, fallbacks", logging.INFO),
    "guards": ("each compiled frame's guards, one check_tensor line per tensor", logging.DEBUG),
    "bytecode": ("original and modified bytecode of every compiled frame", logging.DEBUG),
    "graph": ("every captured FX graph as a table (opcode, name, target, args)", logging.DEBUG),
    "graph_code": ("every captured FX graph as Python (print_readable)", logging.DEBUG),
    "graph_breaks": ("each graph break: reason and user source line", logging.DEBUG),
    "recompiles": ("each recompile: every failing guard of every cache entry", logging.DEBUG),
    "output_code": ("what the backend generated (kernels, wrapper)", logging.DEBUG),
}
ARTIFACTS = tuple(ARTIFACT_TABLE)
PREFIX_LEVELS = {"+": logging.DEBUG, "-": logging.ERROR}

_handler: logging.Handler | None = None


def logger(artifact: str) -> logging.Logger:
    return logging.getLogger(f"framejit.{artifact}")


def help_text() -> str:
    width = max(map(len, ARTIFACTS))
    lines = [
        "FRAMEJIT_LOGS: comma-separated artifacts; +name = debug level, -name = errors only,",
        "all = every artifact, help = this text.  Example: FRAMEJIT_LOGS=+dynamo,guards,recompiles",
        "",
    ]
    lines += [f"  {name.ljust(width)}  {desc}" for name, (desc, _) in ARTIFACT_TABLE.items()]
    return "\n".join(lines)


def parse_logs(spec: str | list[str] | None) -> dict[str, int]:
    """The spec as {artifact: level}; ValueError names any unknown artifact."""
    items = spec.split(",") if isinstance(spec, str) else list(spec or [])
    levels: dict[str, int] = {}
    unknown = []
    for item in (s.strip() for s in items):
        if not item or item == "help":
            continue
        prefix = item[0] if item[0] in PREFIX_LEVELS else ""
        name = item[len(prefix) :]
        names = ARTIFACTS if name == "all" else (name,)
        if name != "all" and name not in ARTIFACT_TABLE:
            unknown.append(item)
            continue
        for n in names:
            levels[n] = PREFIX_LEVELS[prefix] if prefix else ARTIFACT_TABLE[n][1]
    if unknown:
        raise ValueError(
            f"FRAMEJIT_LOGS: unknown artifact(s) {unknown}; known: {', '.join(ARTIFACTS)} "
            "(FRAMEJIT_LOGS=help lists them)"
        )
    return levels


def set_logs(spec: str | list[str] | None) -> dict[str, int]:
    """Enable the artifacts of ``spec`` on stderr (see the module docstring); returns the levels.

    ``help`` in the spec prints the list of artifacts to stderr.
    """
    global _handler
    levels = parse_logs(spec)
    items = spec.split(",") if isinstance(spec, str) else list(spec or [])
    if any(s.strip() == "help" for s in items):
        print(help_text(), file=sys.stderr)
    if _handler is None:
        _handler = logging.StreamHandler(sys.stderr)
        _handler.setFormatter(logging.Formatter("[%(name)s] %(message)s"))
    for name in ARTIFACTS:
        log = logger(name)
        if name in levels:
            log.setLevel(levels[name])
            if _handler not in log.handlers:
                log.addHandler(_handler)
            log.propagate = False
        else:
            log.setLevel(logging.NOTSET)
            if _handler in log.handlers:
                log.removeHandler(_handler)
            log.propagate = True
    return levels


def configure_from_env() -> None:
    spec = os.environ.get("FRAMEJIT_LOGS")
    if spec:
        set_logs(spec)
