"""Kernels the explorer's latency-evaluator built while timing plans are reused by
stitch-codegen for the same module (`fsir/codegen/kernel_plans.py`): the schedule IR is
the same as without them, names included, and stitch-codegen builds fewer kernels."""

from __future__ import annotations

import pytest

from fsir.codegen import kernel_plans, stitch_codegen
from fsir.codegen.kernel_plans import KernelPlans, Plan
from fsir.pipeline import PipelineOptions, load, lower
from fsir.testing.paths import EXAMPLES


def _schedule_ir(path, monkeypatch, reuse: bool) -> tuple[str, int]:
    """The schedule IR of `path` and how many kernels stitch-codegen built."""
    built = 0
    build = stitch_codegen.FusionCodegen.build

    def counting(self):
        nonlocal built
        if self.name != "plan_kernel":  # the explorer's scratch kernels are not counted
            built += 1
        return build(self)

    monkeypatch.setattr(stitch_codegen.FusionCodegen, "build", counting)
    if not reuse:
        monkeypatch.setattr(stitch_codegen, "plans_of", lambda node: KernelPlans())
    module = load(path)
    scheduled = lower(module, PipelineOptions(fusion="stitch"), until="stitch-codegen")
    monkeypatch.undo()
    return str(scheduled), built


@pytest.mark.parametrize("name", ["onnx/bert_layer.onnx", "layernorm.mlir"])
def test_explored_kernels_are_reused_unchanged(name, monkeypatch):
    with_plans, built_with = _schedule_ir(EXAMPLES / name, monkeypatch, reuse=True)
    without, built_without = _schedule_ir(EXAMPLES / name, monkeypatch, reuse=False)
    assert with_plans == without
    assert built_with < built_without


def test_plans_are_bounded_least_recently_used_first():
    plans = KernelPlans(capacity=2)
    kernels = [Plan(object(), []) for _ in range(3)]  # type: ignore[arg-type]
    plans.put(("a",), kernels[0])
    plans.put(("b",), kernels[1])
    assert plans.get(("a",)) is kernels[0]  # now the most recently used
    plans.put(("c",), kernels[2])
    assert plans.get(("b",)) is None and plans.get(("a",)) is kernels[0] and len(plans) == 2


def test_plans_belong_to_their_module():
    a, b = load(EXAMPLES / "layernorm.mlir"), load(EXAMPLES / "layernorm.mlir")
    assert kernel_plans.plans_of(a) is kernel_plans.plans_of(next(iter(a.walk())))
    assert kernel_plans.plans_of(a) is not kernel_plans.plans_of(b)


def _kernels(path) -> list:
    from fsir.dialects.schedule import KernelOp

    scheduled = lower(load(path), PipelineOptions(fusion="stitch"), until="stitch-codegen")
    return [op for op in scheduled.walk() if isinstance(op, KernelOp)]


def test_kernel_structure_is_the_kernel_up_to_names():
    from fsir.codegen.kernel_plans import kernel_names, kernel_structure

    first, *rest = _kernels(EXAMPLES / "layernorm.mlir")
    copy = first.clone()
    assert kernel_structure(copy) == kernel_structure(first) and kernel_names(copy) == kernel_names(first)
    copy.block.args[0].name_hint = "renamed"
    assert kernel_structure(copy) == kernel_structure(first) and kernel_names(copy) != kernel_names(first)
    assert all(kernel_structure(k) != kernel_structure(first) for k in rest)


def test_trial_lowering_is_taken_once_and_only_while_the_kernel_is_unchanged():
    from fsir import stats
    from fsir.codegen import mappings

    k = _kernels(EXAMPLES / "layernorm.mlir")[0]
    mappings.forget_trials()
    with stats.collecting() as c:
        assert mappings.trial_lower(k) is None
        tried = mappings._TRIALS[k][1]
        assert mappings.lower_kernel(k) is tried  # the trial's, not lowered again
        assert mappings.lower_kernel(k) is not tried  # taken once
        assert mappings.trial_lower(k) is None
        stale = mappings._TRIALS[k][1]
        k.block.args[0].name_hint = "renamed"  # names reach the gpu.func: the trial is stale
        assert mappings.lower_kernel(k) is not stale
    assert c.result().kernels_lowered == 4
