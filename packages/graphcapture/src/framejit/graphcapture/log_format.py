"""Text renderings for the log artifacts: bytecode listings, guards and the tabular FX graph."""

from __future__ import annotations

import dis
import io
import types

import torch


def format_bytecode(title: str, code: types.CodeType) -> str:
    out = io.StringIO()
    dis.dis(code, file=out)
    return (
        f"{title} {code.co_name} {code.co_filename} line {code.co_firstlineno} \n{out.getvalue()}"
    )


def format_guards(check_fn) -> str:
    """The seed's GUARDS log: one line per guard, each tensor as its own check_tensor(...)
    line (dispatch keys, dtype, device, requires_grad, size, stride), with the user line
    that created it."""
    parts = getattr(check_fn, "verbose_code_parts", None) or check_fn.code_parts
    return "GUARDS:\n" + "\n".join(parts)


def format_graph_tabular(name: str, gm: torch.fx.GraphModule) -> str:
    rows = [["opcode", "name", "target", "args", "kwargs"]]
    for node in gm.graph.nodes:
        target = node.target if isinstance(node.target, str) else _target_repr(node.target)
        rows.append([node.op, node.name, target, str(node.args), str(node.kwargs)])
    widths = [max(len(r[i]) for r in rows) for i in range(5)]
    lines = [f"TRACED GRAPH {name}"]
    for i, row in enumerate(rows):
        lines.append("  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip())
        if i == 0:
            lines.append("  ".join("-" * w for w in widths))
    return "\n".join(lines)


def _target_repr(target) -> str:
    text = repr(target)
    if text.startswith("<"):
        return text
    return f"<{text}>"
