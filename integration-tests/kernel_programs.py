"""Generated tensor programs for differential kernel fuzzing: framejit's backends vs eager.

A program is straight-line Python source over a few input tensors of mixed shapes (broadcast,
size-1 and 0-size dims) and dtypes.  Each statement is drawn from OPS and kept only if eager
runs it, so every program is valid eager code.  `check` runs it eagerly and through
`fj.compile(fn, backend=...)` on fresh copies of the inputs and compares the outputs and the
inputs afterwards (mutation).  `minimise` drops statements while a failure persists.

Special values (inf, nan, -0.0, huge, tiny) go only into "exact" programs, which use no
transcendental function: ATen's vectorised math at inf/nan differs between AVX2 and AVX-512
machines.  "Smooth" programs use transcendentals, always on a clamped argument.
"""

from __future__ import annotations

import dataclasses
import random
import traceback

import torch

FLOATS = [torch.float32, torch.float64, torch.bfloat16, torch.float16]
INTS = [torch.int32, torch.int64]
DTYPES = FLOATS + INTS + [torch.bool]
DTYPE_WEIGHTS = [6, 2, 2, 2, 2, 2, 1]
SPECIALS = [float("inf"), float("-inf"), float("nan"), -0.0, 0.0, 3e38, 1e-40, -1e-30, 65504.0]
TRANSCENDENTAL = [
    "torch.exp",
    "torch.tanh",
    "torch.sigmoid",
    "torch.log1p",
    "torch.erf",
    "torch.nn.functional.gelu",
    "torch.nn.functional.silu",
    "torch.sin",
    "torch.rsqrt",
]


@dataclasses.dataclass
class Program:
    seed: int
    inputs: list  # (shape, dtype, special)
    stmts: list  # (name, expression or statement, is_assignment)
    outputs: list  # names

    def source(self) -> str:
        args = ", ".join(f"x{i}" for i in range(len(self.inputs)))
        lines = [f"def fn({args}):"]
        for name, text, assign in self.stmts:
            lines.append(f"    {name} = {text}" if assign else f"    {text}")
        lines.append(f"    return ({', '.join(self.outputs)},)")
        return "\n".join(lines)

    def make_inputs(self) -> list:
        return [_make_tensor(self.seed * 31 + i, *spec) for i, spec in enumerate(self.inputs)]

    def function(self):
        ns = {"torch": torch}
        exec(compile(self.source(), f"<kernel-program {self.seed}>", "exec"), ns)
        return ns["fn"]


def _make_tensor(seed, shape, dtype, special):
    g = torch.Generator().manual_seed(seed)
    if dtype == torch.bool:
        return torch.rand(shape, generator=g) > 0.5
    if dtype in INTS:
        return torch.randint(-6, 7, shape, generator=g, dtype=dtype)
    t = torch.randn(shape, generator=g, dtype=torch.float64) * 2
    if special and t.numel():
        flat = t.view(-1)
        picks = torch.randint(0, flat.numel(), (max(1, flat.numel() // 4),), generator=g)
        for k, p in enumerate(picks.tolist()):
            flat[p] = SPECIALS[(seed + k) % len(SPECIALS)]
    return t.to(dtype)


# --- statement generators: each takes (rng, env, mode) and returns source text or None -----


def _pick(rng, env, pred=lambda t: True):
    names = [n for n, t in env.items() if isinstance(t, torch.Tensor) and pred(t)]
    if not names:
        return None
    # bias towards recent values so chains form
    return names[min(len(names) - 1, int(len(names) * (1 - rng.random() ** 2)))]


def _is_float(t):
    return t.dtype.is_floating_point


def _dim(rng, t):
    return rng.randrange(-t.dim(), t.dim()) if t.dim() else None


def g_binary(rng, env, mode):
    a, b = _pick(rng, env), _pick(rng, env)
    op = rng.choice(
        [
            *["+", "-", "*", "/", "//", "%", "**", "<", "==", ">=", "!=", "&", "|", "^"],
            *["torch.maximum", "torch.minimum", "torch.fmod", "torch.floor_divide"],
            *["torch.remainder", "torch.where", "torch.logical_and", "torch.atan2"],
            *["torch.div_floor", "torch.div_trunc"],
        ]
    )
    if op == "torch.where":
        c = _pick(rng, env)
        return f"torch.where({c} > 0, {a}, {b})"
    if op in ("torch.div_floor", "torch.div_trunc"):
        return f"torch.div({a}, {b}, rounding_mode={op[10:]!r})"
    if op == "torch.atan2" and mode != "smooth":
        return None
    if op == "/" and mode == "smooth":
        return f"{a} / ({b}.abs() + 1)"
    if op.startswith("torch."):
        return f"{op}({a}, {b})"
    return f"({a} {op} {b})"


def g_scalar(rng, env, mode):
    a = _pick(rng, env)
    s = rng.choice([2, -3, 0.5, -1.5, 0, 1e-3, True])
    op = rng.choice(["+", "-", "*", "/", "//", "%", "**", "<", ">="])
    if op == "**" and mode == "smooth":
        s = rng.choice([2, 3, 0.5])
        return f"({a}.abs() ** {s})" if s == 0.5 else f"({a} ** {s})"
    return rng.choice([f"({a} {op} {s!r})", f"({s!r} {op} {a})"])


def g_unary(rng, env, mode):
    a = _pick(rng, env)
    exact = ["torch.neg", "torch.abs", "torch.floor", "torch.ceil", "torch.round", "torch.trunc"]
    exact += ["torch.sign", "torch.relu", "torch.square", "torch.logical_not", "torch.bitwise_not"]
    exact += ["torch.isnan", "torch.isinf", "torch.nan_to_num", "torch.signbit", "torch.reciprocal"]
    if mode == "smooth" and rng.random() < 0.5:
        fn = rng.choice(TRANSCENDENTAL)
        if fn == "torch.rsqrt":
            return f"torch.rsqrt({a}.abs().clamp(0.1, 10))"
        if fn == "torch.log1p":  # ill-conditioned near -1: an ulp of input is a big change
            return f"torch.log1p({a}.clamp(-0.5, 8))"
        return (
            f"{fn}({a}.clamp(-8, 8).float())" if rng.random() < 0.3 else f"{fn}({a}.clamp(-8, 8))"
        )
    return f"{rng.choice(exact)}({a})"


def g_cast(rng, env, mode):
    a = _pick(rng, env)
    d = rng.choices(DTYPES, DTYPE_WEIGHTS)[0]
    if mode == "special" and d in INTS:  # float->int of inf/nan is undefined behaviour
        return None
    return f"{a}.to({d})"


def g_clamp(rng, env, mode):
    a = _pick(rng, env, lambda t: t.dtype != torch.bool)
    lo, hi = rng.choice([(-1, 1), (0, None), (None, 2), (-0.5, 0.5)])
    return f"{a}.clamp({lo}, {hi})"


def g_view(rng, env, mode):
    a = _pick(rng, env)
    t = env[a]
    n = t.dim()
    options = [f"{a}.unsqueeze({rng.randint(-n - 1, n)})", f"{a}.reshape(-1)", f"{a}.flatten()"]
    if n >= 1:
        d = _dim(rng, t)
        options += [
            f"{a}.transpose(0, -1)",
            f"{a}.permute({', '.join(map(str, rng.sample(range(n), n)))})",
            f"{a}[::2]",
            f"{a}[..., 1::2]",
            f"{a}.flip({d})",
            f"{a}.narrow({d}, 0, {max(0, t.shape[d] - 1)})",
            f"{a}.squeeze()",
            f"{a}.mT" if n >= 2 else f"{a}[1:]",
            f"{a}.contiguous()",
            f"{a}.reshape({t.shape[-1]}, -1)" if t.numel() else f"{a}.reshape(0, -1)",
        ]
        ones = [i for i, s in enumerate(t.shape) if s == 1]
        if ones:
            shape = list(t.shape)
            shape[rng.choice(ones)] = rng.choice([3, 4])
            options.append(f"{a}.expand({', '.join(map(str, shape))})")
        options.append(f"{a}.expand(2, *{a}.shape)")
    return rng.choice(options)


def g_index(rng, env, mode):
    a = _pick(rng, env, lambda t: t.dim() >= 1)
    if a is None:
        return None
    t = env[a]
    d = _dim(rng, t)
    size = t.shape[d]
    b = _pick(rng, env)
    options = [
        f"{a}.masked_fill({a} > 0, {rng.choice([0.5, -2, 0])})",
        f"{a}.masked_fill({b} != 0, 1)",
        f"torch.where({a} < 1, {a}, {rng.choice([0, -1.5])})",
    ]
    if size:
        idx = [rng.randrange(size) for _ in range(rng.randint(1, 4))]
        options += [
            f"{a}.index_select({d}, torch.tensor({idx}))",
            f"{a}[torch.tensor({idx})]" if d in (0, -t.dim()) else f"{a}[..., {idx[0]}]",
            f"{a}.gather({d}, (torch.arange({a}.numel()).reshape({a}.shape) * 7 % {size}))",
            f"{a}[{a} > 0]",
        ]
    return rng.choice(options)


def g_reduce(rng, env, mode):
    a = _pick(rng, env, lambda t: t.dim() >= 1)
    if a is None:
        return None
    t = env[a]
    d = _dim(rng, t)
    dims = sorted({_dim(rng, t) for _ in range(2)})
    kd = rng.random() < 0.5
    ops = [
        f"{a}.sum({dims}, keepdim={kd})",
        f"{a}.sum()",
        f"{a}.amax({dims}, keepdim={kd})",
        f"{a}.amin({d}, keepdim={kd})",
        f"{a}.argmax({d}, keepdim={kd})",
        f"{a}.argmin()",
        f"{a}.cumsum({d})",
        f"{a}.any({d})",
        f"{a}.all()",
        f"{a}.max({d}).values",
        f"{a}.float().mean({dims}, keepdim={kd})",
        f"{a}.float().var({d}, keepdim={kd})",
        f"{a}.float().std({dims}, correction=0)",
        f"({a}.clamp(-1.5, 1.5).prod({d}))",
    ]
    if mode == "smooth":
        x = f"{a}.float().clamp(-8, 8)"
        ops += [
            f"torch.logsumexp({x}, {dims})",
            f"torch.softmax({x}, {d})",
            f"torch.log_softmax({x}, {d})",
            f"torch.softmax({a}.clamp(-8, 8), {d}, dtype=torch.float32)"
            if t.dtype.is_floating_point
            else f"{x}.mean()",
        ]
    return rng.choice(ops)


def g_matmul(rng, env, mode):
    a = _pick(rng, env, lambda t: t.dim() >= 1 and _is_float(t))
    if a is None:
        return None
    t = env[a]
    options = [f"({a} @ {a}.mT)" if t.dim() >= 2 else f"({a} @ {a})"]
    b = _pick(rng, env, lambda u: _is_float(u) and u.dtype == t.dtype and u.dim() >= 1)
    if t.dim() >= 2:
        options += [f"({a}.mT @ {a})", f"torch.nn.functional.linear({a}, {a}[:2])"]
        if b:
            options.append(f"torch.matmul({a}, {b}.mT)")
    if t.dim() == 3:
        options.append(f"torch.bmm({a}, {a}.transpose(1, 2))")
    return rng.choice(options)


def g_cat(rng, env, mode):
    a, b = _pick(rng, env), _pick(rng, env)
    t = env[a]
    d = _dim(rng, t) if t.dim() else 0
    return rng.choice(
        [
            f"torch.cat([{a}, {b}], {d})",
            f"torch.cat([{a}, {a} * 2], {d})",
            f"torch.stack([{a}, {b}], {d})",
            f"torch.stack([{a}, -{a}])",
        ]
    )


def g_inplace(rng, env, mode):
    """Mutations: of a clone (intermediate), of an input, or of a slice."""
    a = _pick(rng, env)
    b = _pick(rng, env)
    t = env[a]
    target = a if rng.random() < 0.4 else f"{a}.clone()"
    if not a.startswith("x") and rng.random() < 0.5:
        target = a  # mutate an intermediate directly (it may be a view of an input)
    stmt = rng.choice(
        [
            f"{target}.add_({b})",
            f"{target}.mul_({rng.choice([2, -0.5, b])})",
            f"{target}.clamp_(-1, 1)",
            f"{target}.copy_({b})",
            f"{target}.neg_()",
            f"{target}.masked_fill_({b} > 0, 3)",
        ]
    )
    if t.dim() >= 1 and rng.random() < 0.4:
        sl = rng.choice(["[1:]", "[::2]", "[..., :1]", "[0]"])
        stmt = rng.choice([f"{a}{sl}.copy_({b}{sl})", f"{a}{sl}.mul_(2)", f"{a}{sl}.zero_()"])
    return ("stmt", stmt)


OPS = [
    (g_binary, 5),
    (g_scalar, 3),
    (g_unary, 4),
    (g_cast, 1),
    (g_clamp, 1),
    (g_view, 4),
    (g_index, 2),
    (g_reduce, 4),
    (g_matmul, 1),
    (g_cat, 1),
    (g_inplace, 2),
]


def _input_specs(rng):
    ndim = rng.choice([0, 1, 2, 2, 3, 3])
    base = [rng.choice([1, 2, 3, 4, 5, 8]) for _ in range(ndim)]
    if ndim and rng.random() < 0.08:
        base[rng.randrange(ndim)] = 0
    specs = []
    mode = "special" if rng.random() < 0.4 else "smooth"
    for i in range(rng.randint(1, 3)):
        shape = list(base)
        if i:
            shape = shape[rng.randint(0, ndim) :] if rng.random() < 0.3 else shape
            shape = [1 if rng.random() < 0.25 else s for s in shape]
        dtype = torch.float32 if i == 0 else rng.choices(DTYPES, DTYPE_WEIGHTS)[0]
        if i == 0 and rng.random() < 0.3:
            dtype = rng.choice(FLOATS[1:])
        specs.append((tuple(shape), dtype, mode == "special"))
    return specs, mode


def generate(seed: int, steps: int = 8) -> Program:
    rng = random.Random(seed)
    specs, mode = _input_specs(rng)
    prog = Program(seed, specs, [], [])
    env = {f"x{i}": t for i, t in enumerate(prog.make_inputs())}
    gens, weights = zip(*OPS, strict=True)
    tries = 0
    while len(prog.stmts) < steps and tries < steps * 8:
        tries += 1
        text = rng.choices(gens, weights)[0](rng, env, mode)
        if text is None:
            continue
        assign = not isinstance(text, tuple)
        text = text if assign else text[1]
        name = f"v{len(prog.stmts)}"
        trial = dict(env)
        try:
            exec(f"{name} = {text}" if assign else text, {"torch": torch}, trial)
        except Exception:
            continue
        env = trial
        prog.stmts.append((name, text, assign))
    values = [s[0] for s in prog.stmts if s[2]]
    outs = values[-1:] + rng.sample(values[:-1], min(len(values) - 1, 2)) or ["x0"]
    if rng.random() < 0.2:
        outs.append("x0")  # an output that is an input (or aliases one)
    prog.outputs = outs
    return prog


# --- checking ------------------------------------------------------------------------------


@dataclasses.dataclass
class Verdict:
    status: str  # ok | mismatch | crash | invalid
    detail: str = ""


TOL = {
    torch.float32: (1e-4, 1e-5),
    torch.float64: (1e-7, 1e-7),
    torch.bfloat16: (4e-2, 4e-2),
    torch.float16: (1e-2, 1e-2),
}


def _run(fn, inputs):
    outs = fn(*inputs)
    return [o.clone() if isinstance(o, torch.Tensor) else o for o in outs], inputs


def _compare(got, want, ref=None):
    """None if equal enough, else a message. ref: the same value computed in float64."""
    if not isinstance(want, torch.Tensor):
        return None if got == want else f"{got!r} != {want!r}"
    if not isinstance(got, torch.Tensor):
        return f"got {type(got).__name__}, want a tensor"
    if got.shape != want.shape or got.dtype != want.dtype:
        return f"shape/dtype {tuple(got.shape)} {got.dtype} != {tuple(want.shape)} {want.dtype}"
    rtol, atol = TOL.get(want.dtype, (0, 0))
    try:
        torch.testing.assert_close(got, want, rtol=rtol, atol=atol, equal_nan=True)
        return None
    except AssertionError as e:
        msg = str(e).splitlines()
        msg = " | ".join(msg[:4])
    if ref is not None and want.is_floating_point() and ref.shape == want.shape:
        # low-precision eager rounds every op; a fused kernel may be closer to float64
        r = ref.double()
        err_got = (got.double() - r).abs().nan_to_num(0, 0, 0).max().item() if r.numel() else 0
        err_want = (want.double() - r).abs().nan_to_num(0, 0, 0).max().item() if r.numel() else 0
        same_nan = torch.equal(got.isnan(), want.isnan())
        if same_nan and err_got <= 2 * err_want + atol:
            return None
    return msg


def check(prog: Program, backend: str) -> Verdict:
    from framejit import graphcapture as fj

    try:
        want, want_in = _run(prog.function(), prog.make_inputs())
    except Exception as e:
        return Verdict("invalid", repr(e))
    refs = None
    try:
        up = [x.double() if x.is_floating_point() else x for x in prog.make_inputs()]
        refs, _ = _run(prog.function(), up)
    except Exception:
        refs = None
    fj.reset()
    try:
        got, got_in = _run(fj.compile(prog.function(), backend=backend), prog.make_inputs())
    except Exception:
        return Verdict("crash", traceback.format_exc(limit=-4))
    finally:
        fj.reset()
    if len(got) != len(want):
        return Verdict("mismatch", f"{len(got)} outputs, want {len(want)}")
    for i, (g, w) in enumerate(zip(got, want, strict=True)):
        r = refs[i] if refs is not None and i < len(refs) else None
        msg = _compare(g, w, r)
        if msg:
            return Verdict("mismatch", f"output {i} ({prog.outputs[i]}): {msg}")
    for i, (g, w) in enumerate(zip(got_in, want_in, strict=True)):
        msg = _compare(g, w)
        if msg:
            return Verdict("mismatch", f"input x{i} after the call: {msg}")
    return Verdict("ok")


def minimise(prog: Program, failing) -> Program:
    """Drop statements and outputs while `failing(program)` stays true."""
    changed = True
    while changed:
        changed = False
        for i in range(len(prog.stmts) - 1, -1, -1):
            cand = dataclasses.replace(prog, stmts=prog.stmts[:i] + prog.stmts[i + 1 :])
            if failing(cand):
                prog, changed = cand, True
        for i in range(len(prog.outputs)):
            if len(prog.outputs) > 1:
                cand = dataclasses.replace(prog, outputs=prog.outputs[:i] + prog.outputs[i + 1 :])
                if failing(cand):
                    prog, changed = cand, True
                    break
    return prog


# a source fragment each statement kind leaves in a program (the coverage test reads these)
MARKERS = {
    "broadcast binary": " * ",
    "integer/float remainder": " % ",
    "transcendental": "clamp(-8, 8)",
    "cast": ".to(torch.",
    "view": ".transpose(",
    "index_select": ".index_select(",
    "masked_fill": ".masked_fill(",
    "reduction": ".sum(",
    "argmax": ".arg",
    "matmul": " @ ",
    "cat/stack": "torch.cat(",
    "in-place": "_(",
}
