"""Parsing stays linear in the input: op locations come from a bisection over the
input's newlines (not xDSL's `Span.get_location`, which counts newlines from the start
of the input on every call), and the type check of a dense literal uses one
constraint built once (xDSL builds it anew per attribute)."""

from __future__ import annotations

import pytest
from xdsl.utils.lexer import Span

from fsir import ir, parse
from fsir.errors import UserError
from fsir.parse import parse_module


def _module(n: int) -> str:
    lines = ["func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {"]
    prev = "%x"
    for i in range(n):
        lines.append(f"  %c{i} = graph.constant dense<{i}.0> : tensor<4xf32>")
        lines.append(f"    %a{i} = graph.add {prev}, %c{i} : tensor<4xf32>")
        prev = f"%a{i}"
    lines.append(f"  func.return {prev} : tensor<4xf32>")
    lines.append("}")
    return "\n".join(lines) + "\n"


def test_locations_without_rescanning_the_input(monkeypatch):
    def rescan(self):
        raise AssertionError("Span.get_location rescans the input: quadratic over the ops")

    monkeypatch.setattr(Span, "get_location", rescan)
    module = parse_module(_module(300), "m.mlir", line_offset=10)
    f = next(iter(module.ops))
    ops = list(f.body.block.ops)
    # op k of the body is on line k + 2 (+ the offset); adds are indented by 4
    for k in (0, 1, 2, 401, 599, 600):
        loc = ir.location_of(ops[k])
        assert loc is not None
        assert (loc.file, loc.line, loc.col) == ("m.mlir", k + 2 + 10, 5 if k % 2 and k < 600 else 3)


def test_the_dense_literal_constraint_is_built_once():
    parse._dense_literal_constraint.cache_clear()
    parse_module(_module(50), "<test>")
    assert parse._dense_literal_constraint.cache_info().misses == 1
    assert parse._dense_literal_constraint.cache_info().hits >= 49


@pytest.mark.parametrize("literal, message", [
    ("dense<1.0> : tensor<?xf32>", "Dense literal attribute should have a static shape."),
    ("dense<1.0> : f32", "Expected memref, vector or tensor type"),
])
def test_dense_literal_type_errors_are_located(literal, message):
    text = f"func.func @f() -> tensor<1xf32> {{\n  %c = graph.constant {literal}\n  func.return %c : tensor<1xf32>\n}}\n"
    with pytest.raises(UserError) as info:
        parse_module(text, "d.mlir")
    # (located at the token after the type, as xDSL's own check)
    assert message in info.value.message and info.value.loc is not None and info.value.loc.file == "d.mlir"
    assert info.value.loc.line in (2, 3)


@pytest.mark.parametrize("literal, element, expected", [
    ("0xff800000", "f32", [-float("inf")] * 2),
    ("[0x7f800000, 1.5]", "f32", [float("inf"), 1.5]),
    ("0xFC00", "f16", [-float("inf")] * 2),
    ("0x3F80", "bf16", [1.0, 1.0]),
    ("[0x10, -3]", "i32", [16, -3]),
])
def test_hexadecimal_dense_elements_are_bits_of_floats(literal, element, expected):
    """As MLIR reads them and as xDSL prints infinities and NaNs: printed IR with a -inf
    constant reads back as -inf (integers keep their value)."""
    import numpy as np

    from fsir.dialects import graph

    module = parse_module(f"%c = graph.constant dense<{literal}> : tensor<2x{element}>", "<t>")
    (const,) = [op for op in module.walk() if isinstance(op, graph.ConstantOp)]
    np.testing.assert_array_equal(graph.constant_array(const.value).astype(np.float64), expected)
    again = parse_module(str(module), "<printed>")
    (const2,) = [op for op in again.walk() if isinstance(op, graph.ConstantOp)]
    np.testing.assert_array_equal(graph.constant_array(const2.value), graph.constant_array(const.value))


def test_hexadecimal_nan_reads_as_nan():
    import numpy as np

    from fsir.dialects import graph

    module = parse_module("%c = graph.constant dense<0x7fc00000> : tensor<f32>", "<t>")
    (const,) = [op for op in module.walk() if isinstance(op, graph.ConstantOp)]
    assert np.isnan(graph.constant_array(const.value)).all()


@pytest.mark.parametrize("literal", [
    "dense<0.5> : tensor<2x3xf32>", "dense<-3> : tensor<4xi8>", "dense<255> : tensor<2xui8>",
    "dense<true> : tensor<3xi1>", "dense<0xff800000> : tensor<2xf32>", "dense<0x7C00> : tensor<2xf16>",
    "dense<1.5> : tensor<0xf32>", "dense<2> : tensor<i64>", "dense<(1.0, 2.0)> : tensor<2xcomplex<f32>>",
    "dense<1.0e+00> : tensor<3xbf16>", "dense<-1> : tensor<2xindex>",
    "dense<[1.0, 2.0]> : tensor<2xf32>", 'dense<"0x0000803F"> : tensor<2xf32>', "dense<> : tensor<0xf32>",
])
def test_splat_dense_literals_read_as_the_general_parse_reads_them(literal):
    """A splat's bytes are its element's repeated (`LocatingParser`), not a list of
    every element packed: the attribute equals the one the general path builds."""
    ctx = parse.make_context()

    class General(parse.LocatingParser):
        def _splat_ahead(self) -> bool:
            return False

    fast = parse.LocatingParser(ctx, literal)
    assert fast.parse_attribute() == General(ctx, literal).parse_attribute()


def test_a_large_splat_is_not_packed_element_by_element(monkeypatch):
    from xdsl.dialects.builtin import Float32Type

    packed: list[int] = []
    real = Float32Type.pack
    monkeypatch.setattr(Float32Type, "pack", lambda self, values: packed.append(len(values)) or real(self, values))
    module = parse_module("%c = graph.constant dense<0.5> : tensor<128x3072xf32>", "<t>")
    assert packed == [1]
    (const,) = [op for op in module.walk() if op.name == "graph.constant"]
    assert len(const.value.data.data) == 4 * 128 * 3072
