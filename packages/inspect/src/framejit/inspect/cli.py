"""``python -m framejit.inspect run|report SCRIPT [ARGS] [--dump DIR] [--logs LIST] [-o FILE]``.

Runs a script as ``__main__`` with framejit's dump and logs switched on, then
prints what was compiled (frames, graphs, graph breaks, recompiles); ``report``
also writes the HTML page (``-o``, default ``framejit-report.html``).  The options
are taken from anywhere after the script name unless a ``--`` separates them from
the script's own arguments.
"""

from __future__ import annotations

import os
import runpy
import sys
from dataclasses import dataclass, field
from typing import Any

USAGE = """usage: python -m framejit.inspect run SCRIPT [ARGS ...] [--dump DIR] [--logs LIST]
       python -m framejit.inspect report SCRIPT [ARGS ...] [-o FILE] [--dump DIR] [--logs LIST]

  --dump DIR     write every compiled frame's artifacts under DIR (see framejit.inspect.dump)
  --logs LIST    FRAMEJIT_LOGS for the run (default: graph_breaks,recompiles; `help` lists them)
  -o, --output   report: the HTML file to write (default: framejit-report.html)
  put `--` before script arguments that look like these options
"""

COMMANDS = ("run", "report")
# option -> the Invocation field it sets
OPTIONS = {"--dump": "dump_dir", "--logs": "logs", "-o": "output", "--output": "output"}
DEFAULT_REPORT = "framejit-report.html"


@dataclass
class Invocation:
    command: str
    script: str
    script_args: list[str] = field(default_factory=list)
    dump_dir: str | None = None
    logs: str | None = None
    output: str | None = None


def _parse(argv: list[str]) -> Invocation:
    if len(argv) < 2 or argv[0] not in COMMANDS:
        raise SystemExit(USAGE)
    inv = Invocation(argv[0], argv[1])
    rest = argv[2:]
    i = 0
    while i < len(rest):
        arg = rest[i]
        name, eq, value = arg.partition("=")
        if arg == "--":
            inv.script_args.extend(rest[i + 1 :])
            break
        if arg in OPTIONS:
            if i + 1 >= len(rest):
                raise SystemExit(f"framejit.inspect: {arg} needs a value\n\n{USAGE}")
            setattr(inv, OPTIONS[arg], rest[i + 1])
            i += 2
            continue
        if eq and name in OPTIONS:
            setattr(inv, OPTIONS[name], value)
        else:
            inv.script_args.append(arg)
        i += 1
    if inv.output is not None and inv.command != "report":
        raise SystemExit(f"framejit.inspect: -o/--output is for `report`\n\n{USAGE}")
    if inv.command == "report" and inv.output is None:
        inv.output = DEFAULT_REPORT
    return inv


def main(argv: list[str] | None = None) -> int:
    inv = _parse(list(sys.argv[1:] if argv is None else argv))
    if not os.path.exists(inv.script):
        raise SystemExit(f"framejit.inspect: no such script: {inv.script}")
    os.environ["FRAMEJIT_LOGS"] = (
        inv.logs
        if inv.logs is not None
        else os.environ.get("FRAMEJIT_LOGS", "graph_breaks,recompiles")
    )

    from . import _graphcapture
    from .cache_limits import collect
    from .dump import Dumper
    from .explain import summarize

    fj = _graphcapture.load()
    if hasattr(fj, "set_logs"):
        fj.set_logs(os.environ["FRAMEJIT_LOGS"])
    records: list[Any] = []
    unsubscribers = [fj.events.subscribe(records.append)]
    if inv.dump_dir is not None:
        unsubscribers.append(fj.events.subscribe(Dumper(inv.dump_dir)))
    saved_argv = sys.argv
    sys.argv = [inv.script, *inv.script_args]
    status = 0
    limits = collect()
    cache_limits = limits.__enter__()
    try:
        runpy.run_path(inv.script, run_name="__main__")
    except SystemExit as exc:
        status = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    finally:
        sys.argv = saved_argv
        for unsubscribe in unsubscribers:
            unsubscribe()
        limits.__exit__(None, None, None)
        print("\n=== framejit summary ===", file=sys.stderr)
        print(summarize(records), file=sys.stderr)
        if inv.dump_dir is not None:
            print(f"artifacts written to {inv.dump_dir} (index.txt lists them)", file=sys.stderr)
        if inv.output is not None:
            from .report import write_report

            write_report(
                records,
                inv.output,
                title=f"framejit report: {os.path.basename(inv.script)}",
                cache_limits=cache_limits,
            )
            print(f"report written to {inv.output}", file=sys.stderr)
    return status
