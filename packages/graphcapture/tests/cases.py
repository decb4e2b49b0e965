"""A table of small functions covering the capture features, with argument factories.

Each case runs eagerly and compiled; the test compares results, graph counts, and the
number of graph ops against the tensor-producing torch calls eager makes.
"""

from __future__ import annotations

import math
from collections import namedtuple
from collections.abc import Callable
from dataclasses import dataclass, field

import torch
import torch.nn.functional as F
from torch import nn


@dataclass
class Case:
    fn: Callable
    make_args: Callable[[], list]
    frames: int = 1  # graphs expected (graph breaks add frames)
    check_ops: bool = True  # compare op count with eager's tensor-producing torch calls
    name: str = field(default="")

    def __post_init__(self):
        self.name = self.name or self.fn.__name__


def t(*shape, dtype=torch.float32):
    return lambda: torch.randn(*shape).to(dtype)


def args(*factories):
    return lambda: [f() if callable(f) else f for f in factories]


CASES: list[Case] = []


def case(*factories, frames=1, check_ops=True):
    def register(fn):
        CASES.append(Case(fn, args(*factories), frames, check_ops))
        return fn

    return register


# ----------------------------------------------------------------- arithmetic and operators
@case(t(4), t(4))
def add(a, b):
    return a + b


@case(t(4), t(4))
def sub_mul(a, b):
    return (a - b) * b


@case(t(4), t(4))
def true_div(a, b):
    return a / (b.abs() + 1)


@case(t(4), t(4))
def floor_div(a, b):
    return a // (b.abs() + 1)


@case(t(4), t(4))
def mod(a, b):
    return a % (b.abs() + 1)


@case(t(4))
def pow_const(a):
    return a**2


@case(t(4))
def rpow(a):
    return 2**a


@case(t(3, 4), t(4, 5))
def matmul_op(a, b):
    return a @ b


@case(t(4))
def neg(a):
    return -a


@case(t(4))
def pos(a):
    return +a


@case(lambda: torch.randint(0, 10, (4,)))
def invert_int(a):
    return ~a


@case(t(4), t(4))
def compare_ops(a, b):
    return a < b, a <= b, a > b, a >= b, a == b, a != b


@case(lambda: torch.randint(0, 8, (4,)), lambda: torch.randint(0, 8, (4,)))
def bitwise(a, b):
    return a & b, a | b, a ^ b


@case(lambda: torch.randint(0, 8, (4,)))
def shifts(a):
    return a << 1, a >> 1


@case(t(4))
def scalar_left(a):
    return 1 - a, 2 * a, 3 / (a.abs() + 1), 1 + a


@case(t(4))
def inplace_add_local(a):
    b = a.clone()
    b += 1
    b *= 2
    return b


@case(t(4))
def inplace_method(a):
    b = a.clone()
    b.add_(1).mul_(3)
    return b


@case(t(4))
def chained_arith(a):
    return ((a + 1) * 2 - 3) / 4


@case(t(4), t(4))
def torch_toy(a, b):
    x = a / (torch.abs(a) + 1)
    return x * b


@case(t(4))
def abs_builtin(a):
    return abs(a)


@case(t(2, 3))
def mixed_scalar_types(a):
    return a * 2.5 + 1 - int(True)


# ----------------------------------------------------------------- torch functions
@case(t(4))
def unary_fns(a):
    return torch.sin(a), torch.cos(a), torch.exp(a), torch.tanh(a), torch.sigmoid(a)


@case(t(4))
def log_sqrt(a):
    return torch.log(a.abs() + 1), torch.sqrt(a.abs())


@case(t(2, 3), t(2, 3))
def cat_stack(a, b):
    return torch.cat([a, b], dim=0), torch.stack((a, b), dim=1)


@case(t(4), t(4))
def where_fn(a, b):
    return torch.where(a > 0, a, b)


@case(t(3, 4))
def softmax_fn(a):
    return torch.softmax(a, dim=-1)


@case(t(3, 4))
def reductions(a):
    return a.sum(), a.mean(dim=0), a.amax(dim=1), a.std(), a.prod(dim=0)


@case(t(3, 4))
def max_with_dim(a):
    values, indices = torch.max(a, dim=1)
    return values * 2, indices


@case(t(3, 4))
def max_namedtuple_attrs(a):
    result = a.max(dim=0)
    return result.values + 1, result.indices


@case(t(3, 4))
def sort_topk(a):
    s = torch.sort(a, dim=1)
    k = torch.topk(a, 2)
    return s.values, k.indices


@case(t(6, 4))
def split_chunk(a):
    x, y = torch.split(a, 3)
    p, q = a.chunk(2, dim=1)
    return x + y, p * q


@case()
def factories():
    return torch.zeros(3) + torch.ones(3) + torch.full((3,), 2.0) + torch.arange(3)


@case(t(3))
def factories_like(a):
    return torch.zeros_like(a) + torch.ones_like(a) * a


@case(t(3, 3))
def linalg_ops(a):
    return torch.mm(a, a.t()), torch.bmm(a[None], a[None]), torch.einsum("ij,jk->ik", a, a)


@case(t(4))
def clamp_fns(a):
    return torch.clamp(a, -0.5, 0.5), a.clamp(min=0), torch.clip(a, max=0.1)


@case(t(2, 3))
def dtype_conversions(a):
    return a.to(torch.float64), a.double(), a.int(), a.half().float(), a.type(torch.int64)


@case(t(2, 3))
def torch_dtype_kw(a):
    return torch.zeros(2, 3, dtype=a.dtype) + a


@case(t(4))
def cumulative(a):
    return torch.cumsum(a, 0), torch.cumprod(a, dim=0)


@case(t(2, 3), t(2, 3))
def torch_functional_ops(a, b):
    return torch.maximum(a, b), torch.minimum(a, b), torch.lerp(a, b, 0.3)


@case(t(5))
def argmax_argmin(a):
    return torch.argmax(a), torch.argmin(a, dim=0)


@case(t(2, 3))
def flatten_fns(a):
    return torch.flatten(a), a.flatten(0), torch.reshape(a, (3, 2))


@case(t(2, 3))
def is_tensor_checks(a):
    if torch.is_tensor(a) and torch.is_floating_point(a):
        return a + 1
    return a - 1


@case(t(2, 2))
def numel_builtin(a):
    return a * torch.numel(a) + a.numel() + a.nelement()


@case(t(4))
def grad_enabled_check(a):
    if torch.is_grad_enabled():
        return a + 1
    return a - 1


@case(t(3))
def tensor_constructor(a):
    return a + torch.tensor([1.0, 2.0, 3.0])


@case(t(3, 4))
def var_mean(a):
    var, mean = torch.var_mean(a, dim=1)
    return var + mean


@case(t(2, 3))
def outer_addmm(a):
    return torch.addmm(torch.ones(2, 2), a, a.t()), torch.outer(a[0], a[1])


# ----------------------------------------------------------------- tensor methods and metadata
@case(t(2, 3, 4))
def view_reshape(a):
    return a.view(6, 4), a.reshape(-1), a.view(-1, 4).contiguous()


@case(t(2, 3, 4))
def transpose_permute(a):
    return a.transpose(0, 1), a.permute(2, 0, 1), a.mT, a.T if a.dim() == 2 else a


@case(t(2, 3))
def unsqueeze_squeeze(a):
    return a.unsqueeze(0).squeeze(0), a[None].squeeze(), torch.unsqueeze(a, -1)


@case(t(1, 3))
def expand_repeat(a):
    return a.expand(4, 3), a.repeat(2, 2), a.expand_as(torch.ones(2, 3))


@case(t(2, 3))
def shape_arith(a):
    n, m = a.shape
    return a.view(n * m) * (n + m)


@case(t(2, 3))
def size_method(a):
    return a.reshape(a.size(0), -1) + a.size()[1] + a.size(-1)


@case(t(2, 3))
def dim_ndim(a):
    return a * a.dim() + a.ndim


@case(t(2, 3))
def dtype_compare(a):
    if a.dtype == torch.float32:
        return a * 2
    return a


@case(t(2, 3))
def device_check(a):
    if a.device.type == "cpu":
        return a + 1
    return a


@case(t(2, 3))
def shape_len(a):
    return a * len(a.shape) + len(a)


@case(t(2, 3))
def new_tensor_methods(a):
    return a.new_zeros(2) + a.new_ones((2,)), a.new_full((2, 3), 1.5) + a


@case(t(2, 3))
def is_contiguous_branch(a):
    b = a.t()
    if b.is_contiguous():
        return b
    return b.contiguous() * 2


@case(t(4))
def requires_grad_attr(a):
    if a.requires_grad:
        return a
    return a * 3


@case(t(2, 3))
def tensor_size_unpack(a):
    b, c = a.size()
    return a.new_zeros(b, c) + a


@case(t(4, 4))
def masked_fill_method(a):
    return a.masked_fill(a > 0, 0.0), a.masked_fill_(a < -1, -1.0)


@case(t(3, 4))
def sum_keepdim_kwargs(a):
    return a.sum(dim=1, keepdim=True), a.mean(-1, keepdim=True)


@case(t(4))
def tensor_T_attr(a):
    m = a.reshape(2, 2)
    return m.T @ m


@case(t(2, 3))
def type_as_and_float(a):
    b = torch.ones(2, 3, dtype=torch.int32)
    return b.type_as(a) + a.float()


# ----------------------------------------------------------------- indexing
@case(t(4, 5))
def getitem_basic(a):
    return a[0], a[1:3], a[:, 2], a[..., -1], a[None, 0]


@case(t(4, 5))
def getitem_steps(a):
    return a[::2], a[1::2, ::-1] if False else a[1::2]


@case(t(4, 5), lambda: torch.tensor([0, 2]), check_ops=False)  # a[mask] breaks: dynamic shape
def getitem_tensor_index(a, idx):
    return a[idx], a[a > 0]


@case(t(4, 5))
def setitem_slice(a):
    b = a.clone()
    b[0] = 1.0
    b[:, 1] = b[:, 2] * 2
    return b


@case(t(4, 5))
def setitem_mask(a):
    b = a.clone()
    b[b < 0] = 0.0
    return b


@case(t(4, 5))
def getitem_python_index_arith(a):
    n = a.shape[0] // 2
    return a[:n] + a[n:]


@case(t(3, 4))
def index_select_gather(a):
    idx = torch.tensor([0, 2])
    return torch.index_select(a, 0, idx), torch.gather(a, 1, torch.zeros(3, 1, dtype=torch.long))


# ----------------------------------------------------------------- nn.functional
@case(t(2, 8))
def relu_gelu(a):
    return F.relu(a), F.gelu(a), F.silu(a), F.leaky_relu(a, 0.1)


@case(t(2, 8))
def f_softmax_logsoftmax(a):
    return F.softmax(a, dim=-1), F.log_softmax(a, dim=1)


@case(t(2, 8), t(4, 8), t(4))
def f_linear(a, w, b):
    return F.linear(a, w, b)


@case(t(2, 8))
def f_layer_norm(a):
    return F.layer_norm(a, (8,))


@case(t(1, 3, 8, 8), t(4, 3, 3, 3))
def f_conv2d(a, w):
    return F.conv2d(a, w, padding=1)


@case(t(1, 3, 8, 8))
def f_pools(a):
    return F.max_pool2d(a, 2), F.avg_pool2d(a, 2), F.adaptive_avg_pool2d(a, 1)


@case(t(2, 3))
def f_pad(a):
    return F.pad(a, (1, 1))


@case(t(4, 5), lambda: torch.randint(0, 5, (4,)))
def f_cross_entropy(logits, target):
    return F.cross_entropy(logits, target)


@case(t(4, 5), t(4, 5))
def f_mse_l1(a, b):
    return F.mse_loss(a, b), F.l1_loss(a, b), F.smooth_l1_loss(a, b)


@case(t(4, 5))
def f_dropout_eval(a):
    return F.dropout(a, p=0.5, training=False)


@case(t(4, 5))
def f_normalize(a):
    return F.normalize(a, dim=1)


@case(t(2, 4, 8))
def f_sdpa(q):
    return F.scaled_dot_product_attention(q, q, q)


@case(lambda: torch.randint(0, 10, (3,)), t(10, 4))
def f_embedding(idx, weight):
    return F.embedding(idx, weight)


@case(t(4, 5))
def f_one_hot_like(a):
    return F.one_hot(a.argmax(dim=1), 5) * a


@case(t(2, 8))
def f_tanh_sigmoid_softplus(a):
    return torch.tanh(a) + torch.sigmoid(a) + F.softplus(a) + F.elu(a)


# ----------------------------------------------------------------- python constants and control flow
@case(t(4))
def const_if_true(a):
    flag = True
    if flag:
        return a + 1
    return a - 1


@case(t(4))
def shape_if(a):
    if a.shape[0] > 2:
        return a * 2
    return a


@case(t(4))
def for_range_unrolled(a):
    for i in range(3):
        a = a + i
    return a


@case(t(4))
def while_loop_constant(a):
    i = 0
    while i < 3:
        a = a * 2
        i += 1
    return a


@case(t(4))
def for_over_list(a):
    out = a
    for scale in [1.0, 2.0, 3.0]:
        out = out * scale
    return out


@case(t(4), t(4))
def for_over_tuple_of_tensors(a, b):
    total = torch.zeros(4)
    for x in (a, b):
        total = total + x
    return total


@case(t(4), t(4))
def enumerate_zip(a, b):
    out = []
    for i, (x, y) in enumerate(zip([a, b], [b, a], strict=False)):
        out.append(x * i + y)
    return out


@case(t(4))
def list_comprehension(a):
    return [a * i for i in range(3)]


@case(t(4))
def dict_comprehension(a):
    d = {f"k{i}": a + i for i in range(3)}
    return d["k2"] * d["k0"] - d["k1"]


@case(t(4))
def generator_sum(a):
    return sum(a * i for i in range(4))


@case(t(4))
def tuple_unpacking(a):
    x, (y, z) = a, (a + 1, a + 2)
    first, *rest = [x, y, z]
    return first + rest[0] + rest[1]


@case(t(4))
def fstring_constant(a):
    name = f"layer_{3}_{'x'}"
    if name == "layer_3_x":
        return a + 1
    return a


@case(t(4))
def builtins_on_consts(a):
    n = len([1, 2, 3]) + max(2, 5) + min(4, 1) + abs(-3) + int(2.7) + round(1.4)
    return a * n


@case(t(4))
def isinstance_checks(a):
    if isinstance(a, torch.Tensor) and not isinstance(a, (list, tuple)):
        return a + 1
    return a


@case(t(4))
def math_module(a):
    return a * math.sqrt(4.0) + math.pi + math.floor(2.5)


@case(t(4))
def string_methods(a):
    s = "Hello".lower().replace("l", "L")
    if s.startswith("heL"):
        return a + len(s)
    return a


@case(t(4))
def any_all(a):
    flags = [True, False, True]
    if any(flags) and not all(flags):
        return a * 2
    return a


@case(t(4))
def sorted_reversed(a):
    vals = sorted([3, 1, 2])
    for v in reversed(vals):
        a = a + v
    return a


@case(t(4))
def dict_iteration(a):
    d = {"x": 1, "y": 2}
    for k, v in d.items():
        a = a + v * len(k)
    for k in d:
        a = a + d[k]
    return a + sum(d.values())


@case(t(4))
def dict_get_setdefault(a):
    d = {}
    d.setdefault("a", 1)
    return a * d.get("a") + d.get("b", 5)


@case(t(4))
def slicing_lists(a):
    xs = [a, a + 1, a + 2, a + 3]
    return xs[1:3], xs[::-1][0], xs[-1]


@case(t(4))
def nested_containers(a):
    cfg = {"layers": [(1, 2), (3, 4)], "scale": 0.5}
    for i, j in cfg["layers"]:
        a = a * cfg["scale"] + i * j
    return a


@case(t(4))
def ternary(a):
    k = 3
    return a * (2 if k > 2 else 5)


@case(t(4))
def boolean_ops(a):
    x, y = 1, 0
    return a * (x and 3) + a * (y or 4)


@case(t(4))
def chained_compare(a):
    k = 5
    if 0 < k < 10:
        return a + k
    return a


@case(t(4))
def in_operator(a):
    if 2 in (1, 2, 3) and "b" not in {"a": 1}:
        return a + 1
    return a


@case(t(4))
def getattr_builtin(a):
    fn = torch.relu
    return fn(a) + a.sum()


@case(t(4))
def hasattr_builtin(a):
    if hasattr(a, "shape") and not hasattr(a, "nope_attr"):
        return a + 1
    return a


@case(t(4))
def none_checks(a, b=None):
    if b is None:
        b = a * 2
    if b is not None:
        return a + b
    return a


@case(t(4))
def is_identity(a):
    b = a
    if b is a:
        return a * 2
    return a


@case(t(4))
def range_len_step(a):
    r = range(0, 10, 3)
    return a * len(r) + r[2]


@case(t(4))
def list_methods(a):
    xs = [a]
    xs.append(a + 1)
    xs.extend([a + 2, a + 3])
    xs.insert(0, a - 1)
    last = xs.pop()
    return xs, last


@case(t(4))
def zip_strict_constants(a):
    out = a
    for x, y in zip([1, 2], [3, 4], strict=False):
        out = out + x * y
    return out


@case(t(4))
def map_filter_lambda(a):
    vals = [v * 2 for v in [1, 2, 3]]
    keep = list(filter(lambda v: v > 2, vals))
    return a * sum(keep)


@case(t(4))
def integer_ops(a):
    n = 17
    return a * (n // 3) + (n % 5) + (n**2) - (-n) + (n << 1) + (n & 3)


@case(t(4))
def float_ops(a):
    x = 2.5
    return a * (x / 2) + x**0.5


@case(t(4))
def string_format(a):
    s = "{}-{}".format("a", 1) + "%d" % 3  # noqa: UP031 - the % operator on str is the point
    return a * len(s)


@case(t(4))
def tuple_methods(a):
    tup = (1, 2, 3, 2)
    return a * tup.index(3) + tup.count(2)


@case(t(2, 3))
def star_args_call(a):
    def inner(*xs, scale=1):
        return sum(xs) * scale

    return inner(a, a, a, scale=2)


@case(t(2, 3))
def kwargs_call(a):
    def inner(x, **kw):
        return x * kw["alpha"] + kw.get("beta", 0)

    return inner(a, alpha=2, beta=1)


@case(t(2, 3))
def call_function_ex(a):
    def inner(x, y, z=0):
        return x + y + z

    pos = (a, a)
    kw = {"z": 3}
    return inner(*pos, **kw)


@case(t(2, 3))
def default_args(a, scale=2.0, shift=1):
    return a * scale + shift


@case(t(2, 3))
def keyword_only(a):
    def inner(x, *, alpha):
        return x * alpha

    return inner(a, alpha=4)


# ----------------------------------------------------------------- user functions, closures, recursion
def _helper(x, k):
    return x * k + 1


def _helper_nested(x):
    return _helper(x, 2) + _helper(x, 3)


@case(t(4))
def call_global_function(a):
    return _helper(a, 3)


@case(t(4))
def call_nested_helpers(a):
    return _helper_nested(a)


def _make_adder(k):
    def adder(x):
        return x + k

    return adder


_add5 = _make_adder(5)


@case(t(4))
def closure_from_global(a):
    return _add5(a)


@case(t(4))
def inner_closure(a):
    scale = 3

    def inner(x):
        return x * scale

    return inner(a)


@case(t(4))
def lambda_local(a):
    f = lambda x: x + 1  # noqa: E731
    return f(a)


def _fact(n):
    return 1 if n <= 1 else n * _fact(n - 1)


@case(t(4))
def recursion_constant(a):
    return a * _fact(5)


def _tensor_recursive(x, n):
    if n == 0:
        return x
    return _tensor_recursive(x * 2, n - 1)


@case(t(4))
def recursion_tensor(a):
    return _tensor_recursive(a, 3)


@case(t(4))
def functools_partial_call(a):
    import functools

    f = functools.partial(_helper, k=4)
    return f(a)


Point = namedtuple("Point", ["x", "y"])


@case(t(4))
def namedtuple_in_function(a):
    p = Point(1, 2)
    return a * p.x + p.y


class _Config:
    scale = 3.0

    def __init__(self):
        self.shift = 2.0

    def apply(self, x):
        return x * self.scale + self.shift


_cfg = _Config()


@case(t(4))
def user_object_method(a):
    return _cfg.apply(a)


@case(t(4))
def user_object_attrs(a):
    return a * _cfg.scale + _cfg.shift


class _WithProperty:
    def __init__(self):
        self._k = 4

    @property
    def k(self):
        return self._k


_prop = _WithProperty()


@case(t(4))
def property_access(a):
    return a * _prop.k


class _Static:
    @staticmethod
    def double(x):
        return x * 2

    @classmethod
    def name(cls):
        return cls.__name__


@case(t(4))
def static_and_class_methods(a):
    if _Static.name() == "_Static":
        return _Static.double(a)
    return a


_GLOBAL_SCALE = 4.0
_GLOBAL_TENSOR = torch.ones(4)


@case(t(4))
def read_globals(a):
    return a * _GLOBAL_SCALE + _GLOBAL_TENSOR


@case(t(4))
def import_inside(a):
    import torch.nn.functional as F2

    return F2.relu(a)


# ----------------------------------------------------------------- grad mode
@case(t(4))
def no_grad_block(a):
    with torch.no_grad():
        b = a * 2
    return b + 1


@case(t(4))
def enable_grad_block(a):
    with torch.enable_grad():
        b = a * 2
    return b


@case(t(4))
def set_grad_enabled_block(a):
    with torch.set_grad_enabled(False):
        b = a + 1
    return b * 2


# ----------------------------------------------------------------- more tensor math
@case(t(3, 4))
def norms(a):
    return torch.norm(a), a.norm(dim=1), torch.linalg.vector_norm(a, dim=0)


@case(t(3, 4))
def logsumexp_fn(a):
    return torch.logsumexp(a, dim=1)


@case(t(2, 3, 4))
def einsum_batched(a):
    return torch.einsum("bij,bkj->bik", a, a)


@case(t(4, 4))
def triu_tril_diag(a):
    return torch.triu(a), torch.tril(a, -1), torch.diagonal(a), torch.diag(a.diagonal())


@case(t(3, 4))
def any_all_tensor(a):
    return (a > 0).any(), (a > -10).all(dim=1)


@case(t(5))
def round_floor_ceil(a):
    return torch.round(a * 3), torch.floor(a), torch.ceil(a), a.trunc(), a.frac()


@case(t(4))
def sign_abs_neg(a):
    return torch.sign(a), a.abs().neg(), torch.sgn(a)


@case(t(3, 4))
def flip_roll(a):
    return torch.flip(a, [0]), torch.roll(a, 1, dims=1), a.fliplr()


@case(t(3, 4), t(3, 4))
def isclose_eq(a, b):
    return torch.isclose(a, b), torch.eq(a, a), a.ne(b)


@case(t(2, 3))
def baddbmm_like(a):
    return torch.baddbmm(torch.zeros(1, 2, 2), a[None], a.t()[None])


@case(t(4, 4))
def matrix_power_inverse(a):
    m = a @ a.t() + torch.eye(4)
    return torch.linalg.inv(m), torch.matrix_power(m, 2)


@case(t(6))
def unfold_view(a):
    return a.unfold(0, 2, 2), a.view(2, 3).unbind(0)[1]


@case(t(3, 4))
def chunk_cat_roundtrip(a):
    return torch.cat(torch.chunk(a, 2, dim=1), dim=1)


@case(t(2, 3))
def stack_list_comprehension(a):
    return torch.stack([a * i for i in range(4)])


@case(t(5))
def arange_linspace(a):
    return a + torch.arange(5) * 0.5 + torch.linspace(0, 1, 5)


@case(t(3, 3))
def eye_like_ops(a):
    return a * torch.eye(3) + torch.eye(3, dtype=a.dtype)


@case(t(4, 5))
def where_scalar(a):
    return torch.where(a > 0, a, 0.0)


@case(t(4, 5))
def clamp_min_max_tensors(a):
    return torch.clamp(a, min=torch.zeros(5), max=torch.ones(5))


@case(t(2, 4))
def sigmoid_logit_chain(a):
    return torch.logit(torch.sigmoid(a), eps=1e-6)


@case(t(8))
def sort_argsort(a):
    return torch.argsort(a), torch.sort(a, descending=True)[0]


@case(t(3, 4))
def cummax_returns(a):
    values, indices = torch.cummax(a, dim=1)
    return values, indices


@case(t(3, 4))
def min_max_no_dim(a):
    return a.max(), a.min(), torch.aminmax(a).max


@case(t(2, 3))
def complex_chain(a):
    x = a.unsqueeze(-1).expand(2, 3, 4).reshape(6, 4)
    return x.softmax(-1).mean(0)


@case(t(4, 4))
def inplace_ops_chain(a):
    b = a.clone()
    b.relu_()
    b.mul_(2).add_(1).clamp_(max=3)
    return b


@case(t(3))
def tensor_bool_ops(a):
    m = a > 0
    return m & (a < 1), m | ~m, m.float().sum()


@case(t(2, 5))
def split_sizes(a):
    parts = torch.split(a, [2, 3], dim=1)
    return parts[0].sum() + parts[1].sum()


@case(t(3, 4))
def new_axis_broadcast(a):
    return a[:, None, :] - a[None, :, :]


@case(t(3, 4))
def scatter_add(a):
    index = torch.tensor([[0, 1, 2, 0]])
    return torch.zeros(3, 4).scatter_add(0, index, a[:1])


@case(t(4))
def dropout_p_zero_training(a):
    return F.dropout(a, p=0.0, training=True)


@case(t(2, 3, 8))
def f_group_norm_instance(a):
    return F.group_norm(a, 1), F.instance_norm(a)


@case(t(1, 2, 4, 4))
def f_interpolate(a):
    return F.interpolate(a, scale_factor=2, mode="nearest")


@case(t(3, 5), lambda: torch.rand(3, 5))
def f_bce(logits, target):
    return F.binary_cross_entropy_with_logits(logits, target)


@case(t(3, 5))
def f_hardtanh_relu6(a):
    return F.hardtanh(a), F.relu6(a), F.hardswish(a), F.mish(a)


@case(t(2, 4, 6))
def f_conv1d(a):
    return F.conv1d(a, torch.ones(3, 4, 3))


@case(t(4, 8))
def f_glu_cosine(a):
    return F.glu(a), F.cosine_similarity(a, a.flip(0))


# ----------------------------------------------------------------- more python
@case(t(4))
def while_with_break(a):
    i = 0
    while True:
        a = a + 1
        i += 1
        if i == 3:
            break
    return a


@case(t(4))
def loop_with_continue(a):
    for i in range(5):
        if i % 2 == 0:
            continue
        a = a * (i + 1)
    return a


@case(t(4))
def nested_loops(a):
    for i in range(2):
        for j in range(3):
            a = a + i * j
    return a


@case(t(4))
def enumerate_start(a):
    for i, s in enumerate([0.5, 1.5], start=1):
        a = a * s + i
    return a


@case(t(4), t(4), t(4))
def star_unpack_in_call(a, b, c):
    xs = [a, b, c]
    return torch.stack(xs).sum(0), torch.cat([*xs, a])


@case(t(4))
def list_of_lists(a):
    grid = [[a * i + j for j in range(2)] for i in range(2)]
    return grid[1][0] - grid[0][1] + grid[0][0] * grid[1][1]


@case(t(4))
def tuple_return_nested(a):
    return (a, (a + 1, [a + 2, {"k": a + 3}]))


@case(t(4))
def dict_update_and_keys(a):
    d = {"x": a}
    d.update({"y": a * 2}, z=a * 3)
    return [d[k] for k in sorted(d.keys())]


@case(t(4))
def list_sort_reverse(a):
    vals = [3, 1, 2]
    vals.sort()
    vals.reverse()
    return a * vals[0] + vals[-1]


@case(t(4))
def string_join_split(a):
    words = ["a", "b", "c"]
    joined = "-".join(words)
    return a * len(joined)


@case(t(4))
def conditional_expression_chain(a):
    mode = "double"
    scale = 2 if mode == "double" else 3 if mode == "triple" else 1
    return a * scale


@case(t(4))
def global_function_table(a):
    table = {"relu": torch.relu, "tanh": torch.tanh}
    return table["tanh"](table["relu"](a))


@case(t(4))
def default_mutable_kwargs(a, opts=None):
    opts = opts or {"scale": 2}
    return a * opts["scale"]


@case(t(4))
def walrus_operator(a):
    if (n := 3) > 2:
        return a * n
    return a


@case(t(4))
def unpack_dict_items_in_loop(a):
    total = a
    for _name, value in {"p": 1.0, "q": 2.0}.items():
        total = total + value
    return total


@case(t(4))
def int_float_conversions(a):
    return a * float(3) + int("4") + bool(1)


@case(t(4))
def divmod_pow_builtins(a):
    q, r = divmod(17, 5)
    return a * q + r + pow(2, 3)


@case(t(4))
def slice_object(a):
    s = slice(1, 3)
    return a[s]


@case(t(4))
def reversed_range(a):
    for i in reversed(range(3)):
        a = a - i
    return a


@case(t(4))
def zip_three(a):
    out = a
    for x, y, z in zip([1, 2], [3, 4], [5, 6], strict=True):
        out = out + x + y * z
    return out


@case(t(4))
def closure_over_tensor_in_inner(a):
    b = a * 2

    def inner(x):
        return x + b

    return inner(a)


@case(t(4))
def lambda_default_arg(a):
    f = lambda x, k=3: x * k  # noqa: E731
    return f(a) + f(a, k=1)


@case(t(4))
def generator_function_inlined(a):
    def gen(x):
        for i in range(3):
            yield x * i

    return list(gen(a))


@case(t(4))
def sum_of_list_of_tensors(a):
    return sum([a, a * 2, a * 3])


@case(t(4))
def min_max_of_constants_from_shapes(a):
    n = max(a.shape[0], 2)
    return a * min(n, 3)


@case(t(2, 3))
def shape_comparisons(a):
    if a.shape == (2, 3) and a.size() == torch.Size([2, 3]):
        return a + 1
    return a


@case(t(2, 3))
def shape_as_view_args(a):
    return a.view(*a.shape[::-1]), a.reshape(a.shape[0], a.shape[1], 1)


@case(t(4))
def isinstance_tuple_types(a):
    items = (1, 2.0, "s")
    n = sum(1 for v in items if isinstance(v, (int, float)))
    return a * n


@case(t(4))
def nested_function_calls_with_kwargs(a):
    return _helper(x=a, k=2) + _helper(a, k=3)


@case(t(4))
def call_method_via_class(a):
    return torch.Tensor.add(a, 1) + torch.Tensor.mul(a, 2)


@case(t(4))
def tensor_method_via_getattr_string(a):
    method = "sin"
    return getattr(a, method)() + torch.cos(a)


@case(t(4))
def none_default_torch_args(a):
    return torch.sum(a, dim=None), a.mean(dim=None)


class _HasParam(nn.Module):
    def __init__(self):
        super().__init__()
        self.w = nn.Parameter(torch.ones(4))

    def forward(self, x):
        if isinstance(self.w, nn.Parameter) and not isinstance(x, nn.Parameter):
            return x * self.w
        return x


_has_param = _HasParam()


@case(t(4))
def isinstance_parameter(a):
    return _has_param(a)
