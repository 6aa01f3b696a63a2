"""`fusion-explore`: decide which graph ops share a kernel (graph → stitch).

Only `mode=none` is implemented here (the no-fusion baseline: one `stitch.fusion` per
op); the FusionStitching explorer (§5) replaces the other modes. Conventions every mode
keeps:

- free reshapes (`graph.reshape`: every fsir buffer is contiguous row-major, so a
  reshape is a new view of the same bytes) stay outside fusions and cost no kernel;
- constants are cloned into each fusion that uses them (splats become immediates,
  others buffers), so a constant is never a kernel of its own unless the function
  returns it.
"""

from __future__ import annotations

import dataclasses

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Block, Operation, Region, SSAValue
from xdsl.passes import ModulePass

from fsir.dialects import graph
from fsir.dialects.stitch import FusionOp, YieldOp
from fsir.errors import UserError

MODES = ("none", "xla", "stitch")


def is_free(op: Operation) -> bool:
    """Ops that never become kernels: reshapes are views of contiguous buffers."""
    return isinstance(op, graph.ReshapeOp)


def make_fusion(ops: list[Operation], attributes: dict | None = None) -> FusionOp:
    """Move `ops` (in order, all in one block) into a new stitch.fusion inserted before
    the first of them. Operands defined outside become fusion operands (constants used
    inside are cloned in instead); values used outside become results."""
    inside = set(ops)
    inputs: list[SSAValue] = []
    clones: list[Operation] = []
    for op in ops:
        for v in op.operands:
            owner = v.owner
            if owner in inside or v in inputs:
                continue
            if isinstance(owner, graph.ConstantOp) and owner not in clones:
                clones.append(owner)
            elif not isinstance(owner, graph.ConstantOp):
                inputs.append(v)
    outputs = [r for op in ops for r in op.results if any(u.operation not in inside for u in r.uses)]
    block = Block(arg_types=[v.type for v in inputs])
    mapping: dict[SSAValue, SSAValue] = dict(zip(inputs, block.args))
    for v, arg in zip(inputs, block.args):
        arg.name_hint = v.name_hint
    for c in clones:
        copy = c.clone()
        block.add_op(copy)
        mapping[c.results[0]] = copy.results[0]
    first = ops[0]
    moved: dict[SSAValue, SSAValue] = {}
    for op in ops:
        copy = op.clone(value_mapper=mapping)
        block.add_op(copy)
        for old, new in zip(op.results, copy.results):
            mapping[old] = new
            moved[old] = new
    block.add_op(YieldOp([mapping[v] for v in outputs]))
    fusion = FusionOp(inputs, [v.type for v in outputs], Region(block), attributes)
    fusion.location = first.location
    first.parent_block().insert_op_before(fusion, first)
    for old, new in zip(outputs, fusion.results):
        new.name_hint = old.name_hint
        old.replace_uses_with_if(new, lambda use: use.operation not in inside)
    for op in reversed(ops):
        op.detach()
        op.erase(safe_erase=False)
    return fusion


def erase_dead_graph_ops(f: func.FuncOp) -> None:
    """Graph ops whose results nobody uses compute nothing: no kernel for them."""
    for op in reversed(list(f.body.block.ops)):
        if op.name.startswith("graph.") and all(not r.uses for r in op.results):
            op.detach()
            op.erase()


def fuse_none(f: func.FuncOp) -> None:
    """One fusion per op (free reshapes and constants excepted)."""
    erase_dead_graph_ops(f)
    index = 0
    for op in list(f.body.block.ops):
        if op.name.startswith("graph.") and not is_free(op) and not isinstance(op, graph.ConstantOp):
            make_fusion([op], {"pattern": _int(index)})
            index += 1
    fuse_leftover_constants(f)


def fuse_leftover_constants(f: func.FuncOp) -> None:
    """Constants are cloned into the fusions that use them; one still used outside every
    fusion (the function returns it, or a free reshape of it) becomes a kernel of its
    own, and dead ones disappear."""
    for op in list(f.body.block.ops):
        if isinstance(op, graph.ConstantOp):
            if op.results[0].uses:
                make_fusion([op])
            else:
                op.detach()
                op.erase()


def _int(v: int):
    from xdsl.dialects.builtin import IntegerAttr, i64

    return IntegerAttr(v, i64)


@dataclass(frozen=True)
class FusionExplorePass(ModulePass):
    """Group graph ops into stitch.fusion regions (mode=stitch by default, xla, none).

    mode=stitch|xla: the FusionStitching explorer (fsir/fusion/explorer.py) with the
    code generator's rules, or with XLA's rules on top; stitch is the default, as in
    fs-run and fsir.compile. The other options are the explorer's
    (top-k, beam, group-size, remote, gpu, max-ops; report=true prints kernels, bytes
    and scores per function to stderr). evaluator=codegen|simple: what picks among the
    plans, stitch-codegen's latency-evaluator (the kernels where the plans differ are
    generated for the chosen gpu; more than evaluator-budget of them and the simplified
    one decides) or the delta-evaluator's simplified one.
    mode=none: no fusion, one kernel per op (the baseline every comparison starts from).
    """

    name = "fusion-explore"

    mode: str = "stitch"
    top_k: int = 3
    beam: int = 3
    group_size: int = 2
    remote: bool = True
    gpu: str = "H100"
    max_ops: int = 128
    evaluator: str = "codegen"
    evaluator_budget: int = 64
    report: bool = False

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        if self.mode not in MODES:
            raise UserError(f"fusion-explore: unknown mode '{self.mode}' (expected one of: {', '.join(MODES)})")
        if self.mode != "none":
            from fsir.fusion.explorer import ExplorerOptions, explore_function, report_stream

            # The pass's options are the explorer's, by name (plus `report`).
            options = ExplorerOptions(**{f.name: getattr(self, f.name) for f in dataclasses.fields(ExplorerOptions)})
            for f in list(op.walk()):
                if isinstance(f, func.FuncOp) and not f.is_declaration:
                    explore_function(f, options, report_stream() if self.report else None)
            return
        for f in op.walk():
            if isinstance(f, func.FuncOp) and not f.is_declaration:
                fuse_none(f)
