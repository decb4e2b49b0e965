"""One handler per GuardKind: what it snapshots, how it renders, how the mirror checks it.

Each handler has four jobs:

- ``prepare(guard)``: snapshot what the guard expects from the traced value
  (validating it, with a clear error for values the kind cannot guard);
- ``key(guard)``: a hashable summary, so duplicate guards are merged;
- ``emit(guard, ctx)``: the code parts (Python conditions over ``L``/``G`` and the
  closure variables that ``ctx.bind`` allocates) — TENSOR_MATCH instead hands its
  spec to ``ctx.add_tensor`` so all tensors are checked in one batched call;
- ``retain(guard)``: what the Guard keeps of the traced value once ``prepare`` has run
  (``lifetime.py``: nothing where the snapshot says it all, never a strong reference
  to a user object except by the rule written there);
- ``mirror(guard, L, G)``: the same condition in plain Python, evaluated through
  ``Source.get`` rather than generated code; returns None when it holds, else a
  readable reason.  The mirror is the differential oracle for the generated check
  and the body of ``failure_reason``.

``RANK`` orders the parts of a compiled check: global state first, then cheap
identity/type/constant checks, then containers, the batched tensor check, aliasing,
and shape relations last (they read sizes the tensor check has vetted).
"""

from __future__ import annotations

import builtins
import math
import reprlib
import sys
import types
from dataclasses import dataclass
from typing import Any

from . import native
from .global_state import (
    GlobalStateSnapshot,
    are_deterministic_algorithms_enabled,
    is_grad_enabled,
    is_torch_function_enabled,
)
from .guard import Guard, GuardKind
from .lifetime import Held
from .literals import check_key_literal, is_literal, numpy_number, render_literal
from .shape_expr import ShapeExpr
from .source import AttrSource, GlobalStateSource, ItemSource, ShapeSource, Source
from .tensor_spec import PyTensorGuards, TensorSpec

_short = reprlib.Repr()
_short.maxstring = 60
_short.maxother = 60


def short_repr(value: Any) -> str:
    try:
        return _short.repr(value)
    except Exception:
        return f"<{type(value).__name__} object>"


# objects whose repr is short and cheap; any other object's (a tensor's prints its data, an
# nn.Module's walks its children, a config's serializes it) is not run for every guard
_CHEAP_REPR = (
    types.FunctionType, types.BuiltinFunctionType, types.MethodType, types.ModuleType, type,
)  # fmt: skip


def _describe(value: Any) -> str:
    """What an ID_MATCH guard says its traced object was (kept after the object dies)."""
    if isinstance(value, _CHEAP_REPR) or is_literal(value):
        return short_repr(value)
    return f"<{type(value).__qualname__} object at {id(value):#x}>"


def strict_equal(actual: Any, expected: Any) -> bool:
    """Equality that also tells 1 from 1.0 from True, 0.0 from -0.0, and nan from anything else."""
    if type(actual) is not type(expected):
        return False
    plain = numpy_number(expected)
    if plain is not None:  # the same numpy type, and the same number
        return strict_equal(actual.item(), plain)
    if type(expected) is tuple:
        return len(actual) == len(expected) and all(
            strict_equal(a, e) for a, e in zip(actual, expected, strict=True)
        )
    if type(expected) is complex:  # each part by the float rule (nan, -0.0)
        return strict_equal(actual.real, expected.real) and strict_equal(actual.imag, expected.imag)
    if type(expected) is float:
        if math.isnan(expected):
            return math.isnan(actual)
        return actual == expected and math.copysign(1.0, actual) == math.copysign(1.0, expected)
    return actual == expected


@dataclass
class CodePart:
    """One condition of the generated check, its verbose lines, and the guards it covers."""

    code: str
    verbose: list[str]
    guards: list[Guard]
    # what the compiled check runs when it is not `code` itself (the same condition, spelled
    # over local variables), and the statements that set those variables up first
    run: str | None = None
    setup: tuple[str, ...] = ()


def origin_suffix(guard: Guard) -> str:
    return f"  # {guard.origin}" if guard.origin else ""


def _source_of(guard: Guard) -> Source:
    if guard.source is None:
        raise TypeError(f"{guard.kind.name} needs a source")
    return guard.source


class Handler:
    rank = 2

    def prepare(self, guard: Guard) -> Any:
        _source_of(guard)
        return guard.value

    def key(self, guard: Guard) -> Any:
        return guard.expected

    def retain(self, guard: Guard) -> Any:
        return guard.value  # specs and literals: small, and never user objects

    def emit(self, guard: Guard, ctx: Any) -> list[str]:
        raise NotImplementedError

    def finish(self, key: tuple, guards: list[Guard], ctx: Any) -> list[CodePart]:
        """The parts for guards this handler deferred under ``key`` with ``ctx.defer``."""
        raise NotImplementedError

    def mirror(self, guard: Guard, L: dict, G: dict) -> str | None:
        raise NotImplementedError

    @staticmethod
    def describe_failure(code: str, actual: Any) -> str:
        return f"{code}  (actual: {short_repr(actual)})"


class TensorMatch(Handler):
    rank = 4

    def prepare(self, guard):
        _source_of(guard)
        if isinstance(guard.value, TensorSpec):
            return guard.value
        return TensorSpec.capture(guard.value, guard.dynamic_dims)

    def retain(self, guard):
        return guard.expected  # the spec, never the tensor

    def emit(self, guard, ctx):
        ctx.defer(("tensors",), guard)
        return []

    def finish(self, key, guards, ctx):
        names = [g.source.name() for g in guards]
        args = [ctx.name(g.source) for g in guards]
        specs = [g.expected for g in guards]
        module = native.load()
        checker = (
            module.TensorGuards([s.native_args() for s in specs]).check
            if module is not None
            else PyTensorGuards(specs).check
        )
        check = ctx.bind("___check_tensors", checker)
        ctx.closure["tensor_check_names"] = names
        code = f"{check}({', '.join(args)}, tensor_check_names=tensor_check_names)"
        verbose = [
            g.expected.render(n) + origin_suffix(g) for g, n in zip(guards, names, strict=True)
        ]
        return [CodePart(code, verbose, list(guards))]

    def mirror(self, guard, L, G):
        return guard.expected.mismatch(guard.source.get(L, G), guard.source.name())


_HEAPTYPE = 1 << 9  # Py_TPFLAGS_HEAPTYPE


def lives_with_its_module(t: type) -> bool:
    """Whether ``t`` is a static type or reachable by name from its module in sys.modules
    (then it lives as long as that module: holding it costs nothing).  A class made at run
    time (exec'd, in a function, by type()) is not: its methods' globals reach the compiled
    code, so a check holding it strongly would close a cycle through co_extra."""
    if not t.__flags__ & _HEAPTYPE:
        return True
    found: Any = sys.modules.get(t.__module__)
    for part in t.__qualname__.split("."):
        found = getattr(found, part, None)
    return found is t


@dataclass(frozen=True)
class TypeId:
    """TYPE_MATCH's expectation for a class made at run time: its id (the class is Held
    weakly; its death invalidates the check, so the id is never reused) and its name."""

    id: int
    qualname: str


class TypeMatch(Handler):
    rank = 1

    def prepare(self, guard):
        _source_of(guard)
        t = type(guard.value)
        return t if lives_with_its_module(t) else TypeId(id(t), t.__qualname__)

    def retain(self, guard):
        if isinstance(guard.expected, TypeId):
            return Held(type(guard.value), guard.expected.qualname)
        return None  # the snapshot in ``expected`` is the whole check

    def key(self, guard):
        t = guard.expected
        return t.id if isinstance(t, TypeId) else id(t)

    def emit(self, guard, ctx):
        t = guard.expected
        if isinstance(t, TypeId):
            return [f"id(type({ctx.name(guard.source)})) == {t.id}"]
        if getattr(builtins, t.__name__, None) is t:
            type_name = t.__name__  # the guard function's globals are plain builtins
        else:
            type_name = ctx.bind(f"___type_{t.__qualname__}", t)
        return [f"type({ctx.name(guard.source)}) is {type_name}"]

    def mirror(self, guard, L, G):
        actual = type(guard.source.get(L, G))
        t = guard.expected
        if actual is t or (isinstance(t, TypeId) and id(actual) == t.id):
            return None
        return f"{guard.source.name()} type mismatch. expected {t.qualname if isinstance(t, TypeId) else t.__qualname__}, actual {actual.__qualname__}"


class IdMatch(Handler):
    rank = 1

    def prepare(self, guard):
        _source_of(guard)
        return id(guard.value)  # unique while Held keeps it, or until the check is invalidated

    def retain(self, guard):
        return Held(guard.value, _describe(guard.value))

    def emit(self, guard, ctx):
        return [f"id({ctx.name(guard.source)}) == {guard.expected}"]

    def mirror(self, guard, L, G):
        actual = guard.source.get(L, G)
        if id(actual) == guard.expected:
            return None
        return f"{guard.source.name()} is not the traced object {guard.value.description}  (actual: {short_repr(actual)})"


class EqualsMatch(Handler):
    rank = 2

    def prepare(self, guard):
        _source_of(guard)
        if not is_literal(guard.value) and numpy_number(guard.value) is None:
            raise TypeError(
                f"{guard.kind.name} on {guard.source} needs an int, float, complex, bool, None, str, bytes, "
                f"a numpy number or a tuple of these; got {type(guard.value).__name__} "
                "(use ID_MATCH or TYPE_MATCH)"
            )
        return guard.value

    def key(self, guard):
        plain = numpy_number(guard.expected)
        return (type(guard.expected), render_literal(guard.expected if plain is None else plain))

    def emit(self, guard, ctx):
        x, v = ctx.name(guard.source), guard.expected
        t = type(v)
        if v is None or t is bool:
            return [f"{x} is {v!r}"]
        if t in (tuple, complex):
            helper = ctx.bind("___constant_equal", strict_equal)
            return [f"{helper}({x}, {render_literal(v)})"]
        type_name, plain = t.__name__, numpy_number(v)
        if plain is None:
            plain = v
        else:  # np.int64(8): its exact type, bound, and the number it holds
            type_name = ctx.bind(f"___numpy_{t.__name__}", t)
        if type(plain) is float:
            if math.isnan(plain):
                return [f"type({x}) is {type_name} and {x} != {x}"]
            if plain == 0.0:
                sign = ctx.bind("___copysign", math.copysign)
                return [
                    f"type({x}) is {type_name} and {x} == 0.0 and {sign}(1.0, {x}) == {math.copysign(1.0, plain)!r}"
                ]
        return [f"type({x}) is {type_name} and {x} == {render_literal(plain)}"]

    def mirror(self, guard, L, G):
        actual = guard.source.get(L, G)
        if strict_equal(actual, guard.expected):
            return None
        return f"{guard.source.name()} == {render_literal(guard.expected)}  (actual: {short_repr(actual)})"


class LengthCheck(Handler):
    rank = 3

    def prepare(self, guard):
        _source_of(guard)
        return guard.value if type(guard.value) is int else len(guard.value)

    def retain(self, guard):
        return None  # the snapshot in ``expected`` is the whole check

    def emit(self, guard, ctx):
        return [f"len({ctx.name(guard.source)}) == {guard.expected}"]

    def mirror(self, guard, L, G):
        actual = len(guard.source.get(L, G))
        if actual == guard.expected:
            return None
        return f"len({guard.source.name()}) == {guard.expected}  (actual: {actual})"


class DictKeys(Handler):
    rank = 3

    def prepare(self, guard):
        _source_of(guard)
        if not isinstance(guard.value, dict):
            raise TypeError(f"DICT_KEYS needs a dict, got {type(guard.value).__name__}")
        keys = list(dict.keys(guard.value))
        for k in keys:
            check_key_literal(k)
        return tuple(keys)

    def retain(self, guard):
        return None  # the snapshot in ``expected`` is the whole check

    def key(self, guard):
        return render_literal(guard.expected)

    def _code(self, guard, name: str) -> str:
        keys = ", ".join(render_literal(k) for k in guard.expected)
        return f"list(dict.keys({name})) == [{keys}]"

    #: From this many DICT_KEYS guards expecting no keys (a module's hook dicts), they are
    #: checked in one call.
    BATCH_FROM = 3

    def emit(self, guard, ctx):
        if not guard.expected:
            ctx.defer(("no_keys",), guard)
            return []
        return [self._code(guard, ctx.name(guard.source))]

    def finish(self, key, guards, ctx):
        if len(guards) < self.BATCH_FROM:
            return [
                CodePart(code, [code + origin_suffix(g)], [g])
                for g in guards
                for code in [self._code(g, ctx.name(g.source))]
            ]
        verbose = [self._code(g, g.source.name()) + origin_suffix(g) for g in guards]
        helper = ctx.bind("___check_no_keys", check_no_keys)
        dicts = ", ".join(ctx.name(g.source) for g in guards)
        return [CodePart(f"{helper}({dicts})", verbose, list(guards))]

    def mirror(self, guard, L, G):
        actual = tuple(dict.keys(guard.source.get(L, G)))
        if actual == guard.expected:
            return None
        return f"{guard.source.name()} keys changed. expected {list(guard.expected)}, actual {short_repr(list(actual))}"


class NotNone(Handler):
    rank = 2

    def prepare(self, guard):
        _source_of(guard)
        return None  # the value only had to be (or not be) None

    def retain(self, guard):
        return None  # the snapshot in ``expected`` is the whole check

    def key(self, guard):
        return None

    def emit(self, guard, ctx):
        return [f"{ctx.name(guard.source)} is not None"]

    def mirror(self, guard, L, G):
        return (
            None
            if guard.source.get(L, G) is not None
            else f"{guard.source.name()} is not None  (actual: None)"
        )


class IsNone(Handler):
    rank = 2

    def prepare(self, guard):
        _source_of(guard)
        return None  # the value only had to be (or not be) None

    def retain(self, guard):
        return None  # the snapshot in ``expected`` is the whole check

    def key(self, guard):
        return None

    def emit(self, guard, ctx):
        return [f"{ctx.name(guard.source)} is None"]

    def mirror(self, guard, L, G):
        actual = guard.source.get(L, G)
        return (
            None
            if actual is None
            else self.describe_failure(f"{guard.source.name()} is None", actual)
        )


class HasAttr(Handler):
    rank = 2

    def prepare(self, guard):
        if not isinstance(guard.source, AttrSource):
            raise TypeError("HASATTR needs an AttrSource(base, name) source")
        if type(guard.value) is not bool:
            raise TypeError("HASATTR value must be a bool: whether the attribute exists")
        return guard.value

    def _code(self, guard, base: str | None = None):
        src = guard.source
        code = f"hasattr({base or src.base.name()}, {src.member!r})"
        return code if guard.expected else f"{code} == False"

    #: From this many HASATTR guards on one name, they are checked in one native call.
    BATCH_FROM = 3

    def emit(self, guard, ctx):
        ctx.defer(("hasattr", guard.source.member, guard.expected), guard)
        return []

    def finish(self, key, guards, ctx):
        verbose = [self._code(g) + origin_suffix(g) for g in guards]
        if len(guards) < self.BATCH_FROM:
            return [
                CodePart(self._code(g, ctx.name(g.source.base)), [v], [g])
                for g, v in zip(guards, verbose, strict=True)
            ]
        _, member, expected = key
        helper = ctx.bind("___check_hasattr", native.helper("check_hasattr", check_hasattr))
        objs = ", ".join(ctx.name(g.source.base) for g in guards)
        return [CodePart(f"{helper}({member!r}, {expected}, {objs})", verbose, list(guards))]

    def mirror(self, guard, L, G):
        src = guard.source
        if hasattr(src.base.get(L, G), src.member) == guard.expected:
            return None
        return f"{self._code(guard)}  (actual: {not guard.expected})"


class DictContains(Handler):
    """``key in d`` (or ``not in``): a module's globals without a name a builtin read would
    see shadowed.  hasattr on the module says the same for a plain module, but runs a lazy
    module's ``__getattr__`` (transformers' import machinery) on every check."""

    rank = 2

    def prepare(self, guard):
        if not isinstance(guard.source, ItemSource):
            raise TypeError("DICT_CONTAINS needs an ItemSource(dict, key) source")
        if type(guard.value) is not bool:
            raise TypeError("DICT_CONTAINS value must be a bool: whether the dict has the key")
        return guard.value

    def _code(self, guard, base: str) -> str:
        op = "in" if guard.expected else "not in"
        return f"{render_literal(guard.source.key)} {op} {base}"

    def emit(self, guard, ctx):
        return [self._code(guard, ctx.name(guard.source.base))]

    def mirror(self, guard, L, G):
        src = guard.source
        if (src.key in src.base.get(L, G)) == guard.expected:
            return None
        return f"{self._code(guard, src.base.name())}  (actual: {not guard.expected})"


class GlobalState(Handler):
    rank = 0

    def prepare(self, guard):
        if not isinstance(guard.source, GlobalStateSource):
            raise TypeError("GLOBAL_STATE needs source=GlobalStateSource()")
        if not isinstance(guard.value, GlobalStateSnapshot):
            raise TypeError(
                "GLOBAL_STATE value must be a GlobalStateSnapshot (see global_state_guard())"
            )
        return guard.value

    def emit(self, guard, ctx):
        from .global_state import make_check_global_state

        s = guard.expected
        check = ctx.bind("___check_global_state", make_check_global_state(s), unique=True)
        grad = ctx.bind("___is_grad_enabled", is_grad_enabled)
        det = ctx.bind(
            "___are_deterministic_algorithms_enabled", are_deterministic_algorithms_enabled
        )
        tf = ctx.bind("___is_torch_function_enabled", is_torch_function_enabled)
        dev = ctx.bind("utils_device", _utils_device())

        def flag(expr: str, on: bool) -> str:
            return expr if on else f"not {expr}"

        return [
            f"{check}()",
            flag(f"{grad}()", s.grad_enabled),
            flag(f"{det}()", s.deterministic_algorithms),
            flag(f"{tf}()", s.torch_function_enabled),
            f"{dev}.CURRENT_DEVICE == {s.default_device!r}",
        ]

    def mirror(self, guard, L, G):
        diffs = guard.expected.differences(GlobalStateSnapshot.capture())
        return None if not diffs else "global state changed: " + "; ".join(diffs)


def _utils_device() -> Any:
    import torch.utils._device as utils_device

    return utils_device


class ShapeExprHandler(Handler):
    """Shape relations, all checked after the tensor check: each tensor's sizes are read
    once (``___size0_0, ___size0_1 = L['x'].size()``) and every relation is a comparison of
    local ints; code_parts still show each relation over its sources."""

    rank = 6

    def prepare(self, guard):
        if not isinstance(guard.value, ShapeExpr):
            raise TypeError("SHAPE_EXPR value must be a ShapeExpr(expr, {symbol: source})")
        return guard.value

    def emit(self, guard, ctx):
        for helper in guard.expected.helpers():
            ctx.bind_helper(helper)
        ctx.defer(("shapes",), guard)
        return []

    def finish(self, key, guards, ctx):
        bases: dict[Source, int] = {}  # tensor source -> index of its size variables
        ndims: dict[Source, int] = {}
        for g in guards:
            for _, src in g.expected.sources:
                if isinstance(src, ShapeSource):
                    bases.setdefault(src.base, len(bases))
                    ndims[src.base] = max(ndims.get(src.base, 0), src.dim + 1)
        # the rank the tensor check vets, where it checks this tensor: an exact unpack
        ranks = {g.source: g.expected.ndim for g in ctx.batches.get(("tensors",), [])}
        setup = []
        spelled: dict[Source, str] = {}
        for base, k in bases.items():
            # unpacking checks the rank too: a mismatch raises, and the check is False
            exact = ranks.get(base, 0) >= ndims[base]
            names = [f"___size{k}_{d}" for d in range(ranks[base] if exact else ndims[base])]
            rest = ("," if len(names) == 1 else "") if exact else ", *_"
            setup.append(f"{', '.join(names)}{rest} = {ctx.name(base)}.size()")
            for d, name in enumerate(names):
                spelled[ShapeSource(base, d)] = name
        parts = []
        for i, g in enumerate(guards):
            code = g.expected.render()
            parts.append(
                CodePart(
                    code,
                    [code + origin_suffix(g)],
                    [g],
                    run=g.expected.render(spelled),
                    setup=tuple(setup) if i == 0 else (),
                )
            )
        return parts

    def mirror(self, guard, L, G):
        if guard.expected.evaluate(L, G):
            return None
        values = ", ".join(f"{src.name()} = {src.get(L, G)}" for _, src in guard.expected.sources)
        return f"{guard.expected.render()}  (actual: {values})"


class TensorAliasing(Handler):
    rank = 5

    def prepare(self, guard):
        _source_of(guard)
        if not isinstance(guard.value, Source):
            raise TypeError("TENSOR_ALIASING value must be the other Source")
        return guard.value

    def emit(self, guard, ctx):
        return [f"{ctx.name(guard.source)} is {ctx.name(guard.expected)}"]

    def mirror(self, guard, L, G):
        if guard.source.get(L, G) is guard.expected.get(L, G):
            return None
        return f"{guard.source.name()} is {guard.expected.name()}  (actual: different objects)"


class NoTensorAliasing(Handler):
    rank = 5

    def prepare(self, guard):
        sources = tuple(guard.value)
        if len(sources) < 2 or not all(isinstance(s, Source) for s in sources):
            raise TypeError("NO_TENSOR_ALIASING value must be two or more Sources")
        return sources

    def emit(self, guard, ctx):
        names = [ctx.name(s) for s in guard.expected]
        if len(names) == 2:
            return [f"{names[0]} is not {names[1]}"]
        helper = ctx.bind(
            "___check_no_aliasing", native.helper("check_no_aliasing", check_no_aliasing)
        )
        return [f"{helper}({', '.join(names)})"]

    def mirror(self, guard, L, G):
        seen: dict[int, Source] = {}
        for s in guard.expected:
            obj = s.get(L, G)
            if id(obj) in seen:
                return f"{seen[id(obj)].name()} and {s.name()} are the same object (traced as distinct)"
            seen[id(obj)] = s
        return None


def check_hasattr(name: str, expected: bool, *objs: Any) -> bool:
    """hasattr(obj, name) == expected for every obj (pure-Python body of ___check_hasattr)."""
    return all(hasattr(o, name) == expected for o in objs)


def check_no_keys(*dicts: Any) -> bool:
    """``list(dict.keys(d)) == []`` for every d: a dict (or a subclass) with no keys."""
    try:
        return not any(map(dict.__len__, dicts))  # in C: a module's hook dicts, every call
    except TypeError:  # not a dict
        return False


def check_no_aliasing(*objs: Any) -> bool:
    return len({id(o) for o in objs}) == len(objs)


HANDLERS: dict[GuardKind, Handler] = {
    GuardKind.TENSOR_MATCH: TensorMatch(),
    GuardKind.TYPE_MATCH: TypeMatch(),
    GuardKind.ID_MATCH: IdMatch(),
    GuardKind.EQUALS_MATCH: EqualsMatch(),
    GuardKind.CONSTANT_MATCH: EqualsMatch(),
    GuardKind.LENGTH_CHECK: LengthCheck(),
    GuardKind.DICT_KEYS: DictKeys(),
    GuardKind.NOT_NONE: NotNone(),
    GuardKind.IS_NONE: IsNone(),
    GuardKind.HASATTR: HasAttr(),
    GuardKind.DICT_CONTAINS: DictContains(),
    GuardKind.GLOBAL_STATE: GlobalState(),
    GuardKind.SHAPE_EXPR: ShapeExprHandler(),
    GuardKind.TENSOR_ALIASING: TensorAliasing(),
    GuardKind.NO_TENSOR_ALIASING: NoTensorAliasing(),
}


def handler_for(kind: GuardKind) -> Handler:
    return HANDLERS[kind]
