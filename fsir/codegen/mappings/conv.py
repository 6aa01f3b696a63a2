"""The `conv` mapping: a `graph.conv` as an implicit GEMM on the tiling of the `gemm`
mapping (`GemmConfig`: block tile, k-step, micro-tile; the same candidates, scored by
the latency-evaluator from `tiled_summary`). Per feature group (grid z) the product is
M = batch x output positions, N = output channels of the group, K = input channels of
the group x kernel positions; the A tile is gathered from the input on the fly
(`fsir/lowering/conv.py`), never materialised as im2col.

A conv kernel also takes a stitched epilogue (`epilogue.py`, shared with the `gemm`
mapping): elementwise consumers of the conv's result that read it at the output's own
index (a per-channel bias add, ReLU/clip as max/min with constants, a residual add of
another tensor of the result's shape), computed on the accumulators in registers
before the one store.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from xdsl.dialects.builtin import DictionaryAttr, IntegerAttr, MemRefType, StringAttr, i64
from xdsl.ir import Operation, SSAValue

from fsir.codegen.mappings.base import FusionContext, GroupSpec, Mapping, accumulator_type, op_error, unique
from fsir.codegen.mappings.epilogue import epilogue_problem
from fsir.codegen.mappings.gemm import DYNAMIC_DEFAULT, GemmConfig, gemm_candidates, shared_bytes, tiled_summary
from fsir.codegen.summary import Summary
from fsir.dialects import graph, schedule
from fsir.dialects.graph import DYN
from fsir.dialects.schedule import (
    DYNAMIC,
    Composition,
    ConvParamsAttr,
    KernelOp,
    SharedOp,
    Storage,
    element_bytes,
)
from fsir.gpuspec import GpuSpec
from fsir.lowering.conv import ConvLowering
from fsir.lowering.gemm import product_root
from fsir.lowering.scalar import Index
from fsir.lowering.shapes import ShapeCalc


class ConvMapping(Mapping):
    PARAMS = schedule.ConvParamsAttr
    ilp = True  # a micro-tile's multiply-adds are independent (as gemm's)
    fuses_epilogue = True
    lowering = ConvLowering

    def claims(self, ops: Sequence[Operation]) -> bool:
        return any(isinstance(op, graph.ConvOp) for op in ops)

    def accepts(self, ops: Sequence[Operation]) -> str | None:
        inside = set(ops)
        convs = [op for op in ops if isinstance(op, graph.ConvOp)]
        if len(convs) != 1 or any(graph.op_class(op) == graph.OpClass.COMPUTE and op is not convs[0] for op in ops):
            return "a conv must be the only compute-intensive op of its kernel"
        outputs = [r for op in ops for r in op.results if any(u.operation not in inside for u in r.uses)]
        return epilogue_problem(convs[0], ops, outputs, "conv")

    def build(self, ctx: FusionContext) -> KernelOp:
        conv = next(op for op in ctx.ops if isinstance(op, graph.ConvOp))
        why = self.accepts(ctx.ops) if len(ctx.ops) > 1 else None
        outputs = unique(ctx.yields)
        why = why or epilogue_problem(conv, ctx.ops, outputs, "conv")
        if why is not None:
            raise op_error(conv, f"cannot be generated with the ops fused with it: {why}")
        problem = conv.problem(graph.static_dims, graph.STATIC)
        m, n = problem.m(graph.STATIC), problem.n
        spec, forced = ctx.spec, ctx.gemm_config
        if forced is not None:
            configs = [forced]
            need = shared_bytes(forced, element_bytes(accumulator_type(conv.result.type.element_type)))
            if need > spec.smem_per_block:
                raise op_error(conv, f"cannot run as gemm={forced.text()}: its tiles need {need} bytes of "
                                     f"shared memory, more than a block has on {spec.name} ({spec.smem_per_block})")
        else:
            configs = gemm_candidates(m, n, spec)
        out = outputs[0]
        if m == DYN:  # `?` sizes: the evaluator cannot count waves
            config = forced or DYNAMIC_DEFAULT
            kernel = self.kernel(ctx, conv, out, config)
            assert kernel.cost is not None  # `FusionContext.kernel` gives every kernel its static cost
            kernel.cost = DictionaryAttr({**kernel.cost.data, "config": StringAttr(f"conv/{config.text()}")})
            return kernel
        return self.choose([ConvConfig(c) for c in configs], lambda c: self.kernel(ctx, conv, out, c.gemm), spec)

    def summarize(self, k: KernelOp, spec: GpuSpec) -> Summary:
        """The tiled GEMM's thread (`tiled_summary`), with the A-tile loads' own
        work: delinearizing m and k, and per spatial dim the input coordinate and its
        bounds check; a padded or input-dilated conv's A elements are all guarded."""
        (g,) = k.groups()
        conv = product_root(g)
        assert isinstance(conv, graph.ConvOp)
        p = conv.problem(graph.static_dims, graph.STATIC)
        _, low, high, _, lhs_dilation = conv.window()
        spatial = len(p.kernel)
        index = 3 * (spatial + 1) + 3 * spatial + 6 * spatial + sum(2 for d in lhs_dilation if d > 1)
        holes = any(low) or any(high) or any(d > 1 for d in lhs_dilation)
        return tiled_summary(k, spec, (p.m(graph.STATIC), p.n, p.k), conv.input, conv.weight, conv.result,
                             g.yielded()[0], index, holes)

    def kernel(self, ctx: FusionContext, conv: graph.ConvOp, out: SSAValue, config: GemmConfig) -> KernelOp:
        """The schedule.kernel under one configuration: a block per bm x bn tile of a
        group's product (groups on grid z), (bm / tm) x (bn / tn) threads."""
        p = conv.problem(graph.static_dims, graph.STATIC)
        m = p.m(graph.STATIC)
        grid = (max(1, -(-p.n // config.bn)), DYNAMIC if m == DYN else max(1, -(-m // config.bm)), p.groups)
        acc = accumulator_type(conv.result.type.element_type)
        space = IntegerAttr(3, i64)
        shared = [SharedOp("a_tile", MemRefType(acc, [config.bm * config.bk], memory_space=space)),
                  SharedOp("b_tile", MemRefType(acc, [config.bk * config.bn], memory_space=space))]
        params = ConvParamsAttr(config.bm, config.bn, config.bk, config.tm, config.tn)
        return ctx.kernel(params, grid, (config.threads, 1, 1), [GroupSpec([out], Composition.BLOCK, Storage.GLOBAL)],
                          shared)

    def grid(self, k: KernelOp, axis: int, shapes: ShapeCalc) -> Index:
        ib = shapes.ib
        (g,) = k.groups()
        conv = product_root(g)
        p = k.params
        assert isinstance(conv, graph.ConvOp) and isinstance(p, ConvParamsAttr)
        problem = conv.problem(shapes.dims, ib)
        if axis == 0:
            return ib.max(ib.ceildiv(problem.n, p.tile_n), 1)
        if axis == 1:
            return ib.max(ib.ceildiv(problem.m(ib), p.tile_m), 1)
        return problem.groups

    def check_kernel(self, k: KernelOp) -> None:
        groups = k.groups()
        if len(groups) != 1 or not any(isinstance(op, graph.ConvOp) for op in groups[0].block.ops):
            raise self.cannot_lower(k, "a conv kernel has one group computing a graph.conv")
        p = k.params
        assert isinstance(p, ConvParamsAttr)
        bm, bn, bk = p.tile_m, p.tile_n, p.tile_k
        why = GemmConfig(bm, bn, bk, p.thread_m, p.thread_n).problem()
        if why is not None:
            raise self.cannot_lower(k, why)
        for name, size in (("a_tile", bm * bk), ("b_tile", bk * bn)):
            buf = k.shared_buffers().get(name)
            if buf is None:
                raise self.cannot_lower(k, f"a conv kernel needs the shared buffer @{name}")
            if buf.buffer_type.element_count() < size:
                raise self.cannot_lower(k, f"@{name} has {buf.buffer_type.element_count()} elements; "
                                           f"the tiles need {size}")


@dataclass(frozen=True)
class ConvConfig:
    """A GEMM configuration as the conv mapping's (described `conv/...`)."""

    gemm: GemmConfig

    def describe(self) -> str:
        return f"conv/{self.gemm.text()}"
