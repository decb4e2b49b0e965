"""How a captured graph reads: its names and the user line behind each node, as torch.compile's.

A graph input is named after its source as torch.compile names it (`L['x']` -> `L_x_`; fx
names the node `l_x_`, and a clash gets `_0`, `_1`, ...).  A tensor op's node takes the
name of the local it is first stored in (`a = x * 2` -> node `a`).  Every node carries the
user line that made it as `meta["stack_trace"]`: fx's readable code (print_readable, the
graph_code log) prints a `# File: ..., code: ...` summary, after a blank line, wherever the
line changes.  Only the innermost frame is recorded (the summary reads nothing else), in
the traceback format fx parses.
"""

from __future__ import annotations

import functools
import linecache
import re
import types
from typing import Any

from .sources import source_name

_NON_ALNUM = re.compile(r"[^a-zA-Z0-9]+")
# the generated forward's own parameter: no node may take its name (a tensor input from
# L['self'], a local called `self` in an inlined function), or the code reads the node as it
RESERVED_NAMES = frozenset({"self"})


def graph_input_name(source: Any) -> str:
    return _NON_ALNUM.sub("_", source_name(source))


def stack_trace_of(code: types.CodeType, inst) -> str:
    lineno = getattr(inst, "lineno", None) or code.co_firstlineno
    return _format(code.co_filename, lineno, code.co_name)


@functools.lru_cache(maxsize=4096)
def _format(filename: str, lineno: int, name: str) -> str:
    line = linecache.getline(filename, lineno).strip()
    return f'  File "{filename}", line {lineno}, in {name}\n    {line}\n'


def name_after_local(node, local: str) -> None:
    """The first local a node's value is stored in names it (later stores keep that name)."""
    if node.op == "placeholder" or node.meta.get("named_after_local") or local in RESERVED_NAMES:
        return
    node.meta["named_after_local"] = True
    node._rename(local)
