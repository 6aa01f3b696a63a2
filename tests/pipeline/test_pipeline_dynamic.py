"""Dynamic shapes that hold: softmax and LayerNorm over `?`-length rows (broadcasts
take their `?` sizes from a `like` operand) at several run-time sizes, run-time checks
that `?` sizes which must agree do agree (a located error naming both sizes, never an
out-of-bounds access), and gathers followed by row reductions over batches that the
rows per block do not divide (the simulator reports any out-of-bounds access)."""

from __future__ import annotations

import numpy as np
import pytest

from fsir.errors import UserError
from fsir.parse import parse_module
from fsir.pipeline import PipelineOptions, lower
from fsir.runtime.executor import execute
from fsir.testing.pipeline import check
from fsir.tools import fs_run

SIZES = [1, 7, 31, 1000]


def softmax(rows: str) -> str:
    x, r = f"tensor<{rows}x?xf32>", f"tensor<{rows}xf32>"
    return f"""
func.func @softmax(%x: {x}) -> {x} {{
  %m = graph.reduce max %x dims [1] : ({x}) -> {r}
  %mb = graph.broadcast %m dims [0] like %x : ({r}, {x}) -> {x}
  %s = graph.sub %x, %mb : {x}
  %e = graph.exp %s : {x}
  %d = graph.reduce sum %e dims [1] : ({x}) -> {r}
  %db = graph.broadcast %d dims [0] like %x : ({r}, {x}) -> {x}
  %y = graph.div %e, %db : {x}
  func.return %y : {x}
}}
"""


def layernorm(rows: str) -> str:
    x, r, v = f"tensor<{rows}x?xf32>", f"tensor<{rows}xf32>", "tensor<?xf32>"
    return f"""
func.func @ln(%x: {x}, %g: {v}, %b: {v}) -> {x} {{
  %one = graph.constant dense<1.0> : tensor<f32>
  %ones = graph.broadcast %one dims [] like %x : (tensor<f32>, {x}) -> {x}
  %n = graph.reduce sum %ones dims [1] : ({x}) -> {r}
  %s = graph.reduce sum %x dims [1] : ({x}) -> {r}
  %mean = graph.div %s, %n : {r}
  %mb = graph.broadcast %mean dims [0] like %x : ({r}, {x}) -> {x}
  %xc = graph.sub %x, %mb : {x}
  %sq = graph.mul %xc, %xc : {x}
  %vs = graph.reduce sum %sq dims [1] : ({x}) -> {r}
  %var = graph.div %vs, %n : {r}
  %eps = graph.constant dense<1.0e-5> : tensor<f32>
  %epsb = graph.broadcast %eps dims [] like %var : (tensor<f32>, {r}) -> {r}
  %ve = graph.add %var, %epsb : {r}
  %rstd = graph.rsqrt %ve : {r}
  %rb = graph.broadcast %rstd dims [0] like %x : ({r}, {x}) -> {x}
  %xn = graph.mul %xc, %rb : {x}
  %gb = graph.broadcast %g dims [1] like %x : ({v}, {x}) -> {x}
  %bb = graph.broadcast %b dims [1] like %x : ({v}, {x}) -> {x}
  %y0 = graph.mul %xn, %gb : {x}
  %y = graph.add %y0, %bb : {x}
  func.return %y : {x}
}}
"""


def _launches(lowered) -> int:
    return str(lowered).count("gpu.launch_func")


def _rows(rows: str, n: int) -> int:
    return 6 if rows == "6" else {1: 1, 7: 5, 31: 37, 1000: 3}[n]


@pytest.mark.parametrize("rows", ["6", "?"])
@pytest.mark.parametrize("n", SIZES)
def test_softmax_dynamic_rows(rows, n):
    lowered = check(softmax(rows), shapes=[(_rows(rows, n), n)], fusion="stitch", scale=4, ptxas=n == 7)
    assert _launches(lowered) == 1


@pytest.mark.parametrize("rows", ["6", "?"])
@pytest.mark.parametrize("n", SIZES)
def test_layernorm_dynamic_rows(rows, n):
    lowered = check(layernorm(rows), shapes=[(_rows(rows, n), n), (n,), (n,)], fusion="stitch", scale=4,
                    ptxas=n == 7)
    assert _launches(lowered) == 1
    # gamma's and beta's lengths are checked against the row length, once each
    assert str(lowered).count("cf.assert") == 2


def test_layernorm_dynamic_under_every_mode():
    for mode in ("none", "xla"):
        check(layernorm("?"), shapes=[(4, 9), (9,), (9,)], fusion=mode, scale=4, ptxas=False)


ADD = """func.func @f(%x: tensor<?xf32>, %y: tensor<?xf32>) -> tensor<?xf32> {
  %z = graph.add %x, %y : tensor<?xf32>
  %w = graph.mul %z, %y : tensor<?xf32>
  func.return %w : tensor<?xf32>
}
"""


@pytest.mark.parametrize("fusion", ["stitch", "none"])
def test_disagreeing_sizes_fail_before_any_launch(fusion):
    lowered = lower(parse_module(ADD, "add.mlir"), PipelineOptions(fusion=fusion))
    assert str(lowered).count("cf.assert") == 1  # one distinct pair of sizes, two uses
    with pytest.raises(UserError) as err:
        execute(lowered, [np.ones(10, np.float32), np.ones(7, np.float32)])
    assert err.value.message == "'graph.add' op: dim 0 of operands 0 and 1 differ at run time: 10 vs 7"
    assert str(err.value.loc) == "add.mlir:2:3"
    got, _ = execute(lowered, [np.ones(7, np.float32), np.full(7, 2, np.float32)])
    np.testing.assert_array_equal(got[0], np.full(7, 6, np.float32))


def test_disagreeing_sizes_exit_1_in_fs_run(tmp_path, capsys):
    model, inputs = tmp_path / "add.mlir", tmp_path / "in.npz"
    model.write_text(ADD)
    np.savez(inputs, x=np.ones(10, np.float32), y=np.ones(7, np.float32))
    for device in ("sim", "reference"):
        with pytest.raises(SystemExit) as exc:
            fs_run.main([str(model), "--inputs", str(inputs), "--device", device])
        err = capsys.readouterr().err
        assert exc.value.code == 1
        assert f"{model}:2:3: error: 'graph.add' op" in err and "10" in err and "7" in err
        assert "Traceback" not in err


@pytest.mark.parametrize("text,inputs,message", [
    # gamma of the wrong length for x's rows
    (layernorm("?"), [np.ones((3, 9)), np.ones(8), np.ones(9)],
     "'graph.broadcast' op: operand dim 0 and result dim 1 differ at run time: 8 vs 9"),
    # a `?` operand broadcast to a static dim is 1 or that size
    ("""func.func @f(%v: tensor<?xf32>) -> tensor<4x8xf32> {
  %b = graph.broadcast %v dims [1] : (tensor<?xf32>) -> tensor<4x8xf32>
  func.return %b : tensor<4x8xf32>
}""", [np.ones(5)], "'graph.broadcast' op: operand dim 0 and result dim 1 differ at run time: 5 vs 8"),
    # a dot's contracting dims
    ("""func.func @f(%a: tensor<4x?xf32>, %b: tensor<?x8xf32>) -> tensor<4x8xf32> {
  %d = graph.dot %a, %b : (tensor<4x?xf32>, tensor<?x8xf32>) -> tensor<4x8xf32>
  func.return %d : tensor<4x8xf32>
}""", [np.ones((4, 3)), np.ones((5, 8))], "'graph.dot' op: the contracting dims of lhs and rhs differ at run time: 3 vs 5"),
    # the non-concatenated dims of a concat
    ("""func.func @f(%a: tensor<2x?xf32>, %b: tensor<3x?xf32>) -> tensor<5x?xf32> {
  %c = graph.concat %a, %b dim 0 : (tensor<2x?xf32>, tensor<3x?xf32>) -> tensor<5x?xf32>
  func.return %c : tensor<5x?xf32>
}""", [np.ones((2, 4)), np.ones((3, 6))], "'graph.concat' op: dim 1 of operands 0 and 1 differ at run time: 4 vs 6"),
])
def test_disagreeing_sizes_are_named(text, inputs, message):
    lowered = lower(parse_module(text, "m.mlir"), PipelineOptions(fusion="stitch"))
    with pytest.raises(UserError, match=message):
        execute(lowered, [np.asarray(x, np.float32) for x in inputs])


def test_size_one_stretches_without_error():
    text = """func.func @f(%v: tensor<?xf32>) -> tensor<4x8xf32> {
  %b = graph.broadcast %v dims [1] : (tensor<?xf32>) -> tensor<4x8xf32>
  func.return %b : tensor<4x8xf32>
}"""
    check(text, shapes=[(1,)], ptxas=False)
    check(text, shapes=[(8,)], ptxas=False)


GATHER_ROWS = """
func.func @f(%table: tensor<50x64xf32>, %ids: tensor<?xi32>) -> (tensor<?xf32>, tensor<?x64xf32>) {
  %e = graph.gather %table, %ids : (tensor<50x64xf32>, tensor<?xi32>) -> tensor<?x64xf32>
  %s = graph.reduce sum %e dims [1] : (tensor<?x64xf32>) -> tensor<?xf32>
  %sb = graph.broadcast %s dims [0] like %e : (tensor<?xf32>, tensor<?x64xf32>) -> tensor<?x64xf32>
  %y = graph.sub %e, %sb : tensor<?x64xf32>
  func.return %s, %y : tensor<?xf32>, tensor<?x64xf32>
}
"""


@pytest.mark.parametrize("batch", [1, 7, 8, 16, 37, 128])
@pytest.mark.parametrize("rows", ["warp", "block", "thread"])
def test_gather_then_row_reduction(batch, rows):
    """An embedding lookup then a row reduction: a thread past the last row must not
    load its row's id (ids[row] is past the end of `ids`)."""
    check(GATHER_ROWS, shapes=[(50, 64), (batch,)], kinds=["normal", "ids"], fusion="stitch", rows=rows,
          ptxas=batch == 7)
