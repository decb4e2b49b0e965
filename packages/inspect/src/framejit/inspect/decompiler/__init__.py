"""A bytecode -> Python source decompiler for the code framejit generates and for user code.

``decompile(code_or_function)`` returns readable, re-compilable source.  It works
by symbolic execution with ``ast`` expressions on the stack (so operator
precedence and f-strings unparse correctly) over control structures recovered
from jumps and the exception table.  What cannot be recovered is emitted as
pseudo-code with a comment; ``decompile`` itself never raises for a code object.

Modules: ``opcodes`` (opcode groups), ``bytecode`` (frameeval's canonical instructions,
exception table, reachability), ``engine`` (blocks and dispatch), ``ops``
(expression and simple-statement handlers), ``control`` (where structures start) with
``conditions`` (if/ternary/and/or), ``jumps`` (continue/break/goto), ``loops`` (for/while),
``tries`` and ``except_star`` (try statements), ``withs`` (code after a with),
``functions`` (def/lambda/class/comprehensions), ``match`` (match statements), ``modern``
(3.12/3.13 instructions), ``passes`` (cleanups), ``pseudo`` (marked pseudo-code for what
cannot be rebuilt).
"""

from __future__ import annotations

import ast
import types

from . import passes
from .control import ControlFlow
from .engine import Engine, Shared, Unsupported
from .functions import CO_COROUTINE, FunctionOps, identifier, signature
from .match import MatchOps
from .modern import ModernOps
from .ops import ExpressionOps
from .pseudo import PSEUDO_MARK, lost_names, pseudo_source
from .values import constant

__all__ = ["PSEUDO_MARK", "Decompiler", "decompile", "decompile_ast"]


class Decompiler(ControlFlow, FunctionOps, MatchOps, ModernOps, ExpressionOps, Engine):
    """Decompiles one code object (nested ones get their own instance)."""

    def __init__(
        self, code: types.CodeType, shared: Shared | None = None, *, comprehension: bool = False
    ) -> None:
        Engine.__init__(self, code, shared)
        self.is_comprehension = comprehension
        self.setup_control()

    def body_statements(self, *, keep_final_return: bool = False) -> list[ast.stmt]:
        blk = self.run(0, len(self.ins), [])
        body = passes.run_all(blk.out, keep_final_return=keep_final_return)
        declarations: list[ast.stmt] = []
        if self.declared_global:
            declarations.append(ast.Global(sorted(self.declared_global)))
        if self.declared_nonlocal:
            declarations.append(ast.Nonlocal(sorted(self.declared_nonlocal)))
        return declarations + body


def _code_of(obj) -> tuple[types.CodeType, tuple, dict]:
    if isinstance(obj, types.CodeType):
        return obj, (), {}
    fn = getattr(obj, "__func__", obj)
    code = getattr(fn, "__code__", None)
    if not isinstance(code, types.CodeType):
        raise TypeError(
            f"decompile() needs a code object or a Python function, not {type(obj).__name__}"
        )
    return code, fn.__defaults__ or (), fn.__kwdefaults__ or {}


def _default(value: object, index: int) -> ast.expr:
    simple = (int, float, complex, str, bytes, bool, type(None), type(...))
    if type(value) in simple or (type(value) is tuple and all(type(v) in simple for v in value)):
        return constant(value)
    return ast.Name(f"__default_{index}")


def decompile_ast(obj) -> ast.Module:
    """The decompiled function (or module body) as an ``ast.Module``; raises on failure."""
    code, defaults, kwdefaults = _code_of(obj)
    decompiler = Decompiler(code)
    body = decompiler.body_statements()
    if code.co_name == "<module>":
        return ast.fix_missing_locations(ast.Module(body or [ast.Pass()], []))
    args = signature(
        code,
        [_default(v, i) for i, v in enumerate(defaults)],
        {k: _default(v, i) for i, (k, v) in enumerate(kwdefaults.items())},
    )
    node_type = ast.AsyncFunctionDef if code.co_flags & CO_COROUTINE else ast.FunctionDef
    fn = node_type(identifier(code.co_name), args, body or [ast.Pass()], [], None)
    lost = lost_names(code, ast.unparse(ast.fix_missing_locations(ast.Module([fn], []))))
    if lost:
        raise Unsupported(f"the rebuilt source would lack {', '.join(lost)}")
    if decompiler.declared_nonlocal:
        # ``nonlocal`` needs an enclosing function: show one that binds the free variables
        cells = [
            ast.Assign([ast.Name(n, ast.Store())], ast.Constant(None)) for n in code.co_freevars
        ]
        fn = ast.FunctionDef(
            f"__enclosing_{fn.name}",
            ast.arguments([], [], None, [], [], None, []),
            [*cells, fn],
            [],
            None,
        )
    return ast.fix_missing_locations(ast.Module([fn], []))


def decompile(obj) -> str:
    """Readable Python source for a code object or function; never raises for code objects.

    Constructs that cannot be recovered become marked pseudo-code (``PSEUDO_MARK``): the
    function's signature, why, the bytecode listing and each nested code object decompiled
    on its own, so no part of the original vanishes.
    """
    code, _, _ = _code_of(obj)
    try:
        return ast.unparse(decompile_ast(obj)) + "\n"
    except RecursionError:
        return _fallback(code, "nesting too deep")
    except Exception as exc:
        reason = str(exc) if isinstance(exc, Unsupported) else f"{type(exc).__name__}: {exc}"
        return _fallback(code, reason)


def _fallback(code: types.CodeType, reason: str) -> str:
    header = f"def {identifier(code.co_name)}({ast.unparse(signature(code))}):"
    return pseudo_source(code, reason, header)
