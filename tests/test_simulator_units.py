"""Unit and property tests of the simulator's pieces: atomics against a sequential reference,
sector counting against a brute-force count, parsing details."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fsir.errors import SimulatorError
from fsir.runtime.ptx_parser import parse_ptx
from fsir.runtime.sim_memory import atomic_rmw, count_sectors
from fsir.runtime.simulator import run_ptx


def seq_reference(mem, e, op, b, c):
    mem = mem.copy()
    old = []
    for i, k in enumerate(e):
        o = mem[k]
        old.append(o)
        if op == "add":
            mem[k] = o + b[i]
        elif op == "min":
            mem[k] = min(o, b[i])
        elif op == "max":
            mem[k] = max(o, b[i])
        elif op == "and":
            mem[k] = o & b[i]
        elif op == "or":
            mem[k] = o | b[i]
        elif op == "xor":
            mem[k] = o ^ b[i]
        elif op == "exch":
            mem[k] = b[i]
        elif op == "cas":
            mem[k] = c[i] if o == b[i] else o
        elif op == "inc":
            mem[k] = 0 if o >= b[i] else o + 1
        elif op == "dec":
            mem[k] = b[i] if (o == 0 or o > b[i]) else o - 1
    return mem, np.array(old, mem.dtype)


@settings(max_examples=60, deadline=None)
@given(
    op=st.sampled_from(["add", "min", "max", "and", "or", "xor", "exch", "cas", "inc", "dec"]),
    idx=st.lists(st.integers(0, 5), min_size=1, max_size=40),
    seed=st.integers(0, 1000),
)
def test_atomic_rmw_matches_sequential_ints(op, idx, seed):
    rng = np.random.default_rng(seed)
    n = len(idx)
    mem = rng.integers(0, 8, 6).astype(np.uint32)
    e = np.array(idx, np.int64)
    b = rng.integers(0, 8, n).astype(np.uint32)
    c = rng.integers(0, 8, n).astype(np.uint32) if op == "cas" else None
    ref_mem, ref_old = seq_reference(mem, e, op, b, c)
    got_mem = mem.copy()
    old = atomic_rmw(got_mem, e, op, b, c)
    np.testing.assert_array_equal(got_mem, ref_mem)
    np.testing.assert_array_equal(old, ref_old)


def test_atomic_float_add_final_value_is_sequential():
    rng = np.random.default_rng(1)
    vals = rng.standard_normal(1000).astype(np.float32)
    mem = np.zeros(1, np.float32)
    old = atomic_rmw(mem, np.zeros(1000, np.int64), "add", vals, None, is_float=True)
    acc = np.float32(0)
    for v in vals:
        acc = np.float32(acc + v)
    assert mem[0] == acc
    assert old[0] == 0 and abs(old[-1] + vals[-1] - acc) < 1e-3


def test_atomic_wraps_and_signed_max():
    mem = np.array([0xFFFFFFF0], np.uint32)
    atomic_rmw(mem, np.zeros(32, np.int64), "add", np.ones(32, np.uint32), None)
    assert mem[0] == 0x10
    mem = np.array([-5], np.int32)
    old = atomic_rmw(mem, np.zeros(3, np.int64), "max", np.array([-7, -1, -3], np.int32), None)
    assert mem[0] == -1 and old.tolist() == [-5, -5, -1]


@settings(max_examples=80, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 3), st.integers(0, 40)), min_size=1, max_size=100))
def test_count_sectors_brute_force(pairs):
    pairs.sort(key=lambda p: p[0])  # lanes are in warp order
    warp = np.array([p[0] for p in pairs], np.int64)
    off = np.array([p[1] * 8 for p in pairs], np.int64)
    expect = len({(w, o // 32) for w, o in zip(warp, off)})
    assert count_sectors(off, warp) == expect


def test_parser_reads_lineinfo_and_funcs():
    text = """
.version 8.7
.target sm_80
.address_size 64
.file 1 "/tmp/x.cu"
.func (.param .b32 func_retval0) sq(.param .b32 sq_param_0)
{
    .reg .f32 %f<3>;
    .loc 1 1 0
    ld.param.f32 %f1, [sq_param_0];
    mul.f32 %f2, %f1, %f1;
    st.param.f32 [func_retval0+0], %f2;
    ret;
}
.visible .entry k(.param .u64 k_param_0)
.maxntid 128, 1, 1
{
    .reg .b64 %rd<3>;
    .loc 1 2 41
    ld.param.u64 %rd1, [k_param_0];
    ret;
}
"""
    m = parse_ptx(text)
    assert set(m.functions) == {"sq", "k"} and list(m.kernels) == ["k"]
    assert m.kernels["k"].directives == {"maxntid": [128, 1, 1]}
    run_ptx(text, "k", (1,), (1,), [np.zeros(1)])


@pytest.mark.parametrize("text,line,col,what", [
    (".version 8.7\n.target sm_80\n.visible .entry k()\n{\n    ret\n}\n", 6, 1, "unexpected"),
    (".version 8.7\n.target sm_80\n.visible .entry k()\n{\n    add.u32 %r1, %r2, #3;\n}\n", 5, 23, "unexpected character '#'"),
    (".version 8.7\n.target sm_80\n.visible .entry k()\n{\n    ret;\n", 6, 1, "end of input"),
])
def test_parse_error_positions(text, line, col, what):
    with pytest.raises(SimulatorError) as e:
        parse_ptx(text)
    assert (e.value.loc.line, e.value.loc.col) == (line, col), str(e.value)
    assert what in str(e.value) and f":{line}:{col}:" in str(e.value)


def test_undeclared_register_and_unknown_label():
    base = ".version 8.7\n.target sm_80\n.visible .entry k()\n{\n    .reg .b32 %r<3>;\n    %s\n    ret;\n}\n"
    with pytest.raises(SimulatorError, match=r"PTX line 6:5: unknown register or symbol '%r7'"):
        run_ptx(base.replace("%s", "add.u32 %r1, %r7, 1;"), "k", (1,), (1,), [])
    with pytest.raises(SimulatorError, match=r"unknown label '\$L_nowhere'"):
        run_ptx(base.replace("%s", "bra $L_nowhere;"), "k", (1,), (1,), [])


def test_recursive_calls_are_rejected():
    text = """
.version 8.7
.target sm_80
.address_size 64
.func (.param .b32 rv) f(.param .b32 a)
{
    .reg .b32 %r<3>;
    ld.param.u32 %r1, [a];
    {
    .param .b32 p0;
    st.param.b32 [p0+0], %r1;
    .param .b32 r0;
    call.uni (r0), f, (p0);
    ld.param.b32 %r2, [r0+0];
    }
    st.param.b32 [rv+0], %r2;
    ret;
}
.visible .entry k()
{
    .reg .b32 %r<3>;
    {
    .param .b32 p0;
    st.param.b32 [p0+0], 1;
    .param .b32 r0;
    call.uni (r0), f, (p0);
    ld.param.b32 %r2, [r0+0];
    }
    ret;
}
"""
    with pytest.raises(SimulatorError, match=r"kernel 'k', PTX line 13:5: recursive call of 'f'"):
        run_ptx(text, "k", (1,), (1,), [])


def test_falling_off_the_end_and_label_at_end():
    text = """
.version 8.7
.target sm_80
.address_size 64
.visible .entry k(.param .u64 out)
{
    .reg .pred %p<2>;
    .reg .b32 %r<3>;
    .reg .b64 %rd<3>;
    ld.param.u64 %rd1, [out];
    mov.u32 %r1, %tid.x;
    mul.wide.u32 %rd2, %r1, 4;
    add.s64 %rd1, %rd1, %rd2;
    st.global.u32 [%rd1], 1;
    setp.lt.u32 %p1, %r1, 3;
    @%p1 bra $L_end;
$L_end:
}
"""
    out = np.zeros(8, np.uint32)
    run_ptx(text, "k", (1,), (8,), [out])
    assert (out == 1).all()
