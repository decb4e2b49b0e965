"""Graph breaks inside `with` blocks and try/except/finally keep the frame compiled.

Each case runs eagerly and compiled on fresh inputs; results, raised exceptions and the
order of context-manager / finally side effects must be identical, and the code after the
break must be captured (a resume function with a graph), not the whole frame run eagerly.
When the break instruction raises, the handler path runs eagerly (HANDLER_PATH).
"""

from __future__ import annotations

import contextlib

import pytest
import torch

from framejit import graphcapture as fj

LOG: list = []


class Ctx:
    def __enter__(self):
        LOG.append("enter")
        return self

    def __exit__(self, *exc):
        LOG.append(("exit", exc[0]))
        return False


class Suppress:
    def __enter__(self):
        LOG.append("enter")

    def __exit__(self, kind, value, tb):
        LOG.append(("exit", kind))
        return kind is KeyError


@contextlib.contextmanager
def managed(tag):
    LOG.append(("cm-enter", tag))
    try:
        yield tag
    finally:
        LOG.append(("cm-exit", tag))


def opaque(x):
    """A call that breaks the graph and returns its argument."""
    print("", end="")
    return x


def fail(x):
    print("", end="")
    raise KeyError("k")


def with_user_class(x):
    y = x + 1
    with Ctx():
        y = opaque(y) * 2
        y = y + 1
    return y - 1


def with_contextmanager(x):
    with managed("a") as tag:
        y = opaque(x) + 1
        y = y * 3
    return y, tag


def with_no_grad(x):
    with torch.no_grad():
        y = x * 2
        y = opaque(y) + 1
        z = y * 3
    return z, torch.is_grad_enabled(), z.requires_grad


def with_enable_grad_inside_no_grad(x):
    with torch.no_grad():
        a = x * 2
        with torch.enable_grad():
            b = opaque(x) * 3
        c = b + a
    return c, c.requires_grad, torch.is_grad_enabled()


def with_inference_mode(x):
    with torch.inference_mode():
        y = opaque(x * 2) + 1
        z = y * 3
    return z, torch.is_inference_mode_enabled()


def with_autocast(x):
    with torch.autocast("cpu", dtype=torch.bfloat16):
        y = opaque(x) @ x.unsqueeze(1)
        z = y * 2
    return z, z.dtype


def try_except_finally(x):
    y = x * 2
    try:
        y = opaque(y) + 1
        z = y.sum()
    except ValueError:
        z = None
    finally:
        LOG.append("finally")
    return y, z


def exception_from_the_break(x):
    y = x * 2
    try:
        y = fail(y)
    except KeyError as e:
        LOG.append(repr(e))
        y = y - 1
    return y * 2


def exception_through_a_with(x):
    with Ctx():
        y = x + 1
        fail(y)
    return y


def suppressed_by_exit(x):
    y = x + 1
    with Suppress():
        y = y * 2
        fail(y)
    return y + 1


def break_in_a_loop_in_a_try(x):
    total = x
    try:
        for i in range(3):
            total = opaque(total) + i
    finally:
        LOG.append("done")
    return total


def branch_in_a_try(x):
    try:
        y = x * 2
        if y.sum() > 0:  # a data-dependent branch inside the try: two resume functions
            y = y + 1
        else:
            raise ValueError("negative")
        z = y * 3
    except ValueError:
        z = x - 100
    return z


def branch_in_a_with(x):
    with Ctx():
        y = x * 2
        y = y.sin() if y.sum() > 0 else y.cos()
    return y + 1


def branch_under_no_grad(x):
    with torch.no_grad():
        y = x * 2
        z = y + x if y.sum() > 0 else y - x
        w = z * 2
    return w, torch.is_grad_enabled(), w * x


def ambiguous_truth_in_a_try(x):
    try:
        y = x + 1 if x else x - 1  # bool() of 4 elements raises: the except runs
    except RuntimeError as e:
        LOG.append(str(e))
        y = x * 2
    return y


CASES = [
    with_user_class,
    with_contextmanager,
    with_no_grad,
    with_enable_grad_inside_no_grad,
    with_inference_mode,
    with_autocast,
    try_except_finally,
    exception_from_the_break,
    exception_through_a_with,
    suppressed_by_exit,
    break_in_a_loop_in_a_try,
    branch_in_a_try,
    branch_in_a_with,
    branch_under_no_grad,
    ambiguous_truth_in_a_try,
]


# the break itself raises: the handler (except / __exit__ / finally) and what follows it
# run eagerly in a resume function that starts at the original handler
HANDLER_PATH = {
    exception_from_the_break,
    exception_through_a_with,
    suppressed_by_exit,
    ambiguous_truth_in_a_try,
}


def _outcome(fn, x):
    LOG.clear()
    try:
        result, error = fn(x), None
    except Exception as e:  # the eager exception is part of the outcome
        result, error = None, (type(e), str(e))
    return result, error, list(LOG)


def _same(a, b) -> None:
    if isinstance(a, tuple):
        assert isinstance(b, tuple) and len(a) == len(b)
        for x, y in zip(a, b, strict=True):
            _same(x, y)
    elif isinstance(a, torch.Tensor):
        torch.testing.assert_close(b, a)
        assert a.requires_grad == b.requires_grad
    else:
        assert a == b


@pytest.mark.parametrize("fn", CASES, ids=lambda f: f.__name__)
def test_break_inside_with_or_try_matches_eager(fn):
    x = torch.randn(4, requires_grad=True)
    grad_before = torch.is_grad_enabled()
    eager = _outcome(fn, x)
    records = []
    unsubscribe = fj.events.subscribe(records.append)
    try:
        compiled = fj.compile(fn)
        for _ in range(2):  # the second call runs the cached code
            got = _outcome(compiled, x)
            _same(eager[0], got[0])
            assert got[1:] == eager[1:]
            assert torch.is_grad_enabled() == grad_before
    finally:
        unsubscribe()
    root = [r for r in records if r.function_name == fn.__name__]
    if fn is break_in_a_loop_in_a_try:  # as torch.compile: a break in a loop runs it eagerly
        assert root[0].skipped_reason == "graph break in a for/while loop"
        return
    assert root and root[0].skipped_reason is None, root[0].skipped_reason
    assert root[0].graph_breaks
    if fn not in HANDLER_PATH:  # the code after the break is captured too
        resumed = [r for r in records if r.function_name.startswith("__resume_at_") and r.graphs]
        assert resumed, [(r.function_name, r.skipped_reason) for r in records]


@pytest.mark.parametrize("sign", [1.0, -1.0])
@pytest.mark.parametrize("fn", [branch_in_a_try, branch_in_a_with, branch_under_no_grad])
def test_both_branches_inside_with_or_try_match_eager(fn, sign):
    compiled = fj.compile(fn)
    for x in (sign * torch.ones(4, requires_grad=True), -sign * torch.ones(4)):
        eager = _outcome(fn, x)
        got = _outcome(compiled, x)
        _same(eager[0], got[0])
        assert got[1:] == eager[1:]
        assert torch.is_grad_enabled()


class _HelperBase(torch.nn.Module):
    def helper(self, x):
        return x * 0.5


class _SuperAfterTry(_HelperBase):
    """super() after (and in the handler of) a break inside a try block."""

    def forward(self, x, fail):
        try:
            print("in try", end="")  # the graph break, in the protected range
            if fail:
                raise KeyError("k")
            x = x + 1
        except KeyError:
            x = super().helper(x) - 1
        finally:
            x = x * 2
        return super().helper(x)


@pytest.mark.parametrize("fail", [False, True])
def test_zero_argument_super_after_a_break_in_try(fail, capsys):
    """The resume function of a protected break took a dummy first argument, and
    zero-argument super() reads the first slot: AttributeError 'super' object has no
    attribute (found by integration-tests/stateful_programs.py)."""
    mod = _SuperAfterTry()
    x = torch.randn(3)
    torch.testing.assert_close(fj.compile(mod)(x, fail), mod(x, fail))


def test_autocast_disabled_inside_an_outer_autocast_is_not_folded():
    """`autocast(enabled=False)` under an active autocast changes the state: not a no-op
    (a graph break), so the matmul stays float32 as in eager."""

    def f(x, y):
        with torch.autocast(device_type="cpu", enabled=False):
            z = x @ y
        return z, x @ y

    x, y = torch.randn(4, 4), torch.randn(4, 4)
    compiled = fj.compile(f)
    for context in (torch.enable_grad, lambda: torch.autocast("cpu", dtype=torch.bfloat16)):
        with context():
            actual, expected = compiled(x, y), f(x, y)
        for a, e in zip(actual, expected, strict=True):
            assert a.dtype == e.dtype
            torch.testing.assert_close(a, e)


# A generator is run to its end when called, ahead of its consumer: what it does after its
# first yield would happen before the `with` / `for` body (was a wrong answer).
STATE: list = []


@contextlib.contextmanager
def pushed():
    STATE.append(1)
    yield
    STATE.pop()


def with_state_pushed(x):
    with pushed():
        return x * len(STATE)


def counting():
    for i in range(3):
        STATE.append(i)
        yield i


def for_over_a_writing_generator(x):
    for i in counting():
        x = x + len(STATE) * i
    return x


@contextlib.contextmanager
def flagged(flag):
    try:
        yield
    finally:
        if flag:
            pass


def with_a_quiet_contextmanager(x):
    with flagged(False):
        return x + 1


@pytest.mark.parametrize(
    "fn", [with_state_pushed, for_over_a_writing_generator], ids=lambda f: f.__name__
)
def test_generator_acting_after_its_yield_matches_eager(fn):
    x = torch.randn(3)
    STATE.clear()
    expected = fn(x)
    compiled = fj.compile(fn)
    for _ in range(2):
        STATE.clear()
        torch.testing.assert_close(compiled(x), expected)


def test_contextmanager_quiet_after_its_yield_matches_eager():
    x = torch.randn(3)
    torch.testing.assert_close(fj.compile(with_a_quiet_contextmanager)(x), x + 1)


def raise_through_a_contextmanager_after_a_break(x):
    with managed("b"):
        y = opaque(x) + 1
        raise ValueError("boom")
    return y


def test_exception_through_a_contextmanager_after_a_break_keeps_its_type():
    """Was AttributeError ('tuple_iterator' object has no attribute 'throw'): the resumed
    with-block held a generator already run to its end.  The resume function, which jumps
    into the with-block's range, also failed to assemble (the bytecode assembler sized the
    handler from the stack it saw at a TryBegin; the prologue now opens the range)."""
    x = torch.randn(3)
    eager = _outcome(raise_through_a_contextmanager_after_a_break, x)
    got = _outcome(fj.compile(raise_through_a_contextmanager_after_a_break), x)
    assert got[1:] == eager[1:]
