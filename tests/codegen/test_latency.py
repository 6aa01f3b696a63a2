"""The latency-evaluator (§4.3): register estimates against ptxas -v, occupancy, waves."""

from collections import Counter

import pytest

from fsir.codegen.latency import (
    estimate,
    estimate_registers,
    instruction_counts,
    occupancy,
    simplified_estimate,
    waves_for,
)
from fsir.dialects import gpu
from fsir.gpuspec import gpu_spec
from fsir.parse import parse_module
from fsir.pipeline import PipelineOptions, lower
from fsir.ptx.costs import printed_mix
from fsir.ptx.ptxas import assemble
from fsir.runtime.executor import module_ptx
from fsir.testing.paths import EXAMPLES

H100 = gpu_spec("H100")

# The stated bound: per kernel within 12 registers of ptxas -v; on average within 5.
# Split-K GEMM kernels are the worst (11 under ptxas: the slices' reduction branch).
MAX_ABS_ERROR = 12
MAX_MEAN_ABS_ERROR = 5.0  # stitch mode with split-K GEMMs and the attention kernels: 4.7


def kernels(lowered):
    return [op for op in lowered.walk() if isinstance(op, gpu.FuncOp) and op.is_kernel]


# (fusion mode, vector width): the evaluator's widths (measured worst / mean: 8 / 2.9
# unfused, 11 / 3.8 fused), and every fused kernel forced to vectors of 2 and 4 (11 / 3.9
# and 11 / 3.8)
@pytest.mark.parametrize("mode,vector", [("none", "auto"), ("stitch", "auto"), ("stitch", 2), ("stitch", 4)])
def test_register_estimates_match_ptxas(mode, vector):
    errors = []
    for path in sorted(EXAMPLES.glob("*.mlir")):
        lowered = lower(parse_module(path.read_text(), str(path)), PipelineOptions(fusion=mode, vector=vector))
        result = assemble(module_ptx(lowered), "sm_80")
        assert result.ok, result.errors
        for k in kernels(lowered):
            name = k.sym_name.data
            errors.append((estimate_registers(k) - result.kernels[name].registers, path.name, name))
    assert errors
    worst = max(errors, key=lambda e: abs(e[0]))
    assert abs(worst[0]) <= MAX_ABS_ERROR, worst
    mean = sum(abs(e[0]) for e in errors) / len(errors)
    assert mean <= MAX_MEAN_ABS_ERROR, mean


def test_occupancy_limits():
    # 256 threads x 32 registers: 8 warps x 1024 registers per block -> 8 blocks by registers
    # and 8 by threads (2048 / 256).
    occ = occupancy(256, 32, 0, H100)
    assert (occ.blocks_per_sm, occ.warps_per_sm) == (8, 64)
    # 64 registers halve it, and registers are the limit.
    occ = occupancy(256, 64, 0, H100)
    assert (occ.blocks_per_sm, occ.limited_by) == (4, "registers")
    # 100 KB of shared memory per block: 2 blocks on H100 (228 KB), 0 blocks is no launch.
    assert occupancy(128, 16, 100 * 1024, H100).blocks_per_sm == 2
    assert occupancy(128, 16, 300 * 1024, H100).blocks_per_sm == 0
    # 33 registers round up to 40 per thread x 32 lanes = 1280 -> allocation unit 256.
    assert occupancy(1024, 33, 0, H100).blocks_per_sm == 1


def test_waves():
    occ = occupancy(256, 32, 0, H100)  # 64 warps per SM x 132 SMs per wave
    assert waves_for((132 * 8,), (256,), occ, H100) == 1
    assert waves_for((132 * 8 + 1,), (256,), occ, H100) == 2


SRC = """
builtin.module attributes {gpu.container_module} {
  gpu.module @m {
    gpu.func @k(%a: memref<?xf32>, %b: memref<?xf32>) workgroup(%s : memref<64xf32, 3>) kernel {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c10 = arith.constant 10 : index
      %z = arith.constant 0.0 : f32
      %r = scf.for %i = %c0 to %c10 step %c1 iter_args(%acc = %z) -> (f32) {
        %x = memref.load %a[%i] : memref<?xf32>
        %e = math.exp %x : f32
        %n = arith.addf %acc, %e : f32
        scf.yield %n : f32
      }
      memref.store %r, %s[%c0] : memref<64xf32, 3>
      gpu.barrier
      memref.store %r, %b[%c0] : memref<?xf32>
      gpu.return
    }
  }
}
"""


def test_instruction_counts_weight_loops_by_trip_count():
    module = parse_module(SRC, "k.mlir")
    k = kernels(module)[0]
    counts = instruction_counts(k.body.blocks[0].ops)
    assert counts["global"] == 10 + 1
    # math.exp costs what the PTX printer emits for it (a multi-instruction sequence)
    exp = printed_mix("math.exp", "f32")
    assert exp["sfu"] >= 2 and exp["fp32"] >= 4  # ex2 and its range reduction
    assert counts["sfu"] == 10 * exp["sfu"]
    assert counts["alu"] == 10 * (exp["fp32"] + 1)  # and the loop's add
    assert counts["smem"] == 1 and counts["barrier"] == 1
    est = estimate(k, (1,), (64,), H100)
    assert est.shared_bytes == 256 and est.waves == 1
    assert est.cycles == pytest.approx(sum(n * H100.cpi[c] for c, n in counts.items()))


def test_simplified_estimate_penalises_shared_memory():
    counts = Counter(alu=100, global_=0)
    small = simplified_estimate(1 << 20, 256, counts, 0, H100)
    big = simplified_estimate(1 << 20, 256, counts, 96 * 1024, H100)
    assert small.registers == 16
    assert big.waves > small.waves and big.cycles > small.cycles


CHAINS = """
builtin.module attributes {gpu.container_module} {
  gpu.module @m {
    gpu.func @k(%a: memref<?xf32>) kernel {
      %c0 = arith.constant 0 : index
      %x = memref.load %a[%c0] : memref<?xf32>
      %d1 = math.fma %x, %x, %x : f32
      %d2 = math.fma %d1, %x, %d1 : f32
      %d3 = math.fma %d2, %x, %d2 : f32
      %d4 = math.fma %d3, %x, %d3 : f32
      %i1 = math.fma %x, %x, %x : f32
      %i2 = math.fma %x, %x, %i1 : f32
      %i3 = math.fma %x, %x, %i2 : f32
      %i4 = math.fma %x, %x, %i3 : f32
      memref.store %d4, %a[%c0] : memref<?xf32>
      gpu.return
    }
  }
}
"""


def test_ilp_warp_cycles_follow_dependences():
    from fsir.codegen.latency import ilp_warp_cycles

    k = kernels(parse_module(CHAINS, "k.mlir"))[0]
    alu, glob = H100.cpi["alu"], H100.cpi["global"]
    # the load, then the longest chain of 4 multiply-adds, then the store (after %d4)
    assert ilp_warp_cycles(k.body.blocks[0].ops, H100) == glob + 4 * alu + glob
    # one CPI per instruction charges the independent chain %i as much as %d
    counts = instruction_counts(k.body.blocks[0].ops)
    assert counts["alu"] == 8
    # with the issue floor: a full SM of such warps is bound by issue slots
    est = estimate(k, (132 * 64,), (256,), H100, ilp=True)
    assert est.warp_cycles == pytest.approx(max(2 * glob + 4 * alu, 10 * est.occupancy.warps_per_sm / 4))


# Measured worst / mean: 4 / 2.8, 10 / 6.7, 10 / 3.3, 4 / 3.0, 4 / 3.5. The micro-tile
# kernels need the pipelining model (ptxas issues the staged tile's global loads, and the
# next k-step's fragments, ahead): without it 4x4 tiles were ~9 registers under ptxas.
# 2x2 tiles are overestimated: ptxas keeps their threads at 32 registers.
@pytest.mark.parametrize("config,mean_bound", [("16x16x16/1x1", MAX_MEAN_ABS_ERROR), ("32x32x16/2x2", 7.0),
                                               ("64x32x16/4x2", MAX_MEAN_ABS_ERROR),
                                               ("64x64x16/4x4", MAX_MEAN_ABS_ERROR),
                                               ("128x64x16/4x4", MAX_MEAN_ABS_ERROR)])
def test_gemm_register_estimates_match_ptxas(config, mean_bound):
    """Every GEMM candidate's kernels in the BERT layer (plain products and attention
    products with reshapes, transposes and bias adds inlined into the tile loads)."""
    path = EXAMPLES / "bert_layer.mlir"
    lowered = lower(parse_module(path.read_text(), str(path)), PipelineOptions(fusion="stitch", gemm=config))
    result = assemble(module_ptx(lowered), "sm_80")
    assert result.ok, result.errors
    errors = [(estimate_registers(k) - result.kernels[k.sym_name.data].registers, k.sym_name.data)
              for k in kernels(lowered) if any(isinstance(o, gpu.BarrierOp) for o in k.walk())]
    # the kernels with barriers: Q/K/V's product(s), attention, the output projection, FFN1, FFN2
    assert len(errors) >= 5
    assert max(abs(e) for e, _ in errors) <= MAX_ABS_ERROR, errors
    assert sum(abs(e) for e, _ in errors) / len(errors) <= mean_bound, errors


def test_many_output_loop_kernel_registers():
    """A loop kernel writing 40 outputs: ptxas loads each output pointer where it is
    stored, so the estimate must not hold all 40 pointers from the entry (it did: 97
    registers against ptxas' 32, which made such packed kernels look unlaunchable to
    the explorer's latency-evaluator)."""
    n, t = 40, "tensor<1024xf32>"
    lines = [f"func.func @f(%x: {t}, %y: {t}) -> ({', '.join([t] * n)}) {{"]
    prev = "%x"
    for i in range(n):
        lines.append(f"  %a{i} = graph.add {prev}, %y : {t}")
        lines.append(f"  %o{i} = graph.mul %a{i}, %a{i} : {t}")
        prev = f"%a{i}"
    lines.append(f"  func.return {', '.join(f'%o{i}' for i in range(n))} : {', '.join([t] * n)}")
    lines.append("}")
    lowered = lower(parse_module("\n".join(lines), "many.mlir"), PipelineOptions(fusion="stitch", vector=1))
    result = assemble(module_ptx(lowered), "sm_80")
    assert result.ok, result.errors
    (k,) = kernels(lowered)
    assert abs(estimate_registers(k) - result.kernels[k.sym_name.data].registers) <= 2 * MAX_ABS_ERROR


def test_lowered_estimate_counts_dynamic_shared_memory():
    """A kernel whose tiles are dynamic shared memory (two tf32 stages of 128x128x32:
    64 KB) is scored lowered with those bytes, as its summary is (the gpu.func declares
    no shared arrays of its own)."""
    from fsir.codegen.latency import estimate_summary
    from fsir.codegen.mappings import mapping_of
    from fsir.dialects.schedule import KernelOp

    text = """
func.func @mm(%a: tensor<256x64xf32>, %b: tensor<64x256xf32>) -> tensor<256x256xf32> {
  %d = graph.dot %a, %b : (tensor<256x64xf32>, tensor<64x256xf32>) -> tensor<256x256xf32>
  func.return %d : tensor<256x256xf32>
}
"""
    spec = gpu_spec("A100")
    options = PipelineOptions(fusion="stitch", gemm="128x128x32_64x32_tf32", precision="tf32", gpu="A100")
    (k,) = [op for op in lower(parse_module(text, "mm.mlir"), options, until="stitch-codegen").walk()
            if isinstance(op, KernelOp)]
    mapping = mapping_of(k)
    grid, block = k.launch()
    lowered = mapping.score_lowered(k, spec)
    summary = estimate_summary(mapping.summarize(k, spec), grid, block, spec, bandwidth=True)
    assert lowered.shared_bytes == summary.shared_bytes == 64 * 1024
