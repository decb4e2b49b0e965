"""Generators of user code, stepped lazily: one yield per request, as eager runs them.

Calling a generator function binds its arguments and makes a `GeneratorVariable` over a
suspended inlined frame (an `InliningTranslator` over the generator's code).  Each
`next()`/`send()`/`throw()` runs that frame from where it stopped to its next YIELD_VALUE
(or its end), inside the consumer's request: the generator's side effects, graph ops and
exceptions land between the consumer's exactly where eager has them, and a consumer that
stops early (a `break`, zip with a shorter input, any() short-circuiting, islice) leaves
the rest of the body unrun.

Exceptions: one the body does not catch ends the generator and reaches the consumer with
its own type; a StopIteration leaving the body becomes RuntimeError (PEP 479, as 3.11's
gen_send_ex does; 3.12+ code does it with CALL_INTRINSIC_1 itself).  `throw()` raises at
the suspended yield, under the body's exception table; `close()` throws GeneratorExit.

Across a graph break or out of the frame a generator is rebuilt only where that is exact:
one not started is the generator function called again with the same bound arguments
(nothing of its body has run); an exhausted one is an exhausted generator.  One suspended
mid-way has state only the trace holds: rebuilding it is refused, and the frame runs
eagerly (a graph break inside the body does the same: the break goes to the consumer's
instruction, where the generator is live).
"""

from __future__ import annotations

import enum
import sys
import types

from ..config import config
from ..exc import RestartAnalysis, Unsupported
from .base import ConstantVariable, VariableTracker
from .containers import IteratorVariable
from .exception_objects import ExceptionObjectVariable
from .exceptions import ObservedException, observed


class _State(enum.Enum):
    CREATED = "created"
    SUSPENDED = "suspended"
    RUNNING = "running"
    DONE = "done"
    BROKEN = "broken"  # a graph break left the frame mid-instruction: never stepped again


_METHODS = ("__next__", "__iter__", "send", "throw", "close")


class GeneratorVariable(IteratorVariable):
    """A generator object made by the trace; `tracer` is its frame, suspended at a yield."""

    mutable = True
    pulls_lazily = True

    def __init__(self, tracer, fn_vt: VariableTracker, args: list, kwargs: dict):
        super().__init__([])
        self.tracer = tracer
        self.fn_vt = fn_vt  # for a rebuild before its first step: fn(*args, **kwargs)
        self.call_args = list(args)
        self.call_kwargs = dict(kwargs)
        self.state = _State.CREATED
        self.yields = 0
        self.own_handled = None  # the exception a handler of its body is handling, if any
        # (root instruction count, (root instruction, visit)) of the root frame's step that
        # first resumed it: where a break goes when it is live mid-way (restart_before)
        self.first_resumed = None

    def python_type(self) -> type:
        return types.GeneratorType

    @property
    def result(self) -> VariableTracker:
        """What `yield from` of this generator evaluates to: its return value."""
        value = self.tracer.return_value
        return value if value is not None else ConstantVariable(None)

    # ---------------------------------------------------------------- stepping
    def _step_until_yield(self, tx) -> VariableTracker | None:
        """Run the body to its next yield (the item) or its end (None)."""
        t = self.tracer
        t.parent = tx  # its caller now: what a raise chains to, where TracedRaise points
        t.handled = self.own_handled if self.own_handled is not None else tx.handled
        self.state = _State.RUNNING
        try:
            while not t.done:
                t.step()
                if t.yielded is not None:
                    break
        except ObservedException as e:
            self.state = _State.DONE
            raise _pep479(e) from None
        except BaseException:
            self.state = _State.BROKEN
            raise
        if t.done:
            self.state = _State.DONE
            return None
        item, t.yielded = t.yielded, None
        self.state = _State.SUSPENDED
        self.own_handled = t.handled if t.handled is not tx.handled else None
        self.yields += 1
        if self.yields > config.max_generator_yields:
            raise Unsupported(
                f"infinite generator? more than {config.max_generator_yields} items "
                "yielded by one generator"
            )
        return item

    def _check_steppable(self) -> None:
        if self.state is _State.RUNNING:
            raise observed(ValueError, "generator already executing", reason="ValueError")
        if self.state is _State.BROKEN:
            raise Unsupported("a generator left mid-instruction by a graph break")

    def resume(self, tx, sent: VariableTracker | None = None) -> VariableTracker | None:
        """next(gen) (sent None) or gen.send(sent): the next item, None once exhausted."""
        self._check_steppable()
        if self.state is _State.DONE:
            return None
        if self.state is _State.CREATED:
            self._note_first_resume(tx)
            if sent is not None and not _is_none(sent):
                raise observed(
                    TypeError,
                    "can't send non-None value to a just-started generator",
                    reason="TypeError",
                )
        else:
            self.tracer.push(sent if sent is not None else ConstantVariable(None))
        return self._step_until_yield(tx)

    def _note_first_resume(self, tx) -> None:
        root = tx.root
        step = getattr(root, "current_step", None)
        if self.first_resumed is None and step is not None:
            self.first_resumed = (root.instruction_count, step)

    def throw_in(self, tx, exc: ExceptionObjectVariable) -> VariableTracker | None:
        """gen.throw(exc): raised at the suspended yield; the next item, None at its end."""
        self._check_steppable()
        if self.state is not _State.SUSPENDED:  # not started, or over: raised right away
            started = self.state is _State.CREATED
            self.state = _State.DONE
            error = ObservedException(exc)
            # (3.11 runs a new generator's frame to raise it, and PEP 479 applies)
            raise _pep479(error) if started and sys.version_info < (3, 12) else error
        t = self.tracer
        error = ObservedException(exc)
        if t.delegate is not None:  # suspended in `yield from`: the inner one gets it first
            forwarded = self._throw_to_delegate(tx, exc)
            if not isinstance(forwarded, ObservedException):
                return forwarded
            error = forwarded
        t.handled = self.own_handled if self.own_handled is not None else tx.handled
        error.chain_to(t.handled)
        t.push(ConstantVariable(None))  # (CPython pushes the sent value for a throw too)
        if not t.catch(error, t.yield_index):
            self.state = _State.DONE
            raise _pep479(error) from None
        return self._step_until_yield(tx)

    def _throw_to_delegate(self, tx, exc: ExceptionObjectVariable):
        """_gen_throw's `yield from` path: a generator delegated to is closed (GeneratorExit)
        or thrown into; its next item is the outer one's, its end resumes the outer one
        after the `yield from`; what it raises (or any other exception) is raised in the
        outer one at its yield (returned here as the ObservedException to raise)."""
        inner, self.tracer.delegate = self.tracer.delegate, None
        if not isinstance(inner, GeneratorVariable):
            return ObservedException(exc)  # (an iterator without throw(): raised here)
        try:
            if issubclass(exc.cls, GeneratorExit):
                inner.close(tx)
                return ObservedException(exc)
            item = inner.throw_in(tx, exc)
        except ObservedException as e:
            return e
        if item is not None:
            self.tracer.delegate = inner
            return item
        return self.resume(tx)  # its SEND finds the inner one done: the `yield from` result

    def acts_when_closed(self, tx) -> bool:
        """Would closing it (what eager's finalizer does to a dropped generator) store,
        compute or raise anything?  Suspended inside a try/with of its body, it is closed
        here to see (the trace ends: a close that acts sends it back to the start)."""
        if self.state is not _State.SUSPENDED:
            return False
        entry = self.tracer.decoded.handler_for(self.tracer.yield_index)
        if entry is None:
            return False
        handler = self.tracer.insts[entry.target]  # 3.12+: PEP 479's handler around it all
        if handler.opname == "CALL_INTRINSIC_1" and handler.arg == 3:
            return False
        effects, graph = tx.output.side_effects, tx.output.graph
        before = (effects.writes, len(graph.nodes))
        first_resumed = self.first_resumed
        try:
            self.close(tx)
        except Unsupported:
            return True
        finally:
            self.first_resumed = first_resumed
            self.state = _State.SUSPENDED  # (for earliest_suspended; never stepped again)
        return (effects.writes, len(graph.nodes)) != before

    def next(self, tx) -> VariableTracker | None:
        return self.resume(tx)

    def unpack(self, tx) -> list[VariableTracker]:
        out = []
        while (item := self.resume(tx)) is not None:
            out.append(item)
        return out

    def stop_iteration(self) -> ObservedException:
        """The StopIteration a request to the exhausted generator raises: its return value."""
        value = self.tracer.return_value
        args = [] if value is None or _is_none(value) else [value]
        exc = ExceptionObjectVariable(StopIteration, args)
        return ObservedException(exc, "StopIteration from a generator")

    # ---------------------------------------------------------------- methods
    def var_getattr(self, tx, name: str) -> VariableTracker:
        from .functions import MethodRef

        if name in _METHODS:
            return MethodRef(self, name)
        if name == "__name__":
            return ConstantVariable(self.tracer.code.co_name)
        if name == "__qualname__":
            return ConstantVariable(self.tracer.code.co_qualname)
        raise Unsupported(f"attribute {name!r} of a generator")

    def call_method(self, tx, name: str, args: list, kwargs: dict) -> VariableTracker:
        if kwargs:
            raise Unsupported(f"generator.{name}() with keyword arguments")
        if name == "__iter__" and not args:
            return self
        if name == "__next__" and not args:
            item = self.resume(tx)
        elif name == "send" and len(args) == 1:
            item = self.resume(tx, args[0])
        elif name == "throw" and 1 <= len(args) <= 3:
            item = self.throw_in(tx, _thrown(args))
        elif name == "close" and not args:
            return self.close(tx)
        else:
            raise Unsupported(f"generator.{name}() with {len(args)} arguments")
        if item is None:
            raise self.stop_iteration()
        return item

    def close(self, tx) -> VariableTracker:
        """gen.close(): GeneratorExit at the yield; a yield in answer is a RuntimeError."""
        self._check_steppable()
        if self.state is not _State.SUSPENDED:
            self.state = _State.DONE
            return ConstantVariable(None)
        try:
            item = self.throw_in(tx, ExceptionObjectVariable(GeneratorExit, []))
        except ObservedException as e:
            if issubclass(e.exc_type, GeneratorExit):
                return ConstantVariable(None)
            raise
        if item is not None:
            raise observed(RuntimeError, "generator ignored GeneratorExit", reason="RuntimeError")
        return _close_result(self)

    # ---------------------------------------------------------------- rebuild
    def reconstruct(self, cg) -> None:
        cg.reconstruct_once(self, self._build)

    def reconstruct_remaining(self, cg) -> None:
        self.reconstruct(cg)  # iter(generator) is the generator

    def _build(self, cg) -> None:
        if self.state is _State.DONE:
            cg.add_push_null(lambda: cg.load_const(_exhausted))
            cg.call(0)
            return
        if self.state is not _State.CREATED:
            raise Unsupported(
                "a generator suspended mid-way live across a graph break or escaping the "
                "frame (its state is the trace's)"
            )
        cg.add_push_null(lambda: cg.load_const(_call))
        self.fn_vt.reconstruct(cg)
        for a in self.call_args:
            a.reconstruct(cg)
        cg.build_tuple(len(self.call_args))
        for name, value in self.call_kwargs.items():
            cg.load_const(name)
            value.reconstruct(cg)
        cg.build_map(len(self.call_kwargs))
        cg.call(3)

    def __repr__(self) -> str:
        return f"GeneratorVariable({self.tracer.code.co_qualname}, {self.state.value})"


def restart_before_live_generator(tx, roots: list, generators: list) -> None:
    """A generator suspended mid-way cannot be rebuilt: where `roots` (what is live at a
    break or the return) reach one, trace again breaking at the root step that first
    resumed it, where it is not started yet and is rebuilt by calling its function.  So
    too for one dropped whose close() would act (a `finally` around its yield): eager
    runs that when the last reference goes, which only the real objects can time."""
    at = earliest_suspended(roots)
    if at is None:
        at = earliest_suspended([g for g in generators if g.acts_when_closed(tx)])
    if at is None:
        return
    inst, visit = at
    reason = "a generator suspended mid-way live at the break (the break moves to its first next())"
    restart = RestartAnalysis(inst.offset, reason, inst.lineno, visit, inst.index)
    restart.moved_break = True  # (the one restart after a break that convert_frame allows)
    raise restart


def earliest_suspended(roots: list) -> tuple | None:
    """The root step that first resumed the earliest of the generators suspended mid-way
    that `roots` (trackers, lists, dicts of them) reach; None when they reach none."""
    found = None
    seen: set[int] = set()
    todo = list(roots)
    while todo:
        value = todo.pop()
        if id(value) in seen:
            continue
        seen.add(id(value))
        if isinstance(value, (list, tuple)):
            todo.extend(value)
        elif isinstance(value, dict):
            todo.extend(value.values())
        elif isinstance(value, VariableTracker):
            first = getattr(value, "first_resumed", None)
            suspended = isinstance(value, GeneratorVariable) and value.state is _State.SUSPENDED
            if suspended and first is not None and (found is None or first[0] < found[0]):
                found = first
            todo.extend(
                v
                for v in vars(value).values()
                if isinstance(v, (VariableTracker, list, tuple, dict))
            )
    return None if found is None else found[1]


def _close_result(gen: GeneratorVariable) -> VariableTracker:
    """What close() returns once GeneratorExit ended the body with a return: None before
    3.13, the returned value from 3.13 on."""
    if sys.version_info >= (3, 13):
        return gen.result
    return ConstantVariable(None)


def _pep479(e: ObservedException) -> ObservedException:
    """A StopIteration leaving a generator's body is a RuntimeError from it (PEP 479)."""
    if not issubclass(e.exc_type, StopIteration):
        return e
    return ObservedException(stop_iteration_error(e.exc), fresh=False)


def stop_iteration_error(exc: ExceptionObjectVariable) -> ExceptionObjectVariable:
    """RuntimeError('generator raised StopIteration') from `exc`, context and cause."""
    error = ExceptionObjectVariable(
        RuntimeError, [ConstantVariable("generator raised StopIteration")]
    )
    error.raised = True
    error.store_attr("__cause__", exc)
    error.attrs["__context__"] = exc
    return error


def _thrown(args: list) -> ExceptionObjectVariable:
    """The exception gen.throw(typ[, val[, tb]]) or gen.throw(exc) raises."""
    from .exceptions import _instance

    if len(args) >= 2 and isinstance(args[1], ExceptionObjectVariable):
        return args[1]
    if len(args) >= 2 and not _is_none(args[1]):
        raise Unsupported("generator.throw(type, value) with a value that is not an exception")
    return _instance(args[0])


def _is_none(vt: VariableTracker) -> bool:
    return vt.is_python_constant() and vt.as_python_constant() is None


def _call(fn, args, kwargs):
    return fn(*args, **kwargs)


def _exhausted():
    """An exhausted generator: what a rebuilt generator that was run to its end is."""
    gen = _empty()
    for _ in gen:
        pass
    return gen


def _empty():
    return
    yield  # (a generator function that yields nothing)
