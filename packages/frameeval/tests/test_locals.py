"""What check_fn(L) receives: a read-only mapping of the call's arguments (L['a']) and of the
function's free variables (L['scale'] is the contents of the closure cell)."""

from __future__ import annotations

from collections.abc import Mapping

import pytest

from framejit import frameeval as fe


def f(a, /, b, *args, c, d=4, **kw):
    return a


def g(a, /, b, *args, c, d=4, **kw):
    return ("g", a)


def run_with_check(fn, calls, check, replacement=None):
    """Install `check` for fn's code (entry added on the first call) with `replacement`'s code
    (fn's own by default) as the entry's code, then make the calls."""
    code = (replacement or fn).__code__

    def cb(frame, cache):
        if frame.f_code is fn.__code__:
            return fe.GuardedCode(check, code)
        return None

    with fe.callback(cb):
        return [call() for call in calls]


def capture_locals(call):
    kept = []

    def check(L):
        kept.append(L)
        return True

    # the miss runs the callback's entry without a check; the hit runs the check, kept L
    assert run_with_check(f, [call, call], check, replacement=g)[1] == ("g", 1)
    return kept[0]


def test_locals_is_a_mapping_of_the_arguments_that_outlives_the_call():
    L = capture_locals(lambda: f(1, 2, 3, c=5, z=6))
    expected = {"a": 1, "b": 2, "args": (3,), "c": 5, "d": 4, "kw": {"z": 6}}
    assert isinstance(L, Mapping)
    assert expected == L and dict(L) == expected
    assert L["a"] == 1 and L["kw"] == {"z": 6}
    assert "c" in L and "nope" not in L
    assert L.get("d") == 4 and L.get("nope", 7) == 7
    assert sorted(L) == sorted(expected)
    assert len(L) == 6
    assert sorted(L.items()) == sorted(expected.items())
    assert "framejit.frameeval.Locals" in repr(L)
    with pytest.raises(KeyError):
        L["nope"]


def test_non_interned_keys_are_found():
    key = "".join(["a"])  # a str equal to but not identical with the interned name
    seen = []

    def check(L):
        seen.append(L[key])
        return True

    run_with_check(f, [lambda: f(1, 2, c=3), lambda: f(9, 2, c=3)], check, replacement=g)
    assert seen == [9]


def test_frame_f_locals_is_a_plain_dict():
    frames = []

    def cb(frame, cache):
        if frame.f_code is f.__code__:
            frames.append(frame)
        return None

    with fe.callback(cb):
        f(1, 2, c=3)
    assert type(frames[0].f_locals) is dict
    assert frames[0].f_locals == {"a": 1, "b": 2, "args": (), "c": 3, "d": 4, "kw": {}}


# ---------------------------------------------------------------- free variables (closures)


def make_scaler(scale):
    def scaler(a):
        return a * scale

    def set_scale(value):
        nonlocal scale
        scale = value

    return scaler, set_scale


def make_unbound():
    def reader(a):
        return a + later  # `later` is a cell of make_unbound that is never bound

    if False:
        later = 0
    return reader


def test_free_variables_are_in_L_by_name():
    scaler, _ = make_scaler(3)
    seen = []

    def check(L):
        seen.append((L["scale"], "scale" in L, L.get("scale"), dict(L), len(L), sorted(L)))
        return True

    assert run_with_check(scaler, [lambda: scaler(1), lambda: scaler(2)], check) == [3, 6]
    assert seen == [(3, True, 3, {"a": 2, "scale": 3}, 2, ["a", "scale"])]


def test_non_interned_free_variable_names_are_found():
    scaler, _ = make_scaler(5)
    key = "".join(["sc", "ale"])
    seen = []

    def check(L):
        seen.append(L[key])
        return True

    run_with_check(scaler, [lambda: scaler(1), lambda: scaler(1)], check)
    assert seen == [5]


def test_an_empty_cell_is_absent_and_the_guard_fails_safely():
    reader = make_unbound()
    seen = []

    def check(L):
        seen.append(("later" in L, L.get("later", "unset"), dict(L)))
        return L["later"] == 0  # KeyError, like an unbound name

    def call():
        with pytest.raises(KeyError):
            reader(1)
        return "raised"

    def cb(frame, cache):
        if frame.f_code is reader.__code__:
            seen.append(frame.f_locals)
            return fe.GuardedCode(check, reader.__code__)
        return None

    with fe.callback(cb):
        with pytest.raises(NameError):
            reader(1)  # miss: the callback sees no `later`, then the original raises
        call()
    assert seen == [{"a": 1}, (False, "unset", {"a": 1})]


def test_nonlocal_rebinding_between_calls_is_seen_by_the_check():
    scaler, set_scale = make_scaler(2)
    seen = []

    def check(L):
        seen.append(L["scale"])
        return L["scale"] == 2

    calls = [lambda: scaler(10), lambda: scaler(10), lambda: set_scale(7), lambda: scaler(10)]
    fe.stats(reset=True)
    results = run_with_check(scaler, calls, check)
    assert results == [20, 20, None, 70]
    assert seen[0] == 2 and seen[-1] == 7  # the last check failed: a miss, not a stale hit
    assert fe.stats()["callback_calls"] >= 2


def test_two_closures_of_one_code_are_told_apart():
    double, _ = make_scaler(2)
    triple, _ = make_scaler(3)
    assert double.__code__ is triple.__code__
    seen = []

    def check(L):
        seen.append(L["scale"])
        return True

    run_with_check(double, [lambda: double(1), lambda: triple(1), lambda: double(1)], check)
    assert seen == [3, 2]


def test_kept_L_is_detached_with_the_free_variables():
    scaler, set_scale = make_scaler(4)
    kept = []

    def check(L):
        kept.append(L)
        return True

    run_with_check(scaler, [lambda: scaler(1), lambda: scaler(1)], check)
    set_scale(99)  # the detached copy holds what the call saw
    assert dict(kept[0]) == {"a": 1, "scale": 4} and kept[0]["scale"] == 4


def test_frame_f_locals_holds_free_variables_but_not_own_cells():
    def outer(k):
        def inner(a, b):
            def innermost():
                return b  # b is a cell of inner (an argument captured by a closure)

            return a + k + innermost()

        return inner

    inner = outer(100)
    frames = []

    def cb(frame, cache):
        if frame.f_code is inner.__code__:
            frames.append(frame)
        return None

    with fe.callback(cb):
        assert inner(1, 2) == 103
    assert frames[0].f_locals == {"a": 1, "b": 2, "k": 100}
    assert frames[0].closure[0].cell_contents == 100
