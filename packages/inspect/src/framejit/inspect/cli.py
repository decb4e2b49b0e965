"""``python -m framejit.inspect run script.py [args] [--dump DIR] [--logs LIST]``.

Runs a script as ``__main__`` with framejit's dump and logs switched on, then
prints what was compiled (frames, graphs, graph breaks, recompiles).  ``--dump``
and ``--logs`` are taken from anywhere after the script name unless a ``--``
separates them from the script's own arguments.
"""

from __future__ import annotations

import os
import runpy
import sys
from typing import Any

USAGE = """usage: python -m framejit.inspect run SCRIPT [ARGS ...] [--dump DIR] [--logs LIST]

  --dump DIR    write every compiled frame's artifacts under DIR (see framejit.inspect.dump)
  --logs LIST   FRAMEJIT_LOGS for the run (default: graph_breaks,recompiles)
  put `--` before script arguments that look like these options
"""


def _parse(argv: list[str]) -> tuple[str, list[str], str | None, str | None]:
    if len(argv) < 2 or argv[0] != "run":
        raise SystemExit(USAGE)
    script, rest = argv[1], argv[2:]
    dump_dir = logs = None
    script_args: list[str] = []
    i = 0
    while i < len(rest):
        arg = rest[i]
        if arg == "--":
            script_args.extend(rest[i + 1 :])
            break
        if arg in ("--dump", "--logs"):
            if i + 1 >= len(rest):
                raise SystemExit(f"framejit.inspect: {arg} needs a value\n\n{USAGE}")
            if arg == "--dump":
                dump_dir = rest[i + 1]
            else:
                logs = rest[i + 1]
            i += 2
            continue
        if arg.startswith(("--dump=", "--logs=")):
            name, _, value = arg.partition("=")
            dump_dir, logs = (value, logs) if name == "--dump" else (dump_dir, value)
            i += 1
            continue
        script_args.append(arg)
        i += 1
    return script, script_args, dump_dir, logs


def main(argv: list[str] | None = None) -> int:
    script, script_args, dump_dir, logs = _parse(list(sys.argv[1:] if argv is None else argv))
    if not os.path.exists(script):
        raise SystemExit(f"framejit.inspect: no such script: {script}")
    os.environ["FRAMEJIT_LOGS"] = (
        logs if logs is not None else os.environ.get("FRAMEJIT_LOGS", "graph_breaks,recompiles")
    )

    from . import _graphcapture
    from .dump import Dumper
    from .explain import summarize

    fj = _graphcapture.load()
    if hasattr(fj, "set_logs"):
        fj.set_logs(os.environ["FRAMEJIT_LOGS"])
    records: list[Any] = []
    unsubscribers = [fj.events.subscribe(records.append)]
    if dump_dir is not None:
        unsubscribers.append(fj.events.subscribe(Dumper(dump_dir)))
    saved_argv = sys.argv
    sys.argv = [script, *script_args]
    status = 0
    try:
        runpy.run_path(script, run_name="__main__")
    except SystemExit as exc:
        status = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    finally:
        sys.argv = saved_argv
        for unsubscribe in unsubscribers:
            unsubscribe()
        print("\n=== framejit summary ===", file=sys.stderr)
        print(summarize(records), file=sys.stderr)
        if dump_dir is not None:
            print(f"artifacts written to {dump_dir} (index.txt lists them)", file=sys.stderr)
    return status
