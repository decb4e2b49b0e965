"""Seeded random programs that change state between calls, run compiled beside eager.

A program is Python source: globals (functions, enums, dataclasses, NamedTuples, dicts,
lists, closures, tensors), an nn.Module subclass `M` whose forward is a random sequence of
steps (tensor math mixed with the Python model code uses: hooks, ModuleList/ModuleDict,
buffers, getattr defaults, hasattr, try/except/with, raises, graph breaks) and an entry
point (the module itself, or a function calling it).  Before each call after the first a
random state change runs (forward/__call__ replaced, requires_grad flipped, train/eval,
parameters and buffers replaced/added/deleted/reordered, globals rebound, attributes and
dict keys added, closure cells and defaults changed, inputs' shape and dtype changed).

Each world (eager, framejit, torch.compile) executes the same source into its own fresh
module namespace under the same seed, so the whole state is identical by construction;
every call is compared on its result, its exception type, the gradients, what it printed
and a snapshot of every global, the module's parameters/buffers/attributes and objects'
attributes.  `minimise` shrinks a failing program step by step while it still fails.
"""

from __future__ import annotations

import contextlib
import dataclasses
import enum
import io
import itertools
import linecache
import random
import sys
import tempfile
import textwrap
import types
from collections.abc import Callable
from pathlib import Path

import torch


# ------------------------------------------------------------------ program records
@dataclasses.dataclass
class Feature:
    """One ingredient: module-level setup, lines in M.__init__, a forward step, its state changes."""

    name: str
    setup: str = ""
    init: str = ""
    step: str = ""
    mutations: list[str] = dataclasses.field(default_factory=list)


@dataclasses.dataclass
class Call:
    mutation: str  # source run in the world's namespace before the call ("" for none)
    batch: int
    dtype: str
    requires_grad: bool


@dataclasses.dataclass
class Program:
    seed: int
    features: list[Feature]
    entry: str  # "module" (compile(m)) | "function" (calls m) | "catching" (catches m's raise)
    call_override: bool  # M defines __call__ returning super().__call__(x) * self.k
    calls: list[Call]

    def source(self) -> str:
        return render(self)

    def describe(self) -> str:
        return f"seed {self.seed}: " + ", ".join(f.name for f in self.features)


# ------------------------------------------------------------------ the feature table
def _f(rng: random.Random) -> str:
    return repr(round(rng.uniform(-2.0, 2.0), 2))


def _vec(rng: random.Random) -> str:
    return "torch.tensor([" + ", ".join(_f(rng) for _ in range(4)) + "])"


def param_add(i, rng):
    return Feature(
        "param",
        init=f"self.w{i} = nn.Parameter(torch.randn(4))",
        step=f"x = x + self.w{i}",
        mutations=[
            f"m.w{i}.requires_grad_(False)",
            f"m.w{i}.requires_grad_(True)",
            f"m.w{i} = nn.Parameter({_vec(rng)})",
            f"with torch.no_grad():\n    m.w{i}.mul_(2)",
            f"m.w{i} = nn.Parameter({_vec(rng)}, requires_grad=False)",
        ],
    )


def requires_grad_branch(i, rng):
    return Feature(
        "requires_grad-branch",
        init=f"self.g{i} = nn.Parameter(torch.randn(4))",
        step=f"if self.g{i}.requires_grad:\n    x = x + self.g{i}\nelse:\n    x = x - self.g{i} * 2",
        mutations=[f"m.g{i}.requires_grad_(not m.g{i}.requires_grad)", "m.requires_grad_(False)"],
    )


def training_branch(i, rng):
    return Feature(
        "training-branch",
        step=f"if self.training:\n    x = x * {_f(rng)}\nelse:\n    x = x - 0.5",
        mutations=["m.eval()", "m.train()", "m.train(not m.training)"],
    )


def getattr_default_buffer(i, rng):
    return Feature(
        "getattr-default",
        step=f"x = x + getattr(self, 'extra{i}', 0.25)",
        mutations=[
            f"m.register_buffer('extra{i}', {_vec(rng)})",
            f"if 'extra{i}' in m._buffers:\n    del m.extra{i}",
            f"m.extra{i} = {_f(rng)}",
            f"m.extra{i} = nn.Parameter({_vec(rng)})",
        ],
    )


def hasattr_attr(i, rng):
    return Feature(
        "hasattr",
        step=f"if hasattr(self, 'opt{i}'):\n    x = x * self.opt{i}",
        mutations=[f"m.opt{i} = {_f(rng)}", f"m.__dict__.pop('opt{i}', None)", f"M.opt{i} = 3.0"],
    )


def global_fn(i, rng):
    return Feature(
        "global-function",
        setup=(
            f"def gf{i}_a(x):\n    return x.sin()\n\n"
            f"def gf{i}_b(x):\n    return x.cos() + 1\n\nGF{i} = gf{i}_a"
        ),
        step=f"x = GF{i}(x)",
        mutations=[f"GF{i} = gf{i}_b", f"GF{i} = gf{i}_a", f"GF{i} = torch.tanh"],
    )


def global_enum(i, rng):
    return Feature(
        "global-enum",
        setup=(
            f"class Mode{i}(enum.Enum):\n    A = 1\n    B = 2\n    C = 3\n\nMODE{i} = Mode{i}.A\n"
            f"SCALE{i} = {{Mode{i}.A: 1.0, Mode{i}.B: 2.0, Mode{i}.C: -1.0}}"
        ),
        step=(
            f"if MODE{i} is Mode{i}.A:\n    x = x + 1\n"
            f"elif MODE{i} == Mode{i}.B:\n    x = x * MODE{i}.value\n"
            f"else:\n    x = x * SCALE{i}[MODE{i}]"
        ),
        mutations=[f"MODE{i} = Mode{i}.B", f"MODE{i} = Mode{i}.A", f"MODE{i} = Mode{i}.C"],
    )


def global_scalar(i, rng):
    return Feature(
        "global-scalar",
        setup=f"K{i} = {rng.randint(1, 3)}\nFLAG{i} = True",
        step=f"x = x * K{i}\nif FLAG{i}:\n    x = x + 1",
        mutations=[f"K{i} = {rng.randint(1, 4)}", f"FLAG{i} = not FLAG{i}", f"K{i} = 0.5"],
    )


def global_tensor(i, rng):
    return Feature(
        "global-tensor",
        setup=f"T{i} = {_vec(rng)}",
        step=f"x = x + T{i}",
        mutations=[f"T{i} = {_vec(rng)}", f"T{i}.add_(1)", f"T{i} = {_vec(rng)}.double()"],
    )


def setdefault_append(i, rng):
    return Feature(
        "dict-setdefault",
        setup=f"D{i} = {{}}",
        step=(
            f"D{i}.setdefault('seen', []).append(len(x))\n"
            f"print('seen', len(D{i}['seen']))\nx = x + len(D{i})"
        ),
        mutations=[f"D{i}['other'] = 1", f"D{i}.clear()", f"D{i}['seen'] = [0]"],
    )


def global_list(i, rng):
    return Feature(
        "global-list",
        setup=f"L{i} = [1, 2]",
        step=f"L{i}.append(x.shape[0])\nx = x + L{i}[0] + len(L{i})",
        mutations=[f"L{i}.append(5)", f"L{i}[0] = 3", f"L{i} = [0]"],
    )


def closure(i, rng):
    return Feature(
        "closure",
        setup=f"def make{i}(k):\n    def f(x):\n        return x * k\n    return f\n\nCL{i} = make{i}({_f(rng)})",
        step=f"x = CL{i}(x)",
        mutations=[
            f"CL{i}.__closure__[0].cell_contents = {_f(rng)}",
            f"CL{i} = make{i}({_f(rng)})",
        ],
    )


def default_arg(i, rng):
    return Feature(
        "default-argument",
        setup=(
            f"def sc{i}(x, k={_f(rng)}):\n    return x * k\n\n"
            f"def kw{i}(x, *, b={_f(rng)}):\n    return x + b"
        ),
        step=f"x = kw{i}(sc{i}(x))",
        mutations=[
            f"sc{i}.__defaults__ = ({_f(rng)},)",
            f"kw{i}.__kwdefaults__ = {{'b': {_f(rng)}}}",
        ],
    )


def dataclass_eq(i, rng):
    frozen = rng.random() < 0.5
    muts = [
        f"CFG{i} = Cfg{i}({_f(rng)}, 2)",
        f"CFG{i} = Cfg{i}(1.0, 2)",
        f"NB{i} = -1",
        f"NB{i} = 2",
    ]
    if not frozen:
        muts.append(f"CFG{i}.a = {_f(rng)}")
    return Feature(
        "dataclass",
        setup=(
            f"@dataclasses.dataclass(frozen={frozen})\nclass Cfg{i}:\n    a: float = 1.0\n    b: int = 2\n\n"
            f"    def __post_init__(self):\n        if self.b < 0:\n            raise ValueError('b')\n\n"
            f"CFG{i} = Cfg{i}()\nNB{i} = 2"
        ),
        step=(
            f"c = Cfg{i}(1.0, NB{i})\nif CFG{i} == c:\n    x = x + c.a\nelse:\n    x = x - CFG{i}.a"
        ),
        mutations=muts,
    )


def namedtuple(i, rng):
    return Feature(
        "namedtuple",
        setup=f"class P{i}(typing.NamedTuple):\n    t: torch.Tensor\n    n: int = 2",
        step=f"p = P{i}(x, {rng.randint(1, 3)})\na, b = p\nx = p.t * p.n + p[0] - a * b",
    )


BREAKS = [
    "print('step', x.shape)",
    "v = x.sum().item()\nx = x + v * 0.01",
    "vals = x[0].tolist()\nx = x + len(vals)",
    "arr = x.detach().numpy()\nx = x + float(arr.shape[0])",
    "torch._dynamo.graph_break()",
]


def graph_break(i, rng):
    return Feature("graph-break", step=rng.choice(BREAKS))


def try_except(i, rng):
    variants = [
        f"try:\n    x = x + self.missing{i}\nexcept AttributeError:\n    x = x - 1",
        "try:\n    if x.shape[0] > 2:\n        raise ValueError('big')\n    x = x + 1\nexcept ValueError:\n    x = x * 2",
        "try:\n    print('in try')\n    x = x + 1\nfinally:\n    x = x * 2",
        "try:\n    x = x + {}['k']\nexcept KeyError as e:\n    x = x + len(str(e))",
    ]
    return Feature(
        "try",
        step=rng.choice(variants),
        mutations=[f"m.missing{i} = {_f(rng)}", f"m.__dict__.pop('missing{i}', None)"],
    )


def with_ctx(i, rng):
    body = rng.choice(["x = x + 1", "x = x + 1\nprint('in with')", "x = x * 2\nv = x.sum().item()"])
    ctx = rng.choice([f"Ctx{i}()", "torch.no_grad()", "torch.enable_grad()"])
    return Feature(
        "with",
        setup=(
            f"EV{i} = []\n\nclass Ctx{i}:\n    def __enter__(self):\n        EV{i}.append('in')\n"
            f"        return self\n\n    def __exit__(self, *a):\n        EV{i}.append('out')\n        return False"
        ),
        step=f"with {ctx}:\n" + textwrap.indent(body, "    "),
        mutations=[f"EV{i}.clear()"],
    )


def raise_flag(i, rng):
    exc = rng.choice(["RuntimeError", "ValueError", "KeyError", f"Err{i}"])
    return Feature(
        "raise",
        setup=f"class Err{i}(Exception):\n    pass\n\nFAIL{i} = False",
        step=f"if FAIL{i}:\n    raise {exc}('fail{i}')",
        mutations=[f"FAIL{i} = True", f"FAIL{i} = False"],
    )


def module_list(i, rng):
    return Feature(
        "ModuleList",
        init=f"self.layers{i} = nn.ModuleList([nn.Linear(4, 4) for _ in range({rng.randint(1, 3)})])",
        step=f"for layer in self.layers{i}:\n    x = layer(x)",
        mutations=[
            f"torch.manual_seed({rng.randint(0, 99)})\nm.layers{i}.append(nn.Linear(4, 4))",
            f"m.layers{i}[0] = nn.Identity()",
            f"if len(m.layers{i}) > 1:\n    del m.layers{i}[-1]",
        ],
    )


def module_dict(i, rng):
    return Feature(
        "ModuleDict",
        init=f"self.md{i} = nn.ModuleDict({{'a': nn.Tanh(), 'b': nn.Linear(4, 4)}})",
        step=(
            f"for name, sub in self.md{i}.items():\n    x = sub(x)\n"
            f"if 'c' in self.md{i}:\n    x = self.md{i}['c'](x)"
        ),
        mutations=[
            f"m.md{i}['c'] = nn.ReLU()",
            f"if 'a' in m.md{i}:\n    del m.md{i}['a']",
            f"m.md{i}['a'] = nn.Sigmoid()",
        ],
    )


def param_order(i, rng):
    return Feature(
        "parameter-order",
        init=(
            f"self.pa{i} = nn.Parameter(torch.arange(4.0))\nself.pb{i} = nn.Parameter(torch.ones(4))\n"
            f"self.register_buffer('ba{i}', torch.arange(4.0) * 2)\n"
            f"self.register_buffer('bb{i}', torch.full((4,), -1.0))"
        ),
        step=(
            "x = x + torch.cat([p.flatten() for p in self.parameters()])[:4]\n"
            "x = x + torch.cat([b.flatten() for b in self.buffers()])[:4]"
        ),
        mutations=[
            "items = list(m._parameters.items())\nm._parameters.clear()\nm._parameters.update(reversed(items))",
            "m._buffers = dict(reversed(list(m._buffers.items())))",
            f"m.register_parameter('pc{i}', nn.Parameter(torch.full((4,), 9.0)))",
            f"del m.pa{i}",
        ],
    )


def buffer_inplace(i, rng):
    return Feature(
        "buffer-inplace",
        init=f"self.register_buffer('cnt{i}', torch.zeros(1))",
        step=f"self.cnt{i}.add_(1)\nx = x + self.cnt{i}",
        mutations=[f"m.cnt{i}.zero_()", f"m.cnt{i} = torch.ones(1) * 5"],
    )


def attr_counter(i, rng):
    return Feature(
        "attribute-mutation",
        init=f"self.calls{i} = 0",
        step=f"self.calls{i} += 1\nx = x + self.calls{i}",
        mutations=[f"m.calls{i} = 10"],
    )


def holder(i, rng):
    return Feature(
        "object-attributes",
        setup=f"class Holder{i}:\n    pass\n\nH{i} = Holder{i}()\nH{i}.v = 1.0",
        step=(
            f"x = x + getattr(H{i}, 'v', 0.0)\nif hasattr(H{i}, 'w'):\n    x = x * H{i}.w\n"
            f"H{i}.last = x.shape[0]"
        ),
        mutations=[
            f"H{i}.w = {_f(rng)}",
            f"H{i}.__dict__.pop('w', None)",
            f"H{i}.__dict__.pop('v', None)",
            f"Holder{i}.v = 7.0",
        ],
    )


def global_dict_read(i, rng):
    return Feature(
        "global-dict",
        setup=f"CD{i} = {{'scale': 2.0}}",
        step=(
            f"x = x * CD{i}.get('scale', 1.0)\nif 'shift' in CD{i}:\n    x = x + CD{i}['shift']\n"
            f"x = x + len(CD{i})"
        ),
        mutations=[
            f"CD{i}['shift'] = {_f(rng)}",
            f"CD{i}['scale'] = {_f(rng)}",
            f"CD{i}.pop('scale', None)",
        ],
    )


def submodule_hook(i, rng):
    return Feature(
        "hooks",
        init=f"self.sub{i} = nn.Linear(4, 4)",
        step=f"x = self.sub{i}(x)",
        mutations=[
            f"m.sub{i}.register_forward_hook(lambda mod, args, out: out * 2)",
            f"m.sub{i}.register_forward_pre_hook(lambda mod, args: (args[0] + 1,))",
            f"m.sub{i}._forward_hooks.clear()",
            f"m.sub{i}._forward_pre_hooks.clear()",
            f"m.sub{i}.forward = lambda x: x - 3",
        ],
    )


def base_method(i, rng):
    return Feature(
        "inherited-method",
        step=rng.choice(["x = self.helper(x)", "x = super().helper(x)"]),
        mutations=[
            "Base.helper = lambda self, x: x * 3",
            "m.helper = lambda x: x - 1",
            "Base.helper = ORIG_HELPER",
        ],
    )


def inner_nonlocal(i, rng):
    return Feature(
        "nested-closure",
        step=(
            "acc = 0\n\ndef bump(v):\n    nonlocal acc\n    acc += v\n    return acc\n\n"
            "bump(1)\nx = x + bump(2)"
        ),
    )


FEATURES: list[Callable[[int, random.Random], Feature]] = [
    param_add,
    requires_grad_branch,
    training_branch,
    getattr_default_buffer,
    hasattr_attr,
    global_fn,
    global_enum,
    global_scalar,
    global_tensor,
    setdefault_append,
    global_list,
    closure,
    default_arg,
    dataclass_eq,
    namedtuple,
    graph_break,
    try_except,
    with_ctx,
    raise_flag,
    module_list,
    module_dict,
    param_order,
    buffer_inplace,
    attr_counter,
    holder,
    global_dict_read,
    submodule_hook,
    base_method,
    inner_nonlocal,
]

# state changes every program can take, whatever its features
GENERIC_MUTATIONS = [
    "m.train(not m.training)",
    "m.forward = types.MethodType(alt_forward, m)",
    "m.__dict__.pop('forward', None)",
    "M.forward = alt_forward",
    "M.forward = ORIG_FORWARD",
    "M.__call__ = alt_call",
    "m.__call__ = lambda x: x * 100",  # no effect: m(x) looks __call__ up on the class
    "m.register_forward_hook(lambda mod, args, out: out + 1)",
    "m.register_forward_pre_hook(lambda mod, args: (args[0] * 2,))",
    "m.requires_grad_(False)",
    "m.requires_grad_(True)",
    "m.double()",
    "m.float()",
]
INPUT_CHANGES = ["batch", "dtype", "requires_grad"]

PRELUDE = """\
import dataclasses
import enum
import types
import typing

import torch
from torch import nn


class Base(nn.Module):
    def helper(self, x):
        return x * 0.5


ORIG_HELPER = Base.helper
"""


def generate(seed: int) -> Program:
    rng = random.Random(seed)
    features = [rng.choice(FEATURES)(i, rng) for i in range(rng.randint(1, 5))]
    pool = [mu for f in features for mu in f.mutations]
    batch, dtype, grad = rng.choice([2, 3]), "float32", rng.random() < 0.2
    calls = []
    for n in range(rng.randint(2, 5)):
        mutation = ""
        if n and rng.random() < 0.85:
            r = rng.random()
            if r < 0.15:
                change = rng.choice(INPUT_CHANGES)
                if change == "batch":
                    batch = rng.choice([1, 2, 3, 5])
                elif change == "dtype":
                    dtype = "float64" if dtype == "float32" else "float32"
                else:
                    grad = not grad
            elif r < 0.4 or not pool:
                mutation = rng.choice(GENERIC_MUTATIONS)
            else:
                mutation = rng.choice(pool)
        calls.append(Call(mutation, batch, dtype, grad))
    entry = rng.choice(["module", "function", "catching"])
    return Program(seed, features, entry, rng.random() < 0.2, calls)


def render(p: Program) -> str:
    setups = "\n\n".join(f.setup for f in p.features if f.setup)
    init = "".join(textwrap.indent(f.init, " " * 8) + "\n" for f in p.features if f.init)
    steps = "".join(textwrap.indent(f.step, " " * 8) + "\n" for f in p.features if f.step)
    call = ""
    if p.call_override:
        init += "        self.k = 3.0\n"
        call = "\n    def __call__(self, x):\n        return super().__call__(x) * self.k\n"
    return f"""{PRELUDE}

{setups}


class M(Base):
    def __init__(self):
        super().__init__()
{init}
    def forward(self, x):
{steps}        return x
{call}

ORIG_FORWARD = M.forward


def alt_forward(self, x):
    return ORIG_FORWARD(self, x) * 0.5 + 1


def alt_call(self, *args):
    return nn.Module.__call__(self, *args) - 2


torch.manual_seed({p.seed})
m = M()


def entry(x):
    y = m(x)
    return y + 1, len(y)


CAUGHT = []


def catching(x):
    try:
        y = m(x)
    except Exception as e:
        CAUGHT.append(type(e).__name__)
        y = x * 0
    return y - 1
"""


# ------------------------------------------------------------------ running one world
_counter = itertools.count()
_tmpdir = Path(tempfile.mkdtemp(prefix="framejit_stateful_"))


def load(source: str, tag: str) -> types.ModuleType:
    """Execute the program into a fresh module (a real file, so tracebacks and linecache work)."""
    name = f"_stateful_{tag}_{next(_counter)}"
    path = _tmpdir / f"{name}.py"
    path.write_text(source)
    mod = types.ModuleType(name)
    mod.__file__ = str(path)
    sys.modules[name] = mod
    linecache.checkcache(str(path))
    exec(compile(source, str(path), "exec"), mod.__dict__)
    return mod


def unload(mod: types.ModuleType) -> None:
    sys.modules.pop(mod.__name__, None)


def inputs(call: Call, seed: int, n: int) -> torch.Tensor:
    g = torch.Generator().manual_seed(seed * 100 + n)
    x = torch.randn(call.batch, 4, generator=g, dtype=getattr(torch, call.dtype))
    return x.requires_grad_(call.requires_grad)


@dataclasses.dataclass
class Outcome:
    """What one call did, in comparable form."""

    result: object = None
    exception: str | None = None
    printed: str = ""
    grads: object = None
    state: object = None


def canon(obj, depth: int = 0):
    """A comparable picture of a value: tensors kept (detached), containers recursed, objects by vars."""
    if depth > 6:
        return ("deep",)
    if isinstance(obj, torch.Tensor):
        return ("tensor", obj.detach().clone(), obj.requires_grad)
    if isinstance(obj, torch.nn.Module):
        return (
            "module",
            type(obj).__name__,
            obj.training,
            [(k, canon(v, depth + 1)) for k, v in obj.named_parameters()],
            [(k, canon(v, depth + 1)) for k, v in obj.named_buffers()],
            list(obj._modules),
            sorted(
                (k, canon(v, depth + 1))
                for k, v in vars(obj).items()
                if not k.startswith("_") and k != "training" and not callable(v)
            ),
        )
    if isinstance(obj, (int, float, bool, str, type(None))):
        return obj
    if isinstance(obj, enum.Enum):
        return ("enum", type(obj).__name__, obj.name)
    if isinstance(obj, (list, tuple)):
        return (type(obj).__name__, [canon(v, depth + 1) for v in obj])
    if isinstance(obj, dict):
        return ("dict", [(canon(k, depth + 1), canon(v, depth + 1)) for k, v in obj.items()])
    if isinstance(obj, types.FunctionType):
        cells = [canon(c.cell_contents, depth + 1) for c in obj.__closure__ or () if _filled(c)]
        return (
            "fn",
            obj.__qualname__,
            canon(obj.__defaults__, depth + 1),
            canon(obj.__kwdefaults__),
            cells,
        )
    if isinstance(obj, (types.ModuleType, type, types.BuiltinFunctionType)) or callable(obj):
        return ("opaque", getattr(obj, "__qualname__", type(obj).__name__))
    if hasattr(obj, "__dict__"):
        return (
            "object",
            type(obj).__name__,
            sorted((k, canon(v, depth + 1)) for k, v in vars(obj).items()),
        )
    return ("repr", repr(obj))


def _filled(cell) -> bool:
    try:
        cell.cell_contents  # noqa: B018
    except ValueError:
        return False
    return True


def snapshot(mod: types.ModuleType):
    return sorted(
        (k, canon(v))
        for k, v in vars(mod).items()
        if not k.startswith("__") and not k.startswith("_stateful")
    )


def run_call(mod: types.ModuleType, fn, call: Call, seed: int, n: int) -> Outcome:
    out = Outcome()
    buf = io.StringIO()
    x = None
    with contextlib.redirect_stdout(buf):
        try:
            if call.mutation:
                exec(call.mutation, mod.__dict__)
            x = inputs(call, seed, n)
            res = fn(x)
            out.result = canon(res)
            tensors = [
                t
                for t in (res if isinstance(res, tuple) else (res,))
                if isinstance(t, torch.Tensor)
            ]
            tensors = [t for t in tensors if t.requires_grad]
            if tensors:
                sum(t.double().sum() for t in tensors).backward()
        except Exception as e:
            out.exception = type(e).__name__
    out.printed = buf.getvalue()
    m = mod.m
    out.grads = [(k, canon(p.grad)) for k, p in m.named_parameters()] + [
        ("x", canon(x.grad if x is not None else None))
    ]
    for p in m.parameters():
        p.grad = None
    out.state = snapshot(mod)
    return out


# ------------------------------------------------------------------ comparing worlds
def diff(a, b, path: str = "", rtol: float = 1e-4, atol: float = 1e-5) -> str | None:
    """The first place where two canon pictures differ, or None."""
    if isinstance(a, torch.Tensor) or isinstance(b, torch.Tensor):
        if not (isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor)):
            return f"{path}: {type(a).__name__} vs {type(b).__name__}"
        if a.dtype != b.dtype or a.shape != b.shape:
            return f"{path}: {a.dtype}{list(a.shape)} vs {b.dtype}{list(b.shape)}"
        try:
            torch.testing.assert_close(a, b, rtol=rtol, atol=atol, equal_nan=True)
        except AssertionError as e:
            return f"{path}: values differ ({str(e).splitlines()[0]})"
        return None
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        if len(a) != len(b):
            return f"{path}: length {len(a)} vs {len(b)} ({_short(a)} vs {_short(b)})"
        for k, (u, v) in enumerate(zip(a, b, strict=True)):
            label = u[0] if isinstance(u, tuple) and len(u) == 2 and isinstance(u[0], str) else k
            d = diff(u, v, f"{path}/{label}", rtol, atol)
            if d:
                return d
        return None
    if type(a) is not type(b) or a != b:
        return f"{path}: {_short(a)} vs {_short(b)}"
    return None


def _short(v) -> str:
    s = repr(v)
    return s if len(s) < 120 else s[:117] + "..."


@dataclasses.dataclass
class Verdict:
    status: str  # "ok" | "mismatch" | "crash"
    call: int = -1
    detail: str = ""
    graphs: int = 0
    recompiles: int = 0


COMPILERS = ("framejit", "torch")


def _compile(which: str, target, backend: str):
    if which == "framejit":
        from framejit import graphcapture as fj

        return fj.compile(target, backend=backend)
    return torch.compile(target, backend="eager" if backend == "eager" else "inductor")


def _reset(which: str) -> None:
    if which == "framejit":
        from framejit import graphcapture as fj

        fj.reset()
    else:
        torch._dynamo.reset()


class _Counts:
    def __init__(self, which: str):
        self.which, self.graphs, self.recompiles = which, 0, 0

    def __enter__(self):
        if self.which == "framejit":
            from framejit import graphcapture as fj

            self._unsub = fj.events.subscribe(self._record)
        else:
            from torch._dynamo.utils import counters

            counters.clear()
        return self

    def _record(self, rec) -> None:
        self.graphs += len(rec.graphs)
        self.recompiles += bool(rec.is_recompile)

    def __exit__(self, *exc):
        if self.which == "framejit":
            self._unsub()
        else:
            from torch._dynamo.utils import counters

            self.graphs = int(counters["stats"]["unique_graphs"])
            self.recompiles = (
                int(sum(counters["recompiles"].values())) if "recompiles" in counters else 0
            )
        return False


def _entry(mod: types.ModuleType, program: Program):
    return getattr(mod, {"module": "m", "function": "entry", "catching": "catching"}[program.entry])


def check(program: Program, compiler: str = "framejit", backend: str = "eager") -> Verdict:
    """Run the program eagerly and compiled, call by call; the first difference decides."""
    source = program.source()
    eager_mod = load(source, "eager")
    comp_mod = load(source, compiler)
    _reset(compiler)
    verdict = Verdict("ok")
    rtol, atol = (1e-4, 1e-5) if backend == "eager" else (1e-3, 1e-4)
    try:
        with _Counts(compiler) as counts:
            eager_fn, target = _entry(eager_mod, program), _entry(comp_mod, program)
            try:
                comp_fn = _compile(compiler, target, backend)
            except Exception as e:
                return Verdict("crash", 0, f"compile: {type(e).__name__}: {e}")
            for n, call in enumerate(program.calls):
                want = run_call(eager_mod, eager_fn, call, program.seed, n)
                try:
                    got = run_call(comp_mod, comp_fn, call, program.seed, n)
                except Exception as e:
                    verdict = Verdict("crash", n, f"harness: {type(e).__name__}: {e}")
                    break
                if got.exception != want.exception:
                    status = "crash" if got.exception else "mismatch"
                    verdict = Verdict(
                        status, n, f"exception {got.exception} (eager {want.exception})"
                    )
                    break
                for part in ("result", "printed", "grads", "state"):
                    d = diff(getattr(got, part), getattr(want, part), part, rtol, atol)
                    if d:
                        verdict = Verdict("mismatch", n, d)
                        break
                if verdict.status != "ok":
                    break
    finally:
        unload(eager_mod)
        unload(comp_mod)
        _reset(compiler)
    verdict.graphs, verdict.recompiles = counts.graphs, counts.recompiles
    return verdict


def exception_detail(program: Program, compiler: str = "framejit", backend: str = "eager") -> str:
    """The compiled world's traceback at the first failing call (for reports)."""
    import traceback

    mod = load(program.source(), compiler)
    _reset(compiler)
    try:
        fn = _compile(compiler, _entry(mod, program), backend)
        for n, call in enumerate(program.calls):
            with contextlib.redirect_stdout(io.StringIO()):
                if call.mutation:
                    exec(call.mutation, mod.__dict__)
                try:
                    res = fn(inputs(call, program.seed, n))
                    tensors = [
                        t
                        for t in (res if isinstance(res, tuple) else (res,))
                        if isinstance(t, torch.Tensor)
                    ]
                    tensors = [t for t in tensors if t.requires_grad]
                    if tensors:
                        sum(t.double().sum() for t in tensors).backward()
                except Exception:
                    return traceback.format_exc()
        return ""
    finally:
        unload(mod)
        _reset(compiler)


# ------------------------------------------------------------------ minimising a failure
def minimise(program: Program, fails: Callable[[Program], bool]) -> Program:
    """Drop features, calls and mutations while `fails` still holds (greedy, one at a time)."""
    changed = True
    while changed:
        changed = False
        for kind in ("features", "calls", "mutation", "override", "entry"):
            for cand in _shrinks(program, kind):
                if fails(cand):
                    program, changed = cand, True
                    break
    return program


def _shrinks(p: Program, kind: str):
    if kind == "features":
        for k in range(len(p.features)):
            yield dataclasses.replace(p, features=p.features[:k] + p.features[k + 1 :])
    elif kind == "calls" and len(p.calls) > 1:
        for k in range(len(p.calls)):
            yield dataclasses.replace(p, calls=p.calls[:k] + p.calls[k + 1 :])
    elif kind == "mutation":
        for k, c in enumerate(p.calls):
            if c.mutation:
                yield dataclasses.replace(
                    p, calls=[*p.calls[:k], dataclasses.replace(c, mutation=""), *p.calls[k + 1 :]]
                )
    elif kind == "override" and p.call_override:
        yield dataclasses.replace(p, call_override=False)
    elif kind == "entry" and p.entry != "module":
        yield dataclasses.replace(p, entry="module")
