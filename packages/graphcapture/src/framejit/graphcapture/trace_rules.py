"""Which code is traced and which is left to run for real: one table, looked up by file.

Each rule covers the files of one place (a module's file or package directory, the
stdlib, site-packages) and answers two questions: is a frame whose code lives there
captured when it starts (`capture`), and is a call into it from traced code traced
inline (`inline`; otherwise the call is a graph break and runs for real).  The most
specific place wins (the longest path), so `torch.nn.modules` overrides `torch`, and
site-packages overrides the stdlib directory it may sit inside.  A rule may name functions
(qualified names) of its place: it covers only those, and the rest of the file falls to
the next rule (torch's TestCase.assertRaises is inlined, the rest of common_utils is not).

Anything not covered — user code, and whatever pip installs (transformers, timm, a
user's own package) — is traced.  Skipped are framejit itself, torch's internals other
than what torch.compile also traces, the stdlib modules that must really run, and test
runners.  Torch's own Python functions (torch.*, torch.nn.functional.*) are not inlined:
the builder turns them into graph nodes before a rule is consulted.
"""

from __future__ import annotations

import importlib.util
import os
import site
import sysconfig
from dataclasses import dataclass


@dataclass(frozen=True)
class Rule:
    place: str  # an importable module name, or "<stdlib>" / "<site-packages>"
    capture: bool  # frames of code found here are captured when they start
    inline: bool  # calls into this code from a traced frame are traced inline
    why: str
    functions: tuple[str, ...] = ()  # only these qualified names of the place (none: all)
    # not captured, except a `forward` frame of a module with hooks: a hook that breaks
    # the graph runs the module's call for real, and its forward is then captured on its
    # own (torch.compile's rule for torch.nn modules)
    capture_hooked: bool = False


TRACED = Rule("<user>", True, True, "user or third-party code")

# torch modules whose Python code is traced as user code (classes built and used in model
# code: OrderedSet): their functions are inlined, not put in the graph as torch ops
TORCH_USER_CODE = (
    "torch.utils._ordered_set",
    "torch.utils._pytree",  # flattening returns TreeSpecs and lists, not graph values
    "torch.fx._pytree",
    "torch.return_types",  # structseq flatten/unflatten registered with pytree
)

RULES: tuple[Rule, ...] = (
    Rule("<site-packages>", True, True, "third-party code is traced like user code"),
    Rule("<stdlib>", False, True, "stdlib: inlined when model code calls it"),
    # stdlib modules whose effects must really happen, or that hold process state
    Rule("logging", False, False, "logging must really run"),
    Rule("warnings", False, False, "the warnings machinery must really run"),
    Rule("threading", False, False, "threads and locks must really run"),
    Rule("_threading_local", False, False, "thread-local state must really run"),
    Rule("importlib", False, False, "imports must really run"),
    Rule("multiprocessing", False, False, "processes must really run"),
    Rule("concurrent", False, False, "executors must really run"),
    Rule("asyncio", False, False, "event loops must really run"),
    Rule("random", False, False, "Python's RNG state lives outside the graph"),
    Rule("re", False, False, "regular expressions: the C engine (re_models folds constants)"),
    Rule("traceback", False, False, "tracebacks read the real stack"),
    Rule("linecache", False, False, "reads source files"),
    Rule("tokenize", False, False, "reads source files"),
    Rule("weakref", False, False, "weak references hold real objects"),
    Rule("_weakrefset", False, False, "weak references hold real objects"),
    Rule("unittest", False, False, "test runner"),
    Rule("unittest.case", False, True, "TestCase assertions called from traced code"),
    Rule("doctest", False, False, "test runner"),
    Rule("pdb", False, False, "debugger"),
    Rule("bdb", False, False, "debugger"),
    # test runners
    Rule("pytest", False, False, "test runner"),
    Rule("_pytest", False, False, "test runner"),
    Rule("pluggy", False, False, "test runner"),
    # framejit and the libraries it is built on
    Rule("framejit", False, False, "framejit itself"),
    Rule("bytecode", False, False, "framejit's bytecode assembler"),
    Rule("sympy", False, False, "torch's symbolic-shape internals"),
    Rule("numpy", False, False, "compiled library: calls into it are graph breaks"),
    # torch: internals run for real; its nn modules are traced as torch.compile does
    Rule("torch", False, False, "torch internals"),
    # inlined into model code like user modules; a frame of theirs that eager code starts
    # (the layer norm an eagerly run frame calls) runs for real, as under torch.compile
    Rule("torch.nn.modules", False, True, "torch.nn modules", capture_hooked=True),
    Rule("torch.nn.modules.module", False, True, "nn.Module's call machinery (hooks run for real)"),
    Rule("torch.nn.utils", False, True, "helpers model code calls"),
    Rule("torch.nn.functional", False, True, "torch.nn.functional's Python layer"),
    Rule("torch.nn.init", False, True, "initializers"),
    *(Rule(m, False, True, "torch code that is user code to the trace") for m in TORCH_USER_CODE),
    Rule(
        "torch.testing._internal.common_utils",
        False,
        True,
        "torch's TestCase picks unittest's assertRaises context (traced under unittest.case)",
        functions=("TestCase.assertRaises", "TestCase.assertRaisesRegex"),
    ),
    Rule("torch.distributions", False, True, "distributions: Python over tensor ops"),
)


def _places(rule: Rule) -> list[str]:
    if rule.place == "<stdlib>":
        paths = sysconfig.get_paths()
        return [paths["stdlib"], paths["platstdlib"]]
    if rule.place == "<site-packages>":
        paths = sysconfig.get_paths()
        dirs = [paths["purelib"], paths["platlib"], *site.getsitepackages()]
        user = site.getusersitepackages() if site.ENABLE_USER_SITE else None
        return [*dirs, *([user] if user else [])]
    try:
        spec = importlib.util.find_spec(rule.place)
    except (ImportError, ValueError):
        return []
    if spec is None:
        return []
    if spec.submodule_search_locations:
        return list(spec.submodule_search_locations)
    if spec.origin and spec.origin not in ("built-in", "frozen"):
        return [spec.origin]
    return []


class _Table:
    """The rules resolved to absolute paths, longest first; answers cached per filename."""

    def __init__(self, rules: tuple[Rule, ...]):
        prefixes: dict[str, Rule] = {}
        # (absolute file, qualified name) -> the rule naming that function
        self.functions: dict[tuple[str, str], Rule] = {}
        for rule in rules:
            for place in _places(rule):
                path = os.path.abspath(place)
                if rule.functions:
                    self.functions.update({(path, name): rule for name in rule.functions})
                    continue
                if os.path.isdir(path):
                    path = os.path.join(path, "")
                prefixes[path] = rule  # a later, more specific rule may share a path: it wins
        self.prefixes = sorted(prefixes.items(), key=lambda item: len(item[0]), reverse=True)
        # frozen modules (`<frozen importlib.util>`) have no file: their rule is the one of
        # the module name or its closest package that has one
        self.by_module = {
            r.place: r for r in rules if not r.place.startswith("<") and not r.functions
        }
        self.cache: dict[str, Rule] = {}
        self.paths: dict[str, str] = {}  # co_filename -> its absolute path

    def lookup(self, filename: str, qualname: str | None = None) -> Rule:
        if qualname is not None and self.functions:
            path = self.paths.get(filename)
            if path is None:
                path = self.paths[filename] = os.path.abspath(filename)
            rule = self.functions.get((path, qualname))
            if rule is not None:
                return rule
        rule = self.cache.get(filename)
        if rule is None:
            rule = self.cache[filename] = self._find(filename)
        return rule

    def _find(self, filename: str) -> Rule:
        if filename[:1] == "<":
            if filename.startswith("<frozen"):
                return self._frozen(filename[len("<frozen ") : -1].strip())
            if filename.startswith("<eval_with_key>"):
                return _FX_GENERATED
            return TRACED  # <string>: dataclass/namedtuple methods, exec'd user code
        path = os.path.abspath(filename)
        for prefix, rule in self.prefixes:
            if path == prefix or path.startswith(prefix):
                return rule
        return TRACED

    def _frozen(self, module: str) -> Rule:
        while module:
            rule = self.by_module.get(module)
            if rule is not None:
                return rule
            module = module.rpartition(".")[0]
        return _FROZEN


_FROZEN = Rule("<frozen>", False, True, "frozen stdlib module")
_FX_GENERATED = Rule("<eval_with_key>", False, True, "torch.fx generated code (a graph already)")
_table: _Table | None = None


def lookup(filename: str, qualname: str | None = None) -> Rule:
    """The rule for code from `filename` (a code object's co_filename), and for the
    function `qualname` there when given (a code object's co_qualname)."""
    global _table
    if _table is None:
        _table = _Table(RULES)
    return _table.lookup(filename, qualname)


def reset() -> None:
    """Resolve the table again (after sys.path changes, in tests)."""
    global _table
    _table = None


def is_captured(filename: str) -> bool:
    return lookup(filename).capture


def captures_hooked(filename: str) -> bool:
    return lookup(filename).capture_hooked


def is_inlined(filename: str, qualname: str | None = None) -> bool:
    return lookup(filename, qualname).inline
