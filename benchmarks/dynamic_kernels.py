"""inductor-lite kernels over symbolic sizes vs the same kernels compiled for one size, with
torch.compile(backend="inductor", dynamic=True) beside them, on CPU.

The symbolic graph is captured once (at a small size, as a dynamic front end hands it over:
SymInt placeholders, symbolic fakes) and compiled once; every size below runs that one
compile.  The static graph is compiled anew for each size.  torch's inductor compiles each
case once with dynamic=True.  Prints time per call and the ratios symbolic / static (the
price of not knowing the size; target <= 1.1x on large sizes) and symbolic / inductor-dynamic.

    python benchmarks/dynamic_kernels.py [--quick]
"""

from __future__ import annotations

import importlib
import sys

from tools.caches import fresh_caches

_CACHE_ROOT = fresh_caches()

import torch  # noqa: E402
import torch.fx  # noqa: E402
from inductor_cpu import CASES, make_inputs  # noqa: E402
from tools.results import record  # noqa: E402
from tools.timing import time_per_call  # noqa: E402

from framejit.inductor_lite import compile_fx, cpp_builder  # noqa: E402

lite_stats = importlib.import_module("framejit.inductor_lite.compile_fx").stats

SIZES = [(4096, 256), (4099, 1021), (16384, 1024)]  # a power of two, primes, large
CAPTURE_SIZE = (37, 19)


class SymbolicGraph:
    """fn captured with symbolic sizes (torch.compile's front end as the recorder, the shape
    graphcapture hands over too), and the graph's arguments for other tensors."""

    def __init__(self, fn, args):
        recorded = {}

        def backend(gm, example_inputs):
            recorded["gm"], recorded["inputs"] = gm, example_inputs
            return gm.forward

        torch._dynamo.reset()
        torch.compile(fn, dynamic=True, backend=backend, fullgraph=True)(*args)
        self.gm = recorded["gm"]
        self.placeholders = self.gm.graph.find_nodes(op="placeholder")
        for node in self.placeholders:
            node.meta["val"] = node.meta["example_value"]
        self.template = list(recorded["inputs"])
        self.user = [next(i for i, v in enumerate(self.template) if v is a) for a in args]
        self.example_inputs = self.args_for(args)

    def args_for(self, tensors):
        values = list(self.template)
        for position, tensor in zip(self.user, tensors, strict=True):
            values[position] = tensor
        sources = {}
        for node, value in zip(self.placeholders, values, strict=True):
            meta = node.meta["val"]
            if isinstance(meta, torch.Tensor):
                for dim, size in enumerate(meta.shape):
                    if isinstance(size, torch.SymInt):
                        sources.setdefault(str(size.node.expr), value.shape[dim])
        for position, node in enumerate(self.placeholders):
            meta = node.meta["val"]
            if isinstance(meta, torch.SymInt):
                expr = meta.node.expr
                values[position] = int(expr) if expr.is_number else sources[str(expr)]
        return values


def main() -> None:
    quick = "--quick" in sys.argv
    budget = 0.15 if quick else 0.6
    sizes = SIZES[:2] if quick else SIZES
    torch.manual_seed(0)
    header = (
        f"{'case':<16}{'size':>14}{'static ms':>11}{'symbolic':>10}{'ind.dyn':>10}"
        f"{'sym/static':>12}{'sym/ind.dyn':>13}"
    )
    print(f"torch {torch.__version__}, threads {torch.get_num_threads()}, caches in {_CACHE_ROOT}")
    print(header)
    print("-" * len(header))
    worst = 0.0
    for fn in CASES:
        graph = SymbolicGraph(fn, make_inputs(fn, CAPTURE_SIZE))
        builds = cpp_builder.stats.compiles + cpp_builder.stats.disk_hits
        symbolic = compile_fx(graph.gm, graph.example_inputs)
        symbolic_builds = cpp_builder.stats.compiles + cpp_builder.stats.disk_hits - builds
        torch._dynamo.reset()
        inductor = torch.compile(fn, backend="inductor", dynamic=True)
        eager_runs = lite_stats.eager_runs
        for size in sizes:
            args = make_inputs(fn, size)
            expected = fn(*args)
            static = compile_fx(torch.fx.symbolic_trace(fn), args)
            graph_args = graph.args_for(args)
            tol = {"atol": 1e-3, "rtol": 1e-3}
            torch.testing.assert_close(static(*args), expected, **tol)
            torch.testing.assert_close(symbolic(*graph_args)[0], expected, **tol)
            torch.testing.assert_close(inductor(*args), expected, **tol)

            def run_symbolic(*_, graph_args=graph_args, symbolic=symbolic):
                return symbolic(*graph_args)

            static_t, symbolic_t, inductor_t = time_per_call(
                [static, run_symbolic, inductor], args, budget, rounds=15
            )
            ratio = symbolic_t / static_t
            if size[0] * size[1] >= 4096 * 1024:
                worst = max(worst, ratio)
            print(
                f"{fn.__name__:<16}{tuple(size)!s:>14}{static_t * 1e3:>11.3f}"
                f"{symbolic_t * 1e3:>10.3f}{inductor_t * 1e3:>10.3f}"
                f"{ratio:>11.2f}x{symbolic_t / inductor_t:>12.2f}x"
            )
            row = f"{fn.__name__} {tuple(size)}"
            record(row, "symbolic vs inductor dynamic", symbolic_t * 1e3, inductor_t * 1e3, "ms")
            record(row, "symbolic vs static (lite)", symbolic_t * 1e3, static_t * 1e3, "ms")
        assert lite_stats.eager_runs == eager_runs, "a symbolic call ran eagerly"
        print(f"{'':<16}symbolic kernels built {symbolic_builds}x for all {len(sizes)} sizes")
    print(f"worst symbolic/static on large sizes (>= 4M elements): {worst:.2f}x (target <= 1.1x)")
    print("sym/static: the symbolic kernel's time / the kernel compiled for that size;")
    print("sym/ind.dyn: against torch.compile(dynamic=True). Lower is better.")


if __name__ == "__main__":
    main()
