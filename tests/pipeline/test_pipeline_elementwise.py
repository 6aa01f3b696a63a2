"""Every elementwise graph op, each element type it accepts, static / dynamic / size-1
shapes (37 elements per row: not a multiple of the block size), compiled to PTX, run on
the simulator and compared with the reference interpreter."""

from __future__ import annotations

import pytest

from fsir.dialects.graph import ELEMENTWISE, FLOAT, INT, INTEGER, NUMERIC
from fsir.testing.pipeline import check

TYPES = {
    FLOAT: ["f32", "f16", "bf16"],
    NUMERIC: ["f32", "f16", "bf16", "i32", "i64"],
    INTEGER: ["i1", "i32", "i64"],
    INT: ["i32", "i64"],  # (narrow and unsigned types: tests/pipeline/test_pipeline_types.py)
}
# inputs that keep each op inside its domain
KINDS = {"log": "positive", "sqrt": "positive", "rsqrt": "positive", "pow": "positive",
         "exp": "small", "tanh": "small", "sigmoid": "small", "erf": "small"}

CASES = [(name, t) for name, spec in ELEMENTWISE.items() for t in TYPES[spec.types]]


def _func(name: str, t: str, shape: str) -> str:
    arity = ELEMENTWISE[name].arity
    args = ", ".join(f"%a{i}: tensor<{shape}x{t}>" for i in range(arity))
    ops = ", ".join(f"%a{i}" for i in range(arity))
    return f"""
func.func @f({args}) -> tensor<{shape}x{t}> {{
  %y = graph.{name} {ops} : tensor<{shape}x{t}>
  func.return %y : tensor<{shape}x{t}>
}}
"""


@pytest.mark.parametrize("name,t", CASES, ids=[f"{n}-{t}" for n, t in CASES])
def test_elementwise_static(name, t):
    kind = KINDS.get(name, "normal")
    if name in ("div", "rem") and t.startswith("i"):
        kind = "int"  # includes zero divisors: x / 0 = 0, x % 0 = x
    arity = ELEMENTWISE[name].arity
    if name == "rem" and not t.startswith("i"):
        kind = "positive"
    check(_func(name, t, "3x37"), kinds=[kind] * arity)


DYNAMIC = ["add", "exp", "max", "div", "not", "sigmoid"]


@pytest.mark.parametrize("name", DYNAMIC)
def test_elementwise_dynamic(name):
    t = "i32" if name == "not" else "f32"
    arity = ELEMENTWISE[name].arity
    check(_func(name, t, "?x37"), shapes=[(5, 37)] * arity, kinds=[KINDS.get(name, "normal")] * arity)


@pytest.mark.parametrize("shape", ["1x1", "1x5", "300", "?x?"])
def test_elementwise_shapes(shape):
    concrete = (1, 300) if shape == "?x?" else tuple(int(d) for d in shape.split("x"))
    check(_func("mul", "f32", shape), shapes=[concrete] * 2)


def test_rank0():
    check("""
func.func @f(%a: tensor<f32>, %b: tensor<f32>) -> tensor<f32> {
  %y = graph.sub %a, %b : tensor<f32>
  func.return %y : tensor<f32>
}
""")


def test_float_rem_large_quotients():
    """fmod with quotients up to 2^11: computed in f64, exact like C's fmodf."""
    import numpy as np

    rng = np.random.default_rng(1)
    x = rng.uniform(-1000, 1000, size=(3, 37)).astype(np.float32)
    y = rng.uniform(0.3, 2.0, size=(3, 37)).astype(np.float32)
    check(_func("rem", "f32", "3x37"), inputs=[x, y])
