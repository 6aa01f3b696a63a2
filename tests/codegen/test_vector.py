"""Vector widths (FusionStitching §4.2's enumerated launch dimensions): every width
matches the numpy reference on the simulator and prints PTX that ptxas assembles for
sm_80 and sm_90; a width that is not legal for a kernel falls back to scalar code; the
simulator counts a vector access as one request of V elements and faults on a
misaligned one, as the hardware does."""

from __future__ import annotations

import re

import numpy as np
import pytest

from fsir.errors import SimulatorError
from fsir.parse import parse_module
from fsir.pipeline import PipelineOptions, lower
from fsir.runtime.executor import execute, module_ptx
from fsir.sim import run_ptx
from fsir.testing.graphs import layernorm
from fsir.testing.pipeline import check

# name -> (graph IR, the widths legal for its kernels, tolerance scale)
CASES = {
    # loop kernels
    "bias_mul": ("""
func.func @f(%x: tensor<64x256xf32>, %b: tensor<256xf32>) -> tensor<64x256xf32> {
  %bb = graph.broadcast %b dims [1] : (tensor<256xf32>) -> tensor<64x256xf32>
  %y = graph.mul %x, %bb : tensor<64x256xf32>
  func.return %y : tensor<64x256xf32>
}""", {1, 2, 4}, 1),
    "f16_exp_add": ("""
func.func @f(%x: tensor<32x128xf16>, %y: tensor<32x128xf16>) -> tensor<32x128xf16> {
  %e = graph.exp %x : tensor<32x128xf16>
  %s = graph.add %e, %y : tensor<32x128xf16>
  func.return %s : tensor<32x128xf16>
}""", {1, 2, 4}, 1),
    "bf16_mul_rows": ("""
func.func @f(%x: tensor<16x64xbf16>, %r: tensor<16xbf16>) -> tensor<16x64xbf16> {
  %rb = graph.broadcast %r dims [0] : (tensor<16xbf16>) -> tensor<16x64xbf16>
  %y = graph.mul %x, %rb : tensor<16x64xbf16>
  func.return %y : tensor<16x64xbf16>
}""", {1, 2, 4}, 1),
    "odd_129": ("""
func.func @f(%x: tensor<37x129xf32>) -> tensor<37x129xf32> {
  %y = graph.tanh %x : tensor<37x129xf32>
  func.return %y : tensor<37x129xf32>
}""", {1}, 1),
    "rows_of_6": ("""
func.func @f(%x: tensor<16x6xf32>, %y: tensor<16x6xf32>) -> tensor<16x6xf32> {
  %s = graph.sub %x, %y : tensor<16x6xf32>
  func.return %s : tensor<16x6xf32>
}""", {1, 2}, 1),
    "transpose": ("""
func.func @f(%x: tensor<32x64xf32>) -> tensor<64x32xf32> {
  %t = graph.transpose %x perm [1, 0] : (tensor<32x64xf32>) -> tensor<64x32xf32>
  %y = graph.neg %t : tensor<64x32xf32>
  func.return %y : tensor<64x32xf32>
}""", {1, 2, 4}, 1),
    "i32_select": ("""
func.func @f(%x: tensor<8x64xi32>, %y: tensor<8x64xi32>) -> tensor<8x64xi32> {
  %c = graph.compare lt %x, %y : (tensor<8x64xi32>, tensor<8x64xi32>) -> tensor<8x64xi1>
  %m = graph.select %c, %x, %y : (tensor<8x64xi1>, tensor<8x64xi32>, tensor<8x64xi32>) -> tensor<8x64xi32>
  func.return %m : tensor<8x64xi32>
}""", {1, 2, 4}, 1),
    # row kernels (rows kept in registers in slots of V)
    "layernorm": (layernorm(64, 256, name="f"), {1, 2, 4}, 4),
    "f16_softmax": ("""
func.func @f(%x: tensor<8x512xf16>) -> tensor<8x512xf16> {
  %m = graph.reduce max %x dims [1] : (tensor<8x512xf16>) -> tensor<8xf16>
  %mb = graph.broadcast %m dims [0] : (tensor<8xf16>) -> tensor<8x512xf16>
  %d = graph.sub %x, %mb : tensor<8x512xf16>
  %e = graph.exp %d : tensor<8x512xf16>
  %s = graph.reduce sum %e dims [1] : (tensor<8x512xf16>) -> tensor<8xf16>
  %sb = graph.broadcast %s dims [0] : (tensor<8xf16>) -> tensor<8x512xf16>
  %y = graph.div %e, %sb : tensor<8x512xf16>
  func.return %y : tensor<8x512xf16>
}""", {1, 2, 4}, 4),
    "bf16_rms": ("""
func.func @f(%x: tensor<16x128xbf16>) -> tensor<16x128xbf16> {
  %sq = graph.mul %x, %x : tensor<16x128xbf16>
  %s = graph.reduce sum %sq dims [1] : (tensor<16x128xbf16>) -> tensor<16xbf16>
  %r = graph.rsqrt %s : tensor<16xbf16>
  %rb = graph.broadcast %r dims [0] : (tensor<16xbf16>) -> tensor<16x128xbf16>
  %y = graph.mul %x, %rb : tensor<16x128xbf16>
  func.return %y : tensor<16x128xbf16>
}""", {1, 2, 4}, 4),
    # a warp per row of 64: one slot of 2 per lane; slots of 4 would leave half the
    # warp past the row's end, so 4 is not offered
    "rows_of_64": ("""
func.func @f(%x: tensor<64x64xf32>) -> tensor<64xf32> {
  %s = graph.reduce sum %x dims [1] : (tensor<64x64xf32>) -> tensor<64xf32>
  func.return %s : tensor<64xf32>
}""", {1, 2}, 2),
    "rows_of_75": ("""
func.func @f(%x: tensor<16x75xf32>) -> tensor<16x75xf32> {
  %m = graph.reduce max %x dims [1] : (tensor<16x75xf32>) -> tensor<16xf32>
  %mb = graph.broadcast %m dims [0] : (tensor<16xf32>) -> tensor<16x75xf32>
  %y = graph.sub %x, %mb : tensor<16x75xf32>
  func.return %y : tensor<16x75xf32>
}""", {1}, 1),
    # rows of 4x32 columns: a vector's `+ v` survives delinearizing the column index
    "two_reduced_dims": ("""
func.func @f(%x: tensor<8x4x32xf32>) -> tensor<8x4x32xf32> {
  %s = graph.reduce sum %x dims [1, 2] : (tensor<8x4x32xf32>) -> tensor<8xf32>
  %sb = graph.broadcast %s dims [0] : (tensor<8xf32>) -> tensor<8x4x32xf32>
  %y = graph.sub %x, %sb : tensor<8x4x32xf32>
  func.return %y : tensor<8x4x32xf32>
}""", {1, 2, 4}, 2),
}

VECTOR_ACCESS = re.compile(r"\b(?:ld|st)\.global\.v(\d)\.")


@pytest.mark.parametrize("vector", [1, 2, 4])
@pytest.mark.parametrize("name", sorted(CASES))
def test_vector_width_matches_reference(name, vector):
    text, legal, scale = CASES[name]
    lowered = check(text, fusion="stitch", vector=vector, scale=scale)  # also ptxas sm_80, sm_90
    widths = {int(w) for w in VECTOR_ACCESS.findall(module_ptx(lowered))}
    if vector in legal and vector > 1:
        assert widths == {vector}, widths
    else:  # illegal widths fall back to scalar code
        assert widths == set(), widths


def test_auto_width_is_legal_and_correct():
    for text, legal, scale in CASES.values():
        lowered = check(text, fusion="stitch", scale=scale, ptxas=False)
        widths = {int(w) for w in VECTOR_ACCESS.findall(module_ptx(lowered))}
        assert widths <= legal - {1}


def test_vector_requests_and_bytes():
    """A warp's V-wide access is one request moving V elements per thread: requests
    drop by V, bytes and 32-byte sectors stay the same."""
    text, _, _ = CASES["bias_mul"]
    module = parse_module(text, "<test>")
    rng = np.random.default_rng(0)
    inputs = [rng.standard_normal((64, 256)).astype(np.float32), rng.standard_normal(256).astype(np.float32)]
    stats = {}
    for vector in (1, 2, 4):
        lowered = lower(module, PipelineOptions(fusion="stitch", vector=vector))
        _, stats[vector] = execute(lowered, inputs)
    for vector in (2, 4):
        for what in ("load", "store"):
            assert getattr(stats[vector], f"global_{what}_requests") * vector == \
                getattr(stats[1], f"global_{what}_requests")
            assert getattr(stats[vector], f"global_{what}_bytes") == getattr(stats[1], f"global_{what}_bytes")
        assert stats[vector].global_sectors == stats[1].global_sectors
        assert stats[vector].instructions < stats[1].instructions


HEADER = ".version 8.7\n.target sm_80\n.address_size 64\n"


def vector_kernel(offset: int) -> str:
    """Each thread copies 4 floats of `a` at byte `offset` + 16 * tid to `out`, and
    writes its 16 bytes with one st.global.v4.f32."""
    return HEADER + f"""
.visible .entry k(.param .u64 a, .param .u64 out)
{{
    .reg .b32 %r<2>;
    .reg .f32 %f<5>;
    .reg .b64 %rd<8>;
    ld.param.u64 %rd1, [a];
    cvta.to.global.u64 %rd1, %rd1;
    ld.param.u64 %rd2, [out];
    cvta.to.global.u64 %rd2, %rd2;
    mov.u32 %r1, %tid.x;
    mul.wide.u32 %rd3, %r1, 16;
    add.s64 %rd4, %rd1, %rd3;
    ld.global.v4.f32 {{%f1, %f2, %f3, %f4}}, [%rd4+{offset}];
    add.s64 %rd5, %rd2, %rd3;
    st.global.v4.f32 [%rd5], {{%f1, %f2, %f3, %f4}};
    ret;
}}
"""


def test_simulator_vector_access_counts_one_request():
    a = np.arange(64 * 4, dtype=np.float32)
    out = np.zeros(64 * 4, np.float32)
    stats = run_ptx(vector_kernel(0), "k", (1,), (64,), [a, out])
    np.testing.assert_array_equal(out, a)
    assert (stats.global_load_requests, stats.global_store_requests) == (2, 2)  # two warps, one each
    assert (stats.global_load_bytes, stats.global_store_bytes) == (64 * 16, 64 * 16)
    assert stats.global_load_sectors == 64 * 16 // 32


def test_simulator_faults_on_misaligned_vector_access():
    a = np.zeros(64 * 4 + 4, np.float32)
    out = np.zeros(64 * 4, np.float32)
    # 8 bytes past a 16-byte boundary: aligned for a float, not for a 16-byte vector
    with pytest.raises(SimulatorError, match="misaligned global load of 16 bytes"):
        run_ptx(vector_kernel(8), "k", (1,), (64,), [a, out])


def test_simulator_buffers_are_256_byte_aligned():
    """Buffers of odd sizes still start 256-byte aligned (cudaMalloc's guarantee), so a
    vector access at a multiple of its size within a buffer is aligned."""
    text = HEADER + """
.visible .entry k(.param .u64 a, .param .u64 b, .param .u64 out)
{
    .reg .b64 %rd<8>;
    ld.param.u64 %rd1, [a];
    cvta.to.global.u64 %rd1, %rd1;
    ld.param.u64 %rd2, [b];
    cvta.to.global.u64 %rd2, %rd2;
    ld.param.u64 %rd3, [out];
    cvta.to.global.u64 %rd3, %rd3;
    and.b64 %rd4, %rd1, 255;
    and.b64 %rd5, %rd2, 255;
    and.b64 %rd6, %rd3, 255;
    add.s64 %rd4, %rd4, %rd5;
    add.s64 %rd4, %rd4, %rd6;
    add.s64 %rd4, %rd4, 1;
    st.global.u64 [%rd3], %rd4;
    ret;
}
"""
    out = np.zeros(1, np.uint64)
    run_ptx(text, "k", (1,), (1,), [np.zeros(3, np.uint8), np.zeros(5, np.uint8), out])
    assert out[0] == 1
