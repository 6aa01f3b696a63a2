"""A concat of hundreds of operands (the embedding columns of a RECom model in a loop
kernel) lowers with branches nested log2(operands) deep, not one per operand (which
exceeded Python's recursion limit at ~330 operands), and computes the concat."""

from __future__ import annotations

import numpy as np

from fsir.parse import parse_module
from fsir.pipeline import PipelineOptions, lower
from fsir.runtime.executor import execute


def wide_concat(n: int) -> str:
    args = ", ".join(f"%a{i}: tensor<2x1xf32>" for i in range(n))
    ops = ", ".join(f"%a{i}" for i in range(n))
    types = ", ".join(["tensor<2x1xf32>"] * n)
    return (f"func.func @cat({args}) -> tensor<2x{n}xf32> {{\n"
            f"  %c = graph.concat {ops} dim 1 : ({types}) -> tensor<2x{n}xf32>\n"
            f"  func.return %c : tensor<2x{n}xf32>\n}}")


def if_depth(op, depth: int = 0) -> int:
    deepest = depth
    stack = [(op, depth)]
    while stack:
        o, d = stack.pop()
        for region in o.regions:
            for block in region.blocks:
                for inner in block.ops:
                    nd = d + (inner.name == "scf.if")
                    deepest = max(deepest, nd)
                    stack.append((inner, nd))
    return deepest


def test_wide_concat_nests_log_deep_and_computes():
    n = 400
    lowered = lower(parse_module(wide_concat(n)), PipelineOptions(fusion="none"))
    assert if_depth(lowered) <= 11  # ceil(log2(400)) = 9, and the store's guard
    rng = np.random.default_rng(0)
    inputs = [rng.standard_normal((2, 1)).astype(np.float32) for _ in range(n)]
    (got,), _ = execute(lowered, inputs)
    np.testing.assert_array_equal(got, np.concatenate(inputs, axis=1))
