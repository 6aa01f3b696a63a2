"""A GEMM kernel's configuration: block tile, micro- or warp tile, math, k-split and,
on the tensor cores, the pipeline's depth.

The text form (`BMxBNxBK/TMxTN[/f16|bf16|tf32][/sS][/pP]`) is what `stitch-codegen{gemm=...}`
and `fsir.compile(gemm=...)` accept; it is parsed once, where the options are read
(`fsir/codegen/options.py`), and every stage reads the parsed value.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from xdsl.utils.exceptions import VerifyException

from fsir.dialects.schedule import WARP, GemmMath, GemmParamsAttr
from fsir.errors import UserError
from fsir.lowering.mma import MAX_STAGES, STAGES

MAX_TILE_K = 64  # the k-step is unrolled in the kernel
MAX_MICRO_TILE = 64  # accumulators per thread (tm x tn)


@dataclass(frozen=True)
class GemmConfig:
    bm: int
    bn: int
    bk: int
    tm: int = 1
    tn: int = 1
    # on the tensor cores (`gemm_tc`): tm x tn is then a warp's tile
    math: GemmMath = GemmMath.FMA
    # blocks per output tile, each reducing a slice of the k-steps (`fsir/lowering/split_k.py`)
    split: int = 1
    # on the tensor cores: the k-steps the shared tiles hold, STAGES to MAX_STAGES
    # (`fsir/lowering/mma.py` reads the depth from the tiles' size); 0: as many as fit
    # the static shared arrays (`pipeline_stages`)
    stages: int = 0

    @property
    def threads(self) -> int:
        warps = (self.bm // self.tm) * (self.bn // self.tn)
        return warps if self.math == GemmMath.FMA else warps * WARP

    def text(self) -> str:
        suffix = "" if self.math == GemmMath.FMA else f"/{self.math.value}"
        if self.split != 1:
            suffix += f"/s{self.split}"
        if self.stages:
            suffix += f"/p{self.stages}"
        return f"{self.bm}x{self.bn}x{self.bk}/{self.tm}x{self.tn}{suffix}"

    def describe(self) -> str:
        return f"gemm/{self.text()}"

    def params(self) -> GemmParamsAttr:
        """The kernel's parameters (raises VerifyException where they break the
        dialect's rules)."""
        return GemmParamsAttr(self.bm, self.bn, self.bk, self.tm, self.tn, self.math, self.split)

    def problem(self) -> str | None:
        """Why this configuration cannot be generated (None: it can): the parameters'
        rules (`GemmParamsAttr`'s verifier), then the code generator's own limits."""
        try:
            self.params()
        except VerifyException as err:
            return str(err)
        if self.stages and (self.math == GemmMath.FMA or not STAGES <= self.stages <= MAX_STAGES):
            return f"{self.stages} pipeline stages (the tensor cores take {STAGES} to {MAX_STAGES}, the FMA pipes none)"
        if self.math != GemmMath.FMA:
            return None
        if self.bk > MAX_TILE_K:
            return f"k-step {self.bk} (at most {MAX_TILE_K}: it is unrolled)"
        if self.tm * self.tn > MAX_MICRO_TILE:
            return f"{self.tm * self.tn} accumulators per thread (at most {MAX_MICRO_TILE})"
        return None

    @staticmethod
    def parse(text: str) -> GemmConfig:
        """`BMxBNxBK/TMxTN` or `BMxBNxBK_TMxTN` (a pass pipeline needs `/` quoted), or
        `BMxBNxBK` (a 1x1 micro-tile); optionally `gemm/`-prefixed; a `/f16`, `/bf16`
        or `/tf32` suffix (or `_f16`...) puts it on the tensor cores with TMxTN warp tiles;
        a `/sS` (or `_sS`) splits the k-steps over S blocks per tile; a last `/pP` (or
        `_pP`) gives a tensor-core kernel P pipeline stages."""
        m = re.fullmatch(r"(?:gemm/)?(\d+)x(\d+)x(\d+)(?:[/_](\d+)x(\d+))?(?:[/_](fma|f16|bf16|tf32))?"
                         r"(?:[/_]s(\d+))?(?:[/_]p(\d+))?", text.strip())
        if m is None:
            raise UserError(f"stitch-codegen: gemm={text} is not a GEMM configuration (expected auto or "
                            "BMxBNxBK/TMxTN, e.g. \"64x64x16/4x4\" quoted in a pipeline, or 64x64x16_4x4)")
        bm, bn, bk, tm, tn = (int(g) if g is not None else 1 for g in m.groups()[:5])
        config = GemmConfig(bm, bn, bk, tm, tn, GemmMath(m.group(6) or "fma"), int(m.group(7) or 1),
                            int(m.group(8) or 0))
        why = config.problem()
        if why is not None:
            raise UserError(f"stitch-codegen: gemm={text}: {why}")
        return config
