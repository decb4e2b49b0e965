"""A replacement runs with the frame's arguments, closure and globals, like the original would.

Each case compares the replaced call with what the original computes unhooked (the oracle);
replacements compute the same thing, written differently, plus a marker.
"""

from __future__ import annotations

import asyncio
import sys

import pytest

from framejit import frameeval as fe

MARK = "via-replacement"


def replace(target, replacement, check_fn=fe.always_true):
    def cb(frame, cache):
        if frame.f_code is target.__code__:
            return fe.GuardedCode(check_fn, replacement.__code__)
        return None

    return fe.callback(cb)


def test_args_kwargs_kwonly_posonly_defaults():
    def f(a, /, b, c=3, *args, d, e=5, **kw):
        return (a, b, c, args, d, e, kw)

    def g(a, /, b, c=3, *args, d, e=5, **kw):
        return (MARK, a, b, c, args, d, e, kw)

    calls = [
        ((1, 2), {"d": 4}),
        ((1, 2, 9, 10, 11), {"d": 4, "e": 6, "z": 7}),
        ((1,), {"b": 2, "d": 4, "a": "kw-a"}),  # pos-only name collides with **kw
    ]
    expected = [(MARK, *f(*a, **k)) for a, k in calls]
    with replace(f, g):
        assert [f(*a, **k) for a, k in calls] == expected


def test_closure_cells_and_nonlocal_writes():
    def outer():
        total = 0
        factor = 10

        def f(x):
            nonlocal total
            total += x * factor
            return total

        def g(x):
            nonlocal total
            total += x * factor
            return (MARK, total)

        return f, g, lambda: total

    f, g, read_total = outer()
    with replace(f, g):
        assert f(1) == (MARK, 10)
        assert f(2) == (MARK, 30)
    assert read_total() == 30


def test_argument_becomes_cell_in_replacement():
    def f(a, b):
        return a + b

    def g(a, b):
        def inner():
            return a * b  # a and b are cells here

        return (MARK, inner())

    with replace(f, g):
        assert f(3, 4) == (MARK, 12)


def test_zero_argument_super():
    class Base:
        def m(self, x):
            return ("base", x)

    class Child(Base):
        def m(self, x):
            return ("child", super().m(x))

        def m_new(self, x):
            return (MARK, super().m(x))

    with replace(Child.m, Child.m_new):
        assert Child().m(1) == (MARK, ("base", 1))


def test_replacement_sees_globals_and_builtins():
    def f(x):
        return x

    def g(x):
        return (MARK, len(MARK), sys.maxsize > x)

    with replace(f, g):
        assert f(1) == (MARK, len(MARK), True)


def test_recursion_through_replacement():
    def fib(n):
        return n if n < 2 else fib(n - 1) + fib(n - 2)

    def fib_new(n):
        return n if n < 2 else fib(n - 1) + fib(n - 2) + 0

    with replace(fib, fib_new):
        assert fib(15) == 610


@pytest.mark.parametrize("extra_locals", [0, 400])
def test_deep_recursion_with_small_and_large_replacement_frames(extra_locals):
    # A 400-local replacement does not fit in place near the end of a data-stack chunk and
    # takes the new-function path; both must give the same answer.
    depth = 600 if sys.version_info[:2] != (3, 12) else 300  # 3.12 caps hooked depth at 749
    namespace: dict = {}
    body = "".join(f"    v{i} = n\n" for i in range(extra_locals))
    exec("def down(n):\n    return 0 if n == 0 else 1 + down(n - 1)\n", namespace)
    exec(f"def down_new(n):\n{body}    return 0 if n == 0 else 1 + down(n - 1)\n", namespace)
    fe.stats(reset=True)
    with replace(namespace["down"], namespace["down_new"]):
        assert namespace["down"](depth) == depth
    counts = fe.stats()
    assert counts["in_place"] + counts["new_function"] == depth + 1
    if extra_locals:
        assert counts["new_function"] > 0  # the chunk-boundary fallback was exercised
    else:
        assert counts["new_function"] == 0


def test_generators_and_coroutines_run_untouched():
    seen = []

    def cb(frame, cache):
        seen.append(frame.f_code.co_name)
        return None

    def gen():
        got = yield 1
        yield got

    async def coro():
        return 5

    with fe.callback(cb):
        g = gen()
        assert next(g) == 1
        assert g.send(7) == 7
        with pytest.raises(KeyError):
            g.throw(KeyError("x"))
        assert asyncio.run(coro()) == 5
    assert "gen" not in seen and "coro" not in seen


def test_class_bodies_and_module_code_are_not_intercepted():
    seen = []

    def cb(frame, cache):
        seen.append(frame.f_code.co_name)
        return None

    with fe.callback(cb):

        class Body:
            x = 1

        exec("y = 2", {})
    assert "Body" not in seen and "<module>" not in seen


def test_generator_replacement_is_rejected():
    def f(x):
        return x

    def g(x):
        yield x

    with replace(f, g), pytest.raises(ValueError, match="generator"):
        f(1)


def test_replacement_is_what_introspection_sees():
    def f(x):
        return x

    def g(x):
        frame = sys._getframe()
        return (frame.f_code.co_name, frame.f_back.f_code.co_name)

    def caller():
        return f(1)

    with replace(f, g):
        assert caller() == ("g", "caller")


def test_tracer_frames_are_not_intercepted():
    seen = []

    def cb(frame, cache):
        seen.append(frame.f_code.co_name)
        return None

    def tracer(frame, event, arg):
        return None

    def traced(x):
        return x

    sys.settrace(tracer)
    try:
        with fe.callback(cb):
            traced(1)
    finally:
        sys.settrace(None)
    assert "traced" in seen
    assert "tracer" not in seen


def recurse(n):
    return 0 if n == 0 else 1 + recurse(n - 1)


def test_recursion_depth_while_installed_and_after_removal():
    with fe.callback(lambda frame, cache: None):
        if sys.version_info[:2] == (3, 12):
            # Any PEP 523 hook caps 3.12 at 749 frames (C-recursion budget): a clean error.
            with pytest.raises(RecursionError):
                recurse(900)
        else:
            assert recurse(900) == 900
        assert recurse(600) == 600
    assert fe.hook_state()["current"] == "default"
    assert recurse(900) == 900  # the hook is gone, and so is the cap
