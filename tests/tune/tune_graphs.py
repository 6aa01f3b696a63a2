"""Small models for the tuner's tests."""

from __future__ import annotations

from pathlib import Path

from fsir.testing.graphs import dot

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def layernorm(rows: int = 64, cols: int = 256) -> str:
    """examples/layernorm.mlir at rows x cols (one row kernel)."""
    text = (EXAMPLES / "layernorm.mlir").read_text()
    return text.replace("4096", str(rows)).replace("768x", f"{cols}x").replace("x768", f"x{cols}") \
        .replace("<768x", f"<{cols}x")


def elementwise(rows: int = 64, cols: int = 256) -> str:
    """(a + b) * a: one loop kernel."""
    t = f"tensor<{rows}x{cols}xf32>"
    return f"""
func.func @f(%a: {t}, %b: {t}) -> {t} {{
  %s = graph.add %a, %b : {t}
  %m = graph.mul %s, %a : {t}
  func.return %m : {t}
}}
"""


def gemm(m: int, n: int, k: int, t: str) -> str:
    return dot(m, n, k, t)


def column_sum(rows: int = 512, cols: int = 64) -> str:
    """A column reduction (sum over dim 0): the row mapping's thread/interleaved schedules."""
    t, r = f"tensor<{rows}x{cols}xf32>", f"tensor<{cols}xf32>"
    return f"""
func.func @f(%a: {t}) -> {r} {{
  %s = graph.reduce sum %a dims [0] : ({t}) -> {r}
  func.return %s : {r}
}}
"""
