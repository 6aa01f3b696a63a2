"""The latency-evaluator serving the explorer's choice among plans (fsir/codegen/
plan_latency.py): a plan's time is what stitch-codegen then makes of it, common kernels
are never generated, the function is left as it was, and rejections cost infinity."""

from __future__ import annotations

import math

import pytest
from xdsl.context import Context

from fsir.codegen.plan_latency import CodegenLatency
from fsir.codegen.stitch_codegen import StitchCodegenPass
from fsir.dialects.schedule import KernelOp
from fsir.fusion.explorer import ExplorerOptions, apply_plan, explore
from fsir.gpuspec import gpu_spec
from fsir.parse import parse_module
from fsir.runtime.reference import find_function
from fsir.testing.paths import EXAMPLES


def _explore(name: str, **options):
    path = EXAMPLES / name
    module = parse_module(path.read_text(), str(path))
    f = find_function(module)
    return module, f, explore(f.body.block, ExplorerOptions(mode="stitch", **options))


def _uses(f) -> list[int]:
    values = [*f.body.block.args, *(r for op in f.body.block.ops for r in op.results)]
    return [len(list(v.uses)) for v in values]


def _kernels(ex) -> list[list]:
    g = ex.graph
    return [[g.ops[i] for i in sorted(k.members)] for k in ex.plan.kernels if k.kernels]


@pytest.mark.parametrize("name, gpu", [("layernorm.mlir", "H100"), ("softmax.mlir", "T4"),
                                       ("gelu.mlir", "A100")])
def test_plan_time_is_the_emitted_kernels_estimates_plus_launches(name, gpu):
    module, f, ex = _explore(name, gpu=gpu)
    latency = CodegenLatency(gpu)
    planned = latency(_kernels(ex))
    apply_plan(f.body.block, ex)
    StitchCodegenPass(gpu=gpu).apply(Context(), module)
    emitted = [op for op in module.walk() if isinstance(op, KernelOp)]
    assert len(emitted) == len(_kernels(ex))
    expected = sum(k.cost.data["estimate_us"].value.data * 1e-6 + gpu_spec(gpu).launch_cost  # type: ignore[union-attr]
                   for k in emitted)
    assert math.isfinite(planned) and planned > len(emitted) * gpu_spec(gpu).launch_cost
    assert planned == pytest.approx(expected, rel=1e-12)


def test_only_kernels_the_plans_do_not_share_are_generated_and_the_function_is_untouched():
    path = EXAMPLES / "bert_layer.mlir"
    module = parse_module(path.read_text(), str(path))
    f = find_function(module)
    text, uses = str(module), _uses(f)
    # (without the merged-dots variant, whose choice costs both whole plans)
    ex = explore(f.body.block, ExplorerOptions(mode="stitch", horizontal=False))
    assert ex.comparisons[0].evaluator == "codegen" and len(ex.beams) > 1
    sets = [{k.members for k in p.kernels if k.kernels} for p in ex.beams]
    common = set.intersection(*(sets[i] for i in ex.comparisons[0].plans))
    differing = set().union(*(sets[i] for i in ex.comparisons[0].plans)) - common
    assert ex.comparisons[0].common == len(common) > 0
    assert ex.comparisons[0].differing == len(differing) > 0
    generated = {frozenset(ex.graph.index[op] for op in key) for key in ex.latency.times}
    assert differing <= generated
    assert not generated & common  # no kernel every plan shares was generated
    assert str(module) == text and _uses(f) == uses  # scratch copies: the function did not change
    # the plan chosen has the least estimate over the kernels where the plans differ
    c = ex.comparisons[-1]
    assert ex.plan is ex.beams[c.best] and c.times[c.plans.index(c.best)] == min(c.times)


def test_over_budget_the_simplified_evaluator_decides():
    _, _, ex = _explore("bert_layer.mlir", evaluator_budget=0)
    _, _, simple = _explore("bert_layer.mlir", evaluator="simple")
    assert all(c.evaluator == "simple" and "over budget" in c.note for c in ex.comparisons)
    assert ex.latency.generated == 0
    assert [k.members for k in ex.plan.kernels] == [k.members for k in simple.plan.kernels]


def test_a_kernel_codegen_rejects_costs_infinity():
    module = parse_module("""
    func.func @f(%x: tensor<8xf64>) -> tensor<8xf64> {
      %e = graph.tanh %x : tensor<8xf64>
      func.return %e : tensor<8xf64>
    }""")
    op = next(o for o in find_function(module).body.block.ops if o.name == "graph.tanh")
    latency = CodegenLatency()
    assert latency([[op]]) == math.inf
    assert "f64" in next(iter(latency.rejected.values()))
    assert latency.pending([[op]]) == 0  # cached: asked again, not generated again
    latency([[op]])
    assert latency.generated == 1
