"""Errors from replacement code, callbacks and checks propagate with their tracebacks; bad
replacements are rejected with a clear error; the recursion guard is reset afterwards."""

from __future__ import annotations

import traceback

import pytest

from framejit import frameeval as fe


def f(a, b):
    return a + b


def replacement_that_raises(a, b):
    return helper_raises(a)


def helper_raises(a):
    raise KeyError(a)


def frames_of(exc):
    return [fs.name for fs in traceback.extract_tb(exc.__traceback__)]


def test_exception_from_replacement_has_its_traceback():
    def cb(frame, cache):
        if frame.f_code is f.__code__:
            return fe.GuardedCode(fe.always_true, replacement_that_raises.__code__)
        return None

    with fe.callback(cb), pytest.raises(KeyError) as info:
        f(1, 2)
    names = frames_of(info.value)
    assert names[-2:] == ["replacement_that_raises", "helper_raises"]
    assert "f" not in names


def test_exception_from_callback_propagates_and_guard_resets():
    def cb(frame, cache):
        if frame.f_code is f.__code__:
            raise ZeroDivisionError("from callback")
        return None

    with fe.callback(cb):
        for _ in range(3):  # the guard must be back to 0 each time
            with pytest.raises(ZeroDivisionError, match="from callback") as info:
                f(1, 2)
            assert frames_of(info.value)[-1] == "cb"


def test_exception_from_check_fn_propagates():
    def bad_check(L):
        raise RuntimeError(f"check failed for {L['a']}")

    def cb(frame, cache):
        if frame.f_code is f.__code__:
            return fe.GuardedCode(bad_check, replacement_that_raises.__code__)
        return None

    with fe.callback(cb):
        with pytest.raises(KeyError):
            f(1, 2)  # miss: the callback's entry runs (and raises KeyError)
        with pytest.raises(RuntimeError, match="check failed for 3"):
            f(3, 4)  # hit path: the check raises
        with pytest.raises(RuntimeError):
            f(3, 4)


def test_bad_callback_result_is_a_type_error():
    def cb(frame, cache):
        return "nonsense" if frame.f_code is f.__code__ else None

    with (
        fe.callback(cb),
        pytest.raises(TypeError, match="must return a GuardedCode, None or SKIP_CODE"),
    ):
        f(1, 2)


def test_guarded_code_checks_its_fields():
    with pytest.raises(TypeError, match="check_fn must be callable"):
        fe.GuardedCode(1, f.__code__)
    with pytest.raises(TypeError, match="code must be a code object"):
        fe.GuardedCode(fe.always_true, f)


def _mismatched():
    def fewer(a):
        return a

    def renamed(a, c):
        return a

    def kwonly(a, b, *, c):
        return a

    def varargs(a, b, *rest):
        return a

    x = 1

    def closure(a, b):
        return x

    return {
        "co_argcount": fewer,
        "argument 1 is named 'c'": renamed,
        "co_kwonlyargcount": kwonly,
        "co_flags": varargs,
        "free variables": closure,
    }


@pytest.mark.parametrize("what", list(_mismatched()))
def test_invalid_replacement_is_rejected_with_a_clear_error(what):
    bad = _mismatched()[what]

    def cb(frame, cache):
        if frame.f_code is f.__code__:
            return fe.GuardedCode(fe.always_true, bad.__code__)
        return None

    with fe.callback(cb):
        with pytest.raises(ValueError, match=what):
            f(1, 2)
        assert fe.cache_entries(f) == []
    assert f(1, 2) == 3


def test_free_variable_names_must_match():
    def make(n):
        y = n

        def g(a, b):
            return y

        return g

    x = 1

    def h(a, b):
        return x

    def cb(frame, cache):
        if frame.f_code is h.__code__:
            return fe.GuardedCode(fe.always_true, make(1).__code__)
        return None

    with fe.callback(cb), pytest.raises(ValueError, match="co_freevars"):
        h(1, 2)
