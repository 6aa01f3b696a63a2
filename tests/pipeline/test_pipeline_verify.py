"""The pipeline verifies its output once (its input was verified when parsed), every
pass's output with `verify_each`, and pauses the cycle collector around a compile."""

from __future__ import annotations

import gc

import pytest

from fsir import ir
from fsir.parse import parse_module
from fsir.pipeline import lower, passes

SOFTMAX = """
func.func @f(%x: tensor<4x32xf32>) -> tensor<4x32xf32> {
  %m = graph.reduce max %x dims [1] : (tensor<4x32xf32>) -> tensor<4xf32>
  %b = graph.broadcast %m dims [0] : (tensor<4xf32>) -> tensor<4x32xf32>
  %d = graph.sub %x, %b : tensor<4x32xf32>
  func.return %d : tensor<4x32xf32>
}
"""


@pytest.fixture
def verified(monkeypatch):
    """The modules `fsir.ir.verify` was called on, as the op names at their top."""
    seen: list[list[str]] = []
    real = ir.verify

    def spy(module):
        seen.append(sorted({op.name for op in module.walk()}))
        real(module)

    monkeypatch.setattr(ir, "verify", spy)
    return seen


def test_the_output_is_verified_once(verified):
    module = parse_module(SOFTMAX, "<t>")
    lower(module)
    assert len(verified) == 1
    assert "gpu.func" in verified[0]


def test_verify_each_verifies_every_pass(verified):
    module = parse_module(SOFTMAX, "<t>")
    lower(module, verify_each=True)
    assert len(verified) == len(passes())
    assert "stitch.fusion" in verified[1] and "schedule.kernel" in verified[2]


def test_until_verifies_the_last_pass_run(verified):
    lower(parse_module(SOFTMAX, "<t>"), until="fusion-explore")
    assert len(verified) == 1 and "stitch.fusion" in verified[0]


def test_the_collector_is_paused_and_restored_even_on_error():
    assert gc.isenabled()
    with pytest.raises(ZeroDivisionError), ir.collector_paused():
        assert not gc.isenabled()
        with ir.collector_paused():
            pass
        assert not gc.isenabled()  # the inner block leaves it as it found it
        _ = 1 / 0
    assert gc.isenabled()
