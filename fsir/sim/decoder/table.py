"""The one dispatch table, from an opcode's first component to the handler that decodes it, and
the Decoder that consults it.

A handler is `h(D, ins, parts, ops)`: the Decoder (its operand readers and writers), the
instruction, the opcode's remaining dot-separated components and the operands; it returns the
closure `fn(ch, idx)` the engine calls. Control flow (bra, ret, exit, bar, barrier) is decoded by
the engine itself.
"""

from __future__ import annotations

import numpy as np

from fsir.sim.decoder.arith import (
    op_abs,
    op_add,
    op_copysign,
    op_div,
    op_fma,
    op_mad,
    op_mad24,
    op_minmax,
    op_mul,
    op_mul24,
    op_neg,
    op_rcp,
    op_rem,
    op_rsqrt,
    op_simple_float,
    op_sqrt,
    op_sub,
    op_testp,
)
from fsir.sim.decoder.asynccopy import op_cp
from fsir.sim.decoder.bits import (
    op_bfe,
    op_bfi,
    op_bfind,
    op_bitwise,
    op_brev,
    op_clz,
    op_cnot,
    op_createpolicy,
    op_lop3,
    op_not,
    op_popc,
    op_prmt,
    op_sad,
    op_shf,
    op_shl,
    op_shr,
)
from fsir.sim.decoder.compare import op_selp, op_set, op_setp, op_slct
from fsir.sim.decoder.convert import op_cvt, op_cvta, op_mov
from fsir.sim.decoder.loadstore import op_atom, op_ld, op_red, op_st
from fsir.sim.decoder.numeric import DecodeError
from fsir.sim.decoder.operands import Operands
from fsir.sim.decoder.tensorcore import op_ldmatrix, op_mma, op_stmatrix
from fsir.sim.decoder.warp import op_activemask, op_nop, op_redux, op_shfl, op_trap, op_vote
from fsir.sim.parser import Instr

OPS = {
    # arithmetic (arith.py)
    "add": op_add, "sub": op_sub, "mul": op_mul, "mad": op_mad, "fma": op_fma, "div": op_div,
    "rem": op_rem, "abs": op_abs, "neg": op_neg, "mul24": op_mul24, "mad24": op_mad24,
    "min": lambda D, i, p, o: op_minmax(D, i, p, o, False),
    "max": lambda D, i, p, o: op_minmax(D, i, p, o, True),
    "ex2": lambda D, i, p, o: op_simple_float(D, i, p, o, np.exp2),
    "lg2": lambda D, i, p, o: op_simple_float(D, i, p, o, np.log2),
    "sin": lambda D, i, p, o: op_simple_float(D, i, p, o, np.sin),
    "cos": lambda D, i, p, o: op_simple_float(D, i, p, o, np.cos),
    "tanh": lambda D, i, p, o: op_simple_float(D, i, p, o, np.tanh),
    "rcp": op_rcp, "sqrt": op_sqrt, "rsqrt": op_rsqrt, "copysign": op_copysign, "testp": op_testp,
    # bit manipulation (bits.py)
    "and": lambda D, i, p, o: op_bitwise(D, i, p, o, np.bitwise_and),
    "or": lambda D, i, p, o: op_bitwise(D, i, p, o, np.bitwise_or),
    "xor": lambda D, i, p, o: op_bitwise(D, i, p, o, np.bitwise_xor),
    "not": op_not, "cnot": op_cnot, "shl": op_shl, "shr": op_shr, "popc": op_popc, "clz": op_clz,
    "brev": op_brev, "bfe": op_bfe, "bfi": op_bfi, "prmt": op_prmt, "shf": op_shf, "bfind": op_bfind,
    "lop3": op_lop3, "createpolicy": op_createpolicy, "sad": op_sad,
    # comparison and selection (compare.py)
    "setp": op_setp, "set": op_set, "selp": op_selp, "slct": op_slct,
    # moves and conversions (convert.py; .tf32 destinations in tensorcore.py)
    "mov": op_mov, "cvt": op_cvt, "cvta": op_cvta,
    # memory (loadstore.py)
    "ld": op_ld, "ldu": op_ld, "st": op_st, "atom": op_atom, "red": op_red,
    # warp level and no-effect instructions (warp.py)
    "shfl": op_shfl, "vote": op_vote, "activemask": op_activemask, "redux": op_redux,
    "membar": op_nop, "fence": op_nop, "prefetch": op_nop, "prefetchu": op_nop, "nanosleep": op_nop,
    "pmevent": op_nop, "trap": op_trap,
    # tensor cores (tensorcore.py) and asynchronous copies (asynccopy.py)
    "mma": op_mma, "ldmatrix": op_ldmatrix, "stmatrix": op_stmatrix, "cp": op_cp,
}


class Decoder(Operands):
    """Decodes the instructions of one kernel. `K` is the kernel layout (registers, symbols)."""

    def decode(self, ins: Instr):
        parts = ins.opcode.split(".")
        h = OPS.get(parts[0])
        if h is None:
            raise DecodeError(f"unsupported instruction '{ins.opcode}'")
        return h(self, ins, parts[1:], ins.operands)
