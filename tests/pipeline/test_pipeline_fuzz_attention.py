"""Exporter-style attention and normalisation graphs (`random_attention_graph`: heads
reshaped in and out, grouped K/V heads expanded, scales computed from shapes, Cast
chains, guards and modifiers between a softmax and the next dot) compiled with stitch
fusion and with none, each run on the simulator and compared with the reference
interpreter and with the other.

Stitch fusion is where such graphs went wrong while `none` ran them right (a GEMM
prologue's scale shared by Q and K, zero for threads whose last staged row lay beyond
M: seven of ONNX's expanded attention node tests); a kernel per op is the baseline.

`ATTENTION_GRAPHS` (tests/conftest.py) graphs per run; `--fuzz-count N --fuzz-seed S`
runs more. A failing seed is printed by `python -m fsir.testing.random_graphs
--attention --seed N`.
"""

from __future__ import annotations

from fsir.parse import parse_module
from fsir.pipeline import PipelineOptions, lower
from fsir.runtime.compare import compare
from fsir.runtime.executor import execute
from fsir.runtime.inputs import random_inputs
from fsir.runtime.reference import find_function, run_function, run_function_float64
from fsir.testing.pipeline import assemble_all
from fsir.testing.random_graphs import random_attention_graph

MODES = ("stitch", "none")


def test_attention_graph_stitch_against_none(attention_seed):
    module = parse_module(random_attention_graph(attention_seed), f"attention{attention_seed}.mlir")
    f = find_function(module)
    inputs = random_inputs(f, attention_seed)
    want = run_function(f, inputs)
    exact = run_function_float64(f, inputs)
    got = {mode: _run(module, mode, inputs) for mode in MODES}
    for mode in MODES:
        assert len(got[mode]) == len(want)
        for i, (g, w, e) in enumerate(zip(got[mode], want, exact)):
            c = compare(g, w, exact=e)
            assert c.ok, f"seed {attention_seed} ({mode}) output {i} against the reference: {c}"
    for i, (s, n, e) in enumerate(zip(got["stitch"], got["none"], exact)):
        # both may be off the f32 reference by its tolerance: twice that between them
        c = compare(s, n, scale=2.0, exact=e)
        assert c.ok, f"seed {attention_seed} output {i}, stitch against none: {c}"


def _run(module, mode: str, inputs):
    lowered = lower(module, PipelineOptions(fusion=mode))
    if mode == "stitch":  # the kernels the baseline does not have
        assemble_all(lowered)
    return execute(lowered, inputs)[0]


def test_the_family_covers_the_patterns():
    """The generator draws every pattern the family stands for within the CI seeds."""
    from conftest import ATTENTION_GRAPHS

    texts = [random_attention_graph(s) for s in range(ATTENTION_GRAPHS)]
    for needle in ("graph.gather", "graph.sqrt", "x1x", "graph.select", "compare eq", "graph.tanh", "xf16>",
                   "perm [0, 2, 1, 3]", "dims [0, 1, 2, 3, 4]", "graph.convert", "graph.reduce max"):
        assert any(needle in t for t in texts), needle
