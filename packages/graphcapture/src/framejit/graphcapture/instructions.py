"""The interpreter's instructions: the bytecode layer's canonical ones (`framejit.frameeval.bytecode`).

`decode(code)` gives a `Code` (`.insts`, `.exception_entries`, `.handler_for(index)`,
`.live_locals_at(index)`); handlers dispatch on `Inst.opname`.
"""

from __future__ import annotations

from framejit.frameeval.bytecode import Code as DecodedCode
from framejit.frameeval.bytecode import Inst, decode

__all__ = ["DecodedCode", "Inst", "decode"]
