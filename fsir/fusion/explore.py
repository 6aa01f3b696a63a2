"""`fusion-explore`: decide which graph ops share a kernel (graph → stitch).

Only `mode=none` is implemented here (the no-fusion baseline: one `stitch.fusion` per
op); the FusionStitching explorer (§5, `fsir/fusion/explorer.py`) runs the other modes.
Conventions every mode keeps (the builders in `fsir.dialects.stitch`):

- free reshapes (`graph.reshape`: every fsir buffer is contiguous row-major, so a
  reshape is a new view of the same bytes) stay outside fusions and cost no kernel;
- constants are cloned into each fusion that uses them (splats become immediates,
  others buffers), so a constant is never a kernel of its own unless the function
  returns it.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass

from fsir.codegen.options import FusionMode, parse_choice
from fsir.dialects import graph
from fsir.dialects.stitch import fuse_leftover_constants, is_free, make_fusion
from fsir.fusion.explorer import ExplorerOptions, explore_function, report_stream

MODES = tuple(str(m) for m in FusionMode)


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


def _int(v: int):
    from xdsl.dialects.builtin import IntegerAttr, i64

    return IntegerAttr(v, i64)


@dataclass(frozen=True)
class FusionExplorePass(ExplorerOptions, ModulePass):
    """Group graph ops into stitch.fusion regions (mode=stitch by default, xla, none).

    mode=stitch|xla: the FusionStitching explorer (fsir/fusion/explorer.py) with the
    code generator's rules, or with XLA's rules on top; stitch is the default, as in
    fs-run and fsir.compile. The other options are the explorer's
    (top-k, beam, group-size, remote, gpu, max-ops; report=true prints kernels, bytes
    and scores per function to stderr). evaluator=codegen|simple: what picks among the
    plans, stitch-codegen's latency-evaluator (the kernels where the plans differ are
    generated for the chosen gpu; more than evaluator-budget of them and the simplified
    one decides) or the delta-evaluator's simplified one. horizontal=false: do not also
    plan the function with dots that share their activation merged into one GEMM.
    mode=none: no fusion, one kernel per op (the baseline every comparison starts from).
    """

    name = "fusion-explore"

    # The explorer's options are the pass's fields (inherited from ExplorerOptions).
    report: bool = False

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        if parse_choice("fusion", self.mode) is not FusionMode.NONE:
            for f in list(op.walk()):
                if isinstance(f, func.FuncOp) and not f.is_declaration:
                    explore_function(f, self, report_stream() if self.report else None)
            return
        for f in op.walk():
            if isinstance(f, func.FuncOp) and not f.is_declaration:
                fuse_none(f)
