"""Jump layouts of 3.12/3.13 that the decompiler once rebuilt into code that compiled but
ran differently (found by running stdlib suites on decompiled functions: shlex, difflib,
ipaddress): each function with sample argument tuples, compared with the original's
behaviour (no expected output is stated here)."""

from __future__ import annotations


def elif_arm_falls_to_loop_end(chars, posix):
    """shlex.shlex.read_token: the arm's nested test jumps straight to the loop-closing
    jump (past the next ``elif``) when false."""
    out = []
    it = iter(chars)
    while True:
        c = next(it, None)
        if c is None:
            break
        if c == "#":
            out.append("comment")
            if posix:
                out.append("posix")
                if len(out) > 6:
                    break
                continue
        elif c == "c":
            out.append("punct")
        else:
            out.append(c)
    return out


def nested_test_jumps_past_else(parts, skip):
    """ipaddress._BaseV6._ip_int_from_string: the last test of the ``if`` arm jumps past
    the ``else`` arm when false."""
    if skip is not None:
        hi = skip
        lo = len(parts) - skip
        if hi + lo < 1:
            raise ValueError("too few")
    else:
        if len(parts) != 3:
            raise KeyError("count")
        hi, lo = len(parts), 0
    total = 0
    for p in parts[:hi]:
        total = total * 10 + p
    for p in parts[len(parts) - lo :]:
        total = total * 100 + p
    return total, hi, lo


def try_else_falls_past_if(text):
    """ipaddress again: a ``try`` inside an ``if`` whose code after the try is the code
    after the ``if`` (3.12 puts the handler at the end), followed by another ``try``."""
    parts = text.split(":")
    if "." in parts[-1]:
        try:
            n = int(parts.pop().replace(".", ""))
        except ValueError:
            raise KeyError("dotted") from None
        parts.append(str(n))
    if len(parts) > 4:
        raise IndexError("parts")
    try:
        total = 0
        for p in parts:
            total = total * 16 + int(p, 16)
        return total
    except ValueError:
        raise LookupError("hex") from None


def handler_rejoins_right_after_body(n):
    """difflib.HtmlDiff._format_line: the handler jumps back to the instruction right after
    the try body (empty ``else``, 3.12+)."""
    try:
        label = "%d" % n  # noqa: UP031 (TypeError for non-numbers, as in difflib)
        tag = f"id{label}"
    except TypeError:
        tag = ""
    text = str(n).replace("<", "&lt;")
    return f"<{tag}>{label if tag else '-'}{text}"


def handler_rejoins_in_loop(items):
    """difflib.HtmlDiff._collect_lines: the same inside a ``for`` loop."""
    left, right, flags = [], [], []
    for a, b, flag in items:
        try:
            left.append(a + 1)
            right.append(b + 1)
        except TypeError:
            left.append(None)
            right.append(None)
        flags.append(flag)
    return left, right, flags


def loop_in_try_in_loop(seq, context):
    """difflib._mdiff: a ``while`` loop inside a ``try`` inside ``while True``; the table
    range stops before the inner loop's closing jump (a jump cannot raise)."""
    it = iter(seq)
    while True:
        n = context
        try:
            while n:
                x = next(it)
                n = context if x else n - 1
                yield x
        except StopIteration:
            return


LAYOUT_CORPUS = [
    (
        elif_arm_falls_to_loop_end,
        [("ab#cd", True), ("ab#cd", False), ("#c#c#c#c", True), ("", True)],
    ),
    (nested_test_jumps_past_else, [([1, 2, 3], 1), ([1, 2, 3], None), ([], 0), ([1], None)]),
    (
        try_else_falls_past_if,
        [("1:2:a",), ("1:1.2",), ("1:x.y",), ("1:2:3:4:5",), ("1:g",), ("ff:1:2.3",)],
    ),
    (handler_rejoins_right_after_body, [(3,), ("x",), (None,), (2.5,)]),
    (handler_rejoins_in_loop, [([(1, 2, True), (None, 3, False), (4, 5, True)],), ([],)]),
    (loop_in_try_in_loop, [([1, 0, 0, 1, 0, 0, 0], 2), ([0, 0, 0], 1), ([], 3), ([1, 1], 1)]),
]
