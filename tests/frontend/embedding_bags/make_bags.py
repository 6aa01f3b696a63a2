"""Writes the EmbeddingBag models of test_onnx_embedding_bag.py: one module of four
`nn.EmbeddingBag`s (a sum with per-sample weights, a sum over ragged bags given by
constant offsets, a mean, a max) concatenated along dim 1, exported by PyTorch's
TorchScript exporter (a `Loop` per bag table) and its dynamo exporter (a `Loop`
filling a sequence), in f32 and f16: bags.EXPORTER.DTYPE.onnx. The dynamo export
takes seconds, so the models are files (about 50 kB in all, without the exporters'
metadata); rerun after changing the module:

    pip install -e '.[zoo]'
    python tests/frontend/embedding_bags/make_bags.py
"""

from __future__ import annotations

import io
import warnings
from pathlib import Path

import onnx
import torch
from torch import nn

HERE = Path(__file__).resolve().parent
INPUTS = ("ids0", "w0", "ids1", "ids2", "ids3")


class Bags(nn.Module):
    def __init__(self):
        super().__init__()
        self.weighted = nn.EmbeddingBag(10, 4, mode="sum")
        self.ragged = nn.EmbeddingBag(7, 4, mode="sum")
        self.mean = nn.EmbeddingBag(5, 4, mode="mean")
        self.max = nn.EmbeddingBag(6, 4, mode="max")
        self.register_buffer("offsets", torch.tensor([0, 1, 4]))  # bags of 1, 3 and 2 ids

    def forward(self, ids0, w0, ids1, ids2, ids3):
        return torch.cat([self.weighted(ids0, per_sample_weights=w0), self.ragged(ids1, self.offsets),
                          self.mean(ids2), self.max(ids3)], dim=1)


def example_inputs(dtype: torch.dtype) -> tuple[torch.Tensor, ...]:
    g = torch.Generator().manual_seed(1)
    return (torch.randint(0, 10, (3, 2), generator=g), torch.rand(3, 2, generator=g).to(dtype),
            torch.randint(0, 7, (6,), generator=g), torch.randint(0, 5, (3, 3), generator=g),
            torch.randint(0, 6, (3, 2), generator=g))


def export(dynamo: bool, dtype: torch.dtype) -> bytes:
    torch.manual_seed(0)
    module = Bags().eval().to(dtype)
    args = example_inputs(dtype)
    if dynamo:
        return torch.onnx.export(module, args, dynamo=True, input_names=list(INPUTS)).model_proto.SerializeToString()
    out = io.BytesIO()
    torch.onnx.export(module, args, out, dynamo=False, input_names=list(INPUTS))
    return out.getvalue()


def _strip(graph: onnx.GraphProto) -> None:
    """Drop the exporters' doc strings and metadata (the dynamo exporter's stack traces
    are most of its file), in subgraphs too."""
    for node in graph.node:
        node.doc_string = ""
        del node.metadata_props[:]
        for attr in node.attribute:
            for sub in [attr.g] * (attr.type == onnx.AttributeProto.GRAPH) + list(attr.graphs):
                _strip(sub)
    for value in [*graph.value_info, *graph.input, *graph.output]:
        value.doc_string = ""
        del value.metadata_props[:]
    for init in graph.initializer:
        del init.metadata_props[:]


def small(model: bytes) -> bytes:
    proto = onnx.load_model_from_string(model)
    _strip(proto.graph)
    del proto.metadata_props[:]
    onnx.checker.check_model(proto)
    return proto.SerializeToString()


def main() -> None:
    warnings.filterwarnings("ignore")
    for exporter in ("torchscript", "dynamo"):
        for name, dtype in (("f32", torch.float32), ("f16", torch.float16)):
            (HERE / f"bags.{exporter}.{name}.onnx").write_bytes(small(export(exporter == "dynamo", dtype)))


if __name__ == "__main__":
    main()
