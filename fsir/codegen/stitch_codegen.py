"""`stitch-codegen`: decide how each fusion runs (stitch → schedule, FusionStitching §4).

Each `stitch.fusion` becomes one `schedule.kernel` by the mapping that claims its ops
(`fsir.codegen.mappings`: `gemm` for a `graph.dot`, `row` for reductions, `loop` for the
rest). The mapping enumerates its configurations, lowers each to gpu IR and keeps the
one the latency-evaluator (`fsir/codegen/latency.py`, L = N_wave × L_warp) scores
fastest, with its estimate in the kernel's `cost`. This module is the pass: it turns
the ops left outside every fusion into fusions of their own, and asks the mapping of
each fusion for its kernel.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp, StringAttr
from xdsl.ir import Operation, SSAValue
from xdsl.passes import ModulePass

from fsir.codegen.kernel_plans import plans_of
from fsir.codegen.mappings import forget_trials, mapping_for, trial_lower
from fsir.codegen.mappings.base import FusionContext, fusion_scope
from fsir.codegen.options import DEFAULT, PipelineOptions
from fsir.dialects import graph
from fsir.dialects.schedule import KernelOp
from fsir.dialects.stitch import FusionOp, fuse_leftover_constants, is_free, make_fusion
from fsir.dialects.stitch import YieldOp as StitchYield
from fsir.errors import UserError
from fsir.stats import count as tally


class FusionCodegen(FusionContext):
    """Builds the schedule.kernel of one fusion (with `PipelineOptions`, `StitchCodegenPass`'s)."""

    def build(self) -> KernelOp:
        with fusion_scope(self):  # (the tuner's `CONFIG_HOOK` sees which fusion it is)
            return mapping_for(self.ops).build(self)


def codegen_function(f: func.FuncOp, options: PipelineOptions = DEFAULT,
                     planned: dict[tuple, KernelOp] | None = None) -> None:
    """Every fusion of `f` (and every op left outside one) becomes a schedule.kernel.
    `planned` maps fusion signatures to kernels already chosen (by the pass, for the
    whole module): a fusion equal to an earlier one up to names (a model's repeated
    layers, BERT's Q, K and V projections) gets a copy of its kernel, unplanned."""
    planned = {} if planned is None else planned
    # Ops left outside every fusion become kernels of their own (free reshapes excepted);
    # ops and fusions whose results nobody uses need no kernel.
    for op in reversed(list(f.body.block.ops)):
        if (op.name.startswith("graph.") or isinstance(op, FusionOp)) and all(not r.uses for r in op.results):
            op.detach()
            op.erase()
    # Constants are cloned into the kernels that use them (as immediates or constant
    # buffers), not made into copy kernels first.
    for op in list(f.body.block.ops):
        if op.name.startswith("graph.") and not is_free(op) and not isinstance(op, graph.ConstantOp):
            make_fusion([op])
    fuse_leftover_constants(f)
    index = 0
    pending = [op for op in f.body.block.ops if isinstance(op, FusionOp)]
    while pending:
        fusion = pending.pop(0)
        ctx = FusionCodegen(fusion, f"{f.sym_name.data}_k{index}", options)
        key = ctx.signature()
        fresh = key not in planned
        kernel = _kernel_of(ctx, fusion, key, planned)
        if SPLIT_REMARK in fusion.attributes:
            kernel.attributes[SPLIT_REMARK] = fusion.attributes[SPLIT_REMARK]
        for old, new in zip(fusion.results, kernel.results):
            new.name_hint = old.name_hint
        refused = trial_lower(kernel) if fresh and not _DEFERRED.get() else None
        if refused is not None and len([op for op in ctx.ops if not isinstance(op, graph.ConstantOp)]) > 1:
            # the mapping accepted what its lowering refuses (a rule the capability query
            # misses): compile the fusion's ops as kernels of their own rather than refuse
            # the model for fsir's own limits
            del planned[key]
            kernel.drop_all_references()
            kernel.erase()
            pending[:0] = split_fusion(fusion, refused)
            continue
        if refused is not None:
            raise refused
        _replace(fusion, kernel)
        index += 1


_DEFERRED: ContextVar[bool] = ContextVar("fsir_deferred_trials", default=False)


@contextmanager
def trials_deferred() -> Iterator[None]:
    """Within: stitch-codegen does not trial-lower its kernels. The caller lowers them
    later (in worker processes, `fsir.codegen.parallel`) and must redo the compile
    without this where one refuses to lower, since a refusal splits its fusion."""
    token = _DEFERRED.set(True)
    try:
        yield
    finally:
        _DEFERRED.reset(token)


def _kernel_of(ctx: FusionCodegen, fusion: FusionOp, key: tuple, planned: dict[tuple, KernelOp]) -> KernelOp:
    """The kernel of `fusion`: a copy of the one planned for an equal fusion, the one the
    explorer's evaluator built, or a new one."""
    earlier = planned.get(key)
    if earlier is not None:
        return _copy_kernel(earlier, fusion, ctx.name)
    explored = plans_of(fusion).get(ctx.plan_key())
    if explored is not None:  # built by the explorer's latency-evaluator, detached
        kernel = planned[key] = _copy_kernel(explored.kernel, fusion, ctx.name)
        explored.rename(kernel, ctx.values())
        return kernel
    kernel = planned[key] = ctx.build()
    return kernel


def _replace(fusion: FusionOp, kernel: KernelOp) -> None:
    """`kernel` in place of `fusion`."""
    block = fusion.parent_block()
    assert block is not None
    block.insert_op_before(kernel, fusion)
    for old, new in zip(fusion.results, kernel.results):
        old.replace_all_uses_with(new)
    fusion.detach()
    fusion.erase(safe_erase=False)


SPLIT_REMARK = "remark"


def split_fusion(fusion: FusionOp, refused: UserError) -> list[FusionOp]:
    """`fusion`'s ops back in its function, each a fusion of its own (any graph op alone
    can be generated), in its place. Counted (`fusions_split`, which --time-passes shows)
    and remarked on each part (`remark`, kept on its kernel)."""
    block = fusion.parent_block()
    assert block is not None
    mapping: dict[SSAValue, SSAValue] = dict(zip(fusion.block.args, fusion.operands))
    ops: list[Operation] = []
    for op in fusion.block.ops:
        if isinstance(op, StitchYield):
            for old, new in zip(fusion.results, op.operands):
                old.replace_all_uses_with(mapping[new])
            continue
        copy = op.clone(value_mapper=mapping)
        block.insert_op_before(copy, fusion)
        mapping.update(zip(op.results, copy.results))
        ops.append(copy)
    fusion.detach()
    fusion.erase()
    tally("fusions_split")
    remark = StringAttr(f"split: stitch-codegen could not lower the fusion of these ops ({refused.message})")
    parts = [make_fusion([op], {SPLIT_REMARK: remark}) for op in ops
             if not isinstance(op, graph.ConstantOp) and not is_free(op) and any(r.uses for r in op.results)]
    for op in ops:  # constants now cloned into the parts, and dead ops
        if op.parent is not None and all(not r.uses for r in op.results):
            op.detach()
            op.erase()
    return parts


def _copy_kernel(kernel: KernelOp, fusion: FusionOp, name: str) -> KernelOp:
    """`kernel`, built for a fusion equal to `fusion` up to names, as `fusion`'s kernel."""
    copy = kernel.clone(value_mapper=dict(zip(kernel.operands, fusion.operands)))
    copy.sym_name = StringAttr(name)
    copy.location = fusion.location
    return copy


@dataclass(frozen=True)
class StitchCodegenPass(ModulePass):
    """stitch.fusion → schedule.kernel (one kernel per fusion).

    rows=auto|thread|warp|block|interleaved: the schedule of every row kernel (auto:
    the latency-evaluator's choice among all configurations; the others force one,
    e.g. to compare them), and thread|warp|block of every segments kernel.
    gpu=H100|A100|V100|T4: the GPU the evaluator models.
    registers=auto|off: off never keeps a row in registers (every group re-reads it).
    subroots=auto|all|none: expensive elementwise ops read by several groups lead
    groups of their own (registers or shared rows) in the evaluator's choice (auto),
    wherever they can (all) or never (none: every reader recomputes them).
    vector=auto|1|2|4: the elements a thread moves per memory instruction (auto: the
    evaluator's choice among the legal widths; a forced width applies to the kernels
    where it is legal, the others get 1).
    gemm=auto|BMxBNxBK/TMxTN: the configuration of every GEMM kernel (auto: the
    evaluator's choice among `mappings.gemm.CANDIDATES`; e.g. 16x16x16/1x1 forces the
    untuned one-output-per-thread kernel; a `/f16`, `/bf16` or `/tf32` suffix forces a
    tensor-core configuration, TMxTN then being a warp's tile: "64x64x32/32x32/f16"; it
    applies to the GEMMs of that math, the others get the evaluator's choice).
    precision=fp32|tf32: what f32 GEMMs compute in: exact f32 FMAs (fp32), or on the
    tensor cores with operands rounded to tf32 (`mappings.gemm_tc`); f16 and bf16 GEMMs
    always use the tensor cores.
    traffic_slack=0.0: a GEMM kernel may be up to this fraction slower than the fastest
    configuration if it requests fewer global bytes (larger tiles re-reading their
    operands less: L2 traffic, which concurrent kernels share); it then takes the
    leanest such configuration. 0: the fastest.
    """

    name = "stitch-codegen"

    rows: str = "auto"
    gpu: str = "H100"
    registers: str = "auto"
    subroots: str = "auto"
    vector: str | int = "auto"
    gemm: str = "auto"
    precision: str = "fp32"
    traffic_slack: float | int = 0.0

    def options(self) -> PipelineOptions:
        """The pass's text options, parsed as `fsir.compile`'s are."""
        return PipelineOptions.parse(rows=self.rows, gpu=self.gpu, registers=self.registers, subroots=self.subroots,
                               vector=self.vector, gemm=self.gemm, precision=self.precision,
                               traffic_slack=self.traffic_slack)

    @classmethod
    def from_options(cls, options: PipelineOptions) -> StitchCodegenPass:
        return cls(rows=str(options.rows), gpu=options.gpu, registers=str(options.registers),
                   subroots=str(options.subroots), vector=str(options.vector), gemm=options.gemm_text,
                   precision=str(options.precision), traffic_slack=options.traffic_slack)

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        options = self.options()
        planned: dict[tuple, KernelOp] = {}
        forget_trials()
        for f in list(op.walk()):
            if isinstance(f, func.FuncOp) and not f.is_declaration:
                codegen_function(f, options, planned)
