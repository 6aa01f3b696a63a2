"""The PTX printer: gpu + arith + math + scf + cf + memref → one PTX module.

    from fsir.ptx import print_ptx
    text = print_ptx(module, arch="sm_80")        # or fs-opt f.mlir -t 'ptx{arch=sm_90}'

Modules: `module` (the PTX module, one `.entry` per `gpu.func ... kernel`), `kernel`
(registers, control flow, memory, gpu ops; the kernel-argument contract), `arith_ops`,
`math_ops` (accuracy bounds), `types` (MLIR type → register/memory/param type),
`target` (`-t ptx`), `ptxas` (assemble and read `ptxas -v`). Unsupported IR raises
`fsir.errors.UserError` naming the op and, when parsed with locations, where it is.
"""

from fsir.ptx.kernel import KernelParam, kernel_signature
from fsir.ptx.module import kernels, print_ptx

__all__ = ["KernelParam", "kernel_signature", "kernels", "print_ptx"]
