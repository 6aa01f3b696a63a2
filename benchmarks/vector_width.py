"""What vector memory instructions buy: the load/store instructions a kernel issues
with vector width 1, 2, 4 and the latency-evaluator's choice, measured on the simulator.

    python benchmarks/vector_width.py [--examples layernorm gelu ...]

Each example (examples/<name>.mlir, fused with fusion-explore{mode=stitch}) is compiled
with stitch-codegen{vector=V} and run once on the simulator. Printed per width: the
configuration of each kernel (as recorded in its cost, or its vector_width), warp-level
global load and store instructions (what a profiler's `inst_executed_global_loads` /
`_stores` count), the bytes they move, 32-byte sectors, dynamic warp instructions, and
the evaluator's estimate where it chose among candidates. The default examples are
LayerNorm 4096x768 (a row kernel) and bias+GELU 256x3072 (a big elementwise loop kernel).
"""

from __future__ import annotations

import argparse
import re
import time
from pathlib import Path

import numpy as np

from fsir.parse import parse_module
from fsir.pipeline import PipelineOptions, lower
from fsir.runtime.executor import execute, module_ptx
from fsir.runtime.reference import find_function

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"


def kernel_configs(module) -> list[str]:
    """Each kernel's configuration: the evaluator's `config`, else its vector width."""
    from xdsl.dialects.builtin import StringAttr

    from fsir.dialects.schedule import KernelOp, LoopParamsAttr, RowParamsAttr

    out = []
    for op in module.walk():
        if isinstance(op, KernelOp):
            cost = op.cost.data if op.cost is not None else {}
            config = cost.get("config")
            vec = op.params.vector_width if isinstance(op.params, (LoopParamsAttr, RowParamsAttr)) else 1
            est = cost.get("estimate_us")
            text = config.data if isinstance(config, StringAttr) else f"{op.mapping.data}/v{vec}"
            out.append(text + (f" ({est.value.data:.2f} us est.)" if est is not None else ""))
    return out


def scheduled(module, vector):
    return lower(module, PipelineOptions(fusion="stitch", vector=vector), until="stitch-codegen")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--examples", nargs="+", default=["layernorm", "gelu"])
    args = ap.parse_args()
    for name in args.examples:
        module = parse_module((EXAMPLES / f"{name}.mlir").read_text(), name)
        types = find_function(module).function_type.inputs.data
        rng = np.random.default_rng(0)
        inputs = [rng.standard_normal(tuple(t.get_shape())).astype(np.float32) for t in types]
        print(f"{name}: {', '.join(str(t) for t in types)}")
        print(f"  {'vector':>6}  {'ld instr':>10} {'st instr':>10} {'ld+st':>10} {'ld MB':>7} {'st MB':>7} "
              f"{'sectors':>9} {'warp instr':>11} {'static ld/st .v':>15}  configuration")
        base = None
        for vector in (1, 2, 4, "auto"):
            start = time.perf_counter()
            lowered = lower(module, PipelineOptions(fusion="stitch", vector=vector))
            _, st = execute(lowered, inputs)
            ptx = module_ptx(lowered)
            static = len(re.findall(r"\b(?:ld|st)\.global\.", ptx))
            static_v = len(re.findall(r"\b(?:ld|st)\.global\.v\d", ptx))
            mem = st.global_load_requests + st.global_store_requests
            base = base or mem
            print(f"  {vector!s:>6}  {st.global_load_requests:>10} {st.global_store_requests:>10} "
                  f"{mem:>10} {st.global_load_bytes / 1e6:>7.2f} {st.global_store_bytes / 1e6:>7.2f} "
                  f"{st.global_sectors:>9} {st.warp_instructions:>11} {f'{static}/{static_v}':>15}  "
                  f"{'; '.join(kernel_configs(scheduled(module, vector)))}  "
                  f"[{mem / base:.2f}x ld+st, {time.perf_counter() - start:.0f} s]", flush=True)


if __name__ == "__main__":
    main()
