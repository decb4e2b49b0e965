"""`os.environ` read in traced code (transformers' `use_gqa_in_sdpa`, config switches).

Each variable read (`get`, `[]`, `in`, and `os.getenv` through them) is folded to its
value, guarded by that value (None when unset) through an `EnvironSource`, as
torch.compile does: setting or changing the variable later recompiles.  Anything else
(stores, iteration, other methods) is a graph break.
"""

from __future__ import annotations

from framejit.guards import EnvironSource

from ..exc import Unsupported
from .base import BoundBuiltinMethodVariable, ConcreteValueVariable, ConstantVariable


class EnvironVariable(ConcreteValueVariable):
    def as_python_constant(self):
        raise Unsupported("os.environ is not a constant (its reads are guarded one by one)")

    def _read(self, tx, key_vt):
        from .builder import wrap

        if not key_vt.is_python_constant() or type(key_vt.as_python_constant()) is not str:
            raise Unsupported("os.environ read with a non-constant or non-str key")
        key = key_vt.as_python_constant()
        return wrap(tx, self.value.get(key), EnvironSource(key))

    def var_getattr(self, tx, name: str):
        return BoundBuiltinMethodVariable(self, name)

    def getitem(self, tx, index):
        value = self._read(tx, index)
        if value.as_python_constant() is None:
            raise Unsupported(f"KeyError: {index.as_python_constant()!r} not in os.environ")
        return value

    def call_method(self, tx, name: str, args, kwargs):
        if kwargs:
            raise Unsupported(f"os.environ.{name} with keyword arguments")
        if name == "get" and len(args) in (1, 2):
            value = self._read(tx, args[0])
            if value.as_python_constant() is None:
                return args[1] if len(args) == 2 else ConstantVariable(None)
            return value
        if name == "__getitem__" and len(args) == 1:
            return self.getitem(tx, args[0])
        if name == "__contains__" and len(args) == 1:
            return ConstantVariable(self._read(tx, args[0]).as_python_constant() is not None)
        raise Unsupported(f"os.environ.{name}")
