"""framejit's hook next to another PEP 523 evaluator: it chains, never clobbers silently."""

from __future__ import annotations

import foreign_hook
import pytest

from framejit import frameeval as fe


@pytest.fixture(scope="module")
def foreign():
    return foreign_hook.build()


def f(a):
    return a


def f_new(a):
    return ("new", a)


def replace_f(frame, cache):
    if frame.f_code is f.__code__:
        return fe.GuardedCode(fe.always_true, f_new.__code__)
    return None


def test_framejit_chains_to_an_evaluator_installed_before_it(foreign):
    foreign.foreign_install(1)
    try:
        assert fe.hook_state()["current"] == "other"
        with fe.callback(replace_f):
            assert fe.hook_state()["current"] == "framejit"
            assert fe.hook_state()["chained"] is True
            before = foreign.foreign_seen()
            assert f(1) == ("new", 1)
            assert foreign.foreign_seen() > before  # frames still reach the other evaluator
        assert fe.hook_state()["current"] == "other"  # restored, not reset to the default
    finally:
        foreign.foreign_uninstall(1)
    assert fe.hook_state()["current"] == "default"


def test_framejit_does_not_remove_an_evaluator_installed_over_it(foreign):
    fe.set_callback(replace_f)
    foreign.foreign_install(1)  # saves framejit's evaluator and forwards to it
    try:
        assert f(2) == ("new", 2)
        fe.set_callback(None)
        assert fe.hook_state()["current"] == "other"  # not clobbered
        assert f(2) == 2
    finally:
        foreign.foreign_uninstall(1)  # hands framejit's (now idle) evaluator back
    assert f(3) == 3  # framejit's pass-through takes itself out on its first run
    assert fe.hook_state() == {
        "installed": False,
        "current": "default",
        "chained": False,
        "active_threads": 0,
    }


def test_framejit_reinstalls_with_a_warning_when_removed_by_someone_else(foreign):
    fe.set_callback(replace_f)
    foreign.foreign_install(0)
    foreign.foreign_uninstall(0)  # a naive user: puts the default back, dropping framejit
    assert fe.hook_state()["current"] == "default"
    assert f(4) == 4
    with pytest.warns(RuntimeWarning, match="removed framejit's frame evaluator"):
        fe.set_callback(replace_f)
    assert fe.hook_state()["current"] == "framejit"
    assert f(4) == ("new", 4)


def test_torch_compile_region_inside_framejit():
    torch = pytest.importorskip("torch")  # the nox venv has no torch; 3.11 dev machines do

    def plain(x):
        return x

    def plain_new(x):
        return x * 2

    def cb(frame, cache):
        if frame.f_code is plain.__code__:
            return fe.GuardedCode(lambda L: isinstance(L["x"], int), plain_new.__code__)
        return None

    def model(x):
        return torch.sin(x) + 1

    compiled = torch.compile(model, backend="eager")
    x = torch.randn(8)
    with fe.callback(cb):
        assert plain(3) == 6
        torch.testing.assert_close(compiled(x), model(x))
        torch.testing.assert_close(compiled(x), model(x))
        assert fe.hook_state()["current"] == "framejit"  # torch restored framejit's evaluator
        assert plain(4) == 8
    assert fe.hook_state()["current"] == "default"

    # framejit enabled from inside a compiled region (a torch._dynamo.disable'd helper):
    # it must still be in place, and working, after torch leaves the region.
    @torch._dynamo.disable
    def enable_framejit():
        fe.set_callback(cb)

    def model_enabling(x):
        y = torch.cos(x)
        enable_framejit()
        return y * 3

    compiled_enabling = torch.compile(model_enabling, backend="eager")
    try:
        torch.testing.assert_close(compiled_enabling(x), model_enabling(x))
        assert fe.hook_state()["current"] == "framejit"
        assert plain(5) == 10
    finally:
        fe.set_callback(None)
        torch._dynamo.reset()
    assert fe.hook_state()["current"] == "default"
