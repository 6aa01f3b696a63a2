"""The delta-evaluator (FusionStitching §5.4): the score f of a fusion pattern.

    f = T_reduced_mem + T_reduced_calls - T_penalty

- T_reduced_mem: global bytes the pattern saves against running each of its ops as its
  own kernel (each op reads its distinct operands and writes its result), divided by the
  GPU's HBM bandwidth. No GPU is measured here, so the paper's regression is the
  bandwidth line itself (the regression's slope).
- T_reduced_calls: (kernels - 1) x the launch cost (1 µs); reshapes are views and no kernel.
- T_penalty: from a simplified latency-evaluator (§4.3 with 16 registers per thread and
  the largest shared-memory use of the pattern): how much slower than its bytes allow
  the fused kernel runs (too few threads to saturate memory, long per-thread loops, low
  occupancy), minus the same excess of the separate kernels. It is what makes a
  reduction over few long rows stay unfused from its consumers (§2.3: one block per row
  leaves most SMs idle).

The simplified latency-evaluator models the kernel shapes stitch-codegen makes
(`fsir/codegen/stitch_codegen.py`): a loop kernel of one thread per output element, or
a row kernel where a row belongs to a thread (column reductions), a warp (rows of at most
512 elements) or a 256-thread block. L = max(T_mem, T_compute) with
T_compute = N_wave x L_warp (§4.3) and T_mem = bytes / (bandwidth x the share of the
bandwidth the resident warps can use).

Patterns carry their aggregates (`Pattern`) so that extending one by a producer costs
O(degree) rather than O(size): that is what keeps candidate generation O(V + E).
"""

from __future__ import annotations

import math

from xdsl.ir import Operation

from fsir.dialects import graph
from fsir.fusion.dataflow import DataflowGraph
from fsir.gpuspec import GpuSpec

BLOCK = 256  # threads per block of fsir's loop and row kernels (stitch-codegen)
WARP_ROW_LIMIT = 512  # rows up to this length are reduced by one warp (BladeDISC)
REGISTERS_PER_THREAD = 16  # the simplified latency-evaluator's fixed guess (§5.4)


class Pattern:
    """A candidate fusion pattern and the aggregates its score is computed from.

    `ext` holds the ids of the values it reads from outside (vertex ids >= 0 are its
    external producers), `red` = (rows, longest row, all reductions trailing) or None."""

    __slots__ = ("members", "ext", "traffic", "baseline", "kernels", "excess_sum", "work",
                 "max_elems", "red", "lo", "hi", "root", "score", "rshape", "base", "gemm", "roots", "known")

    def __init__(self, members, ext, traffic, baseline, kernels, excess_sum, work, max_elems, red, root):
        self.members: frozenset[int] = members
        self.ext: frozenset[int] = ext
        self.traffic = traffic
        self.baseline = baseline
        self.kernels = kernels
        self.excess_sum = excess_sum
        self.work = work
        self.max_elems = max_elems
        self.red = red
        self.lo = min(members)
        self.hi = max(members)
        self.root = root
        self.score = 0.0
        self.rshape: tuple[int, ...] | None = None  # the result shape of its reductions (None: it has none)
        self.base: Pattern | None = None  # the pattern it extends by `root`, when built by `extend`
        self.gemm = False  # holds a dot (a GEMM kernel with inlined producers)
        self.roots: tuple[int, ...] | None = None  # top producers, for h's meeting patterns
        self.known: object | None = None  # what the capability check kept of it (`Capability.extend`)

    def __len__(self) -> int:
        return len(self.members)

    def __repr__(self) -> str:
        return f"Pattern({sorted(self.members)}, f={self.score:.3g})"


def _merge_red(a, b):
    if a is None:
        return b
    if b is None:
        return a
    return (min(a[0], b[0]), max(a[1], b[1]), a[2] and b[2])


class DeltaEvaluator:
    def __init__(self, g: DataflowGraph, gpu: GpuSpec):
        self.g = g
        self.gpu = gpu
        self.inv_bw = 1.0 / gpu.hbm_bandwidth
        n = len(g)
        cpi = gpu.cpi
        self.red_info: list = [None] * n
        self.red_shape: list = [None] * n
        self.work1 = [0.0] * n
        for v in range(n):
            kind = g.kind[v]
            op = g.ops[v]
            if kind == "light":
                c = cpi["alu"]
            elif kind == "expensive":
                c = cpi["div"] if op.name in ("graph.div", "graph.rem") else cpi["sfu"]
            elif kind == "reduction":
                c = cpi["alu"]
                self.red_info[v] = _reduction_info(op, g.elems[v])
                self.red_shape[v] = graph.shape_of(op.results[0].type)
            elif kind == "gather":
                c = 2 * cpi["alu"]
            else:
                c = 0.0
            self.work1[v] = g.elems[v] * c
        self.own = [self._own_traffic(v) for v in range(n)]
        self.singles: list[Pattern] = [self._single(v) for v in range(n)]
        self.excess1 = [self.excess(p) if p.kernels else 0.0 for p in self.singles]
        for p, e in zip(self.singles, self.excess1):
            p.excess_sum = e  # so a single op scores 0: no gain, no penalty

    # -- traffic -----------------------------------------------------------------

    def _own_traffic(self, v: int) -> int:
        g = self.g
        if g.kind[v] == "free":
            return 0
        reads = sum(g.value_bytes(x) for x in g.inputs[v])
        write = g.nbytes[v] if (g.succs[v] or g.is_output[v]) else 0
        return reads + write

    def escapes(self, v: int, members: frozenset[int]) -> bool:
        g = self.g
        if g.is_output[v]:
            return True
        succs = g.succs[v]
        if len(succs) >= len(members):  # cannot all be inside a smaller set
            return True
        for c in succs:
            if c not in members:
                return True
        return False

    def _single(self, v: int) -> Pattern:
        """v as a pattern of its own: traffic is what v reads and writes inside a kernel
        (for a reshape too, although alone it is a view and costs nothing: `own`)."""
        g = self.g
        reads = sum(g.value_bytes(x) for x in g.inputs[v])
        traffic = reads + (g.nbytes[v] if (g.succs[v] or g.is_output[v]) else 0)
        p = Pattern(frozenset((v,)), frozenset(g.inputs[v]), traffic, self.own[v],
                    0 if g.kind[v] == "free" else 1, 0.0, self.work1[v], g.elems[v], self.red_info[v], v)
        p.rshape = self.red_shape[v]
        p.gemm = g.kind[v] == "compute"
        return p

    # -- building patterns -------------------------------------------------------

    def extend(self, x: Pattern, v: int) -> Pattern:
        """x plus its producer v (v not in x, every member of x a descendant of v)."""
        g = self.g
        members = x.members | {v}
        ext = x.ext
        traffic = x.traffic
        if v in ext:
            traffic -= g.nbytes[v]
            ext = ext - {v}
        if self.escapes(v, members):
            traffic += g.nbytes[v]
        new = [y for y in g.inputs[v] if y not in ext]
        if new:
            traffic += sum(g.value_bytes(y) for y in new)
            ext = ext | frozenset(new)
        p = Pattern(members, ext, traffic, x.baseline + self.own[v],
                    x.kernels + (0 if g.kind[v] == "free" else 1), x.excess_sum + self.excess1[v],
                    x.work + self.work1[v], max(x.max_elems, g.elems[v]),
                    _merge_red(x.red, self.red_info[v]), v)
        p.rshape = x.rshape if x.rshape is not None else self.red_shape[v]  # () is a shape
        p.gemm = x.gemm or g.kind[v] == "compute"
        p.base = x
        p.score = self.score(p)
        return p

    def of(self, members: frozenset[int], root: int) -> Pattern:
        """The pattern of an arbitrary set of vertices, from scratch (O(size x degree))."""
        g = self.g
        ext: set[int] = set()
        traffic = baseline = kernels = 0
        excess_sum = work = 0.0
        max_elems = 0
        red = rshape = None
        gemm = False
        for m in members:
            for y in g.inputs[m]:
                if y not in members and y not in ext:
                    ext.add(y)
                    traffic += g.value_bytes(y)
            if self.escapes(m, members):
                traffic += g.nbytes[m]
            baseline += self.own[m]
            kernels += g.kind[m] != "free"
            excess_sum += self.excess1[m]
            work += self.work1[m]
            max_elems = max(max_elems, g.elems[m])
            red = _merge_red(red, self.red_info[m])
            if rshape is None:
                rshape = self.red_shape[m]
            gemm = gemm or g.kind[m] == "compute"
        p = Pattern(members, frozenset(ext), traffic, baseline, kernels, excess_sum, work, max_elems, red, root)
        p.rshape = rshape
        p.gemm = gemm
        p.score = self.score(p)
        return p

    def merge_independent(self, a: Pattern, b: Pattern) -> Pattern:
        """Kernel packing of two patterns with no path between them: aggregates add up,
        and an input both read is read once."""
        g = self.g
        shared = a.ext & b.ext
        traffic = a.traffic + b.traffic - sum(g.value_bytes(y) for y in shared)
        p = Pattern(a.members | b.members, a.ext | b.ext, traffic, a.baseline + b.baseline,
                    a.kernels + b.kernels, a.excess_sum + b.excess_sum, a.work + b.work,
                    max(a.max_elems, b.max_elems), _merge_red(a.red, b.red), min(a.root, b.root))
        p.rshape = a.rshape if a.rshape is not None else b.rshape
        p.gemm = a.gemm or b.gemm
        p.score = self.score(p)
        return p

    # -- the score and the simplified latency-evaluator -----------------------------

    def score(self, p: Pattern) -> float:
        saved_mem = (p.baseline - p.traffic) * self.inv_bw
        saved_calls = max(0, p.kernels - 1) * self.gpu.launch_cost
        penalty = max(0.0, self.excess(p) - p.excess_sum)
        return saved_mem + saved_calls - penalty

    def launch_shape(self, p: Pattern) -> tuple[int, int, int]:
        """(threads, threads per row, shared bytes per block) of the kernel codegen makes."""
        if p.red is None:
            blocks = max(1, -(-p.max_elems // BLOCK))
            return blocks * BLOCK, 1, 0
        rows, row_len, trailing = p.red
        per_row = 1 if not trailing else (32 if row_len <= WARP_ROW_LIMIT else BLOCK)
        blocks = max(1, -(-rows // (BLOCK // per_row)))
        smem = 4 * (BLOCK // 32) + 16 if per_row == BLOCK else 0  # partials + result slots
        return blocks * BLOCK, per_row, smem

    def latency(self, p: Pattern) -> float:
        """Seconds the fused kernel takes (simplified latency-evaluator, no launch cost).
        A GEMM (or any op fusion leaves alone) is costed by its bytes: its time is the
        same in every plan, and it runs as a library-shaped kernel, not one of ours."""
        if p.gemm or (len(p) == 1 and self.g.kind[p.root] == "other"):
            return p.traffic * self.inv_bw
        gpu = self.gpu
        threads, per_row, smem = self.launch_shape(p)
        warps_per_block = BLOCK // gpu.warp_size
        blocks_per_sm = min(gpu.max_threads_per_sm // BLOCK,
                            gpu.regs_per_sm // (REGISTERS_PER_THREAD * BLOCK),
                            gpu.max_blocks_per_sm,
                            gpu.smem_per_sm // smem if smem else gpu.max_blocks_per_sm)
        if blocks_per_sm <= 0 or smem > gpu.smem_per_block:
            return math.inf
        resident_per_sm = blocks_per_sm * warps_per_block
        n_warp = -(-threads // gpu.warp_size)
        waves = -(-n_warp // (resident_per_sm * gpu.sms))
        l_warp = p.work / threads
        if per_row > 1:  # shuffle trees (and the block's second round through shared memory)
            cpi = gpu.cpi
            rounds = 5 * cpi["shuffle"] + (5 * cpi["shuffle"] + 2 * cpi["barrier"] + 2 * cpi["smem"]
                                           if per_row == BLOCK else 0)
            l_warp += rounds
        t_compute = waves * l_warp / gpu.clock_hz
        resident = min(n_warp, resident_per_sm * gpu.sms)
        share = min(1.0, resident / (gpu.saturating_warps_per_sm * gpu.sms))
        t_mem = p.traffic * self.inv_bw / share
        return max(t_mem, t_compute)

    def excess(self, p: Pattern) -> float:
        return self.latency(p) - p.traffic * self.inv_bw

    def kernel_time(self, p: Pattern) -> float:
        if p.kernels == 0:  # reshapes only: views, no kernel
            return 0.0
        return self.gpu.launch_cost + self.latency(p)


def _reduction_info(op: Operation, input_elems: int):
    """(rows kept, elements per row, reduced dims are the trailing ones)."""
    from fsir.fusion.dataflow import tensor_elements

    assert isinstance(op, graph.ReduceOp)
    rank = len(graph.shape_of(op.input.type))
    dims = sorted(op.dims.get_values())
    trailing = dims == list(range(rank - len(dims), rank))
    rows = max(1, tensor_elements(op.result.type))
    return (rows, max(1, input_elems // rows), trailing)
