"""The PTX printer: gpu + arith + math + scf + cf + memref → PTX text.

`print_ptx(module, arch="sm_80") -> str` is the API; `PTXTarget` is `fs-opt -t ptx`;
`fsir.ptx.ptxas.assemble` checks the result with ptxas.
"""

from fsir.ptx.module import print_ptx

__all__ = ["print_ptx"]
