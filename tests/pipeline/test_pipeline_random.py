"""Random valid graphs (fsir.testing.random_graphs, with `?` dims) through fusion
(none and the FusionStitching explorer), stitch-codegen, schedule-to-gpu and the
simulator, against the reference interpreter. Seeds are fixed; several of them found
bugs during development (independent parts packed into row kernels, `?` shapes sharing
a loop, rank-0 indexing, size-1 broadcasts to `?`, fmod precision)."""

from __future__ import annotations

import numpy as np
import pytest

from fsir.parse import parse_module
from fsir.pipeline import PipelineOptions, lower
from fsir.runtime.compare import compare
from fsir.runtime.executor import execute
from fsir.runtime.reference import run
from fsir.testing.pipeline import check_dominance
from fsir.testing.random_graphs import random_graph, random_inputs

SEEDS = [3159, 5, 12, 23, 28, 48, 82, 94, 120, 139, 182, 198, 244] + list(range(300, 306))
BIG = dict(max_ops=30, dynamic=0.3, max_rank=4, max_elements=20000)


@pytest.mark.parametrize("mode", ["none", "stitch"])
@pytest.mark.parametrize("seed", SEEDS)
def test_random_graph(seed, mode):
    module = parse_module(random_graph(seed, max_ops=25, dynamic=0.3))
    inputs = random_inputs(module, np.random.default_rng(seed))
    want = run(module, inputs)  # `?` inputs follow fsir.runtime_shape, so sizes agree
    lowered = lower(module, PipelineOptions(fusion=mode))
    check_dominance(lowered)
    got, _ = execute(lowered, inputs)
    for i, (g, w) in enumerate(zip(got, want)):
        c = compare(g, w, scale=8)
        assert c.ok, f"output {i}: {c}"


@pytest.mark.parametrize("seed", [1082, 1000, 1001])
def test_random_graph_big(seed):
    module = parse_module(random_graph(seed, **BIG))
    inputs = random_inputs(module, np.random.default_rng(seed))
    want = run(module, inputs)
    lowered = lower(module, PipelineOptions(fusion="stitch"))
    check_dominance(lowered)
    got, _ = execute(lowered, inputs)
    for i, (g, w) in enumerate(zip(got, want)):
        c = compare(g, w, scale=8)
        assert c.ok, f"output {i}: {c}"
