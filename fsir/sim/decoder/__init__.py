"""Decode PTX instructions into closures the simulator's engine calls once per lane group.

Every decoded instruction is a function `fn(ch, idx)`: `ch` is the executing chunk (registers are
numpy arrays over its lanes, see chunk.Chunk) and `idx` the sorted lane indices of the group
executing it, or None when every lane of the chunk executes it (then no gather/scatter happens).
All operand parsing, type dispatch and symbol resolution happens here, once per instruction, so
the Python work per executed instruction does not depend on the number of lanes.

Numeric semantics: f32 is computed in float32 (add/sub/mul/div/sqrt are IEEE correctly rounded by
numpy); `fma`/`mad` on f32 are computed in float64 and rounded once (exact for the product, so
equal to a true fma except in rare double-rounding cases); directed rounding modifiers (.rz .rm .rp)
on f32 add/sub/mul/fma/div/cvt are honoured by correcting the float64 result. The `.approx`
transcendental ops (ex2, lg2, sin, cos, tanh, rsqrt, rcp.approx, div.approx) use numpy's exact
float32 functions: they are more accurate than the hardware, not bit-identical to it.

The modules, bottom up:
  numeric.py     PTX types as dtypes, Fault and DecodeError, value conversions
  operands.py    operand readers and register writers
  arith.py       integer and float arithmetic, float unary ops
  bits.py        logic, shifts, bit fields, lop3, prmt
  compare.py     setp, set, selp, slct
  loadstore.py   ld, st, atom, red
  tensorcore.py  warp-collective mma.sync, ldmatrix, stmatrix, conversions to tf32
  convert.py     mov, cvt, cvta
  asynccopy.py   cp.async and its commit/wait groups
  warp.py        shfl, vote, activemask, redux, no-effect instructions, trap
  table.py       the one table from opcode to handler, and the Decoder that consults it
"""

from fsir.sim.decoder.numeric import FLOAT, NP, SIGNED, SINT, TYPES, UINT, DecodeError, Fault, from_bf16, kind, to_bf16
from fsir.sim.decoder.table import OPS, Decoder

__all__ = [
    "FLOAT", "NP", "OPS", "SIGNED", "SINT", "TYPES", "UINT", "DecodeError", "Decoder", "Fault", "from_bf16", "kind",
    "to_bf16",
]
