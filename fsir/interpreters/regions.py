"""numpy semantics of the ops that hold regions: a fusion runs its body, a kernel its
groups in order. Each implementation receives the interpreter's `run_block` (a block)
and `evaluate_op` (one op)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from xdsl.ir import Block, Operation, SSAValue

from fsir.dialects.schedule import GroupOp, KernelOp, YieldOp
from fsir.dialects.stitch import FusionOp
from fsir.interpreters.table import ImplTable

BlockRunner = Callable[[Block, Sequence[np.ndarray]], list[np.ndarray]]
OpRunner = Callable[[Operation, Sequence[np.ndarray]], list[np.ndarray]]

REGIONS = ImplTable("regions")


@REGIONS.impl(FusionOp)
def run_fusion(op: FusionOp, run_block: BlockRunner, evaluate_op: OpRunner, args: Sequence[np.ndarray]):
    return run_block(op.block, args)


@REGIONS.impl(KernelOp)
def run_kernel(op: KernelOp, run_block: BlockRunner, evaluate_op: OpRunner, args: Sequence[np.ndarray]):
    """The groups in order (group regions see the kernel's values, so one environment
    serves them all); each group's ops one by one."""
    env: dict[SSAValue, Any] = dict(zip(op.block.args, args))
    for group in op.block.ops:
        if isinstance(group, YieldOp):
            return [env[v] for v in group.operands]
        if not isinstance(group, GroupOp):
            continue
        for inner in group.block.ops:
            if isinstance(inner, YieldOp):
                env.update(zip(group.results, (env[v] for v in inner.operands)))
            else:
                env.update(zip(inner.results, evaluate_op(inner, [env[v] for v in inner.operands])))
    return []
