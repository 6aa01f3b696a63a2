"""The fast mode's shortlist (Roller's idea): construct a GEMM space's candidates from
their decisions alone, rank them by a tile-level model of the whole launch that needs
no kernel, and hand only the best few per sketch to the static checks and the prior.

Building and summarising a candidate's kernel costs milliseconds; a GEMM space holds
20,000-30,000 traces, so ranking it by the latency-evaluator takes a minute or more. The tile
model (`tile_seconds`) costs microseconds: the launch's waves on the SMs (occupancy
from threads, shared memory and an accumulator-register estimate), each wave the
slowest of its issue time (FMAs and shared loads per thread, or tensor-core FMAs), its
operand traffic through L2 and the k-loop's global-latency chain; split-K adds its
partial sums' traffic. It only has to keep the prior's best candidates among its top
few dozen, which `tests/tune/test_fast_mode.py` checks against the prior's best of a
random sample of the space.

Spaces of other mappings are small (at most a few hundred rule-valid traces) and are
checked whole.
"""

from __future__ import annotations

import itertools
import math
import random

from fsir.codegen.gemm_config import GemmConfig
from fsir.codegen.mappings.base import ChoiceRequest
from fsir.codegen.mappings.gemm import shared_bytes, tile_stages
from fsir.codegen.summary import element_bytes_of
from fsir.dialects import graph
from fsir.dialects.schedule import GemmMath
from fsir.gpuspec import GpuSpec
from fsir.tune.space import GemmSketch, Invalid, Knob, Space, Trace

SHORTLIST = 40  # candidates per GEMM sketch handed to the static checks
GLOBAL_LATENCY = 600  # cycles of a k-step's global load round trip
BASE_REGISTERS = 24  # addresses, loop counters, staging registers


def tile_seconds(c: GemmConfig, sketch: GemmSketch, spec: GpuSpec, operand_bytes: int) -> float:
    """The launch's time under the tile model (module docstring); inf where no block
    fits an SM."""
    p = sketch.problem
    fma = c.math == GemmMath.FMA
    kslice = -(-p.k // c.split)
    steps = -(-kslice // c.bk)
    kpad = steps * c.bk
    blocks = -(-p.m // c.bm) * -(-p.n // c.bn) * p.batch * c.split
    threads = c.threads
    # accumulators per thread (a warp tile's are spread over its 32 lanes) and fragments
    regs = BASE_REGISTERS + (c.tm * c.tn + c.tm + c.tn if fma else c.tm * c.tn // 32 + c.tm // 4 + c.tn // 4)
    smem = max(1, shared_bytes(c, 4, True))
    per_sm = min(spec.max_threads_per_sm // threads, spec.smem_per_sm // smem, spec.max_blocks_per_sm,
                 spec.regs_per_sm // (regs * threads))
    if per_sm <= 0:
        return math.inf
    slots = spec.sms * per_sm
    waves = -(-blocks // slots)
    resident = max(1.0, min(blocks, slots) / spec.sms)  # blocks sharing an SM in a full wave
    warps = resident * threads / spec.warp_size
    busy = min(1.0, warps / spec.saturating_warps_per_sm)  # too few warps leave the pipes idle
    if fma:
        vec = 4 if min(c.tm, c.tn) >= 4 else 1
        per_k = c.tm * c.tn + 2 * (c.tm + c.tn) / vec  # FMAs and shared loads (half rate)
        issue = resident * threads * kpad * per_k / spec.lanes_per_cycle.get("fp32", 64)
    else:
        rate = spec.tensor_fma_per_cycle.get("tf32" if c.math == GemmMath.TF32 else "f16", 512)
        issue = resident * c.bm * c.bn * kpad / rate
    clock = spec.clock_hz
    tile_bytes = (c.bm + c.bn) * kpad * operand_bytes + c.bm * c.bn * 4
    l2 = spec.l2_bytes_per_cycle * clock if spec.l2_bytes_per_cycle else spec.hbm_bandwidth
    traffic = resident * spec.sms * tile_bytes / l2
    # each k-step waits for its global loads: stages - 1 k-steps are in flight on the
    # tensor cores (cp.async), none on the FMA pipes
    chain = steps * GLOBAL_LATENCY / (clock * max(1, tile_stages(c) - 1))
    wave = max(issue / busy / clock, traffic, chain)
    unique = (p.m * p.k + p.k * p.n + p.m * p.n) * operand_bytes * p.batch
    partials = 2 * p.m * p.n * 4 * p.batch * c.split if c.split > 1 else 0
    return waves * wave + (unique + partials) / spec.hbm_bandwidth


def _gemm_shortlist(space: Space, sketch: GemmSketch, spec: GpuSpec, operand_bytes: int, n: int) -> list[Trace]:
    """The `n` rule-valid traces of `sketch` best under the tile model: every trace
    ranked from its decisions alone, the space's rules applied in that order only
    until `n` pass."""
    doms = sketch.domains()
    ranked: list[tuple[float, int, Trace]] = []
    for values in itertools.product(*(d.choices for d in doms)):
        v = dict(zip((d.knob for d in doms), values))
        tm, tn = int(v[Knob.M_MICRO]), int(v[Knob.N_MICRO])
        config = GemmConfig(int(v[Knob.M_THREADS]) * tm, int(v[Knob.N_THREADS]) * tn, int(v[Knob.K_TILE]), tm, tn,
                            sketch.math, int(v[Knob.SPLIT]), int(v.get(Knob.STAGES, 0)))
        seconds = tile_seconds(config, sketch, spec, operand_bytes)
        if math.isfinite(seconds):
            ranked.append((seconds, config.threads, sketch.trace(v)))
    # ties (small problems sit on the latency floor) go to the smaller block
    ranked.sort(key=lambda st: st[:2])
    # the best n overall, and the best few of each split-K factor: the tile model is
    # coarsest where splitting trades waves against partial-sum traffic
    quota = {split: max(2, n // 8) for split in {t.number(Knob.SPLIT) for _, _, t in ranked}}
    out: list[Trace] = []
    for _, _, trace in ranked:
        split = trace.number(Knob.SPLIT)
        if len(out) >= n and not quota[split]:
            continue
        try:
            space.config(trace)
        except Invalid:
            continue
        out.append(trace)
        quota[split] = max(0, quota[split] - 1)
        if len(out) >= n and not any(quota.values()):
            break
    return out


def shortlist(request: ChoiceRequest, space: Space, rng: random.Random, per_sketch: int = SHORTLIST) -> list[Trace]:
    """The traces the fast mode checks statically: per GEMM sketch the `per_sketch`
    best under the tile model and as many rule-valid ones at random (where the tile
    model misjudges a family, e.g. FMA tiles of f32 GEMMs, the prior still sees some
    of it), the rule-valid traces of the other sketches' shortlists (all their traces,
    or a columns kernel's neighbours of today's choice), and today's configurations."""
    spec = request.spec
    dots = [op for op in request.fusion.ops if isinstance(op, graph.DotOp)] if request.fusion is not None else []
    operand_bytes = element_bytes_of(dots[0].lhs) if dots else 4
    out: dict[Trace, None] = {}
    for sketch in space.sketches:
        if isinstance(sketch, GemmSketch):
            out.update((t, None) for t in _gemm_shortlist(space, sketch, spec, operand_bytes, per_sketch))
            one = Space((sketch,), space.fixed)
            out.update((one.sample(rng), None) for _ in range(per_sketch))
            continue
        for trace in sketch.shortlist():
            try:
                space.config(trace)
            except Invalid:
                continue
            out[trace] = None
    for config in space.fixed:
        trace = space.trace_of(config)
        if trace is not None:
            out[trace] = None
    return list(out)

