"""Properties of the symbolic-dims and interval analyses on random graphs (the same
generator as the graph-pass property tests): every size class and product the
union-find derives holds for the run-time shapes, every integer value lies in its
derived range, and both passes leave valid IR that means the same."""

from __future__ import annotations

import numpy as np
from hypothesis import HealthCheck, example, given, settings
from xdsl.dialects import func
from xdsl.ir import SSAValue

from fsir.dialects import graph
from fsir.ir import verify
from fsir.parse import make_context, parse_module
from fsir.runtime.reference import evaluate_op
from fsir.testing.random_graphs import graphs, random_inputs
from fsir.transforms.intervals import Intervals, ProveGatherBoundsPass
from fsir.transforms.symbolic_dims import Mono, SymbolicDimsPass, SymbolicShapes

PROPERTY = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def every_value(f: func.FuncOp, inputs) -> dict[SSAValue, np.ndarray]:
    env: dict[SSAValue, np.ndarray] = dict(zip(f.args, inputs))
    for op in f.body.block.ops:
        if isinstance(op, graph.GraphOp):
            for r, v in zip(op.results, evaluate_op(op, [env[o] for o in op.operands])):
                env[r] = np.asarray(v)
    return env


def size_of(m: Mono, symbols: dict[str, int]) -> int | None:
    out = m.coef
    for s in m.syms:
        if s not in symbols:
            return None
        out *= symbols[s]
    return out


@PROPERTY
@given(graphs(dynamic=0.5))
def test_symbol_classes_hold_at_run_time(text):
    module = parse_module(text, "random.mlir")
    f = module.ops.first
    assert isinstance(f, func.FuncOp)
    env = every_value(f, random_inputs(module, np.random.default_rng(0)))
    shapes = SymbolicShapes(f)
    symbols: dict[str, int] = {}
    # bind each single symbol to the first size seen, then every dim must agree
    for v, x in env.items():
        for m, n in zip(shapes.of(v), x.shape):
            if m.coef == 1 and len(m.syms) == 1:
                assert symbols.setdefault(m.syms[0], n) == n, (str(v), m, n, symbols[m.syms[0]])
    for v, x in env.items():
        for m, n in zip(shapes.of(v), x.shape):
            expected = size_of(m, symbols)
            assert expected is None or expected == n, (m, n)


@PROPERTY
@given(graphs(dynamic=0.25))
def test_integer_ranges_hold_at_run_time(text):
    module = parse_module(text, "random.mlir")
    f = module.ops.first
    assert isinstance(f, func.FuncOp)
    env = every_value(f, random_inputs(module, np.random.default_rng(1)))
    intervals = Intervals(f)
    for v, x in env.items():
        r = intervals.of(v)
        if r is None or x.size == 0 or x.dtype.kind not in "biu":
            continue
        assert r.lo <= int(x.min()) and int(x.max()) <= r.hi, (str(v.owner), r, x.min(), x.max())


# Found by hypothesis: %a6 learns it equals %a1 (the div) after %v12's size a6 + 2 was
# first named, which once shifted the count that named the sums.
SIZES_LEARNT_LATE = """func.func @random_graph(%a1: tensor<?xf32>, %a2: tensor<1xf32>, %a6: tensor<?xf32>) -> tensor<?xf32> {
  %v4 = graph.concat %a1, %a2, %a2 dim 0 : (tensor<?xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<?xf32>
  %v7 = graph.div %a1, %a6 : tensor<?xf32>
  %c11 = graph.constant dense<0.0> : tensor<2xf32>
  %v12 = graph.concat %a6, %c11 dim 0 : (tensor<?xf32>, tensor<2xf32>) -> tensor<?xf32>
  func.return %v12 : tensor<?xf32>
}
"""


@PROPERTY
@given(graphs(dynamic=0.5))
@example(SIZES_LEARNT_LATE)
def test_passes_leave_valid_ir_and_round_trip(text):
    ctx = make_context()
    module = parse_module(text, "random.mlir", ctx)
    for p in (SymbolicDimsPass(), ProveGatherBoundsPass()):
        p.apply(ctx, module)
    verify(module)
    printed = str(module)
    again = parse_module(printed, "printed.mlir", ctx)
    SymbolicDimsPass().apply(ctx, again)  # idempotent: the names it wrote read back as the same classes
    assert str(again) == printed
