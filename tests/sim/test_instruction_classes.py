"""The simulator's instruction-class counters (fsir/sim/classes.py), which fs-bench's
kernel-time model reads."""

from __future__ import annotations

import numpy as np
import pytest

from fsir.sim import run_ptx
from fsir.sim.classes import CLASS_FIELDS, classify, expansion, mma_fmas

# y[i] = exp2(x[i] * x[i] + 1) for i < n, with a divergent early exit.
PTX = """
.version 7.0
.target sm_80
.address_size 64
.visible .entry k(.param .u64 px, .param .u64 py, .param .u32 n) {
  .reg .pred %p<2>;
  .reg .b32 %r<4>;
  .reg .f32 %f<4>;
  .reg .b64 %rd<6>;
  ld.param.u64 %rd1, [px];
  ld.param.u64 %rd2, [py];
  ld.param.u32 %r1, [n];
  mov.u32 %r2, %tid.x;
  setp.ge.u32 %p1, %r2, %r1;
  @%p1 bra DONE;
  mul.wide.u32 %rd3, %r2, 4;
  add.s64 %rd4, %rd1, %rd3;
  ld.global.f32 %f1, [%rd4];
  fma.rn.f32 %f2, %f1, %f1, 0f3F800000;
  ex2.approx.f32 %f3, %f2;
  add.s64 %rd5, %rd2, %rd3;
  st.global.f32 [%rd5], %f3;
DONE:
  ret;
}
"""


def test_class_counters_partition_the_instructions():
    x = np.linspace(-1, 1, 64, dtype=np.float32)
    y = np.zeros(64, np.float32)
    st = run_ptx(PTX, "k", (1,), (64,), [x, y, np.uint32(40)])
    np.testing.assert_allclose(y[:40], np.exp2(x[:40] * x[:40] + 1), rtol=1e-6)
    assert sum(getattr(st, f) for f in CLASS_FIELDS) == st.instructions
    assert st.fp32_instructions == st.fma_instructions == 40
    assert st.sfu_instructions == 40  # ex2
    assert st.lsu_instructions == 3 * 64 + 2 * 40  # three ld.param by all lanes, ld/st.global by 40
    assert st.flops == 2 * 40
    assert st.tensor_instructions == st.fp16_instructions == st.fp64_instructions == 0


@pytest.mark.parametrize("opcode, field", [
    ("fma.rn.f32", "fp32_instructions"), ("setp.lt.f32", "fp32_instructions"),
    ("add.rn.bf16x2", "fp16_instructions"), ("mul.rn.f16", "fp16_instructions"),
    ("fma.rn.f64", "fp64_instructions"), ("ex2.approx.ftz.f32", "sfu_instructions"),
    ("div.rn.f32", "sfu_instructions"), ("cvt.rn.f16.f32", "sfu_instructions"),
    ("cvt.u64.u32", "int_instructions"), ("mov.f32", "int_instructions"), ("selp.f32", "int_instructions"), ("mad.lo.s32", "int_instructions"), ("div.u32", "int_instructions"),
    ("bar.sync", "int_instructions"), ("ld.global.nc.v4.f32", "lsu_instructions"),
    ("shfl.sync.bfly.b32", "lsu_instructions"), ("ldmatrix.sync.aligned.m8n8.x4.shared.b16", "lsu_instructions"),
    ("cp.async.ca.shared.global", "lsu_instructions"),
    ("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32", "tensor_instructions"),
])
def test_classify(opcode, field):
    assert CLASS_FIELDS[classify(opcode)] == field


def test_a_rounding_to_tf32_is_counted_as_ptxas_compiles_it():
    """cvt.rna.tf32.f32 is an FSETP and an IADD in SASS (fsir.gpuspec.TF32_ROUNDING), not
    a conversion at the SFU's rate: one PTX instruction, two machine instructions."""
    text = PTX.replace("ex2.approx.f32 %f3, %f2;", "cvt.rna.tf32.f32 %r3, %f2;\n  mov.b32 %f3, %r3;")
    x = np.linspace(-1, 1, 64, dtype=np.float32)
    y = np.zeros(64, np.float32)
    st = run_ptx(text, "k", (1,), (64,), [x, y, np.uint32(40)])
    assert st.sfu_instructions == 0
    assert st.fp32_instructions == 40 + 40  # the fma and the rounding's compare
    assert sum(getattr(st, f) for f in CLASS_FIELDS) == st.instructions + 40  # its second instruction
    assert expansion("cvt.rna.tf32.f32") == ((CLASS_FIELDS.index("fp32_instructions"), 1),
                                              (CLASS_FIELDS.index("int_instructions"), 1))


def test_mma_multiply_adds():
    assert mma_fmas("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32") == ("f16", 16 * 8 * 16)
    assert mma_fmas("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32") == ("tf32", 16 * 8 * 8)
    assert mma_fmas("fma.rn.f32") is None


MMA_PTX = """
.version 7.0
.target sm_80
.address_size 64
.visible .entry k() {
  .reg .b32 %r<8>;
  .reg .f32 %f<8>;
  mov.b32 %r0, 0; mov.b32 %r1, 0; mov.b32 %r2, 0; mov.b32 %r3, 0; mov.b32 %r4, 0; mov.b32 %r5, 0;
  mov.f32 %f0, 0f00000000; mov.f32 %f1, 0f00000000; mov.f32 %f2, 0f00000000; mov.f32 %f3, 0f00000000;
  mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%f4,%f5,%f6,%f7}, {%r0,%r1,%r2,%r3}, {%r4,%r5}, {%f0,%f1,%f2,%f3};
  mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%f4,%f5,%f6,%f7}, {%r0,%r1,%r2,%r3}, {%r4,%r5}, {%f0,%f1,%f2,%f3};
  ret;
}
"""


def test_tensor_counters_split_by_precision():
    """Two warps, each one tf32 m16n8k8 and one bf16 m16n8k16 mma."""
    st = run_ptx(MMA_PTX, "k", (1,), (64,), [])
    assert st.tensor_instructions == 2 * 64
    assert st.tensor_flops == 2 * (2 * 16 * 8 * 8 + 2 * 16 * 8 * 16)
    assert st.tf32_tensor_flops == 2 * 2 * 16 * 8 * 8
    assert st.flops == st.tensor_flops
    assert sum(getattr(st, f) for f in CLASS_FIELDS) == st.instructions
