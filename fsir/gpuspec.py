"""GPU parameter tables the cost models read (public datasheet figures; docs/cost-models.md).

    spec = gpu_spec("H100")      # case-insensitive; "a100-80gb" etc. also accepted
    spec.hbm_bandwidth            # bytes per second

One frozen `GpuSpec` per GPU. Numbers are the datasheet's; where a model needs a figure
no datasheet gives (CPI per instruction class, the warps needed to saturate memory), it
is marked as a modelling assumption next to the field. Kernel launch cost is XLA's 1 µs.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from types import MappingProxyType

from fsir.errors import UserError

KB = 1024
MB = 1024 * 1024

# Bytes of static .shared arrays one kernel may declare: ptxas refuses more ("uses too
# much shared data"). Beyond it shared memory is dynamic: the module's `.extern .shared`
# array, sized by the launch (and opted in to above 48 KB by the CUDA driver).
STATIC_SHARED_LIMIT = 48 * KB

# Cycles per instruction by instruction class, for the latency-evaluator (§4.3:
# L_warp = N_instruction x CPI). Dependent-issue latencies from the microbenchmark
# papers the FusionStitching paper cites (Jia et al., "Dissecting the NVIDIA Volta /
# Turing GPU architecture via microbenchmarking"); newer GPUs keep the same orders of
# magnitude, so one table serves all four until a GPU is measured.
DEFAULT_CPI: Mapping[str, float] = MappingProxyType({
    "alu": 4.0,        # fadd/fmul/ffma/float compare/convert
    "int": 4.0,        # iadd/imad/shifts/logic/integer compare and select (addresses)
    "sfu": 18.0,       # one SFU instruction: ex2/lg2/rcp/sqrt approximations, conversions
    "div": 30.0,       # f32 division (Newton iterations)
    "shuffle": 30.0,   # shfl.sync
    "smem": 24.0,      # ld/st.shared
    "barrier": 20.0,   # bar.sync
    "tensor": 8.0,     # mma.sync m16n8k16 (A100: 1024 dense f16 FMA/clk/SM over 4 sub-partitions)
    "global": 400.0,   # ld.global latency (hidden by occupancy; not used for bandwidth)
})


@dataclass(frozen=True)
class GpuSpec:
    name: str
    sms: int
    hbm_bandwidth: float  # bytes/s
    smem_per_sm: int  # bytes (the maximum configurable carve-out)
    smem_per_block: int  # bytes (opt-in maximum per block)
    regs_per_sm: int
    max_threads_per_sm: int
    max_blocks_per_sm: int
    l2_bytes: int
    clock_hz: float  # boost clock
    warp_size: int = 32
    launch_cost: float = 1e-6  # seconds per kernel launch (XLA's model)
    cpi: Mapping[str, float] = field(default_factory=lambda: DEFAULT_CPI)
    # Modelling assumption: resident warps per SM needed to keep HBM busy (Little's law
    # with ~0.5-1 µs latency and 16-32 B per lane in flight); fewer warps get a
    # proportional share of the bandwidth.
    saturating_warps_per_sm: int = 16
    # Warp instructions an SM issues per cycle (its four schedulers, since Volta).
    issue_per_cycle: int = 4
    # Bytes a lane keeps in flight in the kernels `saturating_warps_per_sm` describes
    # (one 16-byte load): a warp with more outstanding (a GEMM's staged tiles, a
    # cp.async pipeline) needs fewer companions to keep HBM busy (Little's law again).
    lane_bytes_in_flight: int = 16
    # L2 read bandwidth in bytes per cycle (at `clock_hz`): what the requests that hit
    # the L2 (a GEMM's tiles re-reading its operands) are served at. 0: not modelled.
    l2_bytes_per_cycle: int = 0
    # Compute rates (docs/cost-models.md gives each figure's source): thread-instructions
    # an SM completes per cycle by instruction class (`LANE_CLASSES`), and the tensor
    # cores' dense multiply-adds per SM per cycle by input precision ("f16" also
    # stands for bf16). A class a GPU lacks (T4's f64, V100's tf32) has rate 0.
    lanes_per_cycle: Mapping[str, int] = field(default_factory=lambda: MappingProxyType({}))
    tensor_fma_per_cycle: Mapping[str, int] = field(default_factory=lambda: MappingProxyType({}))
    # The clock NVIDIA's peak tensor figures assume, where it is below `clock_hz`
    # (H100 SXM: 989 dense f16 TFLOP/s at 1.83 GHz); None: `clock_hz`.
    tensor_clock_hz: float | None = None

    @property
    def max_warps_per_sm(self) -> int:
        return self.max_threads_per_sm // self.warp_size

    def peak_flops(self, cls: str = "fp32") -> float:
        """Peak FLOP/s of a lane class (an FMA counts two) or, for "tensor_<precision>",
        of the tensor cores: the datasheet figure the rates reproduce."""
        if cls.startswith("tensor_"):
            clock = self.tensor_clock_hz or self.clock_hz
            return 2 * self.tensor_fma_per_cycle.get(cls.removeprefix("tensor_"), 0) * self.sms * clock
        return 2 * self.lanes_per_cycle.get(cls, 0) * self.sms * self.clock_hz

    @property
    def l2_bandwidth(self) -> float:
        """L2 read bandwidth in bytes/s (0: not modelled)."""
        return self.l2_bytes_per_cycle * self.clock_hz

    @property
    def saturating_bytes_in_flight(self) -> int:
        """Bytes in flight per SM that keep HBM busy."""
        return self.saturating_warps_per_sm * self.warp_size * self.lane_bytes_in_flight


# Instruction classes of the compute rates, as the simulator counts them
# (fsir/sim/classes.py) and the latency-evaluator maps its own classes onto them:
#   fp32  f32 add/mul/fma/min/max/compare (the FMA pipes)
#   fp16  f16/bf16 (and f16x2) arithmetic
#   fp64  f64 arithmetic
#   sfu   the multi-function unit: ex2/lg2/rcp/rsqrt/sqrt/sin/cos/tanh approximations,
#         and type conversions, which the CUDA guide rates alike (16 per SM per cycle)
#   int   integer and logic arithmetic, moves, selects, predicates, branches
#   lsu   load/store unit: global, shared and local accesses, shuffles, ldmatrix
LANE_CLASSES = ("fp32", "fp16", "fp64", "sfu", "int", "lsu")

# What ptxas makes of `cvt.rna.tf32.f32` for sm_80 and sm_90 (read back with
# `cuobjdump -sass`): FSETP testing |x| < inf (the FMA pipe) and a predicated IADD of
# half a tf32 ulp (the integer pipe). Where the result is stored a LOP3 also clears the
# 13 low bits; an mma operand keeps them, the tensor cores ignoring them. The
# conversion unit (SFU rate) is not involved. Both models count the mma-operand form.
TF32_ROUNDING: Mapping[str, int] = MappingProxyType({"fp32": 1, "int": 1})


def _rates(fp32: int, fp16: int, fp64: int, sfu: int = 16, int_: int = 64, lsu: int = 32) -> Mapping[str, int]:
    return MappingProxyType({"fp32": fp32, "fp16": fp16, "fp64": fp64, "sfu": sfu, "int": int_, "lsu": lsu})


GPUS: Mapping[str, GpuSpec] = MappingProxyType({
    "V100": GpuSpec("V100", sms=80, hbm_bandwidth=900e9, smem_per_sm=96 * KB, smem_per_block=96 * KB,
                    regs_per_sm=65536, max_threads_per_sm=2048, max_blocks_per_sm=32, l2_bytes=6 * MB,
                    clock_hz=1.53e9, lanes_per_cycle=_rates(fp32=64, fp16=128, fp64=32),
                    tensor_fma_per_cycle=MappingProxyType({"f16": 512}), l2_bytes_per_cycle=2048),
    "T4": GpuSpec("T4", sms=40, hbm_bandwidth=320e9, smem_per_sm=64 * KB, smem_per_block=64 * KB,
                  regs_per_sm=65536, max_threads_per_sm=1024, max_blocks_per_sm=16, l2_bytes=4 * MB,
                  clock_hz=1.59e9, lanes_per_cycle=_rates(fp32=64, fp16=128, fp64=2),
                  tensor_fma_per_cycle=MappingProxyType({"f16": 512}), l2_bytes_per_cycle=2048),
    "A100": GpuSpec("A100", sms=108, hbm_bandwidth=2039e9, smem_per_sm=164 * KB, smem_per_block=163 * KB,
                    regs_per_sm=65536, max_threads_per_sm=2048, max_blocks_per_sm=32, l2_bytes=40 * MB,
                    clock_hz=1.41e9, lanes_per_cycle=_rates(fp32=64, fp16=256, fp64=32),
                    tensor_fma_per_cycle=MappingProxyType({"f16": 1024, "tf32": 512}), l2_bytes_per_cycle=5120),
    "H100": GpuSpec("H100", sms=132, hbm_bandwidth=3350e9, smem_per_sm=228 * KB, smem_per_block=227 * KB,
                    regs_per_sm=65536, max_threads_per_sm=2048, max_blocks_per_sm=32, l2_bytes=50 * MB,
                    clock_hz=1.98e9, lanes_per_cycle=_rates(fp32=128, fp16=256, fp64=64),
                    tensor_fma_per_cycle=MappingProxyType({"f16": 2048, "tf32": 1024}), tensor_clock_hz=1.83e9,
                    l2_bytes_per_cycle=5120),
})
# H200 (SXM): an H100 SXM's GH100 die (132 SMs, 1.98 GHz boost, 50 MB L2, the same SM and
# tensor-core rates) with more and faster memory: 141 GB of HBM3e at 4.8 TB/s (NVIDIA's
# H200 datasheet and product page, "NVIDIA H200 Tensor Core GPU": 141 GB, 4.8 TB/s; its
# FP32/FP64/tensor peaks equal H100 SXM's). Only the bandwidth differs from the H100 row.
GPUS = MappingProxyType({**GPUS, "H200": replace(GPUS["H100"], name="H200", hbm_bandwidth=4800e9)})

_ALIASES = {"A100-80GB": "A100", "A100_80GB": "A100", "H100-SXM": "H100", "H100_SXM": "H100",
            "H200-SXM": "H200", "H200_SXM": "H200"}


def gpu_spec(name: str) -> GpuSpec:
    """The spec of `name` (case-insensitive); a UserError lists the known GPUs otherwise."""
    key = name.strip().upper()
    key = _ALIASES.get(key, key)
    if key not in GPUS:
        raise UserError(f"unknown GPU '{name}' (known: {', '.join(GPUS)})")
    return GPUS[key]


# Device names (as the CUDA driver reports them: "NVIDIA H200", "NVIDIA A100-SXM4-80GB",
# "Tesla V100-SXM2-16GB") to tables, the more specific name first (GH200 contains H200).
_DEVICE_NAMES = (("H200", "H200"), ("H100", "H100"), ("A100", "A100"), ("V100", "V100"), ("T4", "T4"))


def spec_for_device(device_name: str) -> GpuSpec | None:
    """The table fsir's models use for a CUDA device of this name (None: no table fits)."""
    upper = device_name.upper()
    for part, key in _DEVICE_NAMES:
        if part in upper:
            return GPUS[key]
    return None
