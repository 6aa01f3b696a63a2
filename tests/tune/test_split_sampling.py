"""The model measurer on kernels whose blocks wait on each other: a split-K GEMM is
sampled by groups (its slices' waits modelled) and agrees with the full simulation
while simulating a fraction of its blocks; a kernel whose waits do not form groups
falls back to the full simulation instead of hanging."""

from __future__ import annotations

import numpy as np
import pytest
from tune_graphs import gemm

from fsir.codegen.gemm_config import GemmConfig, GemmMath
from fsir.gpuspec import gpu_spec
from fsir.pipeline import PipelineOptions
from fsir.runtime.executor import execute
from fsir.sim import load_module
from fsir.tune.measure import (
    MeasureInput,
    ModelBackend,
    TaskSource,
    compile_for_measuring,
    random_inputs,
    stitched_from_text,
    task_space,
)
from fsir.tune.sampling import SampledLaunch, SampledSimDevice
from fsir.tune.task import discover

H100 = PipelineOptions(fusion="stitch", gpu="H100")


def timed(text: str, config: GemmConfig, samples: int) -> SampledLaunch:
    (task,) = discover(stitched_from_text(text, H100), H100)
    src = TaskSource(text, H100, task.key, task.kernel)
    trace = task_space(text, H100, task.key).trace_of(config)
    assert trace is not None
    got = compile_for_measuring(MeasureInput(src, trace), False)
    assert not hasattr(got, "error"), got
    device = SampledSimDevice(task.kernel, gpu_spec("H100"), samples)
    execute(got.lowered, random_inputs(got.lowered, text=text), device=device, ptx=got.ptx)
    (launch,) = device.results
    return launch


@pytest.mark.parametrize("shape, config, simulated", [
    # 6 x 4 tiles (the last column an edge) of 4 slices, three k-steps each: tiles 0 and
    # 5 (the first last in x) whole, the first slice of 18 (the first last in y: like
    # tile 0) and 23 (like tile 5), the first of tile 1 (it shows the structure)
    ((64, 90, 192, "f32"), GemmConfig(16, 16, 16, 1, 1, GemmMath.FMA, 4), 4 + 4 + 1 + 1 + 1),
    # 5 x 3 tiles (the last row an edge), uneven slices: 5 k-steps over 3 (the last has
    # one): tiles 0 and 10 whole, the first slice of tiles 4, 14 and 1
    ((40, 80, 80, "f32"), GemmConfig(16, 16, 16, 1, 1, GemmMath.FMA, 3), 3 + 3 + 1 + 1 + 1),
])
def test_split_k_sampled_by_groups_matches_full_simulation(shape, config, simulated):
    text = gemm(*shape)
    sampled = timed(text, config, 4)
    full = timed(text, config, 1 << 30)
    assert sampled.blocks == full.blocks == full.simulated
    assert sampled.group == config.split
    assert sampled.simulated == simulated < sampled.blocks
    assert sampled.seconds == pytest.approx(full.seconds, rel=0.01)


def test_split_k_measured_sampled_through_the_model_backend():
    text = gemm(64, 64, 256, "f32")
    (task,) = discover(stitched_from_text(text, H100), H100)
    trace = task_space(text, H100, task.key).trace_of(GemmConfig(16, 16, 16, 1, 1, GemmMath.FMA, 4))
    assert trace is not None
    res = ModelBackend(samples=4, ptxas=False).measure_one(MeasureInput(TaskSource(text, H100, task.key, task.kernel),
                                                                        trace))
    assert res.ok and res.blocks == 64 and res.simulated_blocks == 4 + 4  # tile 0, then a slice each


CHAIN = """
.version 7.8
.target sm_80
.address_size 64
// block b waits until block b+1 set flag[b]: waits against block order, no groups
.visible .entry chain(.param .u64 pflag, .param .u64 pout)
{
  .reg .pred %p<3>;
  .reg .b32 %r<8>;
  .reg .b64 %rd<8>;
  ld.param.u64 %rd1, [pflag];
  ld.param.u64 %rd2, [pout];
  cvta.to.global.u64 %rd1, %rd1;
  cvta.to.global.u64 %rd2, %rd2;
  mov.u32 %r1, %ctaid.x;
  mov.u32 %r2, %nctaid.x;
  add.u32 %r3, %r1, 1;
  setp.ge.u32 %p1, %r3, %r2;
  mul.wide.u32 %rd3, %r1, 4;
  add.s64 %rd4, %rd1, %rd3;
  @%p1 bra GO;
SPIN:
  ld.acquire.gpu.global.u32 %r4, [%rd4];
  setp.eq.u32 %p2, %r4, 0;
  @%p2 bra SPIN;
GO:
  add.s64 %rd5, %rd2, %rd3;
  add.u32 %r6, %r1, 100;
  st.global.u32 [%rd5], %r6;
  setp.eq.u32 %p1, %r1, 0;
  @%p1 bra END;
  fence.acq_rel.gpu;
  atom.acq_rel.gpu.global.exch.b32 %r7, [%rd4+-4], 1;
END:
  ret;
}
"""


def test_waits_that_form_no_groups_fall_back_to_the_full_simulation():
    """Block 0 waits for block 1: run in block order it would never be satisfied, so the
    launch is simulated in full (every block), not hung."""
    device = SampledSimDevice("chain", gpu_spec("H100"), 4)
    out = np.zeros(16, np.uint32)
    device.launch(load_module(CHAIN), "chain", 16, 32, [np.zeros(16, np.uint32), out])
    (launch,) = device.results
    assert launch.simulated == launch.blocks == 16 and launch.group == 0
    assert out.tolist() == [100 + b for b in range(16)]
