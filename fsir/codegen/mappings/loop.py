"""The `loop` mapping: a fusion without reductions or dots (FusionStitching §4, XLA's
loop fusion with thread composition).

One thread per output element, or per `vector_width` V consecutive elements; every
other op is inlined into its consumers by index propagation. Outputs of different
shapes share the loop (kernel packing). The configurations are the vector widths the
shapes allow (`LoopConfig`), scored by the latency-evaluator; the vectorizer turns a
thread's V elements into one memory instruction each (`fsir/lowering/vectorize.py`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from xdsl.ir import Operation, SSAValue

from fsir.codegen.mappings.base import (
    BLOCK,
    FusionContext,
    GroupSpec,
    Mapping,
    max_known,
    numel,
    unique,
)
from fsir.codegen.summary import Summary, element_bytes_of, split_costs
from fsir.dialects import schedule
from fsir.dialects.graph import DYN, fmt_shape, shape_of
from fsir.dialects.schedule import DYNAMIC, Composition, KernelOp, LoopParamsAttr, Storage, inner_value
from fsir.gpuspec import GpuSpec
from fsir.lowering.loop import LoopLowering
from fsir.lowering.scalar import Index
from fsir.lowering.shapes import ShapeCalc


@dataclass(frozen=True)
class LoopConfig:
    """A loop kernel's configuration: `vector` consecutive elements per thread."""

    block: int
    vector: int = 1

    def describe(self) -> str:
        return f"loop/{self.block}" + (f"/v{self.vector}" if self.vector > 1 else "")


LOOP_BASE_REGISTERS = 12


class LoopMapping(Mapping):
    PARAMS = schedule.LoopParamsAttr
    lowering = LoopLowering

    def claims(self, ops: Sequence[Operation]) -> bool:
        return True  # everything thread-local: what no other mapping claims

    def accepts(self, ops: Sequence[Operation]) -> str | None:
        return None  # any mix of elementwise and index ops, independent parts included

    def candidates(self, ctx: FusionContext, outs: list[SSAValue]) -> list[LoopConfig]:
        widths = ctx.vector_widths([*ctx.fusion.operands, *outs], [shape_of(v.type)[-1:] for v in outs])
        return [LoopConfig(BLOCK, v) for v in widths]

    def build(self, ctx: FusionContext) -> KernelOp:
        outs = unique(ctx.yields)
        return self.choose(self.candidates(ctx, outs), lambda c: self.kernel(ctx, c, outs), ctx.spec)

    def kernel(self, ctx: FusionContext, config: LoopConfig, outs: list[SSAValue]) -> KernelOp:
        sizes = [numel(shape_of(v.type)) for v in outs]
        n = max_known(sizes)
        grid = DYNAMIC if n is None else max(1, -(-n // (config.block * config.vector)))
        groups = [GroupSpec(outs, Composition.THREAD, Storage.GLOBAL)]
        return ctx.kernel(LoopParamsAttr(config.vector), (grid, 1, 1), (config.block, 1, 1), groups, [])

    def summarize(self, k: KernelOp, spec: GpuSpec) -> Summary:
        """A loop kernel's thread (`fsir/lowering/kernels.py`, `loop`): V consecutive
        elements of every output, each computed by index propagation (what several outputs
        share is computed once) and stored; the vectorizer merges the V accesses of one
        tensor into one instruction."""
        p = k.params
        assert isinstance(p, LoopParamsAttr)
        vector = p.vector_width
        (g,) = k.groups()
        inputs: set[SSAValue] = set(k.block.args)
        keys: dict = {}
        elem, _, loads, nbytes, _ = split_costs([inner_value(r) for r in g.results], inputs, (), set(), set(), keys)
        s = Summary()
        s.add(elem, vector)
        outs = len(set(g.results))
        s.counts["global"] = -(-(elem["global"] * vector) // vector) + outs
        s.counts["alu"] += 8 + 3 * outs * vector
        s.registers = LOOP_BASE_REGISTERS + vector * (len(loads) + outs)
        s.shared_bytes = k.shared_bytes()
        s.global_bytes = vector * (nbytes + sum(element_bytes_of(r) for r in set(g.results)))
        return s

    def grid(self, k: KernelOp, axis: int, shapes: ShapeCalc) -> Index:
        ib = shapes.ib
        inner = [inner_value(v) for v in k.yielded()]
        _, block = k.launch()
        n: Index = shapes.numel(inner[0])
        for v in inner[1:]:
            n = ib.max(n, shapes.numel(v))
        return ib.max(ib.ceildiv(n, block[0]), 1)

    def vector_problem(self, k: KernelOp, vec: int) -> str | None:
        """Each vector lies in one row of every output: static innermost extents that
        are multiples of V."""
        for g in k.groups():
            for v in g.results:
                dims = shape_of(inner_value(v).type)[-1:]
                if not dims or DYN in dims or dims[-1] % vec:
                    return (f"vector_width {vec} needs static innermost extents that are multiples of it "
                            f"(a result of {fmt_shape(tuple(dims))})")
        return None

    def check_kernel(self, k: KernelOp) -> None:
        groups = k.groups()
        if len(groups) != 1:
            raise self.cannot_lower(k, f"a loop kernel has exactly one group, found {len(groups)}")
