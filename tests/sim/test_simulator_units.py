"""Unit and property tests of the simulator's pieces: atomics against a sequential reference,
sector counting against a brute-force count, parsing details."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fsir.errors import SimulatorError
from fsir.sim import parse_ptx, run_ptx
from fsir.sim.memory import atomic_rmw, count_sectors


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
    assert e.value.loc is not None
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


# ------------------------------------------------------------- bit ops vs PTX ISA pseudo-code

def _bfe(a, pos, ln, n, signed):
    pos &= 0xFF
    ln &= 0xFF
    msb = n - 1
    sbit = 0 if not signed else (0 if ln == 0 else (a >> min(pos + ln - 1, msb)) & 1)
    d = 0
    for i in range(n):
        bit = (a >> (pos + i)) & 1 if (i < ln and pos + i <= msb) else sbit
        d |= bit << i
    return d


def _bfi(f, b, pos, ln, n):
    pos &= 0xFF
    ln &= 0xFF
    d = b
    for i in range(ln):
        if pos + i > n - 1:
            break
        d = (d & ~(1 << (pos + i))) | (((f >> i) & 1) << (pos + i))
    return d & ((1 << n) - 1)


def _shf(a, b, c, left, wrap):
    n = (c & 31) if wrap else min(c, 32)
    x = (b << 32) | a
    return ((x << n) >> 32) & 0xFFFFFFFF if left else (x >> n) & 0xFFFFFFFF


def _bfind(a, n, signed, shiftamt):
    if signed and a >> (n - 1):
        a = ~a & ((1 << n) - 1)
    if a == 0:
        return 0xFFFFFFFF
    pos = a.bit_length() - 1
    return (n - 1 - pos) if shiftamt else pos


def _prmt(a, b, c):
    x = (b << 32) | a
    d = 0
    for i in range(4):
        sel = (c >> (4 * i)) & 0xF
        byte = (x >> (8 * (sel & 7))) & 0xFF
        if sel & 8:
            byte = 0xFF if byte & 0x80 else 0
        d |= byte << (8 * i)
    return d


BITOPS = [
    ("bfe.u32 %r4, %r1, %r2, %r3;", lambda a, b, c: _bfe(a, b, c, 32, False), "u32"),
    ("bfe.s32 %r4, %r1, %r2, %r3;", lambda a, b, c: _bfe(a, b, c, 32, True), "u32"),
    ("bfi.b32 %r4, %r1, %r3, %r2, %r5;", None, "u32"),
    ("shf.l.wrap.b32 %r4, %r1, %r2, %r3;", lambda a, b, c: _shf(a, b, c, True, True), "u32"),
    ("shf.r.clamp.b32 %r4, %r1, %r2, %r3;", lambda a, b, c: _shf(a, b, c, False, False), "u32"),
    ("bfind.u32 %r4, %r1;", lambda a, b, c: _bfind(a, 32, False, False), "u32"),
    ("bfind.shiftamt.s32 %r4, %r1;", lambda a, b, c: _bfind(a, 32, True, True), "u32"),
    ("prmt.b32 %r4, %r1, %r2, %r3;", lambda a, b, c: _prmt(a, b, c), "u32"),
    ("brev.b32 %r4, %r1;", lambda a, b, c: int(f"{a:032b}"[::-1], 2), "u32"),
    ("clz.b32 %r4, %r1;", lambda a, b, c: 32 - a.bit_length(), "u32"),
    ("popc.b32 %r4, %r1;", lambda a, b, c: a.bit_count(), "u32"),
    ("mul.hi.u32 %r4, %r1, %r2;", lambda a, b, c: (a * b) >> 32, "u32"),
    ("mul.hi.s32 %r4, %r1, %r2;", lambda a, b, c: ((_s(a) * _s(b)) >> 32) & 0xFFFFFFFF, "u32"),
    ("div.s32 %r4, %r1, %r2;", lambda a, b, c: (int(_s(a) / _s(b)) if b else 0xFFFFFFFF) & 0xFFFFFFFF, "u32"),
    ("rem.s32 %r4, %r1, %r2;", lambda a, b, c: (_s(a) - int(_s(a) / _s(b)) * _s(b)) & 0xFFFFFFFF if b else a, "u32"),
    ("shr.s32 %r4, %r1, %r3;", lambda a, b, c: (_s(a) >> min(c, 31)) & 0xFFFFFFFF, "u32"),
    ("shl.b32 %r4, %r1, %r3;", lambda a, b, c: (a << c) & 0xFFFFFFFF if c < 32 else 0, "u32"),
    ("shr.u32 %r4, %r1, %r3;", lambda a, b, c: a >> c if c < 32 else 0, "u32"),
    ("shr.b32 %r4, %r1, %r3;", lambda a, b, c: a >> c if c < 32 else 0, "u32"),
]


def _s(x):
    return x - (1 << 32) if x >> 31 else x


@pytest.mark.parametrize("ins,ref,_t", BITOPS, ids=[b[0].split()[0] for b in BITOPS])
def test_bit_ops_match_isa_pseudocode(ins, ref, _t):
    text = f"""
.version 8.7
.target sm_80
.address_size 64
.visible .entry k(.param .u64 src, .param .u64 dst)
{{
    .reg .b32 %r<8>;
    .reg .b64 %rd<8>;
    ld.param.u64 %rd1, [src];
    ld.param.u64 %rd2, [dst];
    mov.u32 %r6, %tid.x;
    mul.wide.u32 %rd3, %r6, 12;
    add.s64 %rd4, %rd1, %rd3;
    ld.global.u32 %r1, [%rd4];
    ld.global.u32 %r2, [%rd4+4];
    ld.global.u32 %r3, [%rd4+8];
    xor.b32 %r5, %r1, %r3;
    and.b32 %r5, %r5, 63;
    {ins}
    mul.wide.u32 %rd5, %r6, 4;
    add.s64 %rd6, %rd2, %rd5;
    st.global.u32 [%rd6], %r4;
    ret;
}}
"""
    rng = np.random.default_rng(7)
    n = 256
    src = rng.integers(0, 2**32, (n, 3), dtype=np.uint64).astype(np.uint32)
    src[: n // 2, 1] &= 0x3F  # small positions / lengths / shift counts as well as huge ones
    src[: n // 2, 2] &= 0x3F
    src[:8, 0] = [0, 1, 0xFFFFFFFF, 0x80000000, 0x7FFFFFFF, 2, 3, 0xF0]
    dst = np.zeros(n, np.uint32)
    run_ptx(text, "k", (1,), (n,), [src, dst])
    if ins.startswith("bfi."):  # bfi d, f=%r1, b=%r3, pos=%r2, len=%r5=(%r1^%r3)&63
        expect = [_bfi(int(a), int(c), int(b), (int(a) ^ int(c)) & 0x3F, 32) for a, b, c in src]
    else:
        expect = [ref(int(a), int(b), int(c)) for a, b, c in src]
    assert dst.tolist() == expect


def test_runtime_simulator_reexports_the_simulator():
    import fsir.runtime.simulator as reexport
    import fsir.sim

    assert set(reexport.__all__) >= {"run_ptx", "launch", "load_module", "LaunchStats", "SimModule"}
    for name in reexport.__all__:
        assert getattr(reexport, name) is getattr(fsir.sim, name)
