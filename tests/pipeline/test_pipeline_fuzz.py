"""Random graphs through the whole pipeline: every fusion mode, PTX assembled by ptxas for
sm_80 and sm_90, run on the simulator and compared with the reference interpreter.

200 graphs per run by default; `pytest tests/pipeline/test_pipeline_fuzz.py --fuzz-count 2000
--fuzz-seed 5000` runs more (a failing seed is reproduced by `python -m
fsir.testing.random_graphs --seed N --dynamic 0.2`).
"""

from __future__ import annotations

from fsir.parse import parse_module
from fsir.pipeline import PipelineOptions, lower
from fsir.runtime.compare import compare
from fsir.runtime.executor import execute
from fsir.runtime.inputs import random_inputs
from fsir.runtime.reference import find_function, run_function, run_function_float64
from fsir.testing.pipeline import assemble_all

MODES = ("stitch", "xla", "none")


def test_random_graph_through_ptx(fuzz_seed):
    mode = MODES[fuzz_seed % len(MODES)]
    module = parse_module(_graph(fuzz_seed), f"seed{fuzz_seed}.mlir")
    f = find_function(module)
    inputs = random_inputs(f, fuzz_seed)
    want = run_function(f, inputs)
    exact = run_function_float64(f, inputs)
    # every other stitch seed forces expensive elementwise sub-roots wherever they fit
    subroots = "all" if mode == "stitch" and (fuzz_seed // len(MODES)) % 2 else "auto"
    lowered = lower(module, PipelineOptions(fusion=mode, subroots=subroots))
    assemble_all(lowered)
    got, _ = execute(lowered, inputs)
    assert len(got) == len(want)
    for i, (g, w, e) in enumerate(zip(got, want, exact)):
        c = compare(g, w, exact=e)
        assert c.ok, f"seed {fuzz_seed} ({mode}) output {i}: {c}"


def _graph(seed: int) -> str:
    from fsir.testing.random_graphs import random_graph

    return random_graph(seed, dynamic=0.2 if seed % 2 else 0.0)
