"""The lit_tests/ptx kernels run on fsir's PTX simulator and compute the right thing:
structured control flow, parallel copies, warp shuffles, shared-memory reductions,
narrow types, N-D and strided memrefs."""

from __future__ import annotations

import numpy as np

from fsir import sim
from fsir.ptx import print_ptx
from fsir.testing.ptx import PTX_LIT, parse

RNG = np.random.default_rng(7)


def load(name: str):
    return sim.load_module(print_ptx(parse((PTX_LIT / name).read_text())))


def test_vector_add():
    mod = load("vector_add.mlir")
    n = 1000
    a, b = RNG.random(n, np.float32), RNG.random(n, np.float32)
    c = np.zeros(n, np.float32)
    sim.launch(mod, "vadd", (4,), (256,), [a, b, c, np.uint64(n)])
    np.testing.assert_array_equal(c, a + b)


def test_loop_iter_args_and_swap():
    mod = load("loop_iter_args.mlir")
    rows = 37
    x = RNG.standard_normal((rows, 64)).astype(np.float32)
    out = np.zeros((rows, 2), np.float32)
    # row_sum has no bounds check: launch exactly `rows` threads
    sim.launch(mod, "row_sum", (rows,), (1,), [x, out, np.uint64(rows)])
    np.testing.assert_allclose(out[:, 0], x.sum(axis=1, dtype=np.float64), rtol=1e-5, atol=1e-5)
    np.testing.assert_array_equal(out[:, 1], x.max(axis=1))
    for n in (0, 1, 4, 7):
        o = np.zeros(2, np.int32)
        sim.launch(mod, "swap", (1,), (1,), [o, np.int32(n)])
        assert list(o) == ([0, 1] if n % 2 == 0 else [1, 0])


def test_if_while_branches():
    mod = load("if_while.mlir")
    x = RNG.standard_normal(64).astype(np.float32)
    y = np.zeros(64, np.float32)
    sim.launch(mod, "clamp", (1,), (64,), [x, y, np.float32(0.1)])
    np.testing.assert_array_equal(y, np.where(x < 0.1, np.float32(0.1), x * x))

    v = RNG.integers(1, 1000, 32).astype(np.int32)
    steps = np.zeros(32, np.int32)
    sim.launch(mod, "collatz", (1,), (32,), [v.copy(), steps])

    def collatz(a: int) -> int:
        k = 0
        while a > 1:
            a = 3 * a + 1 if a % 2 else a // 2
            k += 1
        return k

    assert list(steps) == [collatz(int(a)) for a in v]
    for flag, want in ((True, 7), (False, 9)):
        o = np.zeros(1, np.int32)
        sim.launch(mod, "branches", (1,), (1,), [o, np.uint8(flag)])
        assert o[0] == want


def test_warp_reduction():
    mod = load("warp_reduce.mlir")
    rows, cols = 5, 300
    x = RNG.standard_normal(rows * cols).astype(np.float32)
    out = np.zeros(rows, np.float32)
    sim.launch(mod, "warp_sum", (rows,), (32,), [x, out, np.uint64(cols)])
    np.testing.assert_allclose(out, x.reshape(rows, cols).sum(axis=1, dtype=np.float64), rtol=1e-5, atol=1e-5)


def test_shuffle_modes_and_width():
    mod = load("warp_reduce.mlir")
    x = np.arange(32, dtype=np.int32) * 10
    sim.launch(mod, "modes", (1,), (32,), [x, np.int32(16)])
    lane = np.arange(32)
    v = lane * 10
    seg = lane // 16 * 16
    up = np.where(lane - 1 >= seg, v[lane - 1], v)  # up 1, width 16, invalid -> keep own
    down = np.where(lane + 1 < seg + 16, up[np.minimum(lane + 1, 31)], up)
    idx = down[seg + 1]  # idx lane 1 of each 16-lane segment
    np.testing.assert_array_equal(x, idx)


def test_block_reduction_with_shared_memory():
    mod = load("block_reduce.mlir")
    rows, cols = 3, 1000
    x = RNG.standard_normal(rows * cols).astype(np.float32)
    out = np.zeros(rows, np.float32)
    stats = sim.launch(mod, "block_sum", (rows,), (256,), [x, out, np.uint64(cols)])
    np.testing.assert_allclose(out, x.reshape(rows, cols).sum(axis=1, dtype=np.float64), rtol=1e-5, atol=1e-4)
    assert stats.barriers > 0 and stats.shared_stores > 0


def test_dynamic_shared_memory():
    mod = load("block_reduce.mlir")
    x = RNG.standard_normal(256).astype(np.float32)
    want = x[::-1].copy()
    sim.launch(mod, "dyn_smem", (1,), (256,), [x, ], shared_bytes=2048)
    np.testing.assert_array_equal(x, want)


def bf16_bits(v: np.ndarray) -> np.ndarray:
    b = v.astype(np.float32).view(np.uint32).astype(np.uint64)
    return ((b + 0x7FFF + ((b >> 16) & 1)) >> 16).astype(np.uint16)


def bf16_value(bits: np.ndarray) -> np.ndarray:
    return (bits.astype(np.uint32) << 16).view(np.float32)


def test_narrow_types():
    mod = load("narrow_types.mlir")
    n = 64
    h = RNG.standard_normal(n).astype(np.float16)
    b = bf16_bits(RNG.standard_normal(n))
    o = np.zeros(n, np.float32)
    h0, b0 = h.copy(), b.copy()
    sim.launch(mod, "halfs", (1,), (n,), [h, b, o])
    np.testing.assert_array_equal(o, h0.astype(np.float32) + bf16_value(b0))
    np.testing.assert_array_equal(h, np.maximum(-h0, np.float16(1.0)))
    s = (h0.astype(np.float32) + bf16_value(b0)).astype(np.float32)
    np.testing.assert_array_equal(b, bf16_bits(np.minimum(bf16_value(bf16_bits(s)), 1.0)))

    m = RNG.integers(0, 2, n).astype(np.uint8)
    x = RNG.standard_normal(n).astype(np.float32)
    c = RNG.integers(-128, 128, n).astype(np.int8)
    m0, x0, c0 = m.copy(), x.copy(), c.copy()
    sim.launch(mod, "bools", (1,), (n,), [m, x, c])
    both = (x0 > 0) & m0.astype(bool)
    np.testing.assert_array_equal(m, (both ^ m0.astype(bool)).astype(np.uint8))
    np.testing.assert_array_equal(c, (c0.astype(np.int16) * 2).astype(np.int8))
    np.testing.assert_array_equal(x, c0.astype(np.uint8).astype(np.float32))


def test_scalar_parameters():
    mod = load("narrow_types.mlir")
    o = np.zeros(4, np.float32)
    # f16/bf16 scalars are passed as their 16-bit patterns (.param .b16)
    args = [o, np.float32(1.5), np.float16(2.0).view(np.uint16), np.uint16(0x4040), np.uint8(1), np.int8(-3), np.int32(4),
            np.int64(5), np.uint64(2), np.float64(0.25)]  # fmt: skip
    sim.launch(mod, "scalars", (1,), (1,), args)
    assert o[2] == 1.5 + 2.0 + 3.0 - 3 + 4 + 5 + 0.25


def test_nd_memrefs():
    mod = load("memrefs.mlir")
    x = RNG.standard_normal((4, 8, 16)).astype(np.float32)
    y = np.zeros((16, 8, 4), np.float32)
    # the tile stores race on purpose (only addressing is tested here)
    sim.launch(mod, "transpose", (1,), (4, 8, 16), [x, y], check_races=False)
    want = x.transpose(2, 1, 0).copy()
    want[2, 1, 1] = x[0, 3, 2]
    np.testing.assert_array_equal(y, want)
    rows = np.zeros((10, 768), np.float16)
    rows[:, 5] = np.arange(10)
    yb = np.zeros(8 + 64 * 128, np.float32)  # strided<[128, 2], offset: 8> over 64x64
    sim.launch(mod, "rows", (1,), (1,), [rows, yb, np.uint64(3)])
    assert yb[8 + 3 * 128 + 5 * 2] == 3.0


def test_atomics():
    mod = load("atomics.mlir")
    rows = 5
    x = RNG.standard_normal((rows, 64)).astype(np.float32)
    out = np.zeros(64, np.float32)
    hist = np.zeros(16, np.int32)
    sim.launch(mod, "col_sum", (rows,), (64,), [x, out, hist])
    np.testing.assert_allclose(out, x.sum(axis=0, dtype=np.float64), rtol=1e-5, atol=1e-5)
    np.testing.assert_array_equal(hist, np.full(16, 4 * rows))


def test_subgroup_reduce():
    mod = load("warp_reduce.mlir")
    x = RNG.standard_normal(32).astype(np.float32)
    k = RNG.integers(0, 2**31, 32).astype(np.int32)
    out = np.zeros(64, np.float32)
    kout = np.zeros(32, np.int32)
    sim.launch(mod, "reduce_ops", (1,), (32,), [x, k, out, kout])
    np.testing.assert_allclose(out[:32], np.full(32, x.sum(dtype=np.float64)), rtol=1e-5, atol=1e-5)
    np.testing.assert_array_equal(out[32:], np.repeat(x.reshape(4, 8).max(axis=1), 8))
    np.testing.assert_array_equal(kout, np.repeat(k.view(np.uint32).reshape(8, 4).min(axis=1), 4).view(np.int32))
