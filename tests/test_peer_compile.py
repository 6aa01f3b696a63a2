"""benchmarks/peer_compile.py compiles the same BERT layer in every peer that fsir
compiles: its JAX and PyTorch forms agree with the reference interpreter on
`examples/bert_layer.mlir`, and a peer that is not installed is a row that says so."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))

import peer_compile  # noqa: E402  (benchmarks/ is not a package)

from fsir.parse import parse_module  # noqa: E402
from fsir.runtime.reference import run  # noqa: E402


@pytest.fixture(scope="module")
def reference() -> tuple[list[np.ndarray], np.ndarray]:
    inputs = peer_compile.model_inputs(1)
    inputs[1][:, :, :, -5:] = -1e4  # mask the last keys, so the mask's broadcast is exercised
    module = parse_module((ROOT / "examples" / "bert_layer.mlir").read_text(), "bert_layer.mlir")
    return inputs, run(module, inputs)[0]


def test_the_jax_layer_is_the_graph_ir_layer(reference):
    inputs, expected = reference
    got = np.asarray(peer_compile.stacked(peer_compile.jax_bert_layer, 1)(*inputs))
    np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-4)


def test_the_torch_layer_is_the_graph_ir_layer(reference):
    import torch
    from gpu_check import torch_bert_layer

    inputs, expected = reference
    got = peer_compile.stacked(torch_bert_layer, 1)(*(torch.from_numpy(a) for a in inputs)).numpy()
    np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-4)


def test_a_peer_not_installed_is_reported_not_raised(monkeypatch, capsys):
    monkeypatch.setitem(peer_compile.MODULES, "tvm", "no_such_compiler_module")
    row = peer_compile.measure("tvm", 1, 1)
    assert (row.in_process_s, row.fresh_s) == (None, None)
    assert "no_such_compiler_module is not installed" in row.note
    peer_compile.print_table([row], markdown=True)
    assert "| tvm | 1 | - | - | - |" in capsys.readouterr().out
