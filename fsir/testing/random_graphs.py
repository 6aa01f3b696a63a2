"""Random *valid* graph-dialect functions, as MLIR text, for property tests and benchmarks.

    random_graph(seed, max_ops=12, dynamic=0.2) -> str        seeded, for benchmarks / CLI
    random_attention_graph(seed) -> str                        exporter-style attention / norms
    graphs(**options)                                          a hypothesis strategy of str
    random_inputs(func, rng) -> list[np.ndarray]               inputs that keep them valid

A graph mixes chains of every `ELEMENTWISE` op (read from the table, so new ops are
picked up), compare/select, convert, broadcast, reshape, transpose, slice, concat,
reduce, gather, dot, iota and constants, and returns several outputs; unreturned values
are left in as dead code for DCE. Sizes default small (dims 1..70 incl. sizes that do
not divide 32 and size-1 dims, at most 4096 elements per tensor) because the pipeline
tests run the graphs through PTX on a simulator.

The generator tracks every value's *runtime* shape next to its *declared* type, where
some dims may be `?` (option `dynamic`: the chance that an input dim, or a result dim
whose size is known, is declared `?`; shape inference should resolve the latter).
A dynamic input records its runtime shape as the argument attribute
`fsir.runtime_shape = array<i64: ...>`, which `random_inputs` honours.

Values stay in domain without depending on the inputs: the operand of an op that gives
NaN on negative numbers (found by probing the op's numpy reference, e.g. log, sqrt,
rsqrt, pow) is rewritten as abs(x) + 0.5; gather ids are inputs used only as ids, and
`random_inputs` draws them in range.
"""

from __future__ import annotations

import random
from collections.abc import Sequence

from fsir.runtime.inputs import RUNTIME_SHAPE_ATTR, random_inputs  # noqa: F401 - re-exported for tests
from fsir.testing.exporter_graphs import ExporterBuilder
from fsir.testing.graph_builder import DrawChooser, GraphBuilder, GraphOptions, RandomChooser

# ---------------------------------------------------------------------------
# Entry points
# ---------------------------------------------------------------------------


def random_graph(seed: int, **size_options) -> str:
    """A random valid graph function (MLIR text), the same for the same seed and options."""
    return GraphBuilder(RandomChooser(random.Random(seed)), GraphOptions(**size_options)).build()


def random_attention_graph(seed: int, name: str = "attention_graph") -> str:
    """A random exporter-style attention / normalisation graph (`ExporterBuilder`), the
    same for the same seed."""
    return ExporterBuilder(RandomChooser(random.Random(seed)), GraphOptions(name=name)).build()


def graphs(**size_options):
    """A hypothesis strategy of random valid graph functions (MLIR text)."""
    from hypothesis import strategies as st

    options = GraphOptions(**size_options)

    @st.composite
    def _graphs(draw) -> str:
        return GraphBuilder(DrawChooser(draw), options).build()

    return _graphs()


def main(argv: Sequence[str] | None = None) -> None:
    """`python -m fsir.testing.random_graphs --seed 3 [--max-ops 12 ...]`: print one graph."""
    import argparse

    p = argparse.ArgumentParser(prog="python -m fsir.testing.random_graphs", description=main.__doc__)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--count", type=int, default=1, help="graphs with seeds seed..seed+count-1, named @g<seed>")
    for field in ("max_ops", "max_dim", "max_rank", "max_elements"):
        p.add_argument("--" + field.replace("_", "-"), type=int, default=getattr(GraphOptions, field))
    p.add_argument("--dynamic", type=float, default=0.0, help="chance of a `?` dim (default 0: static)")
    p.add_argument("--attention", action="store_true",
                   help="exporter-style attention/normalisation graphs (random_attention_graph; sizes ignored)")
    args = p.parse_args(argv)
    if args.attention:
        for seed in range(args.seed, args.seed + args.count):
            print(random_attention_graph(seed, name="attention_graph" if args.count == 1 else f"g{seed}"))
        return
    sizes = dict(max_ops=args.max_ops, max_dim=args.max_dim, max_rank=args.max_rank,
                 max_elements=args.max_elements, dynamic=args.dynamic)
    for seed in range(args.seed, args.seed + args.count):
        name = "random_graph" if args.count == 1 else f"g{seed}"
        print(random_graph(seed, name=name, **sizes))


__all__ = ["GraphOptions", "graphs", "random_attention_graph", "random_graph", "random_inputs"]

if __name__ == "__main__":
    main()
