"""Hand-written PTX on the simulator: semantics of individual instructions, divergence,
barriers, shuffles, memory spaces, counters, and the errors it must report."""

from __future__ import annotations

import os
import re
import subprocess
import tempfile

import numpy as np
import pytest

from fsir.errors import SimulatorError, UserError
from fsir.ptx.ptxas import find_ptxas
from fsir.sim import LaunchStats, run_ptx
from fsir.testing.paths import CUDA_PTX

HEADER = ".version 8.7\n.target sm_80\n.address_size 64\n"


def kern(name, params, body, pre=""):
    ps = ",\n".join(f"    .param .{t} {n}" for t, n in params)
    return f"""{HEADER}{pre}
.visible .entry {name}(
{ps}
)
{{
    .reg .pred %p<8>;
    .reg .b16 %rs<8>;
    .reg .b32 %r<32>;
    .reg .f32 %f<16>;
    .reg .b64 %rd<16>;
    .reg .f64 %fd<8>;
{body}
    ret;
}}
"""


# a prologue: %rd1 = out pointer (param out), %r1 = global thread index, %rd2 = &out[%r1] (4-byte)
PRO = """
    ld.param.u64 %rd1, [out];
    cvta.to.global.u64 %rd1, %rd1;
    mov.u32 %r2, %ctaid.x;
    mov.u32 %r3, %ntid.x;
    mov.u32 %r4, %tid.x;
    mad.lo.s32 %r1, %r2, %r3, %r4;
    mul.wide.s32 %rd3, %r1, 4;
    add.s64 %rd2, %rd1, %rd3;
"""

ALL_PTX: list[str] = []


def ptxk(name, params, body, pre=""):
    text = kern(name, params, body, pre)
    ALL_PTX.append(text)
    return text


def run1(body, n=32, dtype: type = np.uint32, extra_params=(), extra_args=(), pre="", block=None, shared_bytes=0):
    """Run `body` (after PRO) on n threads, one block, returning out[n]."""
    text = ptxk("k", [("u64", "out"), *extra_params], PRO + body, pre)
    out = np.zeros(n, dtype)
    run_ptx(text, "k", (1,), (block or n,), [out, *extra_args], shared_bytes=shared_bytes)
    return out


# ---------------------------------------------------------------------------------- basics


def test_integer_wraparound_and_signedness():
    out = run1("""
    mov.u32 %r5, 0xFFFFFFFF;
    add.u32 %r6, %r5, %r4;          // wraps: tid - 1
    shr.s32 %r7, %r5, 4;            // arithmetic: stays -1
    shr.u32 %r8, %r5, 28;           // logical: 15
    shl.b32 %r9, %r4, 33;           // shift >= width -> 0
    add.u32 %r10, %r6, %r7;
    add.u32 %r10, %r10, %r8;
    add.u32 %r10, %r10, %r9;
    st.global.u32 [%rd2], %r10;
""", n=8)
    tid = np.arange(8, dtype=np.int64)
    np.testing.assert_array_equal(out, ((tid - 1) + (-1) + 15) % 2**32)


@pytest.mark.parametrize("op,f", [("add", np.add), ("sub", np.subtract)])
def test_saturating_s32_add_sub(op, f):
    """add.sat.s32 / sub.sat.s32 clamp to [-2^31, 2^31 - 1] instead of wrapping."""
    out = run1(f"""
    mul.lo.s32 %r5, %r4, 0x40000000;   // 0, 2^30, -2^31, -2^30 (wrapped)
    {op}.sat.s32 %r6, %r5, 0x50000000;
    {op}.sat.s32 %r7, %r5, -1610612736;
    xor.b32 %r6, %r6, %r7;
    st.global.u32 [%rd2], %r6;
""", n=4, dtype=np.int32)
    x = (np.arange(4, dtype=np.int64) * 2**30 + 2**31) % 2**32 - 2**31
    sat = [np.clip(f(x, c), -(2**31), 2**31 - 1) for c in (0x50000000, -1610612736)]
    np.testing.assert_array_equal(out, (sat[0] ^ sat[1]).astype(np.int32))


def test_mul_hi_wide_div_rem():
    out = run1("""
    sub.s32 %r5, 3, %r4;            // 3 - tid: 3, 2, 1, 0, -1, ...
    mul.hi.s32 %r6, %r5, 0x40000000;
    div.s32 %r7, -7, %r5;           // truncates toward zero (x/0 unspecified, masked below)
    rem.s32 %r8, -7, %r5;
    mul.lo.s32 %r9, %r7, 1000;
    add.s32 %r9, %r9, %r8;
    mul.lo.s32 %r9, %r9, 1000;
    add.s32 %r9, %r9, %r6;
    setp.eq.s32 %p1, %r5, 0;
    selp.b32 %r9, 0, %r9, %p1;
    st.global.u32 [%rd2], %r9;
""", n=8, dtype=np.int32)
    a = 3 - np.arange(8)
    ref = []
    for x in a:
        if x == 0:
            ref.append(0)
            continue
        q = int(-7 / x)
        r = -7 - q * x
        hi = (int(x) * 0x40000000) >> 32
        ref.append((q * 1000 + r) * 1000 + hi)
    np.testing.assert_array_equal(out, ref)


def test_mul_wide_and_64bit_mul_hi():
    text = ptxk("k", [("u64", "out")], PRO + """
    mov.u32 %r5, 0xFFFFFFFF;
    mul.wide.u32 %rd4, %r5, %r5;
    mov.u64 %rd5, -3;
    mul.hi.u64 %rd6, %rd5, %rd5;    // (2^64-3)^2 >> 64 = 2^64 - 6
    mul.hi.s64 %rd7, %rd5, 7;       // -21 >> 64 = -1
    mul.wide.s32 %rd8, %r5, %r5;     // (-1)*(-1) = 1
    st.global.u64 [%rd1], %rd4;
    st.global.u64 [%rd1+8], %rd6;
    st.global.u64 [%rd1+16], %rd7;
    st.global.u64 [%rd1+24], %rd8;
""")
    out = np.zeros(4, np.uint64)
    run_ptx(text, "k", (1,), (1,), [out])
    assert out.tolist() == [0xFFFFFFFF**2, 2**64 - 6, 2**64 - 1, 1]


def test_float_ops_f32_not_f64():
    # 1 + 2^-30 rounds to 1 in float32; in float64 it would not
    out = run1("""
    mov.f32 %f1, 0f3F800000;        // 1.0
    mov.f32 %f2, 0f30800000;        // 2^-30
    add.f32 %f3, %f1, %f2;
    sub.f32 %f4, %f3, %f1;
    st.global.f32 [%rd2], %f4;
""", n=1, dtype=np.float32)
    assert out[0] == 0.0


def test_fma_single_rounding_and_directed_rounding():
    text = ptxk("k", [("u64", "out")], PRO + """
    mov.f32 %f1, 0f3F800001;        // 1 + 2^-23
    mov.f32 %f2, 0fBF800002;        // -(1 + 2^-22)
    fma.rn.f32 %f3, %f1, %f1, %f2;  // exact: 2^-46
    mul.f32 %f4, %f1, %f1;
    add.f32 %f4, %f4, %f2;          // separately rounded: 0
    mov.f32 %f5, 0f3F800000;
    mov.f32 %f6, 0f33800000;        // 2^-24: 1 + 2^-24 is a tie
    add.rp.f32 %f7, %f5, %f6;       // rounds up to 1 + 2^-23
    add.rm.f32 %f8, %f5, %f6;       // rounds down to 1
    add.rz.f32 %f9, %f5, %f6;
    st.global.v4.f32 [%rd1], {%f3, %f4, %f7, %f8};
    st.global.f32 [%rd1+16], %f9;
""")
    out = np.zeros(5, np.float32)
    run_ptx(text, "k", (1,), (1,), [out])
    assert out[0] == np.float32(2.0**-46)
    assert out[1] == 0
    assert out[2] == np.nextafter(np.float32(1), np.float32(2))
    assert out[3] == 1 and out[4] == 1


def test_ftz_and_sat():
    out = run1("""
    mov.f32 %f1, 0f00000010;         // a subnormal
    add.ftz.f32 %f2, %f1, %f1;       // flushed -> 0
    add.f32 %f3, %f1, %f1;           // kept
    mov.f32 %f4, 0f40000000;
    add.sat.f32 %f5, %f4, %f4;       // clamps to 1
    mov.b32 %r5, %f2;
    mov.b32 %r6, %f3;
    mov.b32 %r7, %f5;
    add.u32 %r8, %r5, %r6;
    add.u32 %r8, %r8, %r7;
    st.global.u32 [%rd2], %r8;
""", n=1)
    assert out[0] == 0x20 + 0x3F800000


@pytest.mark.parametrize("op,expect", [
    ("lt", [True, False, False, False]), ("ltu", [True, False, True, True]),
    ("ne", [True, False, False, False]), ("neu", [True, False, True, True]),
    ("eq", [False, True, False, False]), ("equ", [False, True, True, True]),
    ("ge", [False, True, False, False]), ("geu", [False, True, True, True]),
    ("num", [True, True, False, False]), ("nan", [False, False, True, True]),
])
def test_setp_nan_semantics(op, expect):
    text = ptxk("k", [("u64", "out"), ("u64", "a"), ("u64", "b")], PRO + f"""
    ld.param.u64 %rd4, [a];
    ld.param.u64 %rd5, [b];
    cvta.to.global.u64 %rd4, %rd4;
    cvta.to.global.u64 %rd5, %rd5;
    add.s64 %rd4, %rd4, %rd3;
    add.s64 %rd5, %rd5, %rd3;
    ld.global.f32 %f1, [%rd4];
    ld.global.f32 %f2, [%rd5];
    setp.{op}.f32 %p1, %f1, %f2;
    selp.u32 %r5, 1, 0, %p1;
    st.global.u32 [%rd2], %r5;
""")
    a = np.array([1, 2, np.nan, 1], np.float32)
    b = np.array([2, 2, 1, np.nan], np.float32)
    out = np.zeros(4, np.uint32)
    run_ptx(text, "k", (1,), (4,), [out, a, b])
    assert out.astype(bool).tolist() == expect


def test_setp_combine_and_two_outputs():
    out = run1("""
    setp.lt.u32 %p1, %r4, 4;
    setp.gt.and.u32 %p2|%p3, %r4, 1, %p1;   // p2 = (t>1)&(t<4); p3 = !(t>1)&(t<4)
    selp.u32 %r5, 10, 0, %p2;
    selp.u32 %r6, 1, 0, %p3;
    add.u32 %r5, %r5, %r6;
    st.global.u32 [%rd2], %r5;
""", n=6)
    assert out.tolist() == [1, 1, 10, 10, 0, 0]


@pytest.mark.parametrize("cvt,src,expect", [
    ("cvt.rni.s32.f32", [2.5, 3.5, -2.5, 1e10, float("nan")], [2, 4, -2, 2**31 - 1, 0]),
    ("cvt.rzi.s32.f32", [2.7, -2.7, -1e10, 0.5, -0.5], [2, -2, -2**31, 0, 0]),
    ("cvt.rmi.s32.f32", [2.7, -2.2, 0.0, -0.5, 7.0], [2, -3, 0, -1, 7]),
    ("cvt.rpi.s32.f32", [2.2, -2.7, 0.1, -0.5, 7.0], [3, -2, 1, 0, 7]),
    ("cvt.rzi.u32.f32", [-5.0, 3.9, 5e9, 1.0, 0.0], [0, 3, 2**32 - 1, 1, 0]),
])
def test_cvt_float_to_int(cvt, src, expect):
    dst_t = cvt.split(".")[2]
    text = ptxk("k", [("u64", "out"), ("u64", "a")], PRO + f"""
    ld.param.u64 %rd4, [a];
    cvta.to.global.u64 %rd4, %rd4;
    add.s64 %rd4, %rd4, %rd3;
    ld.global.f32 %f1, [%rd4];
    {cvt} %r5, %f1;
    st.global.{dst_t} [%rd2], %r5;
""")
    out = np.zeros(5, np.int32 if dst_t == "s32" else np.uint32)
    run_ptx(text, "k", (1,), (5,), [out, np.array(src, np.float32)])
    assert out.tolist() == expect


def test_cvt_int_int_and_f16_bf16():
    text = ptxk("k", [("u64", "out")], PRO + """
    mov.u32 %r5, 0x1234FF80;
    cvt.s8.s32 %r6, %r5;            // low byte 0x80, sign-extended -> -128
    cvt.u16.u32 %r7, %r5;           // 0xFF80
    cvt.sat.s8.s32 %r8, %r5;        // saturates to 127
    cvt.s64.s32 %rd4, %r6;
    mov.f32 %f1, 0f3FAAAAAB;        // 1.3333334
    cvt.rn.f16.f32 %rs1, %f1;
    cvt.f32.f16 %f2, %rs1;
    cvt.rn.bf16.f32 %rs2, %f1;
    cvt.f32.bf16 %f3, %rs2;
    st.global.u32 [%rd1], %r6;
    st.global.u32 [%rd1+4], %r7;
    st.global.u32 [%rd1+8], %r8;
    st.global.f32 [%rd1+12], %f2;
    st.global.f32 [%rd1+16], %f3;
    st.global.u64 [%rd1+24], %rd4;
""")
    out = np.zeros(8, np.uint32)
    run_ptx(text, "k", (1,), (1,), [out])
    f = out.view(np.float32)
    assert out[0] == np.uint32(2**32 - 128) and out[1] == 0xFF80 and out[2] == 127
    assert f[3] == np.float32(np.float16(np.float32(4 / 3)))
    assert f[4] == np.float32(1.3359375)  # bf16 rne of 1.3333334
    assert out[6:8].view(np.int64)[0] == -128


def test_bit_ops():
    out = run1("""
    mov.u32 %r5, 0x00F0F001;
    popc.b32 %r6, %r5;              // 9
    clz.b32 %r7, %r5;               // 8
    brev.b32 %r8, %r5;              // 0x800F0F00
    bfe.u32 %r9, %r5, 4, 8;         // 0x00
    bfe.s32 %r10, %r5, 12, 4;       // 0xF -> -1
    bfi.b32 %r11, 0xA, %r5, 8, 4;   // insert 0xA at bit 8: 0x00F0FA01
    prmt.b32 %r12, %r5, 0x44332211, 0x3210;  // identity of a
    prmt.b32 %r13, %r5, 0x44332211, 0x7654;  // b
    xor.b32 %r14, %r12, %r5;        // 0
    st.global.u32 [%rd1], %r6;
    st.global.u32 [%rd1+4], %r7;
    st.global.u32 [%rd1+8], %r8;
    st.global.u32 [%rd1+12], %r9;
    st.global.u32 [%rd1+16], %r10;
    st.global.u32 [%rd1+20], %r11;
    st.global.u32 [%rd1+24], %r13;
    st.global.u32 [%rd1+28], %r14;
""", n=8, block=1)
    assert out.tolist() == [9, 8, 0x800F0F00, 0x0F & 0x00, 0xFFFFFFFF, 0x00F0FA01, 0x44332211, 0]


def test_mov_pack_unpack_and_vectors():
    text = ptxk("k", [("u64", "out")], PRO + """
    mov.u32 %r5, 0x11112222;
    mov.u32 %r6, 0x33334444;
    mov.b64 %rd4, {%r5, %r6};       // lo, hi
    mov.b64 {%r7, %r8}, %rd4;
    mov.b32 {%rs1, %rs2}, %r5;      // 0x2222, 0x1111
    cvt.u32.u16 %r9, %rs1;
    cvt.u32.u16 %r10, %rs2;
    st.global.v2.u32 [%rd1], {%r8, %r7};
    st.global.u64 [%rd1+8], %rd4;
    st.global.v2.u32 [%rd1+16], {%r9, %r10};
    ld.global.v4.u32 {%r11, %r12, %r13, %r14}, [%rd1];
    add.u32 %r15, %r11, %r14;
    st.global.u32 [%rd1+24], %r15;
""")
    out = np.zeros(8, np.uint32)
    run_ptx(text, "k", (1,), (1,), [out])
    assert out[:6].tolist() == [0x33334444, 0x11112222, 0x11112222, 0x33334444, 0x2222, 0x1111]
    assert out[6] == 0x33334444 + 0x33334444 & 0xFFFFFFFF


def test_transcendentals_and_misc_float():
    text = ptxk("k", [("u64", "out")], PRO + """
    mov.f32 %f1, 0f40000000;        // 2
    ex2.approx.f32 %f2, %f1;        // 4
    lg2.approx.f32 %f3, %f2;        // 2
    rsqrt.approx.f32 %f4, %f2;      // 0.5
    sqrt.rn.f32 %f5, %f2;           // 2
    rcp.rn.f32 %f6, %f2;            // 0.25
    tanh.approx.f32 %f7, %f1;
    neg.f32 %f8, %f1;
    copysign.f32 %f9, %f8, %f6;     // -0.25
    sin.approx.f32 %f10, %f1;
    cos.approx.f32 %f11, %f1;
    max.f32 %f12, %f8, %f1;
    st.global.v4.f32 [%rd1], {%f2, %f3, %f4, %f5};
    st.global.v4.f32 [%rd1+16], {%f6, %f7, %f9, %f10};
    st.global.v2.f32 [%rd1+32], {%f11, %f12};
""")
    out = np.zeros(10, np.float32)
    run_ptx(text, "k", (1,), (1,), [out])
    np.testing.assert_allclose(out, [4, 2, 0.5, 2, 0.25, np.tanh(2), -0.25, np.sin(2), np.cos(2), 2], rtol=1e-6)


def test_f16_and_f16x2_arith():
    text = ptxk("k", [("u64", "out")], PRO + """
    mov.b16 %rs1, 0x3C00;           // 1.0
    mov.b16 %rs2, 0x4000;           // 2.0
    add.f16 %rs3, %rs1, %rs2;
    fma.rn.f16 %rs4, %rs3, %rs2, %rs1;   // 7
    mov.b32 %r5, {%rs1, %rs2};
    mul.f16x2 %r6, %r5, %r5;        // {1, 4}
    mov.b32 {%rs5, %rs6}, %r6;
    st.global.v4.u16 [%rd1], {%rs3, %rs4, %rs5, %rs6};
""")
    out = np.zeros(4, np.float16)
    run_ptx(text, "k", (1,), (1,), [out])
    assert out.tolist() == [3, 7, 1, 4]


# ------------------------------------------------------------------------ control flow


def test_divergent_loops_reconverge():
    # thread t loops t times, then everyone writes sum(0..t-1) + a value computed after reconvergence
    out = run1("""
    mov.u32 %r5, 0;
    mov.u32 %r6, 0;
$L_loop:
    setp.ge.u32 %p1, %r6, %r4;
    @%p1 bra $L_done;
    add.u32 %r5, %r5, %r6;
    add.u32 %r6, %r6, 1;
    bra.uni $L_loop;
$L_done:
    and.b32 %r7, %r4, 1;
    setp.eq.u32 %p2, %r7, 0;
    @%p2 bra $L_even;
    add.u32 %r5, %r5, 1000;
    bra $L_join;
$L_even:
    add.u32 %r5, %r5, 2000;
$L_join:
    st.global.u32 [%rd2], %r5;
""", n=40)
    t = np.arange(40)
    np.testing.assert_array_equal(out, t * (t - 1) // 2 + np.where(t % 2, 1000, 2000))


def test_early_exit_and_predicated_instructions():
    out = run1("""
    st.global.u32 [%rd2], 7;
    setp.gt.u32 %p1, %r4, 20;
    @%p1 exit;
    setp.lt.u32 %p2, %r4, 5;
    @!%p2 add.u32 %r4, %r4, 100;
    @%p2 ret;
    st.global.u32 [%rd2], %r4;
""", n=32)
    t = np.arange(32)
    np.testing.assert_array_equal(out, np.where(t > 20, 7, np.where(t < 5, 7, t + 100)))


def test_barrier_waits_for_all_live_threads():
    # thread 0 writes late (after a long loop); others read after the barrier
    text = ptxk("k", [("u64", "out")], PRO + """
    .shared .align 4 .b32 flag;
    setp.ne.u32 %p1, %r4, 0;
    @%p1 bra $L_wait;
    mov.u32 %r5, 0;
$L_spin:
    add.u32 %r5, %r5, 1;
    setp.lt.u32 %p2, %r5, 100;
    @%p2 bra $L_spin;
    st.shared.u32 [flag], %r5;
$L_wait:
    bar.sync 0;
    ld.shared.u32 %r6, [flag];
    st.global.u32 [%rd2], %r6;
""")
    out = np.zeros(64, np.uint32)
    st = run_ptx(text, "k", (3,), (64,), [np.zeros(3 * 64, np.uint32)])
    out = np.zeros(3 * 64, np.uint32)
    run_ptx(text, "k", (3,), (64,), [out])
    assert (out == 100).all() and st.barriers == 1


def test_barrier_after_exited_threads():
    # threads >= 10 exit before the barrier; the barrier counts only live threads
    out = run1("""
    .shared .align 4 .b8 buf[128];
    setp.ge.u32 %p1, %r4, 10;
    @%p1 ret;
    shl.b32 %r5, %r4, 2;
    mov.u32 %r6, buf;
    add.u32 %r7, %r6, %r5;
    st.shared.u32 [%r7], %r4;
    bar.sync 0;
    sub.u32 %r8, 9, %r4;
    shl.b32 %r8, %r8, 2;
    add.u32 %r8, %r6, %r8;
    ld.shared.u32 %r9, [%r8];
    st.global.u32 [%rd2], %r9;
""", n=32)
    assert out[:10].tolist() == list(range(9, -1, -1)) and not out[10:].any()


@pytest.mark.parametrize("mode,b,c,ref", [
    ("up", 3, 0, lambda x, l: np.where(l >= 3, x[np.maximum(l - 3, 0)], x)),
    ("down", 5, 31, lambda x, l: np.where(l + 5 <= 31, x[np.minimum(l + 5, 31)], x)),
    ("bfly", 6, 31, lambda x, l: x[l ^ 6]),
    ("idx", 9, 31, lambda x, l: x[np.full_like(l, 9)]),
    ("down", 2, 0x1807, lambda x, l: np.where((l % 8) + 2 <= 7, x[np.minimum(l + 2, 31)], x)),  # width 8
    ("idx", 3, 0x1807, lambda x, l: x[(l // 8) * 8 + 3]),
])
def test_shfl_modes(mode, b, c, ref):
    text = ptxk("k", [("u64", "out"), ("u64", "pred")], PRO + f"""
    mul.lo.u32 %r5, %r4, 7;
    add.u32 %r5, %r5, 3;
    shfl.sync.{mode}.b32 %r6|%p1, %r5, {b}, {c}, -1;
    st.global.u32 [%rd2], %r6;
    ld.param.u64 %rd4, [pred];
    cvta.to.global.u64 %rd4, %rd4;
    add.s64 %rd4, %rd4, %rd3;
    selp.u32 %r7, 1, 0, %p1;
    st.global.u32 [%rd4], %r7;
""")
    for block in (32, 64):  # 64: also the uniform fast path over two warps
        out = np.zeros(block, np.uint32)
        pred = np.zeros(block, np.uint32)
        run_ptx(text, "k", (1,), (block,), [out, pred])
        lane = np.arange(block) % 32
        x = (np.arange(block) * 7 + 3).astype(np.uint32)
        for w in range(block // 32):
            xs = x[w * 32:(w + 1) * 32]
            exp = ref(xs, lane[:32])
            np.testing.assert_array_equal(out[w * 32:(w + 1) * 32], exp)
            np.testing.assert_array_equal(pred[w * 32:(w + 1) * 32] == 1, exp != xs if mode != "idx" else True)


def test_shfl_per_lane_source_and_partial_warp():
    # per-lane source index (not uniform) in a block of 40 threads (second warp has 8 lanes)
    out = run1("""
    xor.b32 %r5, %r4, 1;
    add.u32 %r6, %r4, 100;
    shfl.sync.idx.b32 %r7|%p1, %r6, %r5, 31, -1;
    selp.u32 %r8, 0, 0x10000, %p1;
    add.u32 %r7, %r7, %r8;
    st.global.u32 [%rd2], %r7;
""", n=40)
    t = np.arange(40)
    np.testing.assert_array_equal(out, (t ^ 1) + 100)


def test_vote_ballot_and_redux():
    out = run1("""
    and.b32 %r5, %r4, 3;
    setp.eq.u32 %p1, %r5, 0;
    vote.sync.ballot.b32 %r6, %p1, -1;
    vote.sync.any.pred %p2, %p1, -1;
    redux.sync.add.u32 %r7, %r4, -1;
    redux.sync.max.u32 %r8, %r4, -1;
    selp.u32 %r9, 1, 0, %p2;
    add.u32 %r10, %r7, %r8;
    add.u32 %r10, %r10, %r9;
    st.global.u32 [%rd2], %r6;
    st.global.u32 [%rd2+128], %r10;
""", n=64, block=32)
    assert (out[:32] == 0x11111111).all()
    assert (out[32:] == sum(range(32)) + 31 + 1).all()


# ----------------------------------------------------------------------------- memory


def test_shared_atomics_and_local_memory():
    text = ptxk("k", [("u64", "out")], PRO + """
    .shared .align 4 .b32 counter;
    .local .align 4 .b8 depot[16];
    setp.eq.u32 %p1, %r4, 0;
    @%p1 st.shared.u32 [counter], 0;
    bar.sync 0;
    atom.shared.add.u32 %r5, [counter], 2;
    mov.u64 %rd4, depot;
    st.local.u32 [%rd4+8], %r5;
    ld.local.u32 %r6, [%rd4+8];
    cvta.local.u64 %rd5, %rd4;       // generic access to local memory
    ld.u32 %r7, [%rd5+8];
    add.u32 %r6, %r6, %r7;
    st.global.u32 [%rd2], %r6;
""")
    out = np.zeros(64, np.uint32)
    run_ptx(text, "k", (1,), (64,), [out])
    assert sorted((out // 2).tolist()) == [2 * i for i in range(64)]


def test_generic_shared_access_via_cvta():
    out = run1("""
    .shared .align 4 .b8 buf[256];
    mov.u64 %rd4, buf;
    cvta.shared.u64 %rd5, %rd4;
    mul.wide.u32 %rd6, %r4, 4;
    add.s64 %rd7, %rd5, %rd6;
    st.u32 [%rd7], %r4;
    bar.sync 0;
    xor.b32 %r5, %r4, 3;
    mul.wide.u32 %rd6, %r5, 4;
    add.s64 %rd7, %rd5, %rd6;
    ld.u32 %r6, [%rd7];
    st.global.u32 [%rd2], %r6;
""", n=64)
    np.testing.assert_array_equal(out, np.arange(64) ^ 3)


def test_atomic_ops_global():
    text = ptxk("k", [("u64", "out")], PRO + """
    atom.global.add.u32 %r5, [%rd1], 1;
    atom.global.max.s32 %r6, [%rd1+4], %r4;
    atom.global.min.u32 %r7, [%rd1+8], %r4;
    atom.global.or.b32 %r8, [%rd1+12], %r4;
    atom.global.exch.b32 %r9, [%rd1+16], %r4;
    atom.global.inc.u32 %r10, [%rd1+20], 5;
    atom.global.cas.b32 %r11, [%rd1+24], %r4, 100;   // only the thread whose tid equals the value wins
    red.global.add.f32 [%rd1+28], 0f3F000000;
    red.global.xor.b32 [%rd1+32], %r4;
""")
    out = np.zeros(9, np.uint32)
    out[2] = 1000
    out[6] = 3
    run_ptx(text, "k", (1,), (16,), [out])
    f = out.view(np.float32)
    assert out[0] == 16 and out[1] == 15 and out[2] == 0 and out[3] == 15
    assert out[4] in range(16) and out[5] == 16 % 6 and out[6] == 100
    assert f[7] == 8.0 and out[8] == np.bitwise_xor.reduce(np.arange(16))


def test_module_global_variable():
    pre = ".global .align 4 .u32 table[4] = {10, 20, 30, 40};\n"
    text = ptxk("k", [("u64", "out")], PRO + """
    and.b32 %r5, %r4, 3;
    mul.wide.u32 %rd4, %r5, 4;
    mov.u64 %rd5, table;
    add.s64 %rd5, %rd5, %rd4;
    ld.global.u32 %r6, [%rd5];
    st.global.u32 [%rd2], %r6;
""", pre=pre)
    out = np.zeros(8, np.uint32)
    run_ptx(text, "k", (1,), (8,), [out])
    assert out.tolist() == [10, 20, 30, 40] * 2


# ------------------------------------------------------------------------------ counters

VADD = None


def _vadd():
    return (CUDA_PTX / "vecadd.ptx").read_text()


@pytest.mark.parametrize("n", [1024, 1000, 33])
def test_counters_vector_add(n):
    a = np.ones(n, np.float32)
    b = np.ones(n, np.float32)
    c = np.zeros(n, np.float32)
    bs = 256
    st = run_ptx(_vadd(), "vec_add", ((n + bs - 1) // bs,), (bs,), [a, b, c, n])
    assert st.launches == 1
    assert st.global_load_bytes == 8 * n
    assert st.global_store_bytes == 4 * n
    assert st.global_unique_bytes == 12 * n
    # buffers are 256-byte aligned: each full warp touches 4 sectors per array, a partial warp ceil(4k/32)
    full, rest = divmod(n, 32)
    per_array = 4 * full + (rest * 4 + 31) // 32
    assert st.global_sectors == 3 * per_array
    assert st.global_load_requests == 2 * ((n + 31) // 32)
    nthreads = ((n + bs - 1) // bs) * bs
    # threads past n execute the prologue (10 instructions incl. the branch) and ret
    assert st.instructions == 22 * n + 11 * (nthreads - n) + (n and 0)
    tot = st + st
    assert isinstance(tot, LaunchStats) and tot.launches == 2 and tot.instructions == 2 * st.instructions
    total = sum([st, st])
    assert isinstance(total, LaunchStats) and total.global_load_bytes == 16 * n


def test_counters_strided_access_sectors():
    # each thread loads out[tid * 8] (32-byte stride): one sector per lane
    text = ptxk("k", [("u64", "out")], PRO + """
    mul.wide.u32 %rd4, %r4, 32;
    add.s64 %rd4, %rd1, %rd4;
    ld.global.u32 %r5, [%rd4];
    st.global.u32 [%rd4], %r5;
""")
    out = np.zeros(64 * 8, np.uint32)
    st = run_ptx(text, "k", (1,), (64,), [out])
    assert st.global_sectors == 128  # 64 loads + 64 stores, one sector each
    assert st.global_unique_bytes == 64 * 4


def test_shared_counters():
    out = run1("""
    .shared .align 4 .b8 buf[256];
    shl.b32 %r5, %r4, 2;
    mov.u32 %r6, buf;
    add.u32 %r6, %r6, %r5;
    st.shared.u32 [%r6], %r4;
    bar.sync 0;
    ld.shared.u32 %r7, [%r6];
    st.global.u32 [%rd2], %r7;
""", n=64)
    np.testing.assert_array_equal(out, np.arange(64))


# -------------------------------------------------------------------------------- errors


def test_out_of_bounds_global_is_reported():
    text = ptxk("k", [("u64", "out")], PRO + """
    st.global.u32 [%rd2], %r4;
""")
    out = np.zeros(30, np.uint32)
    with pytest.raises(SimulatorError) as e:
        run_ptx(text, "k", (1,), (32,), [out])
    msg = str(e.value)
    assert "kernel 'k'" in msg and "PTX line" in msg and "out-of-bounds global store" in msg
    assert "thread (30,0,0)" in msg and "0 bytes past the end" not in msg and "4 bytes past the end of argument 0 (out" in msg
    assert not out.any()  # nothing written back after a fault
    line = next(i + 1 for i, l in enumerate(text.splitlines()) if "st.global.u32 [%rd2], %r4;" in l)
    assert f"PTX line {line}" in msg


def test_misaligned_and_null_access():
    text = ptxk("k", [("u64", "out")], PRO + """
    ld.global.u32 %r5, [%rd1+2];
""")
    with pytest.raises(SimulatorError, match="misaligned global load"):
        run_ptx(text, "k", (1,), (1,), [np.zeros(4, np.uint32)])
    text = ptxk("k", [("u64", "out")], PRO + """
    mov.u64 %rd4, 0;
    ld.global.u32 %r5, [%rd4];
""")
    with pytest.raises(SimulatorError, match="out-of-bounds global load"):
        run_ptx(text, "k", (1,), (1,), [np.zeros(4, np.uint32)])


def test_out_of_bounds_shared():
    out = np.zeros(32, np.uint32)
    text = ptxk("k", [("u64", "out")], PRO + """
    .shared .align 4 .b8 buf[64];
    shl.b32 %r5, %r4, 2;
    mov.u32 %r6, buf;
    add.u32 %r6, %r6, %r5;
    st.shared.u32 [%r6], %r4;
""")
    with pytest.raises(SimulatorError, match=r"out-of-bounds shared store by thread \(16,0,0\).*64 bytes of shared memory"):
        run_ptx(text, "k", (1,), (32,), [out])


RACY = kern("racy", [("u64", "out")], PRO + """
    .shared .align 4 .b8 buf[128];
    shl.b32 %r5, %r4, 2;
    mov.u32 %r6, buf;
    add.u32 %r7, %r6, %r5;
    st.shared.u32 [%r7], %r4;
    // BUG: no bar.sync here; thread t reads what thread t+1 wrote
    ld.shared.u32 %r8, [%r7+4];
    st.global.u32 [%rd2], %r8;
""")
ALL_PTX.append(RACY)


def test_shared_race_is_detected():
    out = np.zeros(31, np.uint32)
    with pytest.raises(SimulatorError) as e:
        run_ptx(RACY, "racy", (1,), (31,), [out])
    msg = str(e.value)
    assert "shared-memory race" in msg and "kernel 'racy'" in msg
    ld_line = next(i + 1 for i, l in enumerate(RACY.splitlines()) if "ld.shared.u32 %r8" in l)
    st_line = next(i + 1 for i, l in enumerate(RACY.splitlines()) if "st.shared.u32 [%r7]" in l)
    assert f"PTX line {ld_line}" in msg and f"at PTX line {st_line}" in msg
    assert "thread (0,0,0)" in msg and "thread (1,0,0)" in msg and "buf+4" in msg
    # with the barrier it is fine
    fixed = RACY.replace("    // BUG: no bar.sync here; thread t reads what thread t+1 wrote\n", "    bar.sync 0;\n")
    out = np.zeros(31, np.uint32)
    run_ptx(fixed.replace(".entry racy", ".entry fixed"), "fixed", (1,), (31,), [out])
    assert out[:30].tolist() == list(range(1, 31))
    # and the check can be switched off
    run_ptx(RACY, "racy", (1,), (31,), [np.zeros(31, np.uint32)], check_races=False)


def test_write_write_race_in_one_instruction():
    out = np.zeros(32, np.uint32)
    text = ptxk("k", [("u64", "out")], PRO + """
    .shared .align 4 .b32 cell;
    st.shared.u32 [cell], %r4;
""")
    with pytest.raises(SimulatorError, match="both write the same shared memory"):
        run_ptx(text, "k", (1,), (32,), [out])


def test_atomics_are_not_races():
    """64 threads of each of 2 blocks add to one shared cell (atom and red) and to one
    global counter: no race is reported, and no increment is lost."""
    text = ptxk("k", [("u64", "out")], PRO + """
    .shared .align 4 .b32 cell;
    setp.eq.u32 %p1, %r4, 0;
    @%p1 st.shared.u32 [cell], 0;
    bar.sync 0;
    atom.shared.add.u32 %r5, [cell], 1;
    red.shared.add.u32 [cell], 1;
    bar.sync 0;
    @%p1 ld.shared.u32 %r6, [cell];
    mul.wide.u32 %rd4, %r2, 4;
    add.s64 %rd5, %rd1, %rd4;
    @%p1 st.global.u32 [%rd5], %r6;
    atom.global.add.u32 %r7, [%rd1+8], 1;
""")
    out = np.zeros(3, np.uint32)
    run_ptx(text, "k", (2,), (64,), [out])
    np.testing.assert_array_equal(out, [128, 128, 128])


def test_parse_error_has_line_and_column():
    bad = HEADER + ".visible .entry k(\n    .param .u64 out\n)\n{\n    .reg .b32 %r<4>;\n    add.u32 %r1, %r2 %r3;\n    ret;\n}\n"
    with pytest.raises(SimulatorError) as e:
        run_ptx(bad, "k", (1,), (1,), [np.zeros(1)])
    assert isinstance(e.value, UserError)
    assert e.value.loc is not None and (e.value.loc.line, e.value.loc.col) == (9, 22)
    assert ":9:22:" in str(e.value)


@pytest.mark.parametrize("instr, what", [
    ("cvt.pred.u32 %p1, %r1;", "unsupported instruction 'cvt.pred.u32'"),
    ("set.lt.and.u32.s32 %r1, %r2, %r3;", "'set.lt.and.u32.s32' needs a fourth (predicate) operand"),
    ("setp.lt.and.s32 %p1, %r2, %r3;", "'setp.lt.and.s32' needs a fourth (predicate) operand"),
])
def test_malformed_instruction_is_an_error_at_its_line(instr, what):
    text = kern("k", [("u64", "out")], f"    {instr}\n")  # invalid PTX: not checked with ptxas
    line = next(i + 1 for i, l in enumerate(text.splitlines()) if instr in l)
    with pytest.raises(SimulatorError, match=re.escape(f"kernel 'k', PTX line {line}:5: {what}")):
        run_ptx(text, "k", (1,), (1,), [np.zeros(1)])


def test_unsupported_instruction_names_line():
    text = kern("k", [("u64", "out")], "    mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32 {%r1,%r2,%r3,%r4}, {%r1,%r2,%r3,%r4}, {%r5,%r6}, {%r5,%r6,%r7,%r8};\n")
    line = next(i + 1 for i, l in enumerate(text.splitlines()) if "mma.sync" in l)
    with pytest.raises(SimulatorError, match=rf"kernel 'k', PTX line {line}:5: unsupported instruction 'mma"):
        run_ptx(text, "k", (1,), (1,), [np.zeros(1)])


def test_argument_errors():
    text = _vadd()
    a = np.zeros(4, np.float32)
    with pytest.raises(SimulatorError, match="unknown kernel 'nope'.*vec_add"):
        run_ptx(text, "nope", (1,), (1,), [])
    with pytest.raises(SimulatorError, match="takes 4 arguments"):
        run_ptx(text, "vec_add", (1,), (4,), [a, a, a])
    with pytest.raises(SimulatorError, match="argument 3.*integer parameter, got float"):
        run_ptx(text, "vec_add", (1,), (4,), [a, a, a, 4.0])
    with pytest.raises(SimulatorError, match="argument 3.*not a 64-bit pointer"):
        run_ptx(text, "vec_add", (1,), (4,), [a, a, a, a])
    with pytest.raises(SimulatorError, match="does not fit .u32"):
        run_ptx(text, "vec_add", (1,), (4,), [a, a, a, 2**32])
    with pytest.raises(SimulatorError, match="limit is 1024"):
        run_ptx(text, "vec_add", (1,), (2048,), [a, a, a, 4])
    with pytest.raises(SimulatorError, match="grid must be"):
        run_ptx(text, "vec_add", (0,), (32,), [a, a, a, 4])


def test_infinite_loop_is_reported(monkeypatch):
    from fsir.sim import engine
    monkeypatch.setattr(engine, "MAX_STEPS", 1000)
    text = ptxk("k", [("u64", "out")], PRO + "$L_x:\n    bra.uni $L_x;\n")
    with pytest.raises(SimulatorError, match="too many branches"):
        run_ptx(text, "k", (1,), (1,), [np.zeros(1)])


def test_large_launch_in_chunks(monkeypatch):
    from fsir.sim import launcher
    monkeypatch.setattr(launcher, "CHUNK_LANES", 256)
    n = 5000
    a = np.arange(n, dtype=np.float32)
    c = np.zeros(n, np.float32)
    st = run_ptx(_vadd(), "vec_add", ((n + 127) // 128,), (128,), [a, a, c, n])
    np.testing.assert_array_equal(c, 2 * a)
    assert st.global_unique_bytes == 8 * n  # the same array passed twice is one buffer


def test_3d_grid_and_block_special_registers():
    text = ptxk("k", [("u64", "out")], """
    ld.param.u64 %rd1, [out];
    cvta.to.global.u64 %rd1, %rd1;
    mov.u32 %r1, %tid.x;
    mov.u32 %r2, %tid.y;
    mov.u32 %r3, %tid.z;
    mov.u32 %r4, %ctaid.x;
    mov.u32 %r5, %ctaid.y;
    mov.u32 %r6, %ctaid.z;
    mov.u32 %r7, %ntid.x;
    mov.u32 %r8, %ntid.y;
    mov.u32 %r9, %nctaid.x;
    mov.u32 %r10, %nctaid.y;
    // linear block id and thread id
    mad.lo.u32 %r11, %r6, %r10, %r5;
    mad.lo.u32 %r11, %r11, %r9, %r4;
    mad.lo.u32 %r12, %r3, %r8, %r2;
    mad.lo.u32 %r12, %r12, %r7, %r1;
    mov.u32 %r13, %ntid.z;
    mul.lo.u32 %r14, %r7, %r8;
    mul.lo.u32 %r14, %r14, %r13;
    mad.lo.u32 %r15, %r11, %r14, %r12;
    mul.wide.u32 %rd2, %r15, 4;
    add.s64 %rd2, %rd1, %rd2;
    mov.u32 %r16, %laneid;
    mov.u32 %r17, %warpid;
    mad.lo.u32 %r18, %r17, 1000, %r16;
    st.global.u32 [%rd2], %r18;
""")
    grid, block = (2, 3, 2), (4, 3, 5)
    T = 60
    out = np.zeros(12 * T, np.uint32)
    run_ptx(text, "k", grid, block, [out])
    t = np.arange(12 * T) % T
    np.testing.assert_array_equal(out, (t // 32) * 1000 + t % 32)


@pytest.fixture(scope="module", autouse=True)
def _all_handwritten_ptx_assembles():
    """After this module's tests ran (in this worker), every kernel they built must assemble."""
    yield
    ptxas = find_ptxas()
    if not ptxas:
        return
    texts = list(dict.fromkeys(ALL_PTX))
    with tempfile.TemporaryDirectory() as d:
        for i, t in enumerate(texts):
            p = os.path.join(d, f"k{i}.ptx")
            with open(p, "w") as f:
                f.write(t)
            r = subprocess.run([ptxas, "-arch=sm_80", "-o", os.devnull, p], capture_output=True, text=True, check=False)
            assert r.returncode == 0, f"{r.stderr}\n{t}"


def test_racy_kernel_assembles():
    ptxas = find_ptxas()
    if not ptxas:
        pytest.skip("ptxas not available")
    with tempfile.TemporaryDirectory() as d:
        p = os.path.join(d, "racy.ptx")
        with open(p, "w") as f:
            f.write(RACY)
        r = subprocess.run([ptxas, "-arch=sm_80", "-o", os.devnull, p], capture_output=True, text=True, check=False)
        assert r.returncode == 0, r.stderr


def test_warp_sync_orders_shared_accesses_within_a_warp():
    body = """
    .shared .align 4 .b8 buf[256];
    shl.b32 %r5, %r4, 2;
    mov.u32 %r6, buf;
    add.u32 %r7, %r6, %r5;
    st.shared.u32 [%r7], %r4;
    SYNC
    xor.b32 %r8, %r5, 4;             // neighbour in the same warp
    add.u32 %r8, %r6, %r8;
    ld.shared.u32 %r9, [%r8];
    st.global.u32 [%rd2], %r9;
"""
    out = run1(body.replace("SYNC", "bar.warp.sync -1;"), n=64)
    np.testing.assert_array_equal(out, np.arange(64) ^ 1)
    with pytest.raises(SimulatorError, match="shared-memory race"):
        run1(body.replace("SYNC", ""), n=64)


def test_dynamic_shared_memory_is_sized_by_shared_bytes():
    pre = ".extern .shared .align 16 .b8 dyn[];\n"
    body = """
    .shared .align 4 .b8 stat[12];
    shl.b32 %r5, %r4, 2;
    mov.u32 %r6, dyn;
    add.u32 %r7, %r6, %r5;
    st.shared.u32 [%r7], %r4;
    mov.u32 %r8, stat;
    st.global.u32 [%rd2], %r6;       // the dynamic region starts after the static one, 16-aligned
"""
    out = run1(body, n=32, pre=pre, shared_bytes=128)
    assert (out == 16).all()
    with pytest.raises(SimulatorError, match="out-of-bounds shared store by thread \\(16,0,0\\)"):
        run1(body, n=32, pre=pre, shared_bytes=64)


def test_static_shared_arrays_beyond_48_kb_are_refused():
    """ptxas refuses more than 48 KB of static .shared arrays; the simulator too, with the
    line of the declaration that crosses it (dynamic shared memory may go beyond)."""
    body = """
    .shared .align 16 .b8 tiles[49152];
    .shared .align 4 .b32 word[1];
    st.global.u32 [%rd2], %r4;
"""
    text = kern("k", [("u64", "out")], PRO + body)  # not in ALL_PTX: ptxas refuses it too
    with pytest.raises(SimulatorError, match=r"49156 bytes of static .shared arrays; ptxas accepts at most 49152"):
        run_ptx(text, "k", (1,), (32,), [np.zeros(32, np.uint32)])
    ptxas = find_ptxas()
    if ptxas:
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "k.ptx")
            with open(path, "w") as f:
                f.write(text)
            r = subprocess.run([ptxas, "-arch=sm_80", "-o", os.devnull, path], capture_output=True, text=True,
                               check=False)
        assert r.returncode != 0 and "too much shared data" in r.stderr
    run1(body.replace("49152", "49148"), n=32)


def test_bf16_arithmetic_and_generic_global_access():
    text = ptxk("k", [("u64", "out")], """
    ld.param.u64 %rd1, [out];          // generic address of a global buffer, no cvta
    mov.f32 %f1, 0f40490FDB;           // pi
    cvt.rn.bf16.f32 %rs1, %f1;         // 3.140625
    mov.b16 %rs2, 0x4000;              // bf16 2.0
    mov.b16 %rs4, 0x8000;              // -0.0
    fma.rn.bf16 %rs3, %rs1, %rs2, %rs4;  // (mul.bf16 needs sm_90)
    cvt.f32.bf16 %f2, %rs3;
    st.f32 [%rd1], %f2;
    ld.global.nc.v4.f32 {%f3, %f4, %f5, %f6}, [%rd1];
    add.f32 %f7, %f3, %f6;
    st.global.f32 [%rd1+4], %f7;
""")
    out = np.zeros(4, np.float32)
    out[3] = 1
    run_ptx(text, "k", (1,), (1,), [out])
    assert out[0] == np.float32(6.28125) and out[1] == np.float32(7.28125)


def test_shfl_in_divergent_code_uses_generic_path():
    # only even lanes execute the shuffle; sources are the odd neighbours' (live) registers
    out = run1("""
    add.u32 %r5, %r4, 1000;
    and.b32 %r6, %r4, 1;
    setp.ne.u32 %p1, %r6, 0;
    @%p1 bra $L_skip;
    shfl.sync.bfly.b32 %r5, %r5, 1, 31, 0x55555555;
$L_skip:
    st.global.u32 [%rd2], %r5;
""", n=64)
    t = np.arange(64)
    np.testing.assert_array_equal(out, np.where(t % 2 == 0, (t ^ 1) + 1000, t + 1000))


def test_predicated_store_counts_only_active_lanes():
    text = ptxk("k", [("u64", "out")], PRO + """
    setp.lt.u32 %p1, %r4, 10;
    @%p1 st.global.u32 [%rd2], %r4;
""")
    out = np.zeros(32, np.uint32)
    st = run_ptx(text, "k", (1,), (32,), [out])
    assert st.global_store_bytes == 40 and st.global_sectors == 2 and st.global_unique_bytes == 40
    assert st.instructions == 32 * 11 and st.warp_instructions == 11


def test_cp_async_copies_global_to_shared():
    text = ptxk("k", [("u64", "out"), ("u64", "src")], PRO + """
    .shared .align 16 .b8 tile[512];
    ld.param.u64 %rd4, [src];
    cvta.to.global.u64 %rd4, %rd4;
    mul.wide.u32 %rd5, %r4, 16;
    add.s64 %rd6, %rd4, %rd5;
    mov.u32 %r5, tile;
    shl.b32 %r6, %r4, 4;
    add.u32 %r7, %r5, %r6;
    cp.async.ca.shared.global [%r7], [%rd6], 16;
    cp.async.commit_group;
    cp.async.wait_group 0;
    bar.sync 0;
    xor.b32 %r8, %r4, 1;
    shl.b32 %r8, %r8, 4;
    add.u32 %r8, %r5, %r8;
    ld.shared.v4.u32 {%r9, %r10, %r11, %r12}, [%r8];
    add.u32 %r9, %r9, %r12;
    st.global.u32 [%rd2], %r9;
""")
    src = np.arange(32 * 4, dtype=np.uint32)
    out = np.zeros(32, np.uint32)
    st = run_ptx(text, "k", (1,), (32,), [out, src])
    t = np.arange(32) ^ 1
    np.testing.assert_array_equal(out, src.reshape(32, 4)[t, 0] + src.reshape(32, 4)[t, 3])
    assert st.global_load_bytes == 512 and st.global_load_sectors == 16 and st.global_store_sectors == 4


def test_maxntid_is_enforced():
    text = ptxk("k", [("u64", "out")], PRO).replace("\n{\n", "\n.maxntid 64, 1, 1\n{\n", 1)
    run_ptx(text, "k", (1,), (64,), [np.zeros(64, np.uint32)])
    with pytest.raises(SimulatorError, match=r"\.maxntid 64, 1, 1; block \(128, 1, 1\)"):
        run_ptx(text, "k", (1,), (128,), [np.zeros(128, np.uint32)])


def test_testp_slct_mul24_sad_set_cnot_minmax():
    text = ptxk("k", [("u64", "out")], PRO + """
    mov.f32 %f1, 0f7FC00000;         // NaN
    mov.f32 %f2, 0f00000001;         // subnormal
    testp.notanumber.f32 %p1, %f1;
    testp.subnormal.f32 %p2, %f2;
    testp.finite.f32 %p3, %f1;
    selp.u32 %r5, 1, 0, %p1;
    selp.u32 %r6, 2, 0, %p2;
    selp.u32 %r7, 4, 0, %p3;
    add.u32 %r5, %r5, %r6;
    add.u32 %r5, %r5, %r7;           // 3
    mov.f32 %f3, 0f80000000;         // -0.0
    slct.u32.f32 %r8, 10, 20, %f3;   // -0.0 >= 0: 10
    slct.s32.s32 %r9, 10, 20, -1;    // 20
    mov.u32 %r10, 0x00FFFFFF;        // -1 as a 24-bit signed value
    mul24.lo.s32 %r11, %r10, 5;      // -5
    mul24.lo.u32 %r12, %r10, 2;      // 0x1FFFFFE
    sad.s32 %r13, 3, 10, 100;        // 107
    set.lt.u32.s32 %r14, -1, 1;      // 0xFFFFFFFF
    set.gt.f32.f32 %f4, %f1, %f2;    // NaN compare: 0.0
    cnot.b32 %r15, 0;                // 1
    max.f32 %f5, %f1, %f2;           // NaN operand ignored: the subnormal
    min.s32 %r16, -3, 2;
    max.u32 %r17, 0xFFFFFFFD, 2;
    abs.s32 %r18, -9;
    neg.s32 %r19, %r18;
    mov.b32 %r20, %f4;
    mov.b32 %r21, %f5;
    st.global.v4.u32 [%rd1], {%r5, %r8, %r9, %r11};
    st.global.v4.u32 [%rd1+16], {%r12, %r13, %r14, %r15};
    st.global.v4.u32 [%rd1+32], {%r16, %r17, %r18, %r19};
    st.global.v2.u32 [%rd1+48], {%r20, %r21};
""")
    out = np.zeros(14, np.uint32)
    run_ptx(text, "k", (1,), (1,), [out])
    s = out.view(np.int32)
    assert out[0] == 3 and out[1] == 10 and out[2] == 20 and s[3] == -5
    assert out[4] == 0x1FFFFFE and out[5] == 107 and out[6] == 0xFFFFFFFF and out[7] == 1
    assert s[8] == -3 and out[9] == 0xFFFFFFFD and s[10] == 9 and s[11] == -9
    assert out[12] == 0 and out[13] == 1


def test_divergent_shfl_is_reported():
    # odd lanes skip the shuffle although the member mask names them
    body = """
    and.b32 %r6, %r4, 1;
    setp.ne.u32 %p1, %r6, 0;
    @%p1 bra $L_skip;
    shfl.sync.bfly.b32 %r5, %r4, 2, 31, MASK;
$L_skip:
    st.global.u32 [%rd2], %r5;
"""
    with pytest.raises(SimulatorError, match=r"divergent shfl.sync: lanes \[1, 3, 5.*membermask 0xffffffff"):
        run1(body.replace("MASK", "-1"), n=32)
    run1(body.replace("MASK", "0x55555555"), n=32)
    with pytest.raises(SimulatorError, match="not in membermask 0x0000ffff"):
        run1(body.replace("MASK", "0xFFFF"), n=32)


def test_shfl_after_early_exit_ignores_exited_lanes():
    out = run1("""
    setp.ge.u32 %p1, %r4, 20;
    @%p1 ret;
    shfl.sync.down.b32 %r5|%p2, %r4, 1, 31, -1;
    st.global.u32 [%rd2], %r5;
""", n=32)
    assert out[:19].tolist() == list(range(1, 20)) and out[19] == 19  # lane 20 exited: own value


def test_lop3_cvt_f16x2_pack_and_cache_hints():
    text = ptxk("k", [("u64", "out")], PRO + """
    mov.u32 %r5, 0xF0F0F0F0;
    mov.u32 %r6, 0xCCCCCCCC;
    mov.u32 %r7, 0xAAAAAAAA;
    lop3.b32 %r8, %r5, %r6, %r7, 0x96;     // a ^ b ^ c
    lop3.b32 %r9, %r5, %r6, %r7, 0xE8;     // majority
    mov.f32 %f1, 0f3F800000;               // 1.0
    mov.f32 %f2, 0fC0000000;               // -2.0
    cvt.rn.f16x2.f32 %r10, %f1, %f2;        // {hi = 1.0, lo = -2.0}
    createpolicy.fractional.L2::evict_last.b64 %rd5, 1.0;
    st.global.L2::cache_hint.u32 [%rd1], %r8, %rd5;
    ld.global.L2::cache_hint.u32 %r11, [%rd1], %rd5;
    st.global.v4.u32 [%rd1], {%r11, %r9, %r10, %r8};
""")
    out = np.zeros(4, np.uint32)
    run_ptx(text, "k", (1,), (1,), [out])
    a, b, c = 0xF0F0F0F0, 0xCCCCCCCC, 0xAAAAAAAA
    assert out[0] == a ^ b ^ c and out[1] == (a & b) | (a & c) | (b & c)
    assert out[2] == (0x3C00 << 16) | 0xC000


def test_debug_sections_are_skipped():
    text = kern("k", [("u64", "out")], "") + """
.section .debug_abbrev
{
.b8 17
.b8 1
.b8 37
}
"""
    run_ptx(text, "k", (1,), (1,), [np.zeros(1)])


def test_chunks_shrink_for_register_heavy_kernels(monkeypatch):
    from fsir.sim import launcher
    seen = []
    real = launcher.Chunk

    class Spy(real):
        def __init__(self, L, b0, nblk):
            seen.append(nblk)
            super().__init__(L, b0, nblk)
    monkeypatch.setattr(launcher, "Chunk", Spy)
    monkeypatch.setattr(launcher, "CHUNK_STATE_BYTES", 64 * 1024)
    n = 4096
    a = np.arange(n, dtype=np.float32)
    c = np.zeros(n, np.float32)
    run_ptx(_vadd(), "vec_add", (n // 128,), (128,), [a, a, c, n])
    np.testing.assert_array_equal(c, 2 * a)
    assert max(seen) < n // 128 and sum(seen) == n // 128


def test_views_of_one_array_are_one_buffer():
    # out and a 2-D view of it: the kernel writes through one pointer and reads through the other
    text = ptxk("k", [("u64", "out"), ("u64", "alias")], PRO + """
    st.global.u32 [%rd2], %r4;
    bar.sync 0;
    ld.param.u64 %rd4, [alias];
    cvta.to.global.u64 %rd4, %rd4;
    xor.b32 %r5, %r4, 1;
    mul.wide.u32 %rd5, %r5, 4;
    add.s64 %rd4, %rd4, %rd5;
    ld.global.u32 %r6, [%rd4];
    bar.sync 0;
    add.u32 %r6, %r6, 100;
    st.global.u32 [%rd2], %r6;
""")
    out = np.zeros(32, np.uint32)
    st = run_ptx(text, "k", (1,), (32,), [out, out.reshape(4, 8)])
    np.testing.assert_array_equal(out, (np.arange(32) ^ 1) + 100)
    assert st.global_unique_bytes == 128
