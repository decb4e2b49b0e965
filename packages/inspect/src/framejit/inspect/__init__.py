"""framejit.inspect: look inside what framejit compiled.

- ``debug_get_cache_entry_list(fn)`` / ``innermost_fn(fn)``: the (guard, code) cache entries
- ``decompile(code)``: bytecode -> readable Python, for framejit's generated code and user code
- ``explain(fn, *args)``: graphs, ops, graph breaks and recompiles of one call
- ``dump(path)``: every compiled frame's artifacts on disk (also ``$FRAMEJIT_DUMP_DIR``)
- ``report(path)``: one self-contained HTML page of every frame compiled in a block
- ``python -m framejit.inspect run script.py --dump out/``: the same from the command line
  (``python -m framejit.inspect report script.py -o report.html`` for the page)

Needs framejit.frameeval and framejit.guards; ``explain``, ``dump`` and ``report`` also need
framejit.graphcapture (an optional extra), imported only when they are used.
"""

from .cache import WRAPPED_ATTRIBUTES, CacheEntry, debug_get_cache_entry_list, innermost_fn
from .decompiler import decompile
from .dump import Dumper, dump, install_from_env, write_record
from .explain import ExplainOutput, explain, summarize
from .report import report, write_report

__all__ = [
    "WRAPPED_ATTRIBUTES",
    "CacheEntry",
    "Dumper",
    "ExplainOutput",
    "debug_get_cache_entry_list",
    "decompile",
    "dump",
    "explain",
    "innermost_fn",
    "install_from_env",
    "report",
    "summarize",
    "write_record",
    "write_report",
]

install_from_env()
