"""``match`` statements (every pattern kind), ``async with`` and ``except*`` for the decompiler
round trip: each function with sample argument tuples, compared with the original's behaviour
(no expected output is stated here)."""

from __future__ import annotations

import asyncio


class Point:
    __match_args__ = ("x", "y")

    def __init__(self, x, y):
        self.x, self.y = x, y

    def __eq__(self, other):
        return isinstance(other, Point) and (self.x, self.y) == (other.x, other.y)

    def __repr__(self):
        return f"Point({self.x}, {self.y})"


class Color:
    RED = 1
    BLUE = 2


def match_literal(x):
    match x:
        case 1:
            return "one"
        case "a":
            return "A"
        case None:
            return "none"
        case True:
            return "true"
        case -2.5:
            return "float"
        case _:
            return "other"


def match_capture_and_value(x):
    match x:
        case Color.RED:
            r = "red"
        case Color.BLUE:
            r = "blue"
        case 0:
            r = 0
        case y:
            r = y + 1
    return r


def match_sequence(x):
    match x:
        case []:
            return 0
        case [a]:
            return a
        case [a, b]:
            return a + b
        case [a, *rest]:
            return a, rest
        case (1, 2, *_):
            return "12"
        case [*_, 9, z]:
            return z
    return None


def match_mapping(x):
    match x:
        case {"k": v}:
            return v
        case {"a": 1, "b": w, **rest}:
            return w, rest
        case {Color.RED: c}:
            return c
        case {}:
            return "empty"
    return None


def match_class(p):
    match p:
        case Point(0, 0):
            return "origin"
        case Point(x=0, y=yy):
            return yy
        case Point(xx, y=3):
            return xx
        case int():
            return "int"
        case str(s):
            return s
    return None


def match_or(x):
    match x:
        case 1 | 2 | 3:
            return "small"
        case [1, _] | [_, 1]:
            return "has one"
        case (0 | 1) as bit:
            return bit
    return "big"


def match_or_captures(x):
    match x:
        case [a, 1] | [1, a]:
            return a
        case {"p": a, "q": b} | (a, b, _):
            return a, b
    return None


def match_guard(x):
    match x:
        case [a, b] if a > b:
            return "desc"
        case [a, b]:
            return "asc"
        case n if n:
            return "truthy"
    return "falsy"


def match_as(x):
    match x:
        case [1, _] as pair:
            return pair
        case {"k": [a, b] as inner} as whole:
            return inner, whole, a, b
        case Point(x=0) as p:
            return p.y
    return None


def match_in_loop(items):
    r = 0
    for item in items:
        match item:
            case {"t": "add", "v": v}:
                r += v
            case {"t": "stop"}:
                break
            case [*_]:
                continue
            case _:
                r -= 1
    return r


def match_single(x, log):
    match x:
        case [a, b]:
            log.append(a + b)
    log.append("after")
    return log


def match_subject_once(calls):
    def subject():
        calls.append(1)
        return calls

    match subject():
        case [1]:
            r = "one call"
        case [1, *_]:
            r = "more"
        case _:
            r = "none"
    return r, len(calls)


_SEQS = [([],), ([5],), ([2, 3],), ([1, 2, 3],), ([1, 2],), ([4, 9, 7],), ("ab",), (7,)]
MATCH_CORPUS = [
    (match_literal, [(1,), ("a",), (None,), (True,), (-2.5,), (0,), (2,)]),
    (match_capture_and_value, [(1,), (2,), (0,), (10,), (False,)]),
    (match_sequence, [*_SEQS, ((1, 2, 5, 6),), ([0, 0, 9, 4],)]),
    (
        match_mapping,
        [({"k": 1},), ({"a": 1, "b": 2, "c": 3},), ({1: "r"},), ({},), ({"x": 1},), ([],)],
    ),
    (match_class, [(Point(0, 0),), (Point(0, 5),), (Point(4, 3),), (3,), ("s",), (2.5,)]),
    (match_or, [(1,), (3,), ([1, 5],), ([5, 1],), ([5, 5],), (0,), (9,)]),
    (match_or_captures, [([4, 1],), ([1, 4],), ({"p": 1, "q": 2},), ((5, 6, 7),), ([],)]),
    (match_guard, [([3, 1],), ([1, 3],), (5,), (0,), ([],)]),
    (match_as, [([1, 7],), ({"k": [1, 2]},), (Point(0, 8),), (Point(1, 8),), (4,)]),
    (match_in_loop, [([{"t": "add", "v": 3}, [1], 5, {"t": "stop"}, {"t": "add", "v": 9}],)]),
    (match_single, [([1, 2], []), ([1], [])]),
    (match_subject_once, [([],), ([1],), ([2],)]),
]


class Manager:
    """An async context manager that records enter/exit and may swallow exceptions."""

    def __init__(self, log, swallow=False):
        self.log, self.swallow = log, swallow

    async def __aenter__(self):
        self.log.append("enter")
        return len(self.log)

    async def __aexit__(self, kind, value, tb):
        self.log.append(("exit", kind.__name__ if kind else None))
        return self.swallow


async def async_with_as(log, fail):
    async with Manager(log) as v:
        log.append(v)
        if fail:
            raise KeyError(v)
    async with Manager(log, swallow=True):
        raise ValueError
    return log


async def async_with_nested(log):
    async with Manager(log) as a, Manager(log) as b:
        log.append(a + b)
        return a * b


async def async_with_loop(log, n):
    total = 0
    for i in range(n):
        async with Manager(log) as v:
            if i == 1:
                continue
            if i == 3:
                break
            total += v
    return total


ASYNC_WITH_CORPUS = [
    (async_with_as, [([], False), ([], True)]),
    (async_with_nested, [([],)]),
    (async_with_loop, [([], 2), ([], 5)]),
]


def star_except(f):
    r = None
    try:
        f()
    except* ValueError as e:
        r = ("v", len(e.exceptions))
    except* TypeError:
        r = "t"
    return r


def star_except_else_finally(f, log):
    try:
        f()
    except* (KeyError, IndexError) as e:
        log.append(type(e).__name__)
    else:
        log.append("else")
    finally:
        log.append("fin")
    return log


def _raise(*excs):
    def f():
        if len(excs) == 1:
            raise excs[0]
        if excs:
            raise ExceptionGroup("g", list(excs))

    return f


EXCEPT_STAR_CORPUS = [
    (
        star_except,
        [
            (_raise(),),
            (_raise(ValueError(1)),),
            (_raise(TypeError(2)),),
            (_raise(ValueError(1), TypeError(2)),),
            (_raise(KeyError(3)),),
        ],
    ),
    (
        star_except_else_finally,
        [(_raise(), []), (_raise(KeyError(1)), []), (_raise(ValueError(1)), [])],
    ),
]


def run_async(fn, *args):
    return asyncio.run(fn(*args))
