"""What expensive elementwise sub-roots (stitch-codegen{subroots=...}) buy: for row
fusions with long and short rows, the configuration the latency-evaluator picks with
sub-roots off (none) and on offer (auto), its estimate, and what the kernel requests
from global memory on the simulator (bytes loaded, distinct bytes, 32-byte sectors) and
the instructions it executes.

    python benchmarks/subroots.py

Rows too long for the registers loop over the row in every group; there a shared-row
sub-root (e.g. exp in softmax) saves the global re-reads and the recomputation that
each of its readers would repeat. Short rows stay cached in registers either way.
(Statistics are for the whole graph; the configuration and estimate of its row kernels.)
"""

from __future__ import annotations

import numpy as np

from fsir.parse import parse_module
from fsir.pipeline import PipelineOptions, lower
from fsir.runtime.executor import execute
from fsir.runtime.reference import find_function
from fsir.testing.graphs import gelu_sum, layernorm_exp, softmax
from fsir.testing.pipeline import schedule_kernels

CASES = {
    "softmax 4x10240 f32": softmax(4, 10240),
    "softmax 32x10240 f32": softmax(32, 10240),
    "softmax 4x16384 f16": softmax(4, 16384, "f16"),
    "softmax 4x16384 f32": softmax(4, 16384),
    "softmax 4x8192 f32": softmax(4, 8192),
    "softmax 128x64 f32": softmax(128, 64),
    "gelu+sum 6x10240": gelu_sum(6, 10240),
    "layernorm(exp) 4x10240": layernorm_exp(4, 10240),
}


def run(text: str, subroots: str) -> tuple[str, float, object]:
    rows = [k for k in schedule_kernels(text, subroots=subroots) if "config" in k.cost.data]
    config = " ".join(k.cost.data["config"].data for k in rows)
    est = sum(k.cost.data["estimate_us"].value.data for k in rows)
    module = parse_module(text, "<bench>")
    types = find_function(module).function_type.inputs.data
    rng = np.random.default_rng(0)
    from fsir.dialects.graph import numpy_dtype

    inputs = [rng.standard_normal(tuple(t.get_shape())).astype(numpy_dtype(t.element_type)) for t in types]
    _, stats = execute(lower(module, PipelineOptions(fusion="stitch", subroots=subroots)), inputs)
    return config, est, stats


def main() -> None:
    print(f"{'fusion':24} {'subroots':8} {'config':28} {'est us':>8} {'loaded B':>10} {'distinct B':>10} "
          f"{'sectors':>8} {'instructions':>13}")
    for name, text in CASES.items():
        for mode in ("none", "auto"):
            config, est, s = run(text, mode)
            print(f"{name:24} {mode:8} {config:28} {est:8.3f} {s.global_load_bytes:10d} "
                  f"{s.global_unique_bytes:10d} {s.global_sectors:8d} {s.instructions:13d}")


if __name__ == "__main__":
    main()
