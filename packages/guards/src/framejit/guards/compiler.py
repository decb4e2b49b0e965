"""compile_guards: one generated Python function for a whole guard set.

Steps: merge duplicate guards; order them (``Handler.rank``: global state, identity and
type checks, constants, containers, the one batched tensor check, aliasing, shape
relations); let each kind's handler emit its code parts, binding helpers and expected
values as closure variables under TorchDynamo's names (``___check_tensors``,
``tensor_check_names``, ``___check_global_state``, ``___is_grad_enabled``,
``utils_device``, ``G`` ...).  Some kinds defer their guards (``ctx.defer``) to be
checked together in one call where the first of them would go: all TENSOR_MATCH guards
become one ``___check_tensors(...)``, and three or more HASATTR guards on one name
become one ``___check_hasattr(name, expected, ...)``; their verbose parts still list
each guard.  Handlers spell a source as ``ctx.name(source)``, a placeholder: code_parts
spell it in full (``L['self']._modules['fc'].training is False``), the check over local
variables, so a source that several parts read (or build on) is evaluated once, into a
``___v<n>`` assigned just before the first part that needs it (``_Hoisted``): the source
text, its compile time and the hit path all shrink.  Consecutive parts with nothing to
assign between them are one condition.  Then generate::

    def ___make_guard_fn(<closure variables>):
        def guard(L):
            try:
                ___v0 = L['self']
                if not (id(___v0) == 1407...):
                    return False
                ___v1 = ___v0._modules['fc']
                if not ((id(___v1) == 1407...) and (___v1.training is False)):
                    return False
                ...
            except Exception:
                return False          # a source that no longer resolves: not a hit
            return True
        return guard

Evaluation order is the parts' order: a local is read where its first part would read it,
so an identity or type check still runs before any read through the object it checks.
The parts only ever contain text produced by Source.spell() and literals.py, so no
string of user code is executed.  The function gets ``code_parts``,
``verbose_code_parts``, ``failure_reason``, ``failure_reasons``, ``guards``, ``closure_vars``
and ``source`` attributes.  The two failure functions re-check guard by guard in plain Python
(the mirror), so they cost nothing on the hit path: callers use them only after a miss.
``invalidated`` / ``on_invalidate`` (``lifetime.py``): the check dies with the objects its
ID_MATCH guards hold weakly.  ``G`` is not a closure variable: a guard set that reads globals
starts with ``G = ___globals_ref().globals`` (``lifetime.GlobalsAnchor``), so a check never
keeps its frame's globals alive; ``check_fn.global_scope()`` reads them (None once freed).
"""

from __future__ import annotations

import builtins
import itertools
import linecache
import re
import weakref
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

import torch

from .guard import Guard
from .kinds import CodePart, handler_for, origin_suffix
from .lifetime import Held, globals_ref, read_globals, watch_held
from .mirror import guard_failure, iter_failures
from .source import SOURCE_HELPERS, Source, builtins_dict

_counter = itertools.count()
_ALL_HOLD = "the guard check failed but every guard holds on its own (framejit bug: please report)"


@dataclass
class _CodeGen:
    global_scope: dict[str, Any]
    closure: dict[str, Any] = field(default_factory=dict)
    # Guards a handler deferred to be checked together, by batch key, in first-seen order,
    # with the index among the parts where the batch goes.
    batches: dict[tuple, list[Guard]] = field(default_factory=dict)
    slots: dict[tuple, int] = field(default_factory=dict)
    n_parts: int = 0
    # the sources the parts read or build on, by placeholder number (see name()): how often
    # the parts read each, which sources read through it, and its base's number (_Hoisted)
    refs: dict[Source, int] = field(default_factory=dict)
    by_id: dict[int, int] = field(default_factory=dict)
    keep: list[Source] = field(default_factory=list)
    ref_list: list[Source] = field(default_factory=list)
    reads: list[int] = field(default_factory=list)
    children: list[set[int]] = field(default_factory=list)
    base_of: list[int | None] = field(default_factory=list)

    def bind(self, hint: str, value: Any, unique: bool = False) -> str:
        """A closure variable holding ``value``, named after ``hint`` (made an identifier)."""
        base = re.sub(r"\W", "_", hint, flags=re.ASCII)
        name, n = base, 0
        while name in self.closure and (unique or self.closure[name] is not value):
            n += 1
            name = f"{base}_{n}"
        self.closure[name] = value
        return name

    def bind_helper(self, name: str) -> None:
        if name == "G":
            if "___globals_ref" not in self.closure:
                self.closure["___globals_ref"] = globals_ref(self.global_scope)
        elif name == "B":
            self.closure["B"] = builtins_dict(self.global_scope)
        else:
            self.closure[name] = SOURCE_HELPERS[name]

    def name(self, source: Source) -> str:
        """A placeholder for ``source``'s expression in a part: code_parts spell it in full,
        the check itself over the local variables that ``_hoist`` assigns."""
        # keyed by identity first: a guard set reads a few thousand sources, and a Source's
        # hash is a Python call (an equal source that is another object is found below)
        i = self.by_id.get(id(source))
        if i is None:
            i = self._register(source)
        self.reads[i] += 1
        return f"\x00{i}\x00"

    def _register(self, source: Source) -> int:
        i = self.refs.get(source)
        if i is None:
            i = self.refs[source] = len(self.ref_list)
            self.ref_list.append(source)
            self.reads.append(0)
            self.children.append(set())
            self.base_of.append(None)
            for helper in source.all_helpers():
                self.bind_helper(helper)
            base = source.base_source()
            if base is not None:
                b = self.by_id.get(id(base))
                if b is None:
                    b = self._register(base)
                self.base_of[i] = b
                self.children[b].add(i)
        self.by_id[id(source)] = i
        self.keep.append(source)  # the id stays this source's while the compile runs
        return i

    def defer(self, key: tuple, guard: Guard) -> None:
        """Check ``guard`` together with the others deferred under ``key`` (see Handler.finish)."""
        self.slots.setdefault(key, self.n_parts)
        self.batches.setdefault(key, []).append(guard)


def _dedup(guards: Iterable[Guard]) -> list[Guard]:
    seen: dict[tuple, Guard] = {}
    for g in guards:
        if not isinstance(g, Guard):
            raise TypeError(f"compile_guards takes Guard objects, got {type(g).__name__}")
        seen.setdefault(g.dedup_key(), g)
    return list(seen.values())


def _order(guards: list[Guard]) -> list[Guard]:
    def sort_key(item: tuple[int, Guard]) -> tuple:
        i, g = item
        depth = g.source.depth() if g.source is not None else 0
        return (handler_for(g.kind).rank, depth, i)

    return [g for _, g in sorted(enumerate(guards), key=sort_key)]


def _build_parts(ordered: list[Guard], gen: _CodeGen) -> list[CodePart]:
    parts: list[CodePart] = []
    for g in ordered:
        for code in handler_for(g.kind).emit(g, gen):
            parts.append(CodePart(code, [code + origin_suffix(g)], [g]))
        gen.n_parts = len(parts)
    by_slot: dict[int, list[CodePart]] = {}
    for key, guards in gen.batches.items():
        finished = handler_for(guards[0].kind).finish(key, guards, gen)
        by_slot.setdefault(gen.slots[key], []).extend(finished)
    out: list[CodePart] = []
    for i in range(len(parts) + 1):
        out += by_slot.get(i, [])
        if i < len(parts):
            out.append(parts[i])
    return out


_REF = re.compile("\x00([0-9]+)\x00")


@dataclass
class _Hoisted:
    """The parts spelled for the check: a source that two or more reads share (directly or
    through the sources built on it) is read once, into a local ``___v<n>`` assigned just
    before the first part that needs it; the rest are spelled in full."""

    gen: _CodeGen
    shared: list[bool]
    spelled: list[str | None]
    lines: list[str] = field(default_factory=list)

    @classmethod
    def plan(cls, gen: _CodeGen) -> _Hoisted:
        shared = [r + len(kids) >= 2 for r, kids in zip(gen.reads, gen.children, strict=True)]
        return cls(gen, shared, [None] * len(shared))

    def spell(self, i: int) -> str:
        found = self.spelled[i]
        if found is not None:
            return found
        b = self.gen.base_of[i]
        text = self.gen.ref_list[i].spell(self.spell(b) if b is not None else "")
        if self.shared[i]:
            local = f"___v{len(self.lines)}"
            self.lines.append(f"{local} = {text}")
            text = local
        self.spelled[i] = text
        return text

    def fast(self, text: str) -> str:
        """``text`` over the locals, with the assignments it needs first appended to lines."""
        if "\x00" not in text:
            return text
        return _REF.sub(lambda m: self.spell(int(m.group(1))), text)


def _full(text: str, gen: _CodeGen) -> str:
    if "\x00" not in text:
        return text
    return _REF.sub(lambda m: gen.ref_list[int(m.group(1))].name(), text)


def _full_verbose(line: str, code: str, full_code: str, gen: _CodeGen) -> str:
    """A verbose line spelled in full; most are the part's code plus where it came from,
    whose code is spelled already."""
    if line.startswith(code):
        return full_code + _full(line[len(code) :], gen)
    return _full(line, gen)


def _generate_source(parts: list[CodePart], gen: _CodeGen, closure_names: list[str]) -> str:
    lines = [
        f"def ___make_guard_fn({', '.join(closure_names)}):",
        "    def guard(L):",
        "        try:",
    ]
    if "___globals_ref" in closure_names:
        # freed globals: None has no .globals, the AttributeError below makes it a miss
        lines.append("            G = ___globals_ref().globals")
    hoisted = _Hoisted.plan(gen)
    # consecutive conditions are one `if not (a and b ...)`: fewer statements compile faster
    chain: list[str] = []

    def flush() -> None:
        if chain:
            cond = chain[0] if len(chain) == 1 else " and ".join(f"({c})" for c in chain)
            lines.append(f"            if not ({cond}):")
            lines.append("                return False")
            chain.clear()

    for p in parts:
        done = len(hoisted.lines)
        setup = [hoisted.fast(line) for line in p.setup]
        run = hoisted.fast(p.run or p.code)
        if setup or len(hoisted.lines) > done:
            flush()
        lines += [f"            {line}" for line in hoisted.lines[done:]]
        lines += [f"            {line}" for line in setup]
        chain.append(run)
    flush()
    if not parts:
        lines.append("            pass")
    lines += [
        "        except Exception:",
        "            return False",
        "        return True",
        "    return guard",
        "",
    ]
    return "\n".join(lines)


def compile_guards(guards: Iterable[Guard], global_scope: dict[str, Any]) -> Any:
    """One check function ``check_fn(L) -> bool`` for the whole guard set.

    ``global_scope`` is the frame's globals dict (``G`` in the code parts), bound now.
    """
    if not isinstance(global_scope, dict):
        raise TypeError(
            f"global_scope must be the frame's globals dict, got {type(global_scope).__name__}"
        )
    unique = _dedup(guards)
    ordered = _order(unique)
    gen = _CodeGen(global_scope)
    parts = _build_parts(ordered, gen)
    closure_names = list(gen.closure)
    source = _generate_source(parts, gen, closure_names)
    filename = f"<framejit guards {next(_counter)}>"
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    fn_globals = {
        "__builtins__": builtins,
        "__name__": "framejit.guards.generated",
        "device": torch.device,
    }
    exec(compile(source, filename, "exec"), fn_globals)
    check_fn = fn_globals["___make_guard_fn"](*(gen.closure[n] for n in closure_names))

    failure_order = [g for p in parts for g in p.guards]
    # The failure functions live on check_fn: a weak reference back keeps them out of a
    # cycle, so a discarded cache entry frees its check at once (not at the next GC pass).
    check_ref = weakref.ref(check_fn)
    scope_ref = globals_ref(global_scope) if "___globals_ref" in gen.closure else None

    def global_scope_now() -> dict[str, Any] | None:
        """The globals the check reads (None once freed); a check without G reads none."""
        return read_globals(scope_ref) if scope_ref is not None else {}

    def failure_reason(L: dict[str, Any]) -> str | None:
        """The first failing guard, with detail; None when the check passes."""
        check_fn = check_ref()
        if check_fn.invalidated is not None:
            return f"the guards were invalidated: {check_fn.invalidated}"
        if check_fn(L):
            return None
        G = global_scope_now()
        if G is None:
            return "the frame's globals were freed"
        for g in failure_order:
            reason = guard_failure(g, L, G)
            if reason is not None:
                return reason + origin_suffix(g)
        return _ALL_HOLD

    def failure_reasons(L: dict[str, Any]) -> list[str]:
        """Every failing guard, in check order, each with the user line that created it."""
        check_fn = check_ref()
        if check_fn.invalidated is not None:
            return [f"the guards were invalidated: {check_fn.invalidated}"]
        if check_fn(L):
            return []
        G = global_scope_now()
        if G is None:
            return ["the frame's globals were freed"]
        found = [reason + origin_suffix(g) for g, reason in iter_failures(failure_order, L, G)]
        return found or [_ALL_HOLD]

    check_fn.code_parts = [_full(p.code, gen) for p in parts]
    check_fn.verbose_code_parts = [
        _full_verbose(line, p.code, full, gen)
        for p, full in zip(parts, check_fn.code_parts, strict=True)
        for line in p.verbose
    ]
    check_fn.failure_reason = failure_reason
    check_fn.failure_reasons = failure_reasons
    check_fn.guards = unique
    check_fn.closure_vars = {
        name: cell.cell_contents
        for name, cell in zip(
            check_fn.__code__.co_freevars, check_fn.__closure__ or (), strict=True
        )
    }
    check_fn.source = source
    check_fn.global_scope = global_scope_now
    weakref.finalize(check_fn, linecache.cache.pop, filename, None)
    watch_held(check_fn, [g.value for g in unique if isinstance(g.value, Held)])
    return check_fn
