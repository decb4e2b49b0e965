"""The bytecode layer against the interpreter itself: its stdlib, `dis`, and running the result.

The stdlib sweep checks every code object of every stdlib file when
FRAMEJIT_BYTECODE_STDLIB=all (minutes per interpreter), and every 12th file otherwise.
"""

from __future__ import annotations

import contextlib
import dis
import os
import sys
import types

import pytest

from framejit.frameeval import bytecode as fbc

sys.path.insert(0, os.path.dirname(__file__))
import bytecode_diff

_FILES = bytecode_diff.stdlib_files()
_STRIDE = 1 if os.environ.get("FRAMEJIT_BYTECODE_STDLIB") == "all" else 12
_CHUNKS = [_FILES[i : i + 40 * _STRIDE : _STRIDE] for i in range(0, len(_FILES), 40 * _STRIDE)]


@pytest.mark.parametrize("chunk", range(len(_CHUNKS)))
def test_stdlib_decodes_and_reemits_equivalently(chunk):
    failures = []
    for path in _CHUNKS[chunk]:
        for code in bytecode_diff.code_objects(path):
            problems = bytecode_diff.check(code)
            if problems:
                failures.append(f"{path}:{code.co_firstlineno} {code.co_qualname}: {problems[:2]}")
    assert not failures, "\n".join(failures[:20])


# ------------------------------------------------------------------ running re-emitted code


class _Ctx:
    def __init__(self, log):
        self.log = log

    def __enter__(self):
        self.log.append("enter")
        return self

    def __exit__(self, *exc):
        self.log.append(("exit", exc[0]))
        return exc[0] is KeyError


def _sample(a, b=2, *rest, k=3, **kw):
    log = []
    total = a + b * k
    for i, x in enumerate(rest):
        if x is None or i > 5:
            continue
        total += x if x > 0 else -x
    squares = [v * v for v in rest if v]
    pairs = {str(v): v for v in squares}
    with _Ctx(log):
        total += len(pairs)
    with _Ctx(log):
        {}["missing"]
    try:
        1 / (total - total)
    except ZeroDivisionError as e:
        log.append(type(e).__name__)
    finally:
        log.append("finally")
    s = list(range(10))
    s[2:4] = [a, b]
    fn = lambda y: y + total  # noqa: E731
    return total, squares, s[1:5], fn(1), log, sorted(kw), f"{a!r:>4}{b}"


def _gen(n):
    for i in range(n):
        got = yield i
        if got:
            yield from range(got)
    return n


def _outer(x):
    y = x + 1

    def inner(z):
        nonlocal y
        y += z
        return x + y

    return inner(2), y


async def _coro(n):
    return n * 2


def _fresh(fn):
    new = fbc.reassemble(fn.__code__)
    return types.FunctionType(new, fn.__globals__, fn.__name__, fn.__defaults__, fn.__closure__)


def test_reemitted_functions_behave_the_same():
    g = _fresh(_sample)
    g.__kwdefaults__ = _sample.__kwdefaults__
    args = (1, 5, 3, -4, None, 0, 7)
    assert g(*args, z=1) == _sample(*args, z=1)
    assert list(_fresh(_gen)(3)) == list(_gen(3))
    gen_a, gen_b = _gen(4), _fresh(_gen)(4)
    assert [next(gen_a), gen_a.send(2), next(gen_a)] == [next(gen_b), gen_b.send(2), next(gen_b)]
    assert _fresh(_outer)(3) == _outer(3)
    with contextlib.closing(_fresh(_coro)(4)) as c, pytest.raises(StopIteration) as stop:
        c.send(None)
    assert stop.value.value == 8


def test_resume_style_edit_jumps_into_the_body():
    """A prologue that sets locals and jumps into the middle: what resume functions do."""

    def f(a):
        b = a * 2
        c = b + 1
        return a, b, c

    code = fbc.decode(f.__code__)
    start = next(i for i in code.insts if i.opname == "LOAD_FAST" and i.argval == "b")
    body = fbc.body(code)
    prologue = [fbc.inst("JUMP", jump=body.insts[start.index])]
    at = body.prefix_end()
    items = [*body.items[:at], *prologue, *body.items[at:]]
    new = fbc.assemble(items, f.__code__, argnames=("a", "b"), name="__resume_at_test")
    g = types.FunctionType(new, {})
    assert g(3, 10) == (3, 10, 11)
    assert new.co_name == "__resume_at_test"


# ------------------------------------------------------------------ canonical forms


def _names(fn) -> list[str]:
    return [i.opname for i in fbc.decode(fn.__code__).insts]


def test_canonical_calls_and_methods():
    def f(x, o):
        return o.m(x, k=1) + g(x)  # noqa: F821 - never called

    insts = fbc.decode(f.__code__).insts
    names = [i.opname for i in insts]
    assert "PRECALL" not in names and "CALL" in names
    assert "LOAD_METHOD" in names
    glob = next(i for i in insts if i.opname == "LOAD_GLOBAL")
    assert glob.argval == "g" and glob.push_null
    kw = "KW_NAMES" if fbc.VERSION.has_kw_names else "CALL_KW"
    assert kw in names


def test_superinstructions_and_return_const_are_split():
    def f(a, b, xs):
        a, b = b, a
        xs[1:2] = xs[0:1]
        return None

    names = _names(f)
    for gone in (
        "LOAD_FAST_LOAD_FAST",
        "STORE_FAST_STORE_FAST",
        "RETURN_CONST",
        "BINARY_SLICE",
        "STORE_SLICE",
    ):
        assert gone not in names
    assert names[-2:] == ["LOAD_CONST", "RETURN_VALUE"]
    assert names.count("BUILD_SLICE") == 2


def test_jumps_have_one_spelling_and_targets_are_indices():
    def f(xs):
        t = 0
        for x in xs:
            if x:
                t += x
        return t

    code = fbc.decode(f.__code__)
    names = {i.opname for i in code.insts}
    assert not any("FORWARD" in n or "BACKWARD" in n for n in names)
    for i in code.insts:
        if i.target is not None:
            assert 0 <= i.target <= len(code.insts)


def test_exception_entries_and_depths():
    def f(a):
        try:
            return a + 1
        except TypeError:
            return None

    code = fbc.decode(f.__code__)
    assert code.exception_entries
    entry = code.exception_entries[0]
    assert code.insts[entry.target].opname == "PUSH_EXC_INFO"
    assert code.stack_depth_at(entry.target) == entry.depth + entry.lasti + 1


def test_liveness():
    def f(a, b):
        c = a + 1
        d = c * 2
        return d + b

    code = fbc.decode(f.__code__)
    store_c = next(i for i in code.insts if i.opname == "STORE_FAST" and i.argval == "c")
    assert code.live_locals_at(store_c.index + 1) == {"c", "b"}


def test_pops_pushes_of_calls():
    def f(o, x):
        return o(x, x)

    call = next(i for i in fbc.decode(f.__code__).insts if i.opname == "CALL")
    assert fbc.pops_pushes(call) == (4, 1)


def test_version_row_exists():
    assert fbc.VERSION is not None and fbc.VERSION.version == sys.version_info[:2]
    assert set(fbc.SUPPORTED) == {(3, 11), (3, 12), (3, 13)}
    assert dis  # the oracle module these tests compare against
