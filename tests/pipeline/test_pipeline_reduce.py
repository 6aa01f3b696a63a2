"""graph.reduce end to end: every kind and element type; row reductions short (warp per
row) and long (block per row), column and multi-dim reductions (thread per row), full
reductions, size-1 and dynamic dims."""

from __future__ import annotations

import pytest

from fsir.testing.pipeline import check

KINDS = ["sum", "max", "min", "prod"]
TYPES = ["f32", "f16", "bf16", "i32", "i64"]


def _reduce(kind: str, t: str, src: str, dims: str, dst: str) -> str:
    st = f"tensor<{src}x{t}>"
    dt = f"tensor<{dst}x{t}>" if dst else f"tensor<{t}>"
    return f"""
func.func @f(%a: {st}) -> {dt} {{
  %r = graph.reduce {kind} %a dims {dims} : ({st}) -> {dt}
  func.return %r : {dt}
}}
"""


def _kind_input(kind: str, t: str) -> str:
    # products of many values overflow or vanish: keep them near 1 / small ints
    if kind == "prod":
        return "positive"
    return "int" if t.startswith("i") else "normal"


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("t", TYPES)
def test_row_warp(kind, t):
    """Rows of 45 elements: one warp per row, a butterfly of shuffles."""
    lowered = check(_reduce(kind, t, "5x45" if kind != "prod" else "5x9", "[1]", "5"),
                    kinds=[_kind_input(kind, t)], scale=4)
    assert "gpu.shuffle" in str(lowered)


@pytest.mark.parametrize("kind", ["sum", "max"])
@pytest.mark.parametrize("t", ["f32", "f16", "i64"])
def test_row_block(kind, t):
    """Rows of 1100 elements: one block per row, shuffles then shared memory."""
    lowered = check(_reduce(kind, t, "3x1100", "[1]", "3"), kinds=[_kind_input(kind, t)], scale=8)
    assert "gpu.barrier" in str(lowered)


@pytest.mark.parametrize("kind", KINDS)
def test_column(kind):
    check(_reduce(kind, "f32", "37x5" if kind != "prod" else "6x5", "[0]", "5"),
          kinds=[_kind_input(kind, "f32")], scale=4)


@pytest.mark.parametrize("src,dims,dst", [
    ("3x4x5", "[0, 2]", "4"), ("3x4x5", "[1]", "3x5"), ("3x4x5", "[1, 2]", "3"), ("3x4x5", "[0, 1, 2]", ""),
    ("1x7", "[1]", "1"), ("7x1", "[1]", "7"), ("7x1", "[0]", "1"), ("300", "[0]", ""),
])
def test_dims(src, dims, dst):
    check(_reduce("sum", "f32", src, dims, dst), scale=4)


def test_dynamic_row():
    check(_reduce("max", "f32", "?x?", "[1]", "?"), shapes=[(6, 70)])


def test_dynamic_column():
    check(_reduce("sum", "i32", "?x3", "[0]", "3"), shapes=[(50, 3)], kinds=["int"])


def test_large_block_rows():
    check(_reduce("sum", "f32", "2x3000", "[1]", "2"), scale=16)


@pytest.mark.parametrize("n", [2, 3, 5, 17])
@pytest.mark.parametrize("kind", ["sum", "max"])
def test_row_short(kind, n):
    """Rows shorter than a warp: a power-of-two segment of lanes per row (with scalar
    accesses: with vectors the evaluator gives a row of 2 to one thread's 8-byte load)."""
    lowered = check(_reduce(kind, "f32", f"70x{n}", "[1]", "70"), vector=1)
    assert "threads_per_row" not in str(lowered)  # the schedule is gone at the gpu level
    assert "gpu.shuffle" in str(lowered)


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("t", ["f32", "f16", "i64"])
def test_column_interleaved(kind, t):
    """Long columns, few of them: 8 interleaved threads per column, combined through
    shared memory."""
    src = "300x37" if kind != "prod" else "70x37"
    lowered = check(_reduce(kind, t, src, "[0]", "37"), kinds=[_kind_input(kind, t)], scale=8)
    assert "gpu.barrier" in str(lowered)


@pytest.mark.parametrize("src,dims,dst,shape", [
    ("30x4x9", "[0, 2]", "4", None), ("?x3", "[0]", "3", (200, 3)), ("100x2x3", "[0]", "2x3", None),
])
def test_column_interleaved_shapes(src, dims, dst, shape):
    check(_reduce("sum", "f32", src, dims, dst), shapes=[shape] if shape else None, scale=8)
