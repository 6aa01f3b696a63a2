"""Export the ONNX examples in this folder from PyTorch.

    pip install torch transformers onnxscript    # needed only to regenerate, not by fsir
    python examples/onnx/make_onnx.py

  bert_layer.onnx         a BERT encoder layer written with torch.nn (post-LN, 4 heads,
                          hidden 64, FFN 256, exact GELU), torch.onnx's default (dynamo)
                          exporter: LayerNormalization, Softmax, Erf, MatMul, ...
  bert_layer_legacy.onnx  the same layer through the TorchScript exporter
                          (dynamo=False, opset 14, no constant folding): the
                          Shape→Gather→Unsqueeze→Concat→Reshape chains of `x.shape`,
                          ReduceMean/Pow/Sqrt LayerNorm, Constant nodes
  bert_tiny.onnx          `transformers.BertModel` built from a BertConfig (2 layers,
                          hidden 64, 4 heads, vocab 100), randomly initialised — nothing
                          is downloaded; inputs input_ids and attention_mask (int64)

Weights are stored as initializers inside the files. Parameters are re-drawn at random
(LayerNorm γ/β and biases too) so that no weight is a trivial 0 or 1.
tests/frontend/test_frontend_onnx.py compares fsir's reference interpreter with onnxruntime.
"""

import math
from pathlib import Path

import torch
from torch import nn

HERE = Path(__file__).resolve().parent
B, S, H, NH, FF = 2, 16, 64, 4, 256


class BertLayer(nn.Module):
    def __init__(self):
        super().__init__()
        self.q, self.k, self.v, self.o = (nn.Linear(H, H) for _ in range(4))
        self.ln1, self.ln2 = nn.LayerNorm(H, eps=1e-12), nn.LayerNorm(H, eps=1e-12)
        self.up, self.down = nn.Linear(H, FF), nn.Linear(FF, H)

    def heads(self, t):
        b, s, _ = t.shape
        return t.view(b, s, NH, H // NH).transpose(1, 2)

    def forward(self, x, mask):
        q, k, v = self.heads(self.q(x)), self.heads(self.k(x)), self.heads(self.v(x))
        scores = q @ k.transpose(-1, -2) / math.sqrt(H // NH) + mask
        ctx = (scores.softmax(-1) @ v).transpose(1, 2).reshape(x.shape)
        h = self.ln1(self.o(ctx) + x)
        return self.ln2(self.down(nn.functional.gelu(self.up(h))) + h)


def randomize(model: nn.Module, seed: int) -> nn.Module:
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for name, p in model.named_parameters():
            if name.endswith("LayerNorm.weight") or ".ln" in f".{name}" and name.endswith("weight"):
                p.copy_(1 + 0.1 * torch.randn(p.shape, generator=g))
            else:
                p.copy_(torch.randn(p.shape, generator=g) / math.sqrt(p.shape[-1]))
    return model.eval()


def export(model, args, path, names, **kw):
    torch.onnx.export(model, args, str(path), input_names=names, external_data=False, **kw)
    print(f"{path.name}: {path.stat().st_size // 1024} KiB")


def main():
    torch.manual_seed(0)
    x = torch.randn(B, S, H)
    mask = torch.zeros(B, 1, 1, S)
    mask[1, ..., S // 2:] = -10000.0
    layer = randomize(BertLayer(), 1)
    export(layer, (x, mask), HERE / "bert_layer.onnx", ["x", "mask"], opset_version=18)
    torch.onnx.export(layer, (x, mask), str(HERE / "bert_layer_legacy.onnx"), input_names=["x", "mask"],
                      dynamo=False, opset_version=14, do_constant_folding=False)
    print("bert_layer_legacy.onnx written")

    from transformers import BertConfig, BertModel

    cfg = BertConfig(vocab_size=100, hidden_size=64, num_hidden_layers=2, num_attention_heads=4,
                     intermediate_size=128, max_position_embeddings=32)
    bert = randomize(BertModel(cfg), 2)
    ids = torch.randint(0, 100, (B, S))
    attention = torch.ones(B, S, dtype=torch.long)
    attention[1, S // 2:] = 0
    export(bert, (ids, attention), HERE / "bert_tiny.onnx", ["input_ids", "attention_mask"], opset_version=18)


if __name__ == "__main__":
    main()
