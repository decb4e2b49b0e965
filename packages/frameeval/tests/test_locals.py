"""What check_fn(L) receives: a read-only mapping of the call's arguments (L['a'])."""

from __future__ import annotations

from collections.abc import Mapping

import pytest

from framejit import frameeval as fe


def f(a, /, b, *args, c, d=4, **kw):
    return a


def g(a, /, b, *args, c, d=4, **kw):
    return ("g", a)


def capture_locals(call):
    kept = []

    def check(L):
        kept.append(L)
        return True

    def cb(frame, cache):
        if frame.f_code is f.__code__:
            return fe.GuardedCode(check, g.__code__)
        return None

    with fe.callback(cb):
        call()  # miss: the callback's entry runs without a check
        assert call() == ("g", 1)  # hit: the check ran and kept L
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

    def cb(frame, cache):
        if frame.f_code is f.__code__:
            return fe.GuardedCode(check, g.__code__)
        return None

    with fe.callback(cb):
        f(1, 2, c=3)
        f(9, 2, c=3)
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
