"""What the latency-evaluator charges a math op: the instructions the PTX printer emits
for it (fsir/ptx/costs.py), classed by pipe as the simulator classes them."""

from __future__ import annotations

from fsir.ptx.costs import printed_mix


def test_a_one_instruction_op():
    assert dict(printed_mix("math.sqrt", "f32")) == {"sfu": 1}  # sqrt.rn.f32


def test_sequences_are_mostly_fma_pipe_work():
    """erf: a polynomial on the FMA pipes around a reciprocal and an exponential."""
    erf = printed_mix("math.erf", "f32")
    assert 3 <= erf["sfu"] <= 5
    assert erf["fp32"] > 4 * erf["sfu"]
    assert printed_mix("math.tanh", "f32")["fp32"] > printed_mix("math.exp", "f32")["fp32"]


def test_half_precision_adds_its_conversions():
    """f16 and bf16 are computed in f32: a widening and a narrowing (conversions, SFU
    rate) around the f32 sequence."""
    f32, f16 = printed_mix("math.exp", "f32"), printed_mix("math.exp", "f16")
    assert f16["sfu"] == f32["sfu"] + 2 and f16["fp32"] == f32["fp32"]


def test_f64_has_sequences_of_its_own_or_none():
    assert sum(printed_mix("math.exp", "f64").values()) > sum(printed_mix("math.exp", "f32").values())
    # no f64 tanh sequence (the code generator refuses it first): the f32 figure stands in
    assert printed_mix("math.tanh", "f64") == printed_mix("math.tanh", "f32")


def test_binary_ops():
    powf = printed_mix("math.powf", "f32", 2)
    assert powf["fp32"] > printed_mix("math.log2", "f32")["fp32"]
