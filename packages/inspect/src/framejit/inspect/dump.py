"""``dump(path)``: write every compiled frame's artifacts to a folder, one sub-folder per frame.

Layout (names depend only on compile order and function names, so two runs diff cleanly)::

    index.txt                        frames, graph breaks and recompiles, in order
    000_toy_example/
        source.py                    the user's function
        original_bytecode.txt        dis of the original code
        transformed_bytecode.txt     dis of the rewritten code
        transformed_decompiled.py    the rewritten code as Python
        resume/__resume_at_102_1.py  each resume function, decompiled (+ .bytecode.txt)
        guards.txt                   code_parts, then verbose parts and the guard's closure
        graphs/__compiled_fn_0.py            the FX graph as code
        graphs/__compiled_fn_0.tabular.txt   the FX graph as a table
        graphs/__compiled_fn_0.output_code.py the backend's generated code (``.source_code``)
        record.json                  breaks, recompile reasons (timings.json holds the timings)

``write_record`` writes one record (any object with CompileRecord's attributes);
``Dumper`` numbers records and keeps the index; ``dump`` subscribes a Dumper to
graphcapture's events for the duration of a ``with`` block.  Setting
``FRAMEJIT_DUMP_DIR`` subscribes one for the whole process when
``framejit.inspect`` is imported.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from . import _graphcapture
from .artifacts import (
    bytecode_listing,
    check_fn_closure,
    decompiled,
    graph_code,
    graph_table,
    guard_lines,
    output_code,
    source_of,
)

ENV_VAR = "FRAMEJIT_DUMP_DIR"


def _safe(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]", "_", name) or "_"


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text if text.endswith("\n") or not text else text + "\n", encoding="utf-8")


def write_record(record: Any, folder: Path) -> None:
    """Write one CompileRecord's artifacts into ``folder``."""
    code = record.code
    transformed = getattr(record, "transformed_code", None)
    _write(folder / "source.py", source_of(code))
    _write(folder / "original_bytecode.txt", bytecode_listing(code))
    if transformed is not None:
        _write(folder / "transformed_bytecode.txt", bytecode_listing(transformed))
        _write(folder / "transformed_decompiled.py", decompiled(transformed))
    for name, resume_code in sorted(getattr(record, "resume_functions", {}).items()):
        _write(folder / "resume" / f"{_safe(name)}.py", decompiled(resume_code))
        _write(folder / "resume" / f"{_safe(name)}.bytecode.txt", bytecode_listing(resume_code))
    check_fn = getattr(record, "check_fn", None)
    if check_fn is not None:
        parts, verbose = guard_lines(check_fn)
        text = ["# code_parts", *parts, "", "# verbose_code_parts", *verbose, "", "# closure"]
        text += check_fn_closure(check_fn)
        _write(folder / "guards.txt", "\n".join(text))
    for graph in getattr(record, "graphs", []):
        stem = _safe(graph.name)
        _write(
            folder / "graphs" / f"{stem}.py",
            f"# backend: {graph.backend}\n" + graph_code(graph.graph_module),
        )
        _write(folder / "graphs" / f"{stem}.tabular.txt", graph_table(graph.graph_module))
        generated = output_code(graph.compiled)
        if generated is not None:
            _write(folder / "graphs" / f"{stem}.output_code.py", generated)
    summary = {
        "function_name": record.function_name,
        "filename": record.filename,
        "firstlineno": record.firstlineno,
        "is_recompile": getattr(record, "is_recompile", False),
        "recompile_reasons": list(getattr(record, "recompile_reasons", [])),
        "skipped_reason": getattr(record, "skipped_reason", None),
        "graphs": [g.name for g in getattr(record, "graphs", [])],
        "resume_functions": sorted(getattr(record, "resume_functions", {})),
        "graph_breaks": [
            {
                k: getattr(b, k, None)
                for k in ("reason", "filename", "lineno", "source_line", "offset", "function_name")
            }
            for b in getattr(record, "graph_breaks", [])
        ],
    }
    _write(folder / "record.json", json.dumps(summary, indent=2))
    _write(folder / "timings.json", json.dumps(dict(getattr(record, "timings", {})), indent=2))


class Dumper:
    """Numbers records in arrival order, writes each one, and keeps ``index.txt`` current."""

    def __init__(self, root: str | os.PathLike) -> None:
        self.root = Path(root)
        self.root.mkdir(parents=True, exist_ok=True)
        self.count = 0
        self.index_lines: list[str] = []
        self.lock = threading.Lock()
        self._write_index()

    def folder_name(self, record: Any) -> str:
        return f"{self.count:03d}_{_safe(record.function_name)}"

    def __call__(self, record: Any) -> None:
        with self.lock:
            name = self.folder_name(record)
            self.count += 1
            write_record(record, self.root / name)
            self.index_lines.extend(self._index_entry(name, record))
            self._write_index()

    @staticmethod
    def _index_entry(name: str, record: Any) -> list[str]:
        kind = "recompile" if getattr(record, "is_recompile", False) else "frame"
        if getattr(record, "transformed_code", None) is None and getattr(
            record, "skipped_reason", None
        ):
            kind = "skipped"
        graphs = ", ".join(g.name for g in getattr(record, "graphs", [])) or "no graph"
        lines = [
            f"{name}: {kind} {record.function_name} ({record.filename}:{record.firstlineno}) -> {graphs}"
        ]
        if kind == "skipped":
            lines.append(f"    skipped: {record.skipped_reason}")
        for reason in getattr(record, "recompile_reasons", []):
            lines.append(f"    recompile because: {reason}")
        for brk in getattr(record, "graph_breaks", []):
            lines.append(f"    graph break at {brk.filename}:{brk.lineno}: {brk.reason}")
            lines.append(f"        {brk.source_line}")
        return lines

    def _write_index(self) -> None:
        header = ["# framejit dump: compiled frames in order (folder: what happened)", ""]
        _write(self.root / "index.txt", "\n".join(header + self.index_lines))


@contextlib.contextmanager
def dump(path: str | os.PathLike) -> Iterator[Dumper]:
    """Write the artifacts of every frame graphcapture compiles inside the block to ``path``."""
    fj = _graphcapture.load()
    dumper = Dumper(path)
    unsubscribe = fj.events.subscribe(dumper)
    try:
        yield dumper
    finally:
        unsubscribe()


_env_dumper: Dumper | None = None


def install_from_env() -> Dumper | None:
    """Subscribe a process-wide Dumper to ``$FRAMEJIT_DUMP_DIR`` (once); None when unset."""
    global _env_dumper
    path = os.environ.get(ENV_VAR)
    if not path or _env_dumper is not None:
        return _env_dumper
    try:
        fj = _graphcapture.load()
    except ImportError:
        return None
    _env_dumper = Dumper(path)
    fj.events.subscribe(_env_dumper)
    return _env_dumper
