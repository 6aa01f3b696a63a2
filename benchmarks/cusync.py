"""The GPT-3 MLP as a cuSync pipeline, by fsir's wave model and, for the small examples, by
the simulator's timeline model (both models, not measurements).

    python benchmarks/cusync.py                     # V100 and A100, B·S from 1 to 2048
    python benchmarks/cusync.py --gpus A100 --tokens 256 2048
    python benchmarks/cusync.py --small             # + the timeline model of examples/cusync

For each GPU and B·S, examples/cusync/generate.py's GPT-3 MLP (H = 12288, split 8 ways)
is compiled for that GPU up to `stitch-codegen`, and two pipelines are modeled:

- *as compiled*: fsir's kernels. Where the evaluator fuses the GeLU into GEMM1's
  epilogue (2 kernels) this is the paper's pipeline, GEMM1 -> GEMM2; where it keeps the
  GeLU a loop kernel (3 kernels: it judged the fused epilogue slower for that tile
  shape) `tile-sync` pipelines GeLU -> GEMM2 and GEMM1 -> GeLU stays stream-serial (a
  loop kernel is no tile-sync consumer);
- *paper*: GEMM1 with the GeLU in its epilogue -> GEMM2 (for 3 kernels: the GeLU
  kernel's time spread over GEMM1's blocks), GEMM2 waiting on GEMM1's rows.

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

The timeline model (`--small`, fsir/sim/timeline.py, docs/simulator.md): the small
examples run on the simulator, stream-serial and as concurrent pipelines, and the
model places every simulated block on the GPU's SM slots from its counters. The
full-size MLP is far beyond the numpy simulator, so the two models never meet on one
size: the timeline rows show the small pipelines (one wave or less on these GPUs).
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
    from fsir.codegen.tile_sync import waves

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
    from fsir.codegen.tile_sync import dependency, tile_grid
    from fsir.dialects.schedule import StageOp, SyncPolicy, TileDepOp
    from fsir.lowering.tile_sync import wait_semaphores

    m, extents = dependency(consumer, operand, producer)
    dep = TileDepOp(consumer.sym_name.data, producer.sym_name.data, operand, m, extents)
    (gx, gy), (pgx, pgy) = tile_grid(consumer) or (1, 1), tile_grid(producer) or (1, 1)
    tiles, waits = [], []
    for y in range(gy):  # (these dependencies are on rows: the same for every x of a row)
        needed = [py * pgx + px for px, py in dep.producer_tiles(0, y, pgx, pgy)]
        stage = StageOp(producer.sym_name.data, 0, 0, 0, SyncPolicy(policy))
        n = len(wait_semaphores(dep, stage, 0, y, (gx, gy), (pgx, pgy)))
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
    if len(k) not in (2, 3):
        raise SystemExit(f"expected GEMM1 [GeLU] GEMM2 kernels, got {[x.sym_name.data for x in k]}")
    launch = spec.launch_cost * 1e6
    gemm1, gemm2 = k[0], k[-1]
    s1, s2 = stage_of(gemm1, spec), stage_of(gemm2, spec)
    out: dict = {"tokens": tokens, "gpu": gpu, "kernels": len(k),
                 "grids": f"{s1.grid[0]}x{s1.grid[1]}/{s2.grid[0]}x{s2.grid[1]}"}
    if len(k) == 2:  # as compiled = the paper's pipeline: GEMM1 with the GeLU epilogue -> GEMM2
        p1 = s1
    else:
        # the evaluator kept the GeLU a loop kernel: as compiled, GEMM1 | GeLU -> GEMM2 (a
        # loop kernel is no tile-sync consumer); the paper's pipeline spreads the GeLU
        # kernel's time over GEMM1's blocks
        sg = stage_of(k[1], spec)
        out["compiled_serial"] = simulate([s1, sg, s2], {}, spec.sms, launch, serial=True)
        first = simulate([s1], {}, spec.sms, launch, serial=True)
        for policy in ("tile", "row"):
            tiles, waits = pipeline_deps(gemm2, 0, k[1], policy)
            out[f"compiled_{policy}"] = first + simulate([sg, s2], {1: tiles}, spec.sms, launch, serial=False,
                                                         waits={1: waits})
        p1 = Stage(s1.name, s1.grid, s1.blocks_per_sm, s1.block_us + sg.block_us * sg.waves / s1.waves, s1.waves)
    out["serial"] = simulate([p1, s2], {}, spec.sms, launch, serial=True)
    out["waves_serial"] = p1.waves + s2.waves
    out["waves_cusync"] = math.ceil(sum(s.grid[0] * s.grid[1] / s.blocks_per_sm for s in (p1, s2)) / spec.sms)
    for policy in ("tile", "row"):
        tiles, waits = pipeline_deps(gemm2, 0, gemm1, policy)
        out[policy] = simulate([p1, s2], {1: tiles}, spec.sms, launch, serial=False, waits={1: waits})
        out.setdefault(f"compiled_{policy}", out[policy])
    out.setdefault("compiled_serial", out["serial"])
    return out


SMALL = ("fig4a", "gpt3_mlp", "llama_mlp", "attention", "conv2")
POLICIES = {"conv2": ("off", "conv", "row"), "attention": ("off", "tile", "row", "strided")}


def timeline_model(name: str, gpu: str) -> dict:
    """Modeled µs of a small example by the timeline model: stream-serial (tile-sync off,
    each launch modeled alone, summed) and each policy's pipeline (its launches modeled
    together, FIFO dispatch), with the pipeline's waits from the simulator (attention
    also under StridedSync: its QKV GEMM's Q, K and V tiles of a column share a semaphore)."""
    from fsir.codegen.tile_sync import parse_tile_sync
    from fsir.pipeline import PipelineOptions, lower, read_model
    from fsir.runtime.device import SimDevice
    from fsir.runtime.executor import execute
    from fsir.runtime.inputs import random_inputs
    from fsir.runtime.reference import find_function

    module = read_model(ROOT / "examples" / "cusync" / f"{name}.mlir")
    inputs = random_inputs(find_function(module), 0)
    out: dict = {"example": name, "gpu": gpu}
    for policy in POLICIES.get(name, ("off", "tile", "row")):
        dev = SimDevice(gpu=gpu, model_launches=True)
        _, stats = execute(lower(module, PipelineOptions(tile_sync=parse_tile_sync(policy), gpu=gpu)), inputs, dev)
        out[policy] = sum(tl.modeled_us for tl in dev.timelines)
        out[f"{policy}_waits"] = int(stats.waits)
        out[f"{policy}_launches"] = len(dev.launch_log)
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--gpus", nargs="+", default=["V100", "A100"])
    ap.add_argument("--tokens", nargs="+", type=int, default=list(TOKENS))
    ap.add_argument("--small", action="store_true",
                    help="also model the small examples/cusync pipelines with the simulator's timeline model")
    args = ap.parse_args(argv)
    print("GPT-3 MLP (H=12288, 8-way model parallel), modeled by fsir's wave model (not measured); µs")
    print(f"{'gpu':5} {'B·S':>5} {'grids':>12} | {'as compiled: kernels':>20} {'serial':>9} {'tile':>9} {'row':>9} | "
          f"{'paper pipeline: slot waves':>26} {'serial':>9} {'tile':>9} {'row':>9} {'gain':>6}")
    for gpu in args.gpus:
        for tokens in args.tokens:
            r = model(tokens, gpu)
            best = min(r["tile"], r["row"])
            print(f"{gpu:5} {tokens:5d} {r['grids']:>12} | {r['kernels']:20d} {r['compiled_serial']:9.1f} "
                  f"{r['compiled_tile']:9.1f} {r['compiled_row']:9.1f} | {r['waves_serial']:>15d} -> "
                  f"{r['waves_cusync']:<8d} {r['serial']:9.1f} {r['tile']:9.1f} {r['row']:9.1f} "
                  f"{100 * (1 - best / r['serial']):5.1f}%", flush=True)
    if args.small:
        print()
        print("examples/cusync (small), modeled by the simulator's timeline model (not measured); µs, "
              "FIFO dispatch; waits counted by the simulator")
        print(f"{'gpu':5} {'example':10} | {'serial':>7} | {'TileSync':>8} {'waits':>5} | {'RowSync':>8} "
              f"{'waits':>5} | {'Strided':>8} {'waits':>5}")
        for gpu in args.gpus:
            for name in SMALL:
                r = timeline_model(name, gpu)
                tile = "conv" if name == "conv2" else "tile"
                strided = f"{r['strided']:8.2f} {r['strided_waits']:5d}" if "strided" in r else f"{'-':>8} {'-':>5}"
                print(f"{gpu:5} {name:10} | {r['off']:7.2f} | {r[tile]:8.2f} {r[tile + '_waits']:5d} | "
                      f"{r['row']:8.2f} {r['row_waits']:5d} | {strided}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
