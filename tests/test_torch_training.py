"""Training through torch.compile(backend="fsir"): AOTAutograd's forward and backward
graphs both compiled by fsir, against eager PyTorch.

Each model trains for five SGD steps twice from the same weights, once eagerly and once
compiled; the losses, every step's gradients and the parameters (and BatchNorm's running
statistics) after the steps match within f32 tolerances (docs/numerics.md: rtol 2e-4,
atol 2e-5, fsir/runtime/compare.py's f32 bound; the losses and parameters differ by
about 1e-7 in practice, reassociated reductions). bf16 gradients match within
compare.py's bf16 bound. No graph falls back to eager.
"""

from __future__ import annotations

import copy
import warnings

import pytest

torch = pytest.importorskip("torch")

from test_torch_backend import MLP, BasicBlock, BertBlock  # noqa: E402
from torch import nn  # noqa: E402

import fsir.torch  # noqa: E402
from fsir.runtime.compare import compare  # noqa: E402
from fsir.torch import to_numpy  # noqa: E402

RTOL, ATOL = 2e-4, 2e-5


class MLPNorm(nn.Module):
    """An MLP with GELU followed by a LayerNorm."""

    def __init__(self):
        super().__init__()
        self.mlp, self.norm = MLP(), nn.LayerNorm(32)

    def forward(self, x):
        return self.norm(self.mlp(x))


class StridedNet(nn.Module):
    """A stride-2 convolution with a bias, then a ResNet basic block (BatchNorm in training)."""

    def __init__(self):
        super().__init__()
        self.stem, self.block = nn.Conv2d(3, 8, 3, stride=2, padding=1), BasicBlock()

    def forward(self, x):
        return self.block(self.stem(x))


@pytest.fixture(autouse=True)
def _fresh_dynamo():
    torch._dynamo.reset()
    torch.manual_seed(0)
    yield
    torch._dynamo.reset()


def _fallbacks(caught: list[warnings.WarningMessage]) -> list[str]:
    return [str(w.message) for w in caught if "eager PyTorch" in str(w.message)]


def _train(model: nn.Module, step_fn, x, target, steps: int) -> tuple[list[float], list[dict[str, torch.Tensor]]]:
    """The losses and every parameter's gradient, step by step, of `steps` SGD steps."""
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    losses, grads = [], []
    for _ in range(steps):
        opt.zero_grad()
        loss = torch.nn.functional.mse_loss(step_fn(x), target)
        loss.backward()
        grads.append({k: p.grad.clone() for k, p in model.named_parameters() if p.grad is not None})
        opt.step()
        losses.append(loss.item())
    return losses, grads


TRAINED = {
    "mlp-layernorm": (MLPNorm, (8, 32), 5),
    "bert": (BertBlock, (2, 8, 32), 5),
    "resnet-train": (StridedNet, (2, 3, 9, 9), 5),
}


@pytest.mark.parametrize("name", list(TRAINED))
def test_sgd_steps_match_eager(name: str):
    make, shape, steps = TRAINED[name]
    model = make().train()
    eager = copy.deepcopy(model)
    x = torch.randn(*shape)
    target = torch.randn_like(copy.deepcopy(model)(x)).detach()  # (a copy: running statistics stay)
    before = len(fsir.torch.compiles)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        got, got_grads = _train(model, torch.compile(model, backend="fsir"), x, target, steps)
    want, want_grads = _train(eager, eager, x, target, steps)
    assert _fallbacks(caught) == []
    compiled = fsir.torch.compiles[before:]
    assert len(compiled) == 2  # the forward and the backward graph
    assert [c.runs for c in compiled] == [steps, steps]
    torch.testing.assert_close(torch.tensor(got), torch.tensor(want), rtol=RTOL, atol=ATOL)
    assert len(got_grads) == steps and all(g.keys() == w.keys() for g, w in zip(got_grads, want_grads, strict=True))
    for step, (mine, theirs) in enumerate(zip(got_grads, want_grads, strict=True)):  # each step's gradients
        for key, g in theirs.items():
            torch.testing.assert_close(mine[key], g, rtol=RTOL, atol=ATOL, msg=f"step {step}: {key}")
    state, want_state = model.state_dict(), eager.state_dict()
    for key, value in want_state.items():  # parameters, and BatchNorm's running statistics
        torch.testing.assert_close(state[key], value, rtol=RTOL, atol=ATOL, msg=key)


def _grads(model: nn.Module, fn, x) -> dict[str, torch.Tensor]:
    model.zero_grad()
    fn(x).float().square().mean().backward()
    return {k: p.grad for k, p in model.named_parameters() if p.grad is not None}


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16], ids=["f32", "bf16"])
def test_bert_gradients_match_eager(dtype):
    model = BertBlock().to(dtype)
    x = torch.randn(2, 8, 32, dtype=dtype, requires_grad=True)
    want = _grads(model, model, x)
    want_x = x.grad
    x.grad = None
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        got = _grads(model, torch.compile(model, backend="fsir"), x)
    assert _fallbacks(caught) == []
    assert sorted(got) == sorted(want) and len(got) == 12
    assert x.grad is not None and want_x is not None
    for key, g in [*want.items(), ("input", want_x)]:
        mine = x.grad if key == "input" else got[key]
        assert mine.dtype == dtype
        result = compare(to_numpy(mine), to_numpy(g))
        assert result.ok, (key, result)
