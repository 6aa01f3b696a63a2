"""The configurations a GEMM kernel can run in, and their choice by the latency-evaluator.

A configuration is a block tile of `bm` x `bn` outputs, a k-step of `bk` (the operand
tiles staged in shared memory per step are `bm` x `bk` and `bk` x `bn`) and a register
micro-tile of `tm` x `tn` outputs per thread, so a block has (bm / tm) x (bn / tn)
threads. Larger tiles read each operand element from global memory fewer times (every
element of A is loaded N / bn times, of B M / bm times) and larger micro-tiles do more
multiply-adds per shared-memory load (tm x tn per tm + tn loads), at the price of
registers, shared memory and blocks to fill the GPU with. `gemm_candidates` lists the
ones worth scoring for a problem; `fsir.codegen.row_configs.choose` lowers each and
keeps the fastest by `fsir.codegen.latency.estimate`. Written `64x64x16/4x4` (the
kernel's `cost` says `config = "gemm/64x64x16/4x4"`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from fsir.errors import UserError
from fsir.gpuspec import GpuSpec

MAX_THREADS = 1024
MAX_TILE_K = 64  # the k-step is unrolled in the kernel
MAX_MICRO_TILE = 64  # accumulators per thread (tm x tn)


@dataclass(frozen=True)
class GemmConfig:
    bm: int
    bn: int
    bk: int
    tm: int = 1
    tn: int = 1

    @property
    def threads(self) -> int:
        return (self.bm // self.tm) * (self.bn // self.tn)

    def text(self) -> str:
        return f"{self.bm}x{self.bn}x{self.bk}/{self.tm}x{self.tn}"

    def describe(self) -> str:
        return f"gemm/{self.text()}"

    def params(self) -> dict[str, int]:
        return {"tile_m": self.bm, "tile_n": self.bn, "tile_k": self.bk, "thread_m": self.tm, "thread_n": self.tn}

    def problem(self) -> str | None:
        """Why this configuration cannot be generated (None: it can)."""
        if min(self.bm, self.bn, self.bk, self.tm, self.tn) < 1:
            return "tile sizes must be positive"
        if self.bm % self.tm or self.bn % self.tn:
            return f"the micro-tile {self.tm}x{self.tn} must divide the block tile {self.bm}x{self.bn}"
        if self.threads > MAX_THREADS:
            return f"{self.threads} threads per block (at most {MAX_THREADS})"
        if self.bk > MAX_TILE_K:
            return f"k-step {self.bk} (at most {MAX_TILE_K}: it is unrolled)"
        if self.tm * self.tn > MAX_MICRO_TILE:
            return f"{self.tm * self.tn} accumulators per thread (at most {MAX_MICRO_TILE})"
        return None

    @staticmethod
    def parse(text: str) -> "GemmConfig":
        """`BMxBNxBK/TMxTN` or `BMxBNxBK_TMxTN` (a pass pipeline needs `/` quoted), or
        `BMxBNxBK` (a 1x1 micro-tile); optionally `gemm/`-prefixed."""
        m = re.fullmatch(r"(?:gemm/)?(\d+)x(\d+)x(\d+)(?:[/_](\d+)x(\d+))?", text.strip())
        if m is None:
            raise UserError(f"stitch-codegen: gemm={text} is not a GEMM configuration (expected auto or "
                            "BMxBNxBK/TMxTN, e.g. \"64x64x16/4x4\" quoted in a pipeline, or 64x64x16_4x4)")
        bm, bn, bk, tm, tn = (int(g) if g is not None else 1 for g in m.groups())
        config = GemmConfig(bm, bn, bk, tm, tn)
        why = config.problem()
        if why is not None:
            raise UserError(f"stitch-codegen: gemm={text}: {why}")
        return config


# Scored for every static GEMM (those larger than the problem are dropped, see below):
# micro-tiles from 1x1 to 4x4 (transposed shapes such as 32x64 score like their mirror
# image, so only one is listed); k-steps of 16 keep a block's two tiles at 2-12 KB of
# shared memory. Micro-tiles of 8 rows are left out: ptxas -v gives them 25-35 more
# registers than the evaluator estimates (it keeps more of the unrolled k-step's shared
# loads in flight), so their occupancy would be misjudged; they can still be forced.
# Each candidate is lowered to be scored, so the list is kept short.
CANDIDATES = (
    GemmConfig(16, 16, 16, 1, 1),
    GemmConfig(32, 32, 16, 2, 2),
    GemmConfig(64, 32, 16, 4, 2),
    GemmConfig(64, 64, 16, 4, 4),
    GemmConfig(128, 64, 16, 4, 4),
)
# For `?` sizes (the evaluator cannot count waves): a middle-sized tile.
DYNAMIC_DEFAULT = GemmConfig(32, 32, 16, 2, 2)


def _covering(n: int) -> int:
    """The smallest power of two at least `n` (and at least 16)."""
    return max(16, 1 << max(0, n - 1).bit_length())


def gemm_candidates(m: int, n: int, spec: GpuSpec) -> list[GemmConfig]:
    """The candidates whose block tile is not larger than the power of two covering the
    problem (a 128-row tile for 20 rows only idles threads) and whose shared memory a
    block may have on `spec`."""
    out = [c for c in CANDIDATES if c.bm <= _covering(m) and c.bn <= _covering(n)
           and shared_bytes(c, 4) <= spec.smem_per_block]
    return out


def shared_bytes(config: GemmConfig, acc_bytes: int) -> int:
    """The two operand tiles a block stages per k-step (in the accumulator type)."""
    return (config.bm + config.bn) * config.bk * acc_bytes
