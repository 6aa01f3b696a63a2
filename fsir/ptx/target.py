"""`fs-opt -t 'ptx{arch=sm_90}'`: the PTX printer as an xDSL Target."""

from __future__ import annotations

from dataclasses import dataclass
from typing import IO, ClassVar

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.utils.target import Target

from fsir.ptx.module import print_ptx


@dataclass(frozen=True)
class PTXTarget(Target):
    """Prints one PTX module with an `.entry` per gpu.func kernel."""

    name: ClassVar[str] = "ptx"

    arch: str = "sm_80"

    def emit(self, ctx: Context, module: ModuleOp, output: IO[str]) -> None:
        output.write(print_ptx(module, arch=self.arch))
