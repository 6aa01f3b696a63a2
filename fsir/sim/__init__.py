"""fsir's vectorised PTX simulator.

    run_ptx(ptx, kernel, grid, block, args, shared_bytes=0) -> LaunchStats

executes one kernel launch of PTX text on the CPU. Every thread of the launch is one lane of
numpy arrays (a register is an array over lanes), so a launch of a million threads costs a few
hundred numpy operations per PTX instruction *executed by a lane group*, not a million Python steps.

The pieces, in the order a launch uses them:
  parser.py + ptx.lark  PTX text -> a plain-Python module description (lark grammar)
  inline.py             device-function calls (`.func` + `call`) expanded into the kernel
  decoder/              each instruction -> a closure over lane arrays (operands, types, semantics),
                        one module per instruction family (tensorcore.py: mma.sync, ldmatrix,
                        stmatrix; asynccopy.py: cp.async and its groups) and one dispatch table
  loader.py             parse + decode once per PTX text (cached): SimModule, KernelLayout
  params.py             the kernel parameter buffer (shared with the CUDA device)
  memory.py             global memory arena, fake device addresses, sector counting, atomics
  chunk.py              lane state of a chunk of blocks: registers, memory accesses, race checks
  engine.py             lane groups, divergence, reconvergence, barriers
  launcher.py           launch checks, chunking, copy-in/copy-out: run_ptx, launch
  concurrent.py         launches run together: SM slots, dispatch orders, parked spin loops, deadlocks
  timeline.py           the timeline model: blocks on SM slots over modeled time (a model), its PNG
  stats.py              LaunchStats, the profiler-style counters

Counters (LaunchStats) are what a profiler reports: dynamic thread instructions, warp instructions,
global bytes requested, 32-byte sectors per warp request, distinct global bytes touched, shared
accesses.

Semantics worth knowing
  * Registers are typed numpy arrays (f32 math in float32, integer wraparound, PTX shift clamping);
    a register holding the same value in every lane is kept as a 0-d array ("uniform").
  * `.approx` transcendentals use exact numpy functions; f32 `fma` is computed in float64 and
    rounded once; directed rounding (.rz/.rm/.rp) is honoured for f32 add/sub/mul/fma/div/cvt.
  * Atomics within one instruction apply in lane order (thread order); float `atom.add` returns old
    values accumulated in float64 while memory gets the exact sequential float32 sums.
  * Out-of-bounds and misaligned accesses are errors naming the kernel, PTX line, thread and
    buffer; so are shared-memory races (chunk.py).
  * `shfl.sync` from a lane that has exited or does not exist returns the lane's own value with a
    false predicate. The member mask is checked: a live lane named in it that does not execute the
    same shfl.sync (a divergent shuffle), or an executing lane outside it, is an error. `vote`,
    `redux` and `activemask` see the active lanes (their member masks are not checked).
  * `mma.sync`, `ldmatrix` and `stmatrix` run per warp with the PTX ISA's fragment layouts; a warp that does not
    execute them with all 32 lanes is an error. mma forms exact products and rounds c + sum(a*b)
    once (hardware truncates while accumulating: see docs/simulator.md for the tolerance).
  * Blocks are sequentially consistent: fences and acquire/release qualifiers order nothing
    further; a spin loop on global memory parks its warps until another block writes what
    they read (docs/simulator.md, "Concurrent launches").
  * `cp.async` copies complete at the `cp.async.wait_group`/`wait_all` that covers their group; a
    shared access to a destination still in flight is reported as a race.

Not supported (a SimulatorError names the instruction and PTX line): texture/surface instructions,
`.const` space, `wmma`, `wgmma`, `mma` other than m16n8k16/m16n8k8 f16/bf16 and
m16n8k8/m16n8k4 tf32 (integer, fp8, f64, sparse, m8n8k4), `bar.arrive`/`bar.red`, indirect or recursive calls,
carry chains (`add.cc`, `addc`), `brx.idx`, `.b128`, packed-pair (f16x2/bf16x2) comparisons and
conversions, `match`, `elect`, clusters/TMA (`cp.async.bulk`, `mbarrier`), `f16`/`bf16` atomics.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from fsir.sim.concurrent import DeadlockError, Launch, run_concurrent
    from fsir.sim.launcher import CHUNK_LANES, launch, launch_dims, run_ptx
    from fsir.sim.loader import SimModule, load_module
    from fsir.sim.params import pack_params, param_layout
    from fsir.sim.parser import parse_ptx
    from fsir.sim.stats import LaunchStats

# The names above, imported when first read: the compiler reads the simulator's
# instruction classes (`fsir.sim.classes`) without paying for its engine and PTX parser.
_HOMES = {
    "DeadlockError": "concurrent", "Launch": "concurrent", "run_concurrent": "concurrent",
    "CHUNK_LANES": "launcher", "launch": "launcher", "launch_dims": "launcher", "run_ptx": "launcher",
    "SimModule": "loader", "load_module": "loader", "pack_params": "params", "param_layout": "params",
    "parse_ptx": "parser", "LaunchStats": "stats",
}


def __getattr__(name: str) -> object:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module 'fsir.sim' has no attribute '{name}'")
    value = getattr(importlib.import_module(f"fsir.sim.{home}"), name)
    globals()[name] = value
    return value


__all__ = [
    "CHUNK_LANES",
    "DeadlockError",
    "Launch",
    "LaunchStats",
    "SimModule",
    "launch",
    "launch_dims",
    "load_module",
    "pack_params",
    "param_layout",
    "parse_ptx",
    "run_concurrent",
    "run_ptx",
]
