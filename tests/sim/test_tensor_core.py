"""The simulator's tensor-core and async-copy instructions against numpy: mma.sync for every
shape/type variant, ldmatrix (x1/x2/x4, .trans), cp.async group semantics and races, tf32 rounding.
Every kernel here is hand-written PTX that also assembles with ptxas."""

from __future__ import annotations

import re

import numpy as np
import pytest

from fsir.errors import SimulatorError
from fsir.ptx.ptxas import assemble, find_ptxas
from fsir.sim import run_ptx
from fsir.sim.decoder.tensorcore import to_tf32

HEADER = ".version 8.7\n.target sm_80\n.address_size 64\n"
rng = np.random.default_rng(7)


def _assembles(text, arch="sm_80"):
    if find_ptxas():
        r = assemble(text, arch)
        assert r.ok, "\n".join(r.errors) + "\n" + text
    return text


def kernel(name, params, body, shared="", arch="sm_80"):
    ps = ",\n".join(f"    .param .u64 {p}" for p in params)
    return _assembles(f"""{HEADER.replace("sm_80", arch)}
.visible .entry {name}(
{ps}
)
{{
    .reg .pred %p<8>;
    .reg .b16 %h<16>;
    .reg .b32 %r<64>;
    .reg .f32 %f<64>;
    .reg .b64 %rd<32>;
{shared}
    mov.u32 %r0, %ctaid.x;
    mov.u32 %r1, %ntid.x;
    mov.u32 %r2, %tid.x;
    mad.lo.s32 %r3, %r0, %r1, %r2;      // global thread index
{body}
    ret;
}}
""", arch)


# ------------------------------------------------------------------ fragments, per the ISA
# Written out element by element as the PTX ISA's figures give them (lane = 4*groupID + threadID_in_group).


def a_coords(shape, itype, lane):
    g, t = lane >> 2, lane & 3
    if itype == "tf32":
        if shape == "m16n8k8":  # a0 (g,t) a1 (g+8,t) a2 (g,t+4) a3 (g+8,t+4)
            return [(g, t), (g + 8, t), (g, t + 4), (g + 8, t + 4)]
        return [(g, t), (g + 8, t)]  # m16n8k4
    pairs = [(g, 2 * t), (g, 2 * t + 1), (g + 8, 2 * t), (g + 8, 2 * t + 1)]
    if shape == "m16n8k16":
        pairs += [(g, 2 * t + 8), (g, 2 * t + 9), (g + 8, 2 * t + 8), (g + 8, 2 * t + 9)]
    return pairs


def b_coords(shape, itype, lane):
    g, t = lane >> 2, lane & 3
    if itype == "tf32":
        return [(t, g), (t + 4, g)] if shape == "m16n8k8" else [(t, g)]
    ks = [2 * t, 2 * t + 1] + ([2 * t + 8, 2 * t + 9] if shape == "m16n8k16" else [])
    return [(k, g) for k in ks]


def c_coords(lane):
    g, t = lane >> 2, lane & 3
    return [(g, 2 * t), (g, 2 * t + 1), (g + 8, 2 * t), (g + 8, 2 * t + 1)]


def bits16(x, itype):
    if itype == "f16":
        return np.asarray(x, np.float16).view(np.uint16)
    return (np.asarray(x, np.float32).view(np.uint32) >> 16).astype(np.uint16)  # bf16 values are exact


def pack(mat, coords, itype):
    """The per-lane registers (32, nregs) uint32 holding `mat`'s elements at `coords(lane)`."""
    regs = []
    for lane in range(32):
        vals = [mat[r, c] for r, c in coords(lane)]
        if itype in ("tf32", "f32"):
            regs.append(np.asarray(vals, np.float32).view(np.uint32))
        else:
            h = bits16(vals, itype).astype(np.uint32)
            regs.append(h[0::2] | (h[1::2] << 16))
    return np.array(regs, np.uint32)


def unpack_c(regs, acc):
    """(32, nregs) registers -> the 16x8 accumulator matrix."""
    out = np.zeros((16, 8), np.float64)
    for lane in range(32):
        if acc == "f32":
            vals = regs[lane].view(np.float32)
        else:
            vals = regs[lane].view(np.uint16).view(np.float16)  # little-endian: low half first
        for (r, c), v in zip(c_coords(lane), vals):
            out[r, c] = v
    return out


def random_inputs(itype, m, n, scale=1.0, integers=False):
    if integers:
        x = rng.integers(-4, 5, (m, n)).astype(np.float32)
    else:
        x = (rng.standard_normal((m, n)) * scale).astype(np.float32)
    if itype == "f16":
        return x.astype(np.float16).astype(np.float32)
    if itype == "bf16":
        return ((x.view(np.uint32) + 0x8000) & 0xFFFF0000).view(np.float32)  # rounded to bf16
    return x  # tf32: raw f32, the mma ignores the low 13 bits


MMA_VARIANTS = [
    ("m16n8k16", "f16", "f32"), ("m16n8k16", "bf16", "f32"), ("m16n8k16", "f16", "f16"),
    ("m16n8k8", "f16", "f32"), ("m16n8k8", "bf16", "f32"), ("m16n8k8", "f16", "f16"),
    ("m16n8k8", "tf32", "f32"), ("m16n8k4", "tf32", "f32"),
]


def mma_kernel(shape, itype, acc, na, nb, nc):
    """Each lane loads its A/B/C registers from per-lane arrays, executes one mma, stores D."""
    def regs(prefix, first, n):
        return ", ".join(f"%{prefix}{first + i}" for i in range(n))
    body = ["    mul.wide.u32 %rd0, %r3, 4;"]
    loads = []
    for name, n, first, param in (("a", na, 10, "fa"), ("b", nb, 20, "fb"), ("c", nc, 30, "fc")):
        body.append(f"    ld.param.u64 %rd1, [{param}];")
        body.append("    cvta.to.global.u64 %rd1, %rd1;")
        body.append(f"    mul.wide.u32 %rd2, %r3, {4 * n};")
        body.append("    add.s64 %rd1, %rd1, %rd2;")
        for i in range(n):
            reg = f"%f{first + i}" if (name == "c" and acc == "f32") else f"%r{first + i}"
            body.append(f"    ld.global.{'f32' if reg[1] == 'f' else 'b32'} {reg}, [%rd1+{4 * i}];")
        loads.append(n)
    dregs = regs("f", 40, nc) if acc == "f32" else regs("r", 40, nc)
    cregs = regs("f", 30, nc) if acc == "f32" else regs("r", 30, nc)
    body.append(f"    mma.sync.aligned.{shape}.row.col.{acc}.{itype}.{itype}.{acc} "
                f"{{{dregs}}}, {{{regs('r', 10, na)}}}, {{{regs('r', 20, nb)}}}, {{{cregs}}};")
    body.append("    ld.param.u64 %rd1, [out];")
    body.append("    cvta.to.global.u64 %rd1, %rd1;")
    body.append(f"    mul.wide.u32 %rd2, %r3, {4 * nc};")
    body.append("    add.s64 %rd1, %rd1, %rd2;")
    for i in range(nc):
        reg = f"%f{40 + i}" if acc == "f32" else f"%r{40 + i}"
        body.append(f"    st.global.{'f32' if acc == 'f32' else 'b32'} [%rd1+{4 * i}], {reg};")
    return kernel("mma_k", ["out", "fa", "fb", "fc"], "\n".join(body))


def run_mma(shape, itype, acc, A, B, C):
    """Run the mma on `A` (W,16,k), `B` (W,k,8), `C` (W,16,8) with one warp per matrix triple."""
    W = A.shape[0]
    fa = np.concatenate([pack(A[w], lambda l: a_coords(shape, itype, l), itype) for w in range(W)])
    fb = np.concatenate([pack(B[w], lambda l: b_coords(shape, itype, l), itype) for w in range(W)])
    fc = np.concatenate([pack(C[w], c_coords, "f32" if acc == "f32" else "f16") for w in range(W)])
    nc = fc.shape[1]
    out = np.zeros((32 * W, nc), np.uint32)
    text = mma_kernel(shape, itype, acc, fa.shape[1], fb.shape[1], nc)
    run_ptx(text, "mma_k", (W // 2,), (64,), [out, fa, fb, fc])  # two warps per block
    return np.stack([unpack_c(out[32 * w: 32 * (w + 1)], acc) for w in range(W)])


def tf32_trunc(x):
    return (np.asarray(x, np.float32).view(np.uint32) & np.uint32(0xFFFFE000)).view(np.float32)


@pytest.mark.parametrize("shape,itype,acc", MMA_VARIANTS)
def test_mma_exact_on_small_integers(shape, itype, acc):
    """Small integers: every product and sum is exact, so D = A·B + C bit for bit."""
    k = int(shape.split("k")[1])
    W = 4
    A = np.stack([random_inputs(itype, 16, k, integers=True) for _ in range(W)])
    B = np.stack([random_inputs(itype, k, 8, integers=True) for _ in range(W)])
    C = np.stack([random_inputs("f16", 16, 8, integers=True) for _ in range(W)])
    D = run_mma(shape, itype, acc, A, B, C)
    np.testing.assert_array_equal(D, A.astype(np.float64) @ B + C)


@pytest.mark.parametrize("shape,itype,acc", MMA_VARIANTS)
def test_mma_random_matches_numpy(shape, itype, acc):
    """Random inputs: D is c + sum(a*b) rounded once (tf32 operands truncated to 10 mantissa bits)."""
    k = int(shape.split("k")[1])
    W = 2
    A = np.stack([random_inputs(itype, 16, k) for _ in range(W)])
    B = np.stack([random_inputs(itype, k, 8) for _ in range(W)])
    C = np.stack([random_inputs("f16", 16, 8) for _ in range(W)])
    D = run_mma(shape, itype, acc, A, B, C)
    if itype == "tf32":
        A, B = tf32_trunc(A), tf32_trunc(B)
    exact = A.astype(np.float64) @ B.astype(np.float64) + C
    ref = exact.astype(np.float32 if acc == "f32" else np.float16)
    np.testing.assert_array_equal(D, ref.astype(np.float64))
    if itype == "tf32":  # the truncation is visible: raw f32 operands would give another result
        raw = (np.stack([random_inputs(itype, 16, k) for _ in range(W)]))
        assert not np.array_equal(tf32_trunc(raw), raw)


def test_mma_reads_c_before_writing_d_in_place():
    """d and c may be the same registers (the usual accumulate-in-place form)."""
    body = """
    mov.b32 %r10, 0x3C003C00;              // a: all 1.0 (f16x2)
    mov.b32 %r11, 0x3C003C00;
    mov.b32 %r12, 0x3C003C00;
    mov.b32 %r13, 0x3C003C00;
    mov.b32 %r20, 0x40004000;              // b: all 2.0
    mov.b32 %r21, 0x40004000;
    cvt.rn.f32.u32 %f0, %r2;
    mov.f32 %f1, %f0;
    mov.f32 %f2, %f0;
    mov.f32 %f3, %f0;
    mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%f0,%f1,%f2,%f3}, {%r10,%r11,%r12,%r13}, {%r20,%r21}, {%f0,%f1,%f2,%f3};
    mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%f0,%f1,%f2,%f3}, {%r10,%r11,%r12,%r13}, {%r20,%r21}, {%f0,%f1,%f2,%f3};
    ld.param.u64 %rd1, [out];
    cvta.to.global.u64 %rd1, %rd1;
    mul.wide.u32 %rd2, %r3, 16;
    add.s64 %rd1, %rd1, %rd2;
    st.global.v4.f32 [%rd1], {%f0, %f1, %f2, %f3};
"""
    out = np.zeros((64, 4), np.float32)
    run_ptx(kernel("k", ["out"], body), "k", (1,), (64,), [out])
    np.testing.assert_array_equal(out, (np.arange(64) % 64)[:, None] + 2 * 32.0 + np.zeros((1, 4)))


def test_mma_under_a_warp_uniform_branch():
    """Whole warps may skip an mma (here warps 1 and 3 of the block): the others execute it."""
    body = """
    mov.b32 %r10, 0x3C003C00;
    mov.b32 %r11, 0x3C003C00;
    mov.b32 %r12, 0x3C003C00;
    mov.b32 %r13, 0x3C003C00;
    mov.b32 %r20, 0x40004000;
    mov.b32 %r21, 0x40004000;
    cvt.rn.f32.u32 %f0, %r2;
    mov.f32 %f1, %f0;
    mov.f32 %f2, %f0;
    mov.f32 %f3, %f0;
    shr.u32 %r5, %r2, 5;
    and.b32 %r5, %r5, 1;
    setp.eq.u32 %p1, %r5, 1;
    @%p1 bra SKIP;
    mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%f0,%f1,%f2,%f3}, {%r10,%r11,%r12,%r13}, {%r20,%r21}, {%f0,%f1,%f2,%f3};
SKIP:
    ld.param.u64 %rd1, [out];
    cvta.to.global.u64 %rd1, %rd1;
    mul.wide.u32 %rd2, %r3, 16;
    add.s64 %rd1, %rd1, %rd2;
    st.global.v4.f32 [%rd1], {%f0, %f1, %f2, %f3};
"""
    out = np.zeros((128, 4), np.float32)
    run_ptx(kernel("k", ["out"], body), "k", (1,), (128,), [out])
    t = np.arange(128)
    np.testing.assert_array_equal(out, (t + np.where((t >> 5) & 1, 0, 32))[:, None] + np.zeros((1, 4)))


def test_mma_in_a_diverged_warp_is_an_error():
    body = """
    setp.lt.u32 %p1, %r2, 16;
    @%p1 bra DONE;
    mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%f0,%f1,%f2,%f3}, {%r10,%r11,%r12,%r13}, {%r20,%r21}, {%f0,%f1,%f2,%f3};
DONE:
"""
    text = kernel("k", ["out"], body)
    line = next(i + 1 for i, l in enumerate(text.splitlines()) if "mma.sync" in l)
    with pytest.raises(SimulatorError, match=rf"kernel 'k', PTX line {line} .*warp-collective, but lanes "
                                             r"\[0, 1, 2, 3, 4, 5, 6, 7, \.\.\.\] of the warp of thread \(16,0,0\)"):
        run_ptx(text, "k", (1,), (32,), [np.zeros(1)])
    with pytest.raises(SimulatorError, match=r"lanes \[16, 17, .*\] of the warp of thread \(0,0,0\)"):
        run_ptx(kernel("k", ["out"], "    mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 "
                       "{%f0,%f1,%f2,%f3}, {%r10,%r11,%r12,%r13}, {%r20,%r21}, {%f0,%f1,%f2,%f3};"),
                "k", (1,), (16,), [np.zeros(1)])


@pytest.mark.parametrize("instr,what", [
    ("mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32 {%r40,%r41,%r42,%r43}, {%r10,%r11,%r12,%r13}, {%r20,%r21}, "
     "{%r30,%r31,%r32,%r33};", "unsupported instruction 'mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32'"),
    ("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%f0,%f1,%f2}, {%r10,%r11,%r12,%r13}, {%r20,%r21}, "
     "{%f0,%f1,%f2,%f3};", "needs 4 registers in braces for d"),
])
def test_unsupported_or_malformed_mma_is_refused_at_its_line(instr, what):
    text = kernel("k", ["out"], "    " + instr) if "s8" in instr else HEADER + \
        ".visible .entry k(.param .u64 out)\n{\n.reg .b32 %r<64>;\n.reg .f32 %f<8>;\n    " + instr + "\n    ret;\n}\n"
    line = next(i + 1 for i, l in enumerate(text.splitlines()) if "mma.sync" in l)
    with pytest.raises(SimulatorError, match=rf"kernel 'k', PTX line {line}:5: .*{what.replace('.', '[.]')}"):
        run_ptx(text, "k", (1,), (32,), [np.zeros(1)])


# ----------------------------------------------------------------------------- ldmatrix


def ldmatrix_kernel(num, trans, generic=False):
    """Warp w copies 8*num rows of 8 b16 from src (row r at src + 16*perm[r]) into shared memory,
    then ldmatrix gives each lane `num` registers, stored to out[thread][j]."""
    regs = ", ".join(f"%r{40 + j}" for j in range(num))
    stores = "\n".join(f"    st.global.b32 [%rd5+{4 * j}], %r{40 + j};" for j in range(num))
    body = f"""
    ld.param.u64 %rd1, [src];
    cvta.to.global.u64 %rd1, %rd1;
    ld.param.u64 %rd2, [perm];
    cvta.to.global.u64 %rd2, %rd2;
    mov.u32 %r5, tile;
    shr.u32 %r6, %r2, 5;                 // warp of the block
    shl.b32 %r7, %r6, 9;                 // 512 bytes of tile per warp
    add.u32 %r5, %r5, %r7;
    and.b32 %r8, %r2, 31;                // lane
    // every lane copies one 16-byte row: row `lane` of the warp's 32 rows
    mul.wide.u32 %rd3, %r3, 16;
    add.s64 %rd4, %rd1, %rd3;
    ld.global.v4.b32 {{%r10, %r11, %r12, %r13}}, [%rd4];
    shl.b32 %r9, %r8, 4;
    add.u32 %r9, %r5, %r9;
    st.shared.v4.b32 [%r9], {{%r10, %r11, %r12, %r13}};
    bar.sync 0;
    // lane l supplies the address of row perm[l] of the warp's tile
    mul.wide.u32 %rd3, %r3, 4;
    add.s64 %rd4, %rd2, %rd3;
    ld.global.u32 %r14, [%rd4];
    shl.b32 %r14, %r14, 4;
    add.u32 %r14, %r5, %r14;
    {{ld}}
    ld.param.u64 %rd5, [out];
    cvta.to.global.u64 %rd5, %rd5;
    mul.wide.u32 %rd3, %r3, {4 * num};
    add.s64 %rd5, %rd5, %rd3;
{stores}
"""
    op = f"ldmatrix.sync.aligned.m8n8.x{num}{'.trans' if trans else ''}"
    ld = (f"cvt.u64.u32 %rd6, %r14;\n    cvta.shared.u64 %rd7, %rd6;\n    {op}.b16 {{{regs}}}, [%rd7];" if generic
          else f"{op}.shared.b16 {{{regs}}}, [%r14];")
    body = body.replace("{ld}", ld)
    return kernel("ldm", ["out", "src", "perm"], body, shared="    .shared .align 16 .b8 tile[1024];")


@pytest.mark.parametrize("num,generic", [(1, False), (2, False), (4, False), (4, True)])
@pytest.mark.parametrize("trans", [False, True])
def test_ldmatrix(num, trans, generic):
    W = 2
    src = rng.integers(0, 1 << 16, (W, 32, 8)).astype(np.uint16)  # the rows each warp writes to shared
    perm = np.stack([rng.permutation(32) for _ in range(W)]).astype(np.uint32)
    out = np.zeros((32 * W, num), np.uint32)
    run_ptx(ldmatrix_kernel(num, trans, generic), "ldm", (1,), (32 * W,), [out, src, perm])
    for w in range(W):
        for j in range(num):
            M = src[w][perm[w][8 * j: 8 * j + 8]]  # matrix j: the rows lanes 8j..8j+7 point to
            if trans:
                M = M.T
            for lane in range(32):
                r, c = lane // 4, 2 * (lane % 4)
                got = int(out[32 * w + lane, j])
                assert (got & 0xFFFF, got >> 16) == (M[r, c], M[r, c + 1]), (w, j, lane)


@pytest.mark.parametrize("num", [1, 2, 4])
@pytest.mark.parametrize("trans", [False, True])
def test_stmatrix(num, trans):
    """stmatrix (sm_90) of registers (lo, hi) = (2l, 2l + 1 + 256j) to the rows at perm: the ISA's layout, and the
    inverse of ldmatrix (ldmatrix of what was stored gives the registers back)."""
    regs = ", ".join(f"%r{40 + j}" for j in range(num))
    back = ", ".join(f"%r{50 + j}" for j in range(num))
    sets = "\n".join(f"    mad.lo.u32 %r{40 + j}, %r8, 0x00020002, {0x01000000 * j + 0x00010000:#x};" for j in range(num))
    chk = "\n".join(f"    setp.ne.u32 %p{j + 1}, %r{40 + j}, %r{50 + j};\n    @%p{j + 1} mov.u32 %r9, 1;"
                     for j in range(num))
    t = ".trans" if trans else ""
    body = f"""
    ld.param.u64 %rd2, [perm];
    cvta.to.global.u64 %rd2, %rd2;
    and.b32 %r8, %r2, 31;
{sets}
    mov.u32 %r5, tile;
    mul.wide.u32 %rd3, %r2, 4;
    add.s64 %rd4, %rd2, %rd3;
    ld.global.u32 %r14, [%rd4];
    shl.b32 %r14, %r14, 4;
    add.u32 %r14, %r5, %r14;
    stmatrix.sync.aligned.m8n8.x{num}{t}.shared.b16 [%r14], {{{regs}}};
    bar.sync 0;
    ldmatrix.sync.aligned.m8n8.x{num}{t}.shared.b16 {{{back}}}, [%r14];
    mov.u32 %r9, 0;
{chk}
    ld.param.u64 %rd5, [out];
    cvta.to.global.u64 %rd5, %rd5;
    // thread t copies row t of the tile and its round-trip flag
    shl.b32 %r15, %r2, 4;
    add.u32 %r15, %r5, %r15;
    ld.shared.v4.b32 {{%r20, %r21, %r22, %r23}}, [%r15];
    mul.wide.u32 %rd6, %r2, 32;
    add.s64 %rd5, %rd5, %rd6;
    st.global.v4.b32 [%rd5], {{%r20, %r21, %r22, %r23}};
    st.global.b32 [%rd5+16], %r9;
"""
    text = kernel("stm", ["out", "perm"], body, shared="    .shared .align 16 .b8 tile[512];", arch="sm_90")
    perm = rng.permutation(32).astype(np.uint32)
    out = np.zeros((32, 8), np.uint32)
    run_ptx(text, "stm", (1,), (32,), [out, perm])
    assert (out[:, 4] == 0).all()  # ldmatrix gave every lane its registers back
    rows = out[:, :4].view(np.uint16).reshape(32, 8)
    for j in range(num):
        M = rows[perm[8 * j: 8 * j + 8]]  # matrix j: the rows lanes 8j..8j+7 pointed to
        if trans:
            M = M.T
        for lane in range(32):  # lane l's register j holds (M[l>>2][2(l&3)], M[l>>2][2(l&3)+1])
            r, c = lane // 4, 2 * (lane % 4)
            assert (M[r, c], M[r, c + 1]) == (2 * lane, 2 * lane + 1 + 0x100 * j), (j, lane)


def test_ldmatrix_misaligned_row_is_an_error():
    body = """
    mov.u32 %r5, tile;
    and.b32 %r8, %r2, 7;
    mul.lo.u32 %r9, %r8, 24;            // rows 24 bytes apart: every other row misaligned
    add.u32 %r9, %r5, %r9;
    ldmatrix.sync.aligned.m8n8.x1.shared.b16 {%r40}, [%r9];
"""
    text = kernel("k", ["out"], body, shared="    .shared .align 16 .b8 tile[1024];")
    with pytest.raises(SimulatorError, match=r"misaligned shared load of 16 bytes at address 0x18 by thread \(1,0,0\)"):
        run_ptx(text, "k", (1,), (32,), [np.zeros(1)])


@pytest.mark.parametrize("instr,what", [
    ("ldmatrix.sync.aligned.m8n8.x3.shared.b16 {%r40,%r41,%r42}, [%r9];",
     "the simulator executes ldmatrix.sync.aligned.m8n8.{x1,x2,x4}{.trans}.shared.b16"),
    ("ldmatrix.sync.aligned.m8n8.x2.shared.b16 {%r40}, [%r9];", "'ldmatrix.sync.aligned.m8n8.x2.shared.b16' needs 2 "
                                                                 "destination registers"),
    ("ldmatrix.sync.aligned.m8n8.x1.shared.b16 [%r9], {%r40};", "expects {d...}, [address]"),
    ("stmatrix.sync.aligned.m8n8.x3.shared.b16 [%r9], {%r40,%r41,%r42};",
     "the simulator executes stmatrix.sync.aligned.m8n8.{x1,x2,x4}{.trans}.shared.b16"),
    ("stmatrix.sync.aligned.m8n8.x4.shared.b16 [%r9], {%r40,%r41};", "needs 4 source registers"),
    ("stmatrix.sync.aligned.m8n8.x1.shared.b16 {%r40}, [%r9];", "expects [address], {r...}"),
])
def test_malformed_ldmatrix_and_stmatrix_are_refused_at_their_line(instr, what):
    text = HEADER.replace("sm_80", "sm_90") + ".visible .entry k(.param .u64 out)\n{\n.reg .b32 %r<64>;\n" \
        "    .shared .align 16 .b8 tile[512];\n    mov.u32 %r9, tile;\n    " + instr + "\n    ret;\n}\n"
    line = next(i + 1 for i, l in enumerate(text.splitlines()) if "matrix" in l)
    with pytest.raises(SimulatorError, match=rf"kernel 'k', PTX line {line}:5: .*{re.escape(what)}"):
        run_ptx(text, "k", (1,), (32,), [np.zeros(1)])


# ----------------------------------------------------------------------------- cp.async

PIPE = """
    ld.param.u64 %rd1, [src];
    cvta.to.global.u64 %rd1, %rd1;
    ld.param.u64 %rd6, [out];
    cvta.to.global.u64 %rd6, %rd6;
    mov.u32 %r5, tile;
    // stage s (of 2) of thread t: tile + 512*s + 16*t; the block's 32 threads copy 16 bytes each
    // per step from src[step][t], and thread t then reads the 16 bytes of thread t^1
    shl.b32 %r6, %r2, 4;
    add.u32 %r7, %r5, %r6;               // my slot in stage 0
    xor.b32 %r8, %r2, 1;
    shl.b32 %r8, %r8, 4;
    add.u32 %r8, %r5, %r8;               // my neighbour's slot in stage 0
    mul.wide.u32 %rd2, %r2, 16;
    add.s64 %rd2, %rd1, %rd2;            // src of step 0
    mov.u32 %r20, 0;                     // step
    cp.async.cg.shared.global [%r7], [%rd2], 16;
    cp.async.commit_group;
LOOP:
    add.u32 %r21, %r20, 1;
    and.b32 %r22, %r21, 1;
    shl.b32 %r22, %r22, 9;               // next stage offset
    setp.lt.u32 %p1, %r21, STEPS;
    @!%p1 bra LAST;
    add.u32 %r23, %r7, %r22;
    mul.wide.u32 %rd3, %r21, 512;
    add.s64 %rd4, %rd2, %rd3;
    cp.async.cg.shared.global [%r23], [%rd4], 16;
LAST:
    cp.async.commit_group;
    WAIT
    bar.sync 0;
    and.b32 %r24, %r20, 1;
    shl.b32 %r24, %r24, 9;
    add.u32 %r25, %r8, %r24;
    ld.shared.v4.u32 {%r10, %r11, %r12, %r13}, [%r25];
    add.u32 %r10, %r10, %r13;
    mad.lo.u32 %r26, %r20, 32, %r2;
    mul.wide.u32 %rd5, %r26, 4;
    add.s64 %rd5, %rd6, %rd5;
    st.global.u32 [%rd5], %r10;
    bar.sync 0;
    mov.u32 %r20, %r21;
    setp.lt.u32 %p2, %r20, STEPS;
    @%p2 bra LOOP;
"""


def thread_slots(size: int) -> str:
    """PTX setting %r7 to thread t's `size`-byte slot of the shared `tile` (tile + size*t)
    and %rd3 to its slot of the global `src` parameter."""
    return f"""
    ld.param.u64 %rd1, [src];
    cvta.to.global.u64 %rd1, %rd1;
    mov.u32 %r5, tile;
    mul.lo.u32 %r6, %r2, {size};
    add.u32 %r7, %r5, %r6;
    mul.wide.u32 %rd2, %r2, {size};
    add.s64 %rd3, %rd1, %rd2;"""


def pipeline(wait="cp.async.wait_group 1;", steps=6):
    return kernel("pipe", ["out", "src"], PIPE.replace("WAIT", wait).replace("STEPS", str(steps)),
                  shared="    .shared .align 16 .b8 tile[1024];")


def test_cp_async_double_buffered_pipeline():
    steps = 6
    src = rng.integers(0, 1 << 30, (steps, 32, 4)).astype(np.uint32)
    out = np.zeros((steps, 32), np.uint32)
    st = run_ptx(pipeline(steps=steps), "pipe", (1,), (32,), [out, src])
    nb = np.arange(32) ^ 1
    np.testing.assert_array_equal(out, src[:, nb, 0] + src[:, nb, 3])
    assert st.global_load_bytes == src.nbytes


def test_cp_async_read_before_its_wait_group_is_a_race():
    """wait_group 2 leaves the current step's group in flight: the read of it is reported."""
    text = pipeline(wait="cp.async.wait_group 2;")
    line = next(i + 1 for i, l in enumerate(text.splitlines()) if "ld.shared.v4.u32" in l)
    cp_line = next(i + 1 for i, l in enumerate(text.splitlines()) if "cp.async.cg" in l)
    with pytest.raises(SimulatorError, match=rf"kernel 'pipe', PTX line {line} .*shared-memory race in block "
                                             rf"\(0,0,0\): thread \(0,0,0\) reads shared memory at offset 16 \(tile\+16\)"
                                             rf" that the cp.async of thread \(1,0,0\) at PTX line {cp_line} is still"):
        run_ptx(text, "pipe", (1,), (32,), [np.zeros((6, 32), np.uint32), np.zeros((6, 32, 4), np.uint32)])


def test_cp_async_without_barrier_after_wait_is_a_race():
    """The copy of thread 1 lands at its wait; thread 0 reading it needs a bar.sync in between."""
    text = pipeline().replace("    bar.sync 0;\n    and.b32 %r24", "    and.b32 %r24", 1)
    with pytest.raises(SimulatorError, match=r"thread \(0,0,0\) reads shared memory that thread \(1,0,0\) of the "
                                             r"same block wrote at PTX line \d+ at offset 16"):
        run_ptx(text, "pipe", (1,), (32,), [np.zeros((6, 32), np.uint32), np.zeros((6, 32, 4), np.uint32)])


def test_cp_async_data_lands_only_at_the_wait():
    """Without race checks, a read before the wait sees the old shared contents, as hardware may."""
    body = thread_slots(4) + """
    mov.u32 %r9, 7;
    st.shared.u32 [%r7], %r9;
    cp.async.ca.shared.global [%r7], [%rd3], 4;
    cp.async.commit_group;
    ld.shared.u32 %r10, [%r7];           // before the wait: the old value
    cp.async.wait_all;
    ld.shared.u32 %r11, [%r7];           // after: the copied value
    ld.param.u64 %rd4, [out];
    cvta.to.global.u64 %rd4, %rd4;
    mul.wide.u32 %rd5, %r2, 8;
    add.s64 %rd4, %rd4, %rd5;
    st.global.v2.u32 [%rd4], {%r10, %r11};
"""
    text = kernel("k", ["out", "src"], body, shared="    .shared .align 16 .b8 tile[256];")
    src = np.arange(100, 132, dtype=np.uint32)
    out = np.zeros((32, 2), np.uint32)
    run_ptx(text, "k", (1,), (32,), [out, src], check_races=False)
    np.testing.assert_array_equal(out, np.stack([np.full(32, 7), src], 1))
    with pytest.raises(SimulatorError, match=r"thread \(0,0,0\) reads shared memory at offset 0 \(tile\+0\) that "
                                             r"the cp.async of thread \(0,0,0\)"):
        run_ptx(text, "k", (1,), (32,), [out, src])


@pytest.mark.parametrize("overwrite,what", [
    ("st.shared.u32 [%r7], %r9;", r"thread \(0,0,0\) writes shared memory at offset 0 \(tile\+0\) that the cp.async"),
    ("cp.async.ca.shared.global [%r7], [%rd3], 4;", r"thread \(0,0,0\) writes shared memory at offset 0 \(tile\+0\) "
                                                    r"that the cp.async of thread \(0,0,0\)"),
])
def test_cp_async_overwriting_a_destination_in_flight_is_a_race(overwrite, what):
    body = thread_slots(4) + f"""
    mov.u32 %r9, 7;
    cp.async.ca.shared.global [%r7], [%rd3], 4;
    cp.async.commit_group;
    {overwrite}
    cp.async.wait_group 0;
"""
    text = kernel("k", ["out", "src"], body, shared="    .shared .align 16 .b8 tile[256];")
    with pytest.raises(SimulatorError, match=what):
        run_ptx(text, "k", (1,), (32,), [np.zeros(1), np.zeros(32, np.uint32)])


@pytest.mark.parametrize("size", [4, 8, 16])
def test_cp_async_src_size_zero_fills_and_reads_only_src_size_bytes(size):
    """src-size = t % (size+1): bytes past it are zero, and are not read (the last thread's source runs
    past the end of the buffer by size - src-size bytes)."""
    body = thread_slots(size) + f"""
    rem.u32 %r8, %r2, {size + 1};
    setp.eq.u32 %p1, %r2, 31;
    selp.u32 %r8, 1, %r8, %p1;
    cp.async.ca.shared.global [%r7], [%rd3], {size}, %r8;
    cp.async.wait_all;
    ld.shared.u8 %r10, [%r7+{size - 1}];
    ld.param.u64 %rd4, [out];
    cvta.to.global.u64 %rd4, %rd4;
    mul.wide.u32 %rd5, %r2, {size};
    add.s64 %rd4, %rd4, %rd5;
"""
    body += "\n".join(f"    ld.shared.u8 %r11, [%r7+{b}];\n    st.global.u8 [%rd4+{b}], %r11;" for b in range(size))
    text = kernel("k", ["out", "src"], body, shared="    .shared .align 16 .b8 tile[512];")
    src = rng.integers(1, 256, 32 * size - (size - 1)).astype(np.uint8)  # thread 31 reads 1 byte
    out = np.zeros((32, size), np.uint8)
    run_ptx(text, "k", (1,), (32,), [out, src])
    padded = np.zeros(32 * size, np.uint8)
    padded[: src.size] = src
    keep = np.minimum(np.arange(32) % (size + 1), size)
    keep[31] = 1
    ref = np.where(np.arange(size) < keep[:, None], padded.reshape(32, size), 0)
    np.testing.assert_array_equal(out, ref)


@pytest.mark.parametrize("instr", [
    "cp.async.cg.shared.global.L2::128B [%r7], [%rd3], 16;",
    "cp.async.cg.shared.global.L2::cache_hint [%r7], [%rd3], 16, %rd9;",
    "cp.async.ca.shared::cta.global.L2::cache_hint.L2::256B [%r7], [%rd3], 16, 16, %rd9;",
])
def test_cp_async_cache_hints_and_prefetch_sizes(instr):
    body = thread_slots(16) + f"""
    createpolicy.fractional.L2::evict_last.b64 %rd9, 1.0;
    {instr}
    cp.async.wait_all;
    ld.shared.v4.u32 {{%r10, %r11, %r12, %r13}}, [%r7];
    ld.param.u64 %rd4, [out];
    cvta.to.global.u64 %rd4, %rd4;
    add.s64 %rd4, %rd4, %rd2;
    st.global.v4.u32 [%rd4], {{%r10, %r11, %r12, %r13}};
"""
    text = kernel("k", ["out", "src"], body, shared="    .shared .align 16 .b8 tile[512];")
    src = rng.integers(1, 1 << 30, (32, 4)).astype(np.uint32)
    out = np.zeros((32, 4), np.uint32)
    run_ptx(text, "k", (1,), (32,), [out, src])
    np.testing.assert_array_equal(out, src)


def test_cp_async_ignore_src_predicate_zero_fills():
    body = thread_slots(16) + """
    and.b32 %r8, %r2, 1;
    setp.eq.u32 %p1, %r8, 1;
    cp.async.cg.shared.global [%r7], [%rd3], 16, %p1;
    cp.async.wait_all;
    ld.shared.v4.u32 {%r10, %r11, %r12, %r13}, [%r7];
    ld.param.u64 %rd4, [out];
    cvta.to.global.u64 %rd4, %rd4;
    add.s64 %rd4, %rd4, %rd2;
    st.global.v4.u32 [%rd4], {%r10, %r11, %r12, %r13};
"""
    text = kernel("k", ["out", "src"], body, shared="    .shared .align 16 .b8 tile[512];")
    src = rng.integers(1, 1 << 30, (32, 4)).astype(np.uint32)
    out = np.zeros((32, 4), np.uint32)
    run_ptx(text, "k", (1,), (32,), [out, src])
    np.testing.assert_array_equal(out, np.where((np.arange(32) % 2 == 1)[:, None], 0, src))


# ------------------------------------------------------------------------------------ tf32


def test_cvt_rna_tf32_edge_cases():
    f = np.float32
    cases = {
        0x3F800000: 0x3F800000,  # 1.0 exact
        0x3F800FFF: 0x3F800000,  # below the half-way point: down
        0x3F801000: 0x3F802000,  # exactly half-way: away from zero
        0xBF801000: 0xBF802000,  # negative tie: away from zero (more negative)
        0x3F803000: 0x3F804000,  # tie with an odd kept bit: away (rn would also go up)
        0x3F805000: 0x3F806000,  # tie with an even kept bit: away (rn would stay)
        0x3FFFF000: 0x40000000,  # carry into the exponent
        0x7F7FFFFF: 0x7F800000,  # largest finite f32 rounds to infinity
        0x7F800000: 0x7F800000,  # infinity
        0x00001000: 0x00002000,  # subnormal tie: away
        0x00000FFF: 0x00000000,  # tiny subnormal: to zero
        0x80000000: 0x80000000,  # -0
    }
    x = np.array(list(cases), np.uint32).view(f)
    np.testing.assert_array_equal(to_tf32(x, "rna"), np.array(list(cases.values()), np.uint32))
    nan = to_tf32(np.array([0x7F800001, 0xFFC00001], np.uint32).view(f), "rna")
    assert np.isnan(nan.view(f)).all() and (nan & 0x1FFF == 0).all()
    rn = to_tf32(np.array([0x3F801000, 0x3F803000, 0x3F805000], np.uint32).view(f), "rn")
    np.testing.assert_array_equal(rn, [0x3F800000, 0x3F804000, 0x3F804000])
    sat = to_tf32(np.array([0x7F7FFFFF, 0xFF800000], np.uint32).view(f), "rna", satfinite=True)
    np.testing.assert_array_equal(sat, [0x7F7FE000, 0xFF7FE000])


def test_cvt_tf32_instructions_run():
    body = """
    ld.param.u64 %rd1, [src];
    cvta.to.global.u64 %rd1, %rd1;
    mul.wide.u32 %rd2, %r3, 4;
    add.s64 %rd1, %rd1, %rd2;
    ld.global.f32 %f1, [%rd1];
    cvt.rna.tf32.f32 %r10, %f1;
    cvt.rna.satfinite.tf32.f32 %r11, %f1;
    ld.param.u64 %rd3, [out];
    cvta.to.global.u64 %rd3, %rd3;
    mul.wide.u32 %rd4, %r3, 8;
    add.s64 %rd3, %rd3, %rd4;
    st.global.v2.b32 [%rd3], {%r10, %r11};
"""
    text = kernel("k", ["out", "src"], body)
    x = np.concatenate([rng.standard_normal(60).astype(np.float32) * 1e3,
                        np.array([np.inf, -np.inf, 3.4e38, np.nan], np.float32)])
    out = np.zeros((64, 2), np.uint32)
    run_ptx(text, "k", (1,), (64,), [out, x])
    np.testing.assert_array_equal(out[:, 0], to_tf32(x, "rna"))
    np.testing.assert_array_equal(out[:, 1], to_tf32(x, "rna", satfinite=True))
    # against an independent formulation: the nearest multiple of 2^(e-10), ties away from zero
    e = np.floor(np.log2(np.abs(x[:60].astype(np.float64))))
    q = 2.0 ** (e - 10)
    ref = np.sign(x[:60]) * np.floor(np.abs(x[:60].astype(np.float64)) / q + 0.5) * q
    np.testing.assert_array_equal(out[:60, 0].view(np.float32), ref.astype(np.float32))


def test_f16x2_packing_round_trips():
    """cvt.rn.f16x2.f32 packs (a in the high half), mov.b32 {lo, hi} unpacks, mov.b32 r, {lo, hi} repacks."""
    body = """
    cvt.rn.f32.u32 %f1, %r3;
    mul.f32 %f2, %f1, 0f3F000000;        // t/2
    cvt.rn.f16x2.f32 %r10, %f1, %f2;     // {hi = t, lo = t/2}
    cvt.rn.bf16x2.f32 %r11, %f1, %f2;
    mov.b32 {%h1, %h2}, %r10;
    mov.b32 %r12, {%h2, %h1};            // swapped
    ld.param.u64 %rd3, [out];
    cvta.to.global.u64 %rd3, %rd3;
    mul.wide.u32 %rd4, %r3, 12;
    add.s64 %rd3, %rd3, %rd4;
    st.global.b32 [%rd3], %r10;
    st.global.b32 [%rd3+4], %r11;
    st.global.b32 [%rd3+8], %r12;
"""
    out = np.zeros((64, 3), np.uint32)
    run_ptx(kernel("k", ["out"], body), "k", (1,), (64,), [out])
    t = np.arange(64, dtype=np.float32)
    h = lambda v: v.astype(np.float16).view(np.uint16).astype(np.uint32)  # noqa: E731
    b = lambda v: (v.view(np.uint32) >> 16).astype(np.uint32)  # noqa: E731 - t and t/2 are exact in bf16
    np.testing.assert_array_equal(out[:, 0], h(t / 2) | (h(t) << 16))
    np.testing.assert_array_equal(out[:, 1], b(t / 2) | (b(t) << 16))
    np.testing.assert_array_equal(out[:, 2], h(t) | (h(t / 2) << 16))
