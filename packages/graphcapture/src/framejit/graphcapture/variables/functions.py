"""User functions (inlined), methods, closures' cells, and bound methods of builtin containers."""

from __future__ import annotations

import inspect
import types

from framejit.guards import GuardKind

from ..exc import Unsupported
from ..sources import AttrSource, ItemSource
from .base import (
    BoundBuiltinMethodVariable,
    ConcreteValueVariable,
    ConstantVariable,
    NullVariable,
    VariableTracker,
)

CO_VARARGS = inspect.CO_VARARGS
CO_VARKEYWORDS = inspect.CO_VARKEYWORDS


class CellVariable(VariableTracker):
    """A closure cell: real (read-only, from a function's __closure__) or created by the trace."""

    def __init__(self, contents: VariableTracker | None = None, real_cell=None):
        self.contents = contents
        self.real_cell = real_cell

    def load(self, tx) -> VariableTracker:
        if self.contents is None:
            raise Unsupported("read of an empty closure cell")
        return self.contents

    def store(self, tx, value: VariableTracker) -> None:
        if self.real_cell is not None:
            if self.source is None:
                raise Unsupported(
                    "assignment to a closure variable of an outer function (nonlocal)"
                )
            # replayed as `fn.__closure__[i].cell_contents = value` on the guarded function
            tx.output.side_effects.store_attr(self, "cell_contents", value)
        else:  # a cell the trace made: nothing to replay, but a write all the same
            effects = tx.output.side_effects
            effects.writes += 1
            effects.write_targets.append(self)
        self.contents = value


class FrameFreeVarCell(CellVariable):
    """A cell of the compiled frame's own closure (a free variable of the root code).

    Read lazily as `L[name]`, the name frameeval's check_fn input gives the cell's contents,
    so it is guarded like an argument; an empty cell is a graph break (NameError eagerly).
    A store (STORE_DEREF here or in an inlined function that shares the cell) is recorded as
    a side effect and replayed into the real cell by the generated code; later reads in the
    trace see the stored value.
    """

    def __init__(self, name: str, real_cell):
        super().__init__(None, real_cell)
        self.name = name
        self.loaded = False

    def load(self, tx) -> VariableTracker:
        if self.contents is None and not self.loaded:
            from ..sources import LocalSource
            from .builder import wrap

            try:
                value = self.real_cell.cell_contents
            except ValueError:
                raise Unsupported(
                    f"NameError: free variable {self.name!r} referenced before assignment"
                ) from None
            self.contents = wrap(tx, value, LocalSource(self.name))
            self.loaded = True
        return super().load(tx)

    def store(self, tx, value: VariableTracker) -> None:
        tx.output.side_effects.store_cell(self.name, value)
        self.contents = value
        self.loaded = True


def bind_arguments(
    code: types.CodeType, defaults, kwdefaults, args, kwargs, qualname: str | None = None
) -> dict:
    """Bind trackers to the code's parameter names as CPython would (eager's TypeError when
    they do not bind)."""

    def error():
        from .call_errors import binding_error

        return binding_error(
            code, qualname or code.co_qualname, len(defaults), kwdefaults, len(args), kwargs
        )

    nargs = code.co_argcount
    kwonly = code.co_kwonlyargcount
    posonly = code.co_posonlyargcount
    names = code.co_varnames
    pos_names = names[:nargs]
    kwonly_names = names[nargs : nargs + kwonly]
    index = nargs + kwonly
    varargs_name = varkw_name = None
    if code.co_flags & CO_VARARGS:
        varargs_name = names[index]
        index += 1
    if code.co_flags & CO_VARKEYWORDS:
        varkw_name = names[index]
    bound: dict[str, VariableTracker] = {}
    extra = []
    for i, arg in enumerate(args):
        if i < nargs:
            bound[pos_names[i]] = arg
        else:
            extra.append(arg)
    if extra and varargs_name is None:
        raise error()
    varkw = {}
    for key, value in kwargs.items():
        if key in pos_names[posonly:] or key in kwonly_names:
            if key in bound:
                raise error()
            bound[key] = value
        elif varkw_name is not None:
            varkw[key] = value
        else:
            raise error()
    first_default = nargs - len(defaults)
    for i, name in enumerate(pos_names):
        if name not in bound:
            if i >= first_default:
                bound[name] = defaults[i - first_default]
            else:
                raise error()
    for name in kwonly_names:
        if name not in bound:
            if name in kwdefaults:
                bound[name] = kwdefaults[name]
            else:
                raise error()
    if varargs_name is not None:
        from .containers import TupleVariable

        bound[varargs_name] = TupleVariable(extra)
    if varkw_name is not None:
        from .containers import DictVariable

        bound[varkw_name] = DictVariable(varkw)
    return bound


class BaseUserFunctionVariable(VariableTracker):
    def get_code(self) -> types.CodeType:
        raise NotImplementedError

    def get_globals(self) -> dict:
        raise NotImplementedError

    def bind(self, tx, args, kwargs) -> tuple[dict, dict]:
        """(symbolic locals, closure cells by name) for an inlined call."""
        raise NotImplementedError

    def call_function(self, tx, args, kwargs) -> VariableTracker:
        return tx.inline_user_function(self, args, kwargs)


_FUNCTION_CONSTANTS = ("__name__", "__qualname__", "__module__", "__doc__", "__code__")


class UserFunctionVariable(BaseUserFunctionVariable, ConcreteValueVariable):
    """A Python function that exists outside the trace: inlined on call."""

    def var_getattr(self, tx, name: str) -> VariableTracker:
        """Metadata decorators read (`__name__`, `__code__.co_varnames`, `__wrapped__`):
        fixed by the function's identity, which its source guards."""
        fn = self.value
        if name in _FUNCTION_CONSTANTS:
            return ConstantVariable(getattr(fn, name))
        if name in fn.__dict__ or name in ("__defaults__", "__kwdefaults__"):
            from .builder import wrap

            source = AttrSource(self.source, name) if self.source is not None else None
            if source is None and name in fn.__dict__:
                raise Unsupported(f"attribute {name!r} of a function without a source")
            return wrap(tx, getattr(fn, name), source)
        raise Unsupported(f"attribute {name!r} of {self}")

    def call_function(self, tx, args, kwargs) -> VariableTracker:
        if getattr(self.value, CONSTANT_RESULT_MARK, False):
            folded = _constant_result(self.value, args, kwargs)
            if folded is not None:
                return folded
        return super().call_function(tx, args, kwargs)

    def get_code(self):
        return self.value.__code__

    def get_globals(self):
        return self.value.__globals__

    def function_for_call(self, tx):
        """The function whose code, defaults and closure a call binds."""
        return self.value

    def bind(self, tx, args, kwargs):
        from .builder import wrap

        fn = self.function_for_call(tx)
        code = fn.__code__
        # only the defaults this call uses are read (and guarded): the others are placeholders
        # that binding never takes (their parameters are passed)
        given = _passed_parameters(code, len(args), kwargs)
        fn_defaults = fn.__defaults__ or ()
        first = code.co_argcount - len(fn_defaults)
        defaults = []
        for i, value in enumerate(fn_defaults):
            if code.co_varnames[first + i] in given:
                defaults.append(_UNUSED_DEFAULT)
                continue
            src = ItemSource(AttrSource(self.source, "__defaults__"), i) if self.source else None
            defaults.append(wrap(tx, value, src))
        kwdefaults = {}
        for key, value in (fn.__kwdefaults__ or {}).items():
            if key in given:
                continue
            src = (
                ItemSource(AttrSource(self.source, "__kwdefaults__"), key) if self.source else None
            )
            kwdefaults[key] = wrap(tx, value, src)
        bound = bind_arguments(fn.__code__, defaults, kwdefaults, args, kwargs, fn.__qualname__)
        cells = {}
        frame_cells = _frame_closure_ids(tx)
        for i, (name, cell) in enumerate(
            zip(fn.__code__.co_freevars, fn.__closure__ or (), strict=True)
        ):
            if id(cell) in frame_cells:
                # the compiled frame's own cell: one tracker with the frame's, so a store in
                # either is a replayed side effect and seen by later reads in both
                cells[name] = _frame_cell_tracker(tx, cell)
                continue
            try:
                contents = cell.cell_contents
            except ValueError:
                cells[name] = CellVariable(None, real_cell=cell)
                continue
            known = tx.output.closure_cells.get(id(cell))
            if known is not None:
                cells[name] = known[1]
                continue
            src = cell_src = None
            if self.source is not None:
                cell_src = ItemSource(AttrSource(self.source, "__closure__"), i)
                src = AttrSource(cell_src, "cell_contents")
            elif not _is_safe_unguarded(contents):
                raise Unsupported(f"closure of {fn.__qualname__} cannot be guarded (no source)")
            cells[name] = CellVariable(wrap(tx, contents, src), real_cell=cell)
            cells[name].source = cell_src
            tx.output.closure_cells[id(cell)] = (cell, cells[name])
        return bound, cells

    def __repr__(self) -> str:
        return f"UserFunctionVariable({self.value.__qualname__})"


class CodeMatchedFunctionVariable(UserFunctionVariable):
    """A function from a source, guarded by its code, its globals and an empty `__dict__`
    rather than by identity (builder.code_matched_function): a closure or lambda made anew
    for each call reuses the compiled code, as TorchDynamo's CLOSURE_MATCH does.  A call
    reads what it closes over and the defaults it uses through the source, each guarded by
    value.  Whatever reads the object itself (`.value`: identity, metadata, a signature,
    the function as a constant) guards its identity first, so nothing it folds goes
    unguarded."""

    def __init__(self, fn, source, output):
        self._fn = fn
        self.source = source
        self._output = output

    @property
    def value(self):
        self._output.add_guard(self.source, GuardKind.ID_MATCH, self._fn)
        return self._fn

    def python_type(self) -> type:
        return type(self._fn)  # TYPE_MATCHed

    def get_code(self):
        return self._fn.__code__  # ID_MATCHed

    def get_globals(self):
        return self._fn.__globals__  # ID_MATCHed

    def _shares_frame_cells(self, tx) -> bool:
        frame_cells = _frame_closure_ids(tx)
        return any(id(cell) in frame_cells for cell in self._fn.__closure__ or ())

    def function_for_call(self, tx):
        if self._shares_frame_cells(tx):
            return self.value  # shares a cell with the compiled frame: that is per object
        return self._fn

    def bind(self, tx, args, kwargs):
        bound, cells = super().bind(tx, args, kwargs)
        if self._shares_frame_cells(tx):
            return bound, cells  # identity-guarded (function_for_call): the cells are fixed
        for i, name in enumerate(self._fn.__code__.co_freevars):
            cell = cells.get(name)
            if isinstance(cell, CellVariable) and cell.real_cell is not None:
                # rebuilt from this call's function, not as the traced function's cell
                if getattr(cell, "source", None) is None:
                    cell.source = ItemSource(AttrSource(self.source, "__closure__"), i)
                cell.by_source = True
        return bound, cells

    def call_function(self, tx, args, kwargs) -> VariableTracker:
        # no constant-result mark: it would sit in the __dict__ that is guarded empty
        return BaseUserFunctionVariable.call_function(self, tx, args, kwargs)

    def __repr__(self) -> str:
        return f"UserFunctionVariable({self._fn.__qualname__})"


_UNUSED_DEFAULT = NullVariable()

# The attribute a library sets on a function whose result is fixed for the life of the
# process (transformers' `_make_compile_constant` on `is_torch_available`, ...: install
# probes, hardware capabilities), as TorchDynamo's `assume_constant_result` does.
CONSTANT_RESULT_MARK = "_dynamo_marked_constant"


def _constant_result(fn, args, kwargs) -> VariableTracker | None:
    """A marked function called with constants: called now, with the frame hook off (it
    probes importlib, reads versions), its result a constant of the graph, as the mark
    promises (None: not constants, or it raised: the call is traced or breaks)."""
    from framejit import frameeval as fe

    from .base import is_constant_value

    if not all(a.is_python_constant() for a in [*args, *kwargs.values()]):
        return None
    values = [a.as_python_constant() for a in args]
    named = {k: v.as_python_constant() for k, v in kwargs.items()}
    previous = fe.set_callback(fe.SKIP)
    try:
        result = fn(*values, **named)
    except Exception:
        return None
    finally:
        fe.set_callback(previous)
    return ConstantVariable(result) if is_constant_value(result) else None


def _passed_parameters(code, n_args: int, kwargs: dict) -> set:
    """Names of the parameters a call passes (positionally, or by keyword where allowed)."""
    names = code.co_varnames
    given = set(names[: min(n_args, code.co_argcount)])
    keywordable = names[code.co_posonlyargcount : code.co_argcount + code.co_kwonlyargcount]
    given.update(k for k in kwargs if k in keywordable)
    return given


def _frame_closure_ids(tx) -> set[int]:
    """ids of the compiled frame's own closure cells (the root translator's)."""
    while getattr(tx, "parent", None) is not None:
        tx = tx.parent
    return {id(cell) for cell in getattr(tx, "closure", None) or ()}


def _frame_cell_tracker(tx, cell) -> CellVariable:
    """The root translator's tracker (its FrameFreeVarCell) for one of its closure cells."""
    root = tx
    while getattr(root, "parent", None) is not None:
        root = root.parent
    index = next(i for i, c in enumerate(root.closure) if c is cell)
    return root.free_var_cell(root.code.co_freevars[index])


def _is_safe_unguarded(value) -> bool:
    return isinstance(value, (types.FunctionType, types.ModuleType, type))


class NestedUserFunctionVariable(BaseUserFunctionVariable):
    """A function made by MAKE_FUNCTION inside the trace (lambdas, inner defs, comprehensions)."""

    def __init__(self, code, f_globals, defaults, kwdefaults, closure, qualname):
        self.code = code
        self.f_globals = f_globals
        self.defaults = defaults or []
        self.kwdefaults = kwdefaults or {}
        self.closure = closure or []
        self.qualname = qualname
        self.names: dict[str, str] = {}  # __name__/__qualname__ stored by the traced code
        self.attrs: dict[str, VariableTracker] = {}  # other attributes it stored (__dict__)
        self.has_annotations = False  # MAKE_FUNCTION's annotations are dropped (not traced)

    def python_type(self) -> type:
        return types.FunctionType

    def get_code(self):
        return self.code

    def get_globals(self):
        return self.f_globals

    def var_getattr(self, tx, name: str) -> VariableTracker:
        """The metadata decorators read (contextlib's `func.__doc__`, wraps' `__name__`):
        what the function built from this code would have, as `_build` makes it; an
        attribute the trace stored on it."""
        if name in self.attrs:
            return self.attrs[name]
        if name == "__name__":
            return ConstantVariable(self.names.get(name, self.code.co_name))
        if name == "__qualname__":
            return ConstantVariable(self.names.get(name, self.qualname))
        if name == "__module__" and type(self.f_globals.get("__name__")) is str:
            return ConstantVariable(self.f_globals["__name__"])
        if name == "__doc__":  # (co_consts[0] when it is a str, as the function's own rule)
            cells = tuple(types.CellType() for _ in self.code.co_freevars)
            return ConstantVariable(types.FunctionType(self.code, {}, None, None, cells).__doc__)
        if name == "__code__":
            return ConstantVariable(self.code)
        raise Unsupported(f"attribute {name!r} of {self}")

    def bind(self, tx, args, kwargs):
        qualname = self.names.get("__qualname__", self.qualname)
        bound = bind_arguments(self.code, self.defaults, self.kwdefaults, args, kwargs, qualname)
        cells = dict(zip(self.code.co_freevars, self.closure, strict=True))
        return bound, cells

    def store_attr(self, name: str, value: VariableTracker) -> None:
        """`fn.<name> = value` in the trace (`w.__wrapped__ = f`): kept, and set on the
        function when it is rebuilt; what makes the function run stays fixed."""
        if name in _BEHAVIOUR_ATTRS:
            raise Unsupported(f"store to {name} of a function made in the trace")
        if name in ("__name__", "__qualname__"):
            if not (value.is_python_constant() and type(value.as_python_constant()) is str):
                raise Unsupported(f"{name} set to a non-str")
            self.names[name] = value.as_python_constant()  # set again when it is rebuilt
            return
        self.attrs[name] = value

    def reconstruct(self, cg) -> None:
        """The function, made again after the graph: its defaults as traced, its closure
        from the cells it closes over (reconstruct_cell), built once per generated code."""
        cg.reconstruct_once(self, self._build)

    def _build(self, cg) -> None:
        if self.attrs:
            cg.add_push_null(lambda: cg.load_const(_with_attrs))
            self._build_function(cg)
            for name, value in self.attrs.items():
                cg.load_const(name)
                value.reconstruct(cg)
            cg.build_map(len(self.attrs))
            cg.call(2)
            return
        self._build_function(cg)

    def _build_function(self, cg) -> None:
        if not (self.closure or self.defaults or self.kwdefaults or self.names):
            cg.add_push_null(lambda: cg.load_const(types.FunctionType))
            cg.load_const(self.code)
            cg.load_global_dict(self.f_globals)
            cg.call(2)
            return
        cg.add_push_null(lambda: cg.load_const(make_function))
        cg.load_const(self.code)
        cg.load_global_dict(self.f_globals)
        for d in self.defaults:
            d.reconstruct(cg)
        cg.build_tuple(len(self.defaults))
        for name, v in self.kwdefaults.items():
            cg.load_const(name)
            v.reconstruct(cg)
        cg.build_map(len(self.kwdefaults))
        for cell in self.closure:
            reconstruct_cell(cg, cell)
        cg.build_tuple(len(self.closure))
        cg.load_const(self.names.get("__qualname__", self.qualname))
        cg.load_const(self.names.get("__name__", self.code.co_name))
        cg.call(7)

    def __repr__(self) -> str:
        return f"NestedUserFunctionVariable({self.qualname})"


# what a traced function's calls depend on: a store to one is not modelled
_BEHAVIOUR_ATTRS = frozenset(
    {"__code__", "__defaults__", "__kwdefaults__", "__closure__", "__globals__", "__dict__"}
)


def _with_attrs(fn, attrs: dict):
    for name, value in attrs.items():  # setattr: __doc__/__module__ are slots, not __dict__
        setattr(fn, name, value)
    return fn


def make_function(code, f_globals, defaults, kwdefaults, closure, qualname, name):
    """A function object as MAKE_FUNCTION builds it (the generated code calls this)."""
    fn = types.FunctionType(code, f_globals, name, defaults or None, closure or None)
    fn.__kwdefaults__ = kwdefaults or None
    fn.__qualname__ = qualname
    return fn


def reconstruct_cell(cg, cell) -> None:
    """Push the real cell for a traced one: the frame's own cell (its final contents stored
    first), a real cell the trace read from a function's closure, or a new cell holding
    the contents of one the trace made (inlined code's local cells)."""
    if isinstance(cell, FrameFreeVarCell):
        cg.emit("LOAD_CLOSURE", cell.name)
    elif getattr(cell, "frame_name", None) is not None:
        if cell.contents is None:
            raise Unsupported(f"rebuilding a closure over the empty cell {cell.frame_name!r}")
        cell.contents.reconstruct(cg)
        cg.emit("STORE_DEREF", cell.frame_name)
        cg.emit("LOAD_CLOSURE", cell.frame_name)
    elif cell.real_cell is not None and getattr(cell, "by_source", False):
        cg.load_source(cell.source)  # a code-matched function's: this call's own cell
    elif cell.real_cell is not None:
        cg.load_const(cell.real_cell)  # read-only in the trace (store() refuses)
    else:

        def build(cg) -> None:
            cg.add_push_null(lambda: cg.load_const(types.CellType))
            if cell.contents is None:
                cg.call(0)
            else:
                cell.contents.reconstruct(cg)
                cg.call(1)

        cg.reconstruct_once(cell, build)


class UserMethodVariable(VariableTracker):
    """A Python function (`value`) bound to a tracked `self` (`obj`)."""

    def __init__(self, fn: types.FunctionType, obj: VariableTracker, source=None):
        self.value = fn
        self.obj = obj
        self.source = source

    def python_type(self) -> type:
        return types.MethodType

    def var_getattr(self, tx, name: str) -> VariableTracker:
        fn_source = AttrSource(self.source, "__func__") if self.source is not None else None
        if fn_source is not None:
            from framejit.guards import GuardKind

            tx.output.add_guard(fn_source, GuardKind.ID_MATCH, self.value, origin=tx.origin())
        if name == "__func__":
            return UserFunctionVariable(self.value, fn_source)
        if name == "__self__":
            return self.obj
        if name in _FUNCTION_CONSTANTS:
            return UserFunctionVariable(self.value, fn_source).var_getattr(tx, name)
        raise Unsupported(f"attribute {name!r} of a bound method")

    def call_function(self, tx, args, kwargs) -> VariableTracker:
        # With a source (obj.name), the function is guarded (`obj.name.__func__ is fn`: the
        # instance or the class may rebind it) and so are its defaults, read under it.
        fn_source = AttrSource(self.source, "__func__") if self.source is not None else None
        if fn_source is not None:
            from framejit.guards import GuardKind

            tx.output.add_guard(fn_source, GuardKind.ID_MATCH, self.value, origin=tx.origin())
        return UserFunctionVariable(self.value, fn_source).call_function(
            tx, [self.obj, *args], kwargs
        )


class MethodRef(VariableTracker):
    """What LOAD_METHOD pushes: `obj.name`, resolved when called (rebuilt as obj.name)."""

    def __init__(self, obj: VariableTracker, name: str):
        self.obj = obj
        self.name = name

    def call_function(self, tx, args, kwargs) -> VariableTracker:
        if self.name == "__class__":  # `obj.__class__(...)` calls a class, never a method
            return self.obj.var_getattr(tx, self.name).call_function(tx, args, kwargs)
        return self.obj.call_method(tx, self.name, args, kwargs)

    def reconstruct(self, cg) -> None:
        self.obj.reconstruct(cg)
        cg.load_attr(self.name)


__all__ = [
    "BoundBuiltinMethodVariable",
    "CellVariable",
    "ConstantVariable",
    "FrameFreeVarCell",
    "MethodRef",
    "NestedUserFunctionVariable",
    "UserFunctionVariable",
    "UserMethodVariable",
    "bind_arguments",
]
