"""`nn.EmbeddingBag` as PyTorch exports it (tests/frontend/embedding_bags/: a sum with
per-sample weights, a sum over ragged bags of constant offsets, a mean and a max, by
the TorchScript and the dynamo exporter, in f32 and f16): the ONNX importer unrolls
the bag loops, then folds each table's bags into one `graph.segment_reduce`
(fsir/transforms/embedding_bags.py), so one columns kernel computes all bags; the
results match onnxruntime's."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnxruntime as ort
import pytest

import fsir
from fsir.dialects import graph
from fsir.pipeline import load

BAGS = Path(__file__).resolve().parent / "embedding_bags"
# (rows of the table, shape of the ids) per input; w0 weighs ids0
IDS = {"ids0": (10, (3, 2)), "ids1": (7, (6,)), "ids2": (5, (3, 3)), "ids3": (6, (3, 2))}


def _inputs(dtype: type) -> dict[str, np.ndarray]:
    """Ids other than the exported example's, and negative weights too."""
    rng = np.random.default_rng(7)
    feeds = {name: rng.integers(0, rows, shape).astype(np.int64) for name, (rows, shape) in IDS.items()}
    feeds["w0"] = rng.uniform(-2, 2, (3, 2)).astype(dtype)
    return {k: feeds[k] for k in ("ids0", "w0", "ids1", "ids2", "ids3")}


@pytest.mark.parametrize("dtype", ["f32", "f16"])
@pytest.mark.parametrize("exporter", ["torchscript", "dynamo"])
def test_embedding_bags_are_one_columns_kernel(exporter: str, dtype: str):
    path = BAGS / f"bags.{exporter}.{dtype}.onnx"
    module = load(path)
    bags = [op for op in module.walk() if isinstance(op, graph.SegmentReduceOp)]
    assert sorted(str(op.kind.data) for op in bags) == ["max", "mean", "sum", "sum"]
    assert not [op for op in module.walk() if isinstance(op, graph.ReduceOp)]
    # the ragged table's bags hold 1, 3 and 2 ids
    offsets = [op.offsets.owner for op in bags]
    assert [graph.constant_array(c.value).tolist() for c in offsets if isinstance(c, graph.ConstantOp)] == [
        [0, 2, 4], [0, 1, 4], [0, 3, 6], [0, 2, 4]]

    exe = fsir.compile(module, fusion="stitch")
    assert [k.mapping for k in exe.kernels] == ["columns"]
    feeds = _inputs(np.float16 if dtype == "f16" else np.float32)
    (got,) = exe.run(list(feeds.values()), device="sim")
    (want,) = ort.InferenceSession(path.read_bytes()).run(None, feeds)
    assert got.shape == want.shape == (3, 16) and got.dtype == want.dtype
    tol = {"rtol": 2e-3, "atol": 2e-3} if dtype == "f16" else {"rtol": 1e-5, "atol": 1e-6}
    np.testing.assert_allclose(got.astype(np.float32), want.astype(np.float32), **tol)
