"""graph-embedding-bags on generated bag layouts (fsir/transforms/embedding_bags.py):
both exporters' forms (per-bag slices of the ids and weights; one gather whose rows
each bag slices), sum / weighted sum / mean / max, ragged bag lengths. Where the bags
are contiguous from row 0 to the last row the concat becomes one segment_reduce; where
a slice leaves a gap or stops short it stays; the reference interpreter gives the same
values before and after either way."""

from __future__ import annotations

import zlib

import numpy as np
import pytest

from fsir.dialects import graph
from fsir.parse import parse_module
from fsir.runtime.reference import run
from fsir.transforms.embedding_bags import fuse_embedding_bags

ROWS, DIM = 9, 3


def _bag(b: int, lo: int, hi: int, n_ids: int, style: str, kind: str, weighted: bool) -> list[str]:
    """Bag b's chain over ids [lo, hi), ending in %o{b}: tensor<1xDIM>."""
    n = hi - lo
    rows = f"tensor<{n}x{DIM}xf32>"
    if style == "sliced":  # TorchScript: slice the ids (and weights), wrap negative ids, gather
        lines = [f"%i{b} = graph.slice %ids start [{lo}] limit [{hi}] strides [1] : (tensor<{n_ids}xi64>) -> tensor<{n}xi64>",
                 f"%z{b} = graph.constant dense<0> : tensor<{n}xi64>",
                 f"%r{b} = graph.constant dense<{ROWS}> : tensor<{n}xi64>",
                 f"%n{b} = graph.compare lt %i{b}, %z{b} : (tensor<{n}xi64>, tensor<{n}xi64>) -> tensor<{n}xi1>",
                 f"%u{b} = graph.add %i{b}, %r{b} : tensor<{n}xi64>",
                 f"%s{b} = graph.select %n{b}, %u{b}, %i{b} : (tensor<{n}xi1>, tensor<{n}xi64>, tensor<{n}xi64>) -> tensor<{n}xi64>",
                 f"%e{b} = graph.gather %table, %s{b} : (tensor<{ROWS}x{DIM}xf32>, tensor<{n}xi64>) -> {rows}"]
        last = f"%e{b}"
        if weighted:
            lines += [f"%w{b} = graph.slice %w start [{lo}] limit [{hi}] strides [1] : (tensor<{n_ids}xf32>) -> tensor<{n}xf32>",
                      f"%v{b} = graph.reshape %w{b} : (tensor<{n}xf32>) -> tensor<{n}x1xf32>",
                      f"%b{b} = graph.broadcast %v{b} dims [0, 1] : (tensor<{n}x1xf32>) -> {rows}",
                      f"%m{b} = graph.mul %e{b}, %b{b} : {rows}"]
            last = f"%m{b}"
    else:  # dynamo: each bag slices the gathered (and weighted) rows
        lines = [f"%e{b} = graph.slice %all start [{lo}, 0] limit [{hi}, {DIM}] strides [1, 1] : "
                 f"(tensor<{n_ids}x{DIM}xf32>) -> {rows}"]
        last = f"%e{b}"
    reduce = "max" if kind == "max" else "sum"
    lines.append(f"%t{b} = graph.reduce {reduce} {last} dims [0] : ({rows}) -> tensor<{DIM}xf32>")
    out = f"%t{b}"
    if kind == "mean":
        lines += [f"%c{b} = graph.constant dense<{n}.0> : tensor<{DIM}xf32>",
                  f"%d{b} = graph.div %t{b}, %c{b} : tensor<{DIM}xf32>"]
        out = f"%d{b}"
    lines.append(f"%o{b} = graph.reshape {out} : (tensor<{DIM}xf32>) -> tensor<1x{DIM}xf32>")
    return lines


def _model(lengths: list[int], style: str, kind: str, weighted: bool, flaw: str | None) -> str:
    n_ids, bags = sum(lengths), len(lengths)
    bounds = [(sum(lengths[:b]), sum(lengths[:b + 1])) for b in range(bags)]
    if flaw == "gap":  # the last bag starts one row late (and ends at the last row)
        lo, hi = bounds[-1]
        bounds[-1] = (lo + 1, hi)
    elif flaw == "short":  # the last bag stops one row before the last row
        lo, hi = bounds[-1]
        bounds[-1] = (lo, hi - 1)
    body = []
    if style == "gathered":
        gathered = "%g" if weighted else "%all"
        body.append(f"{gathered} = graph.gather %table, %ids : (tensor<{ROWS}x{DIM}xf32>, tensor<{n_ids}xi64>) -> "
                    f"tensor<{n_ids}x{DIM}xf32>")
        if weighted:
            body += [f"%v = graph.reshape %w : (tensor<{n_ids}xf32>) -> tensor<{n_ids}x1xf32>",
                     f"%wb = graph.broadcast %v dims [0, 1] : (tensor<{n_ids}x1xf32>) -> tensor<{n_ids}x{DIM}xf32>",
                     f"%all = graph.mul %g, %wb : tensor<{n_ids}x{DIM}xf32>"]
    for b, (lo, hi) in enumerate(bounds):
        body += _bag(b, lo, hi, n_ids, style, kind, weighted)
    ins = ", ".join(f"tensor<1x{DIM}xf32>" for _ in range(bags))
    body += [f"%bags = graph.concat {', '.join(f'%o{b}' for b in range(bags))} dim 0 : ({ins}) -> "
             f"tensor<{bags}x{DIM}xf32>",
             f"func.return %bags : tensor<{bags}x{DIM}xf32>"]
    return (f"func.func @main(%table: tensor<{ROWS}x{DIM}xf32>, %ids: tensor<{n_ids}xi64>, %w: tensor<{n_ids}xf32>) "
            f"-> tensor<{bags}x{DIM}xf32> {{\n  " + "\n  ".join(body) + "\n}\n")


CASES = [(style, kind, weighted) for style in ("sliced", "gathered") for kind in ("sum", "mean", "max")
         for weighted in (False, True) if not (weighted and kind != "sum")]


@pytest.mark.parametrize("flaw", [None, "gap", "short"])
@pytest.mark.parametrize(("style", "kind", "weighted"), CASES)
def test_bags_become_one_segment_reduce_exactly_when_contiguous(style, kind, weighted, flaw):
    rng = np.random.default_rng(zlib.crc32(repr((style, kind, weighted, flaw)).encode()))
    for _ in range(3):
        lengths = [int(n) for n in rng.integers(1, 5, rng.integers(2, 5))]
        if flaw is not None and lengths[-1] < 2:
            lengths[-1] = 2  # room to shorten the last bag
        module = parse_module(_model(lengths, style, kind, weighted, flaw))
        n_ids = sum(lengths)
        inputs = [rng.standard_normal((ROWS, DIM)).astype(np.float32),
                  rng.integers(-ROWS, ROWS, n_ids).astype(np.int64),  # negative ids wrap (ONNX Gather)
                  rng.uniform(-2, 2, n_ids).astype(np.float32)]
        (before,) = run(module, inputs)
        fused = fuse_embedding_bags(module)
        module.verify()
        segments = [op for op in module.walk() if isinstance(op, graph.SegmentReduceOp)]
        if flaw is None:
            assert fused == 1 and len(segments) == 1
            assert str(segments[0].kind.data) == kind
            assert not [op for op in module.walk() if isinstance(op, graph.ReduceOp | graph.SliceOp)]
            offsets = segments[0].offsets.owner
            assert isinstance(offsets, graph.ConstantOp)
            assert graph.constant_array(offsets.value).tolist() == [sum(lengths[:b]) for b in range(len(lengths))]
        else:
            assert fused == 0 and not segments
        (after,) = run(module, inputs)
        np.testing.assert_allclose(after, before, rtol=1e-6, atol=1e-6)
