"""torch.compile(model, backend="fsir") against eager PyTorch (fsir/torch).

Four models written in plain torch (an MLP with GELU, a BERT encoder block, a ResNet
basic block with BatchNorm in eval mode, an EmbeddingBag recommender) in f32 and bf16,
within fsir/runtime/compare.py's tolerances for the dtype; the fallback to eager for an
op fsir does not support; one compile serving two batch sizes under dynamic shapes.
The backend is found by name through the `torch_dynamo_backends` entry point; on a
machine without a GPU it runs on the simulator.
"""

from __future__ import annotations

import warnings

import pytest

torch = pytest.importorskip("torch")

import torch.nn.functional as F  # noqa: E402
from torch import nn  # noqa: E402

import fsir.torch  # noqa: E402
from fsir.runtime.compare import compare  # noqa: E402
from fsir.torch import to_numpy  # noqa: E402


class MLP(nn.Module):
    def __init__(self, d: int = 32, h: int = 64):
        super().__init__()
        self.fc1, self.fc2 = nn.Linear(d, h), nn.Linear(h, d)

    def forward(self, x):
        return self.fc2(F.gelu(self.fc1(x)))


class BertBlock(nn.Module):
    def __init__(self, d: int = 32, heads: int = 2, ff: int = 64):
        super().__init__()
        self.heads = heads
        self.qkv, self.o = nn.Linear(d, 3 * d), nn.Linear(d, d)
        self.ln1, self.ln2 = nn.LayerNorm(d), nn.LayerNorm(d)
        self.ff1, self.ff2 = nn.Linear(d, ff), nn.Linear(ff, d)

    def forward(self, x):
        b, t, d = x.shape
        q, k, v = self.qkv(x).split(d, dim=-1)
        q, k, v = (y.view(b, t, self.heads, d // self.heads).transpose(1, 2) for y in (q, k, v))
        a = torch.softmax(q @ k.transpose(-2, -1) / (d // self.heads) ** 0.5, dim=-1) @ v
        x = self.ln1(x + self.o(a.transpose(1, 2).reshape(b, t, d)))
        return self.ln2(x + self.ff2(F.gelu(self.ff1(x))))


class BasicBlock(nn.Module):
    def __init__(self, c: int = 8):
        super().__init__()
        self.conv1, self.bn1 = nn.Conv2d(c, c, 3, padding=1, bias=False), nn.BatchNorm2d(c)
        self.conv2, self.bn2 = nn.Conv2d(c, c, 3, padding=1, bias=False), nn.BatchNorm2d(c)

    def forward(self, x):
        return F.relu(x + self.bn2(self.conv2(F.relu(self.bn1(self.conv1(x))))))


class Recommender(nn.Module):
    def __init__(self, mode: str, rows: int = 50, d: int = 16):
        super().__init__()
        self.bag, self.fc = nn.EmbeddingBag(rows, d, mode=mode), nn.Linear(d, 1)

    def forward(self, ids, offsets):
        return torch.sigmoid(self.fc(self.bag(ids, offsets)))


def _batchnorm_stats(m: BasicBlock) -> BasicBlock:
    """Running statistics other than 0 and 1, so eval-mode BatchNorm does something."""
    for bn in (m.bn1, m.bn2):
        bn.running_mean.uniform_(-0.5, 0.5)
        bn.running_var.uniform_(0.5, 2.0)
        bn.weight.data.uniform_(0.5, 1.5)
        bn.bias.data.uniform_(-0.5, 0.5)
    return m.eval()


MODELS = {
    "mlp": (lambda: MLP(), lambda: (torch.randn(4, 32),)),
    "bert": (lambda: BertBlock(), lambda: (torch.randn(2, 8, 32),)),
    "resnet": (lambda: _batchnorm_stats(BasicBlock()), lambda: (torch.randn(2, 8, 6, 6),)),
    "bag-sum": (lambda: Recommender("sum"), lambda: (torch.randint(0, 50, (12,)), torch.tensor([0, 3, 3, 7]))),
    "bag-mean": (lambda: Recommender("mean"), lambda: (torch.randint(0, 50, (12,)), torch.tensor([0, 3, 3, 7]))),
}


@pytest.fixture(autouse=True)
def _fresh_dynamo():
    torch._dynamo.reset()
    torch.manual_seed(0)
    yield
    torch._dynamo.reset()


def _fsir_warnings(caught: list[warnings.WarningMessage]) -> list[str]:
    return [str(w.message) for w in caught if "in eager PyTorch" in str(w.message)]


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16], ids=["f32", "bf16"])
@pytest.mark.parametrize("name", list(MODELS))
def test_model_matches_eager(name: str, dtype):
    make_model, make_inputs = MODELS[name]
    model = make_model().to(dtype)
    args = tuple(a.to(dtype) if a.is_floating_point() else a for a in make_inputs())
    before = len(fsir.torch.compiles)
    with torch.no_grad(), warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        want = model(*args)
        got = torch.compile(model, backend="fsir")(*args)
    assert _fsir_warnings(caught) == []  # compiled by fsir, no fallback
    assert len(fsir.torch.compiles) == before + 1
    assert got.dtype == want.dtype and got.shape == want.shape
    result = compare(to_numpy(got), to_numpy(want))
    assert result.ok, result


def test_unsupported_op_falls_back_with_one_warning():
    def f(x):
        return torch.cumsum(torch.tanh(x), dim=1) * 2

    x = torch.randn(3, 5)
    compiled = torch.compile(f, backend="fsir")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        first, second = compiled(x), compiled(x)
    messages = _fsir_warnings(caught)
    assert len(messages) == 1, messages
    assert messages[0].startswith("fsir does not support aten.cumsum.default; running this graph in eager PyTorch")
    torch.testing.assert_close(first, f(x))
    torch.testing.assert_close(second, f(x))


def test_dynamic_batch_one_compile():
    model = MLP()
    compiled = torch.compile(model, backend="fsir", dynamic=True)
    before = len(fsir.torch.compiles)
    with torch.no_grad():
        for batch in (3, 5):
            x = torch.randn(batch, 32)
            result = compare(compiled(x).numpy(), model(x).numpy())
            assert result.ok, (batch, result)
    assert len(fsir.torch.compiles) == before + 1
    assert "?x32xf32" in str(fsir.torch.compiles[-1].converted.module)


def test_marked_dynamic_batch_bert_one_compile():
    """dynamic=True makes every size symbolic, and BERT's [B*T, 96] -> [B, T, 96] view
    has two `?` result dims, which graph.reshape cannot determine; marking the batch
    alone dynamic compiles once for every batch size."""
    model = BertBlock()
    compiled = torch.compile(model, backend="fsir")
    before = len(fsir.torch.compiles)
    with torch.no_grad():
        for batch in (3, 5):
            x = torch.randn(batch, 8, 32)
            torch._dynamo.mark_dynamic(x, 0)
            result = compare(compiled(x).numpy(), model(x).numpy())
            assert result.ok, (batch, result)
    assert len(fsir.torch.compiles) == before + 1
