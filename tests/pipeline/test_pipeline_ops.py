"""The non-table graph ops end to end (graph → PTX → simulator vs. reference): compare,
select, convert, constants, iota, the index-only ops, gather. Sizes avoid multiples of
the block size; some dims are 1 or dynamic."""

from __future__ import annotations

import pytest

from fsir.testing.pipeline import check

ALL = ["f32", "f16", "bf16", "i1", "i32", "i64"]
NUM = ["f32", "f16", "bf16", "i32", "i64"]


@pytest.mark.parametrize("direction", ["eq", "ne", "lt", "le", "gt", "ge"])
@pytest.mark.parametrize("t", ALL)
def test_compare(direction, t):
    check(f"""
func.func @f(%a: tensor<3x37x{t}>, %b: tensor<3x37x{t}>) -> tensor<3x37xi1> {{
  %c = graph.compare {direction} %a, %b : (tensor<3x37x{t}>, tensor<3x37x{t}>) -> tensor<3x37xi1>
  func.return %c : tensor<3x37xi1>
}}
""", kinds=["int", "int"] if t.startswith("i") else None)


def test_compare_equal_values():
    import numpy as np

    a = np.array([1.0, 2.0, np.nan, 4.0], dtype=np.float32)
    b = np.array([1.0, 3.0, np.nan, 4.0], dtype=np.float32)
    for d in ("eq", "ne", "le", "ge"):
        check(f"""
func.func @f(%a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xi1> {{
  %c = graph.compare {d} %a, %b : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xi1>
  func.return %c : tensor<4xi1>
}}
""", inputs=[a, b], ptxas=False)


@pytest.mark.parametrize("t", ALL)
def test_select(t):
    check(f"""
func.func @f(%c: tensor<2x45xi1>, %a: tensor<2x45x{t}>, %b: tensor<2x45x{t}>) -> tensor<2x45x{t}> {{
  %s = graph.select %c, %a, %b : (tensor<2x45xi1>, tensor<2x45x{t}>, tensor<2x45x{t}>) -> tensor<2x45x{t}>
  func.return %s : tensor<2x45x{t}>
}}
""")


CONVERTS = [(s, d) for s in ALL for d in ALL if s != d]


@pytest.mark.parametrize("src,dst", CONVERTS, ids=[f"{s}-{d}" for s, d in CONVERTS])
def test_convert(src, dst):
    check(f"""
func.func @f(%a: tensor<50x{src}>) -> tensor<50x{dst}> {{
  %c = graph.convert %a : (tensor<50x{src}>) -> tensor<50x{dst}>
  func.return %c : tensor<50x{dst}>
}}
""", kinds=["small" if src[0] in "fb" else "int"])


@pytest.mark.parametrize("t,value", [("f32", "2.5"), ("f16", "0.1"), ("bf16", "3.3"), ("i32", "-7"),
                                     ("i64", "5000000000"), ("i1", "true")])
def test_splat_constant(t, value):
    op = "or" if t == "i1" else "add"
    lowered = check(f"""
func.func @f(%a: tensor<3x5x{t}>) -> tensor<3x5x{t}> {{
  %k = graph.constant dense<{value}> : tensor<3x5x{t}>
  %y = graph.{op} %a, %k : tensor<3x5x{t}>
  func.return %y : tensor<3x5x{t}>
}}
""")
    assert "memref.global" not in str(lowered)  # splats are immediates


@pytest.mark.parametrize("t", ["f32", "f16", "i32", "i1"])
def test_dense_constant(t):
    vals = {"f32": "[[1.5, -2.0, 3.25], [0.5, 7.0, -1.0]]", "f16": "[[1.5, -2.0, 3.25], [0.5, 7.0, -1.0]]",
            "i32": "[[1, -2, 3], [4, 5, -6]]", "i1": "[[true, false, true], [false, false, true]]"}[t]
    op = "xor" if t == "i1" else "mul"
    lowered = check(f"""
func.func @f(%a: tensor<2x3x{t}>) -> tensor<2x3x{t}> {{
  %k = graph.constant dense<{vals}> : tensor<2x3x{t}>
  %y = graph.{op} %a, %k : tensor<2x3x{t}>
  func.return %y : tensor<2x3x{t}>
}}
""")
    assert "memref.global" in str(lowered)  # passed in as a buffer


def test_returned_constant():
    check("""
func.func @f() -> tensor<2x2xf32> {
  %k = graph.constant dense<[[1.0, 2.0], [3.0, 4.0]]> : tensor<2x2xf32>
  func.return %k : tensor<2x2xf32>
}
""", inputs=[])


@pytest.mark.parametrize("t,dim", [("i32", 0), ("i64", 1), ("f32", 1), ("f16", 0), ("bf16", 1)])
def test_iota(t, dim):
    check(f"""
func.func @f(%a: tensor<5x300x{t}>) -> tensor<5x300x{t}> {{
  %i = graph.iota dim {dim} : tensor<5x300x{t}>
  %y = graph.add %a, %i : tensor<5x300x{t}>
  func.return %y : tensor<5x300x{t}>
}}
""")


@pytest.mark.parametrize("src,dims,dst", [
    ("7", "[1]", "3x7"), ("3", "[0]", "3x7"), ("1x7", "[0, 1]", "3x7"), ("3x1", "[0, 2]", "3x4x5"),
    ("", "[]", "4x5"), ("?", "[1]", "3x?"),
])
def test_broadcast(src, dims, dst):
    st = f"tensor<{src}xf32>" if src else "tensor<f32>"
    shapes = [(9,)] if src == "?" else None
    check(f"""
func.func @f(%a: {st}) -> tensor<{dst}xf32> {{
  %b = graph.broadcast %a dims {dims} : ({st}) -> tensor<{dst}xf32>
  func.return %b : tensor<{dst}xf32>
}}
""", shapes=shapes)


def test_dynamic_size_one_broadcast():
    # a `?` operand dim that is 1 at run time broadcasts
    check("""
func.func @f(%a: tensor<?x5xf32>, %b: tensor<?x5xf32>) -> tensor<?x5xf32> {
  %c = graph.broadcast %a dims [0, 1] : (tensor<?x5xf32>) -> tensor<?x5xf32>
  %y = graph.add %c, %b : tensor<?x5xf32>
  func.return %y : tensor<?x5xf32>
}
""", shapes=[(6, 5), (6, 5)])


def test_free_reshape():
    lowered = check("""
func.func @f(%a: tensor<4x6xf32>) -> tensor<3x8xf32> {
  %e = graph.exp %a : tensor<4x6xf32>
  %r = graph.reshape %e : (tensor<4x6xf32>) -> tensor<3x8xf32>
  %y = graph.neg %r : tensor<3x8xf32>
  func.return %y : tensor<3x8xf32>
}
""", kinds=["small"])
    assert str(lowered).count("gpu.launch_func") == 2  # the reshape is a view


def test_dynamic_reshape():
    check("""
func.func @f(%a: tensor<?x6xf32>) -> tensor<?x4xf32> {
  %r = graph.reshape %a : (tensor<?x6xf32>) -> tensor<?x4xf32>
  %y = graph.abs %r : tensor<?x4xf32>
  func.return %y : tensor<?x4xf32>
}
""", shapes=[(10, 6)])


def test_reshape_in_fusion():
    check("""
func.func @f(%a: tensor<4x6xf32>) -> tensor<3x8xf32> {
  %y = stitch.fusion (%a) : (tensor<4x6xf32>) -> tensor<3x8xf32> {
  ^bb0(%x: tensor<4x6xf32>):
    %t = graph.transpose %x perm [1, 0] : (tensor<4x6xf32>) -> tensor<6x4xf32>
    %r = graph.reshape %t : (tensor<6x4xf32>) -> tensor<3x8xf32>
    %n = graph.neg %r : tensor<3x8xf32>
    stitch.yield %n : tensor<3x8xf32>
  }
  func.return %y : tensor<3x8xf32>
}
""")


@pytest.mark.parametrize("t", ["f32", "i1", "bf16"])
def test_transpose(t):
    check(f"""
func.func @f(%a: tensor<3x5x7x{t}>) -> tensor<7x3x5x{t}> {{
  %y = graph.transpose %a perm [2, 0, 1] : (tensor<3x5x7x{t}>) -> tensor<7x3x5x{t}>
  func.return %y : tensor<7x3x5x{t}>
}}
""")


def test_slice():
    check("""
func.func @f(%a: tensor<9x40xf32>) -> tensor<3x12xf32> {
  %y = graph.slice %a start [1, 3] limit [9, 40] strides [3, 3] : (tensor<9x40xf32>) -> tensor<3x13xf32>
  %z = graph.slice %y start [0, 1] limit [3, 13] strides [1, 1] : (tensor<3x13xf32>) -> tensor<3x12xf32>
  func.return %z : tensor<3x12xf32>
}
""")


@pytest.mark.parametrize("dim", [0, 1])
def test_concat(dim):
    a, b, c, out = (("2x5", "3x5", "1x5", "6x5") if dim == 0 else ("4x2", "4x7", "4x1", "4x10"))
    check(f"""
func.func @f(%a: tensor<{a}xi32>, %b: tensor<{b}xi32>, %c: tensor<{c}xi32>) -> tensor<{out}xi32> {{
  %y = graph.concat %a, %b, %c dim {dim} : (tensor<{a}xi32>, tensor<{b}xi32>, tensor<{c}xi32>) -> tensor<{out}xi32>
  func.return %y : tensor<{out}xi32>
}}
""")


def test_concat_dynamic():
    check("""
func.func @f(%a: tensor<?x3xf32>, %b: tensor<?x3xf32>) -> tensor<?x3xf32> {
  %y = graph.concat %a, %b dim 0 : (tensor<?x3xf32>, tensor<?x3xf32>) -> tensor<?x3xf32>
  func.return %y : tensor<?x3xf32>
}
""", shapes=[(4, 3), (7, 3)])


@pytest.mark.parametrize("ids_t,t", [("i32", "f32"), ("i64", "f16"), ("i32", "i64")])
def test_gather(ids_t, t):
    check(f"""
func.func @f(%table: tensor<10x33x{t}>, %ids: tensor<2x3x{ids_t}>) -> tensor<2x3x33x{t}> {{
  %e = graph.gather %table, %ids : (tensor<10x33x{t}>, tensor<2x3x{ids_t}>) -> tensor<2x3x33x{t}>
  func.return %e : tensor<2x3x33x{t}>
}}
""", kinds=["normal", "ids"])


def test_gather_dynamic():
    check("""
func.func @f(%table: tensor<?x8xf32>, %ids: tensor<?xi32>) -> tensor<?x8xf32> {
  %e = graph.gather %table, %ids : (tensor<?x8xf32>, tensor<?xi32>) -> tensor<?x8xf32>
  func.return %e : tensor<?x8xf32>
}
""", shapes=[(11, 8), (19,)], kinds=["normal", "ids"])
