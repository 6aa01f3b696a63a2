"""Integer division and remainder by constants (`fsir/ptx/divide.py`): the magic
multipliers are exact for every operand of their width, unsigned and signed, and the
printed sequences (divui, remui, divsi, remsi, floordivsi, ceildivsi, ceildivui) give
numpy's quotients and remainders on the simulator and assemble."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from fsir import sim
from fsir.ptx import print_ptx
from fsir.ptx.divide import magic, signed_magic
from fsir.ptx.ptxas import assemble
from fsir.testing.ptx import parse

WIDTHS = (16, 32, 64)


@st.composite
def divisions(draw):
    w = draw(st.sampled_from(WIDTHS))
    d = draw(st.integers(3, (1 << w) - 1).filter(lambda d: d & (d - 1)))
    n = draw(st.one_of(st.integers(0, (1 << w) - 1), st.sampled_from([(1 << w) - 1, (1 << w) // d * d - 1])))
    return w, d, n


@settings(max_examples=3000, deadline=None)
@given(divisions())
@example((64, 7, (1 << 64) - 1))  # a 65-bit multiplier (the add form)
@example((64, 3, (1 << 64) - 1))
@example((32, 641, (1 << 32) - 1))
@example((64, (1 << 63) + 1, (1 << 64) - 1))
def test_magic_quotient_is_exact(case):
    w, d, n = case
    assert magic(d, w).quotient(n, w) == n // d


DIVISORS = (2, 3, 7, 12, 32, 641, 768, 3072, 1000003)
TYPES = {"i64": np.uint64, "i32": np.uint32, "i16": np.uint16}


def ops_kernel(t: str, ops: tuple[str, ...], divisors: tuple[int, ...]) -> str:
    """A kernel writing n <op> d for each divisor (those that fit a signed `t`) and each
    op, thread i's results at i * per + j in divisor-major order."""
    width = int(t[1:])
    ds = [d for d in divisors if d < 1 << (width - 1)]
    lines = [f"      %c{d} = arith.constant {d} : {t}" for d in ds]
    j = 0
    for d in ds:
        for op in ops:
            lines += [f"      %{op}{d} = arith.{op} %n, %c{d} : {t}",
                      f"      %j{op}{d} = arith.constant {j} : index",
                      f"      %o{op}{d} = arith.addi %base, %j{op}{d} : index",
                      f"      memref.store %{op}{d}, %y[%o{op}{d}] : memref<?x{t}>"]
            j += 1
    body = "\n".join(lines)
    return f"""
builtin.module attributes {{gpu.container_module}} {{
  gpu.module @kernels {{
    gpu.func @k(%x: memref<?x{t}>, %y: memref<?x{t}>) kernel {{
      %i = gpu.thread_id x
      %n = memref.load %x[%i] : memref<?x{t}>
      %per = arith.constant {j} : index
      %base = arith.muli %i, %per : index
{body}
      gpu.return
    }}
  }}
}}
"""


@pytest.mark.parametrize("t,bits", [("i64", 64), ("i64", 32), ("i32", 32), ("i16", 16)])
def test_divisions_by_constants_run_as_numpy_divides(t, bits):
    """`bits`: the operands' range (64-bit indices below 2^32 take the simulator's
    short multiply-high)."""
    dtype = TYPES[t]
    width = int(t[1:])
    ds = [d for d in DIVISORS if d < 1 << (width - 1)]
    top = (1 << bits) - 1
    rng = np.random.default_rng(7)
    x = np.concatenate([np.array([0, 1, 2, 6, 7, 11, 12, 767, 768, top, top - 1, top // 3 * 3], dtype=dtype),
                        rng.integers(0, top, 116, dtype=dtype, endpoint=True)])
    ptx = print_ptx(parse(ops_kernel(t, ("divui", "remui"), DIVISORS)))
    assert "div." not in ptx and "rem." not in ptx
    y = np.zeros(x.size * 2 * len(ds), dtype)
    sim.launch(sim.load_module(ptx), "k", (1,), (x.size,), [x, y])
    got = y.reshape(x.size, len(ds), 2)
    for j, d in enumerate(ds):
        assert np.array_equal(got[:, j, 0], x // dtype(d)), d
        assert np.array_equal(got[:, j, 1], x % dtype(d)), d
    result = assemble(ptx)
    assert result.ok, result.errors


def _one_division(d: int, op: str, t: str) -> str:
    return f"""
builtin.module attributes {{gpu.container_module}} {{
  gpu.module @kernels {{
    gpu.func @k(%x: memref<?x{t}>) kernel {{
      %i = gpu.thread_id x
      %n = memref.load %x[%i] : memref<?x{t}>
      %d = arith.constant {d} : {t}
      %q = arith.{op} %n, %d : {t}
      memref.store %q, %x[%i] : memref<?x{t}>
      gpu.return
    }}
  }}
}}
"""


@pytest.mark.parametrize("t", ["i64", "i32"])
@pytest.mark.parametrize("op", ["divui", "remui"])
@pytest.mark.parametrize("d", [2, 12, 7, 641, 3072])
def test_sequence_length_counts_the_printed_instructions(d, op, t):
    """What the latency-evaluator charges for a division by a constant
    (`sequence_length`) is what the printer emits: the PTX of a one-division kernel has
    that many instructions more than with a division by one (a shift by zero)."""
    from fsir.ptx.divide import sequence_length

    def instructions(divisor: int) -> int:
        ptx = print_ptx(parse(_one_division(divisor, op, t)))
        body = ptx[ptx.index("{", ptx.index(".entry")):]
        return sum(1 for line in body.splitlines() if line.startswith("\t") and not line.startswith("\t."))

    width = int(t[1:])
    assert instructions(d) - instructions(1) == sequence_length(d, width, op == "remui") - 1


@st.composite
def signed_divisions(draw):
    w = draw(st.sampled_from(WIDTHS))
    d = draw(st.integers(3, (1 << (w - 1)) - 1).filter(lambda d: d & (d - 1)))
    lo, hi = -(1 << (w - 1)), (1 << (w - 1)) - 1
    n = draw(st.one_of(st.integers(lo, hi), st.sampled_from([lo, lo + 1, -1, hi, hi // d * d - 1, -(hi // d * d)])))
    return w, d, n


@settings(max_examples=3000, deadline=None)
@given(signed_divisions())
@example((32, 7, -(1 << 31)))  # a negative multiplier (n added back)
@example((32, 3, -(1 << 31)))
@example((64, (1 << 62) + 1, -(1 << 63)))
@example((16, 32767, -32768))
def test_signed_magic_quotient_truncates(case):
    w, d, n = case
    want = abs(n) // d * (1 if n >= 0 else -1)
    assert signed_magic(d, w).quotient(n, w) == want


SIGNED_OPS = ("divsi", "remsi", "floordivsi", "ceildivsi", "ceildivui")
SIGNED_DIVISORS = (2, 3, 7, 12, 32, 641, 768, 1000003)


@pytest.mark.parametrize("t", ["i64", "i32", "i16"])
def test_signed_and_rounded_divisions_by_constants_run_as_numpy(t):
    """divsi / remsi truncate (C), floordivsi / ceildivsi round down / up, ceildivui
    rounds up the unsigned value: every one by a constant prints no div or rem and
    matches numpy on the simulator, edge values included; the PTX assembles."""
    width = int(t[1:])
    sdt, udt = {"i64": (np.int64, np.uint64), "i32": (np.int32, np.uint32), "i16": (np.int16, np.uint16)}[t]
    ds = [d for d in SIGNED_DIVISORS if d < 1 << (width - 1)]
    lo, hi = -(1 << (width - 1)), (1 << (width - 1)) - 1
    rng = np.random.default_rng(11)
    edges = [lo, lo + 1, -768, -13, -12, -7, -1, 0, 1, 6, 7, 12, 767, 768, hi - 1, hi]
    x = np.concatenate([np.array(edges, dtype=sdt), rng.integers(lo, hi, 112, dtype=sdt, endpoint=True)])
    ptx = print_ptx(parse(ops_kernel(t, SIGNED_OPS, SIGNED_DIVISORS)))
    assert "div." not in ptx and "rem." not in ptx
    y = np.zeros(x.size * len(ds) * len(SIGNED_OPS), sdt)
    sim.launch(sim.load_module(ptx), "k", (1,), (x.size,), [x, y])
    got = y.reshape(x.size, len(ds), len(SIGNED_OPS))
    xs = [int(v) for v in x]
    for j, d in enumerate(ds):
        trunc = [abs(n) // d * (1 if n >= 0 else -1) for n in xs]
        want = {"divsi": trunc, "remsi": [n - q * d for n, q in zip(xs, trunc)],
                "floordivsi": [n // d for n in xs], "ceildivsi": [-(-n // d) for n in xs],
                "ceildivui": [-(-(n % (1 << width)) // d) for n in xs]}
        for k, op in enumerate(SIGNED_OPS):
            expect = np.array(want[op], dtype=object)
            if op == "ceildivui":
                assert [int(v) for v in got[:, j, k].astype(udt)] == list(expect), (op, d)
            else:
                assert [int(v) for v in got[:, j, k]] == list(expect), (op, d)
    result = assemble(ptx)
    assert result.ok, result.errors


@pytest.mark.parametrize("t", ["i64", "i32"])
@pytest.mark.parametrize("op", ["divsi", "remsi"])
@pytest.mark.parametrize("d", [2, 32, 3, 7, 641, 768])
def test_signed_sequence_length_counts_the_printed_instructions(d, op, t):
    """`sequence_length` of a signed division is what the printer emits (against a
    division by one, which prints the general `div`: one instruction)."""
    from fsir.ptx.divide import sequence_length

    def instructions(divisor: int) -> int:
        ptx = print_ptx(parse(_one_division(divisor, op, t)))
        body = ptx[ptx.index("{", ptx.index(".entry")):]
        return sum(1 for line in body.splitlines() if line.startswith("\t") and not line.startswith("\t."))

    width = int(t[1:])
    assert instructions(d) - instructions(1) == sequence_length(d, width, op == "remsi", signed=True) - 1


@pytest.mark.parametrize("t,c", [(t, c) for t in ("i32", "i64", "i16", "ui32") for c in (7, -3, 8, 1000)
                                 if c > 0 or not t.startswith("ui")])
def test_graph_division_by_a_constant_end_to_end(t, c):
    """graph.div / graph.rem by a nonzero constant skip the zero-divisor guard, so the
    printer multiplies (a negative divisor keeps `div`); on the simulator they match the
    reference over the type's whole range, INT_MIN included (whose magnitude the
    reference once overflowed)."""
    from fsir.dialects.graph import numpy_dtype
    from fsir.parse import parse_module
    from fsir.pipeline import PipelineOptions, emit_ptx, lower
    from fsir.testing.pipeline import check

    src = f"""func.func @f(%a: tensor<128x{t}>) -> (tensor<128x{t}>, tensor<128x{t}>) {{
  %c = graph.constant dense<{c}> : tensor<128x{t}>
  %q = graph.div %a, %c : tensor<128x{t}>
  %r = graph.rem %a, %c : tensor<128x{t}>
  func.return %q, %r : tensor<128x{t}>, tensor<128x{t}>
}}"""
    module = parse_module(src, "<test>")
    dtype = numpy_dtype(module.body.block.first_op.function_type.inputs.data[0].element_type)  # type: ignore[union-attr]
    info = np.iinfo(dtype)
    rng = np.random.default_rng(3)
    edges = sorted(v for v in {int(info.min), int(info.min) + 1, -1, 0, 1, int(info.max)} if v >= info.min)
    x = np.concatenate([np.array(edges, dtype=dtype),
                        rng.integers(info.min, info.max, 128 - len(edges), dtype=dtype, endpoint=True)])
    check(src, inputs=[x])
    ptx = emit_ptx(lower(parse_module(src, "<test>"), PipelineOptions(fusion="none")), PipelineOptions())
    assert ("div." in ptx) == (c < 0)
