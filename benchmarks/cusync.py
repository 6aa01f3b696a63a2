"""The GPT-3 MLP as a cuSync pipeline, by fsir's wave model (a model, not a measurement).

    python benchmarks/cusync.py                     # V100 and A100, B·S from 1 to 2048
    python benchmarks/cusync.py --gpus A100 --tokens 256 2048

For each GPU and B·S, examples/cusync/generate.py's GPT-3 MLP (H = 12288, split 8 ways)
is compiled for that GPU up to `tile-sync`, and two pipelines are modeled:

- *as compiled*: fsir's kernels today, GEMM1 -> GeLU (a loop kernel) -> GEMM2; the
  `tile-sync` pass pipelines GeLU -> GEMM2 (a GEMM consumes it), GEMM1 -> GeLU stays
  stream-serial (a loop kernel is no tile-sync consumer);
- *paper*: GEMM1 with the GeLU in its epilogue -> GEMM2, the paper's pipeline (what
  fsir compiles once GEMM epilogues are fused): GEMM1's blocks take GEMM1's and
  the GeLU kernel's time, GEMM2 depends on GEMM1's rows as the pass derives.

The wave model (`simulate`): every SM holds blocks up to its occupancy (SMs x blocks per
SM from gpuspec and each kernel's threads, registers and shared memory, as `tile-sync`'s
`waves`); a block runs for its kernel's time per wave (the latency-evaluator's
estimate, launch cost removed, over its waves). Blocks are dispatched FIFO, stage by
stage, to the first SM with room (the hardware's order; with cuSync's wait-kernel and
the tile counter the producer's blocks come first and tiles are taken in row-major
order). "slot waves": the kernels' blocks over the SMs' slots, stream-serial (each
kernel's waves, summed) and cuSync (both grids together, as if no tile waited).
Stream-serial: a kernel's blocks start after the previous kernel's last block
and a launch cost. cuSync: a consumer block dispatched before its producer tiles are
stored holds its slot and waits; every wait costs `WAIT_US`, every post `POST_US`
(a global-memory round trip each: assumed, not measured). TileSync waits once per
producer tile a consumer tile reads, RowSync once per producer row.
"""

from __future__ import annotations

import argparse
import heapq
import math
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "examples" / "cusync"))

WAIT_US = 0.5  # one thread's acquire-load round trip to L2 and a barrier (~700 cycles): assumed
POST_US = 0.3  # barrier, fence and a release reduction: assumed
HIDDEN = 12288
TOKENS = (1, 16, 64, 128, 256, 512, 1024, 2048)


@dataclass
class Stage:
    name: str
    grid: tuple[int, int]
    blocks_per_sm: int
    block_us: float  # one block's time (the kernel's time per wave)
    waves: int


def stage_of(k, spec, extra_us: float = 0.0) -> Stage:
    from fsir.codegen.latency import occupancy
    from fsir.transforms.tile_sync import waves

    grid, block = k.launch()
    cost = k.cost.data
    occ = occupancy(math.prod(block), cost["registers"].value.data, k.shared_bytes(), spec)
    w = waves(k, spec)
    body = cost["estimate_us"].value.data - spec.launch_cost * 1e6
    return Stage(k.sym_name.data, (grid[0], grid[1]), max(1, occ.blocks_per_sm), (body + extra_us) / w, w)


def simulate(stages: list[Stage], deps: dict[int, list[list[int]]], sms: int, launch_us: float,
             serial: bool, waits: dict[int, list[int]] | None = None) -> float:
    """Makespan (µs) of `stages` on `sms` SMs. deps[s][tile]: the tiles of stage s - 1 that
    tile of stage s waits for (cuSync); waits[s][tile]: its number of waits."""
    free = [1.0] * sms
    running: list[tuple[float, int, float]] = []  # (end, sm, capacity)
    t = 0.0
    end_of: list[list[float]] = []
    for s, st in enumerate(stages):
        if serial:
            while running:  # the stream: every block of the previous kernel has finished
                end, sm, cap = heapq.heappop(running)
                free[sm] += cap
                t = max(t, end)
        t += launch_us if serial or s == 0 else 0.0
        need = 1.0 / st.blocks_per_sm
        ends: list[float] = []
        for tile in range(st.grid[0] * st.grid[1]):
            while True:
                sm = next((i for i in range(sms) if free[i] >= need - 1e-9), None)
                if sm is not None:
                    break
                end, i, cap = heapq.heappop(running)
                free[i] += cap
                t = max(t, end)
            start = t
            cost = st.block_us
            if not serial and s in deps:
                start = max(start, max((end_of[s - 1][p] for p in deps[s][tile]), default=0.0))
                cost += WAIT_US * (waits or {}).get(s, [0] * (tile + 1))[tile]
            if not serial and s + 1 in deps:  # a producer posts each tile
                cost += POST_US
            free[sm] -= need
            heapq.heappush(running, (start + cost, sm, need))
            ends.append(start + cost)
        end_of.append(ends)
    return max(end for end, _, _ in running) if running else t


def pipeline_deps(consumer, operand: int, producer, policy: str):
    """Per consumer tile: the producer tiles (linear, row-major) it waits for, and its waits."""
    from fsir.dialects.schedule import SyncPolicy, TileDepOp
    from fsir.lowering.tile_sync import wait_semaphores
    from fsir.transforms.tile_sync import dependency, tile_grid

    m, extents = dependency(consumer, operand, producer)
    dep = TileDepOp(consumer.sym_name.data, producer.sym_name.data, operand, m, extents)
    (gx, gy), (pgx, pgy) = tile_grid(consumer) or (1, 1), tile_grid(producer) or (1, 1)
    tiles, waits = [], []
    for y in range(gy):  # (these dependencies are on rows: the same for every x of a row)
        needed = [py * pgx + px for px, py in dep.producer_tiles(0, y, pgx, pgy)]
        n = len(wait_semaphores(dep, SyncPolicy(policy), 0, y, (pgx, pgy)))
        tiles += [needed] * gx
        waits += [n] * gx
    return tiles, waits


def model(tokens: int, gpu: str) -> dict:
    from generate import gpt3_mlp

    from fsir.dialects.schedule import KernelOp
    from fsir.gpuspec import gpu_spec
    from fsir.pipeline import PipelineOptions, load, lower

    spec = gpu_spec(gpu)
    scheduled = lower(load(gpt3_mlp(tokens, HIDDEN)), PipelineOptions(gpu=gpu), until="stitch-codegen")
    k = [op for op in scheduled.walk() if isinstance(op, KernelOp)]
    if len(k) != 3:
        raise SystemExit(f"expected GEMM, GeLU, GEMM kernels, got {[x.sym_name.data for x in k]}")
    gemm1, gelu, gemm2 = k
    launch = spec.launch_cost * 1e6
    out: dict = {"tokens": tokens, "gpu": gpu}
    # as compiled: GEMM1 | GeLU -> GEMM2
    s1, sg, s2 = stage_of(gemm1, spec), stage_of(gelu, spec), stage_of(gemm2, spec)
    serial = simulate([s1, sg, s2], {}, spec.sms, launch, serial=True)
    out["compiled_serial"] = serial
    out["compiled_waves"] = s1.waves + sg.waves + s2.waves
    first = simulate([s1], {}, spec.sms, launch, serial=True)
    for policy in ("tile", "row"):
        tiles, waits = pipeline_deps(gemm2, 0, gelu, policy)
        out[f"compiled_{policy}"] = first + simulate([sg, s2], {1: tiles}, spec.sms, launch, serial=False,
                                                     waits={1: waits})
    # the paper's pipeline: GeLU in GEMM1's epilogue
    gelu_per_wave = sg.block_us * sg.waves / s1.waves  # the GeLU kernel's time spread over GEMM1's waves
    p1 = Stage(s1.name, s1.grid, s1.blocks_per_sm, s1.block_us + gelu_per_wave, s1.waves)
    out["paper_serial"] = simulate([p1, s2], {}, spec.sms, launch, serial=True)
    out["paper_waves_serial"] = p1.waves + s2.waves
    out["paper_waves_cusync"] = math.ceil(sum(s.grid[0] * s.grid[1] / s.blocks_per_sm for s in (p1, s2)) / spec.sms)
    for policy in ("tile", "row"):
        tiles, waits = pipeline_deps(gemm2, 0, gemm1, policy)
        out[f"paper_{policy}"] = simulate([p1, s2], {1: tiles}, spec.sms, launch, serial=False, waits={1: waits})
    out["grids"] = f"{s1.grid[0]}x{s1.grid[1]}/{s2.grid[0]}x{s2.grid[1]}"
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--gpus", nargs="+", default=["V100", "A100"])
    ap.add_argument("--tokens", nargs="+", type=int, default=list(TOKENS))
    args = ap.parse_args(argv)
    print("GPT-3 MLP (H=12288, 8-way model parallel), modeled by fsir's wave model (not measured); µs")
    print(f"{'gpu':5} {'B·S':>5} {'grids':>12} | {'as compiled: serial':>19} {'tile':>7} {'row':>7} | "
          f"{'paper pipeline: slot waves':>26} {'serial':>7} {'tile':>7} {'row':>7} {'gain':>6}")
    for gpu in args.gpus:
        for tokens in args.tokens:
            r = model(tokens, gpu)
            best = min(r["paper_tile"], r["paper_row"])
            print(f"{gpu:5} {tokens:5d} {r['grids']:>12} | {r['compiled_serial']:19.1f} {r['compiled_tile']:7.1f} "
                  f"{r['compiled_row']:7.1f} | {r['paper_waves_serial']:>15d} -> {r['paper_waves_cusync']:<8d} "
                  f"{r['paper_serial']:7.1f} {r['paper_tile']:7.1f} {r['paper_row']:7.1f} "
                  f"{100 * (1 - best / r['paper_serial']):5.1f}%", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
