"""The schedule dialect: how each fusion runs (FusionStitching §4).

One `schedule.kernel` per fusion says how the kernel is launched and how its work is
split: its mapping's parameters (`loop`: a thread per output element or vector;
`row`: the fusion's rows, i.e. the coordinates its reductions keep, spread over
threads, warps or blocks; `gemm`: shared-memory tiles of a matrix product), one
attribute kind per mapping whose kind is the mapping (`#schedule.loop<...>`,
`#schedule.row<...>`, `#schedule.gemm<...>`, written without the `#schedule.` prefix
in the kernel), the launch dimensions (`?` where only known at run time), the
shared-memory buffers, and the cost estimate that chose it.

Inside, `schedule.group`s appear in execution order. A group is led by its sub-root (a
reduction, or an expensive elementwise op read by several groups) or by the fusion's
root; it holds the graph ops it computes (light producers are recomputed in each group
that needs them: index propagation), its composition scheme (`Composition`: `thread`,
`warp`, `block`) and where its result lives for later groups (`Storage`): `reg` (each
thread's registers), `lanes` (every lane of the row's warp, after a butterfly
shuffle), `shared @buf[offset]` (a shared-memory slot per row of the block, from
`offset`, read after a barrier; for an elementwise sub-root, with `row_dims`, a whole
row per row of the block) or `global` (a kernel output only). Root groups of row
kernels say which output dims are the rows (`row_dims`); `packed` groups are
independent parts that every thread of the grid takes elements of in turn.

Mapping parameters (`LoopParamsAttr`, `RowParamsAttr`, `GemmParamsAttr`,
`ConvParamsAttr`): `loop<vector_width>`; `row<threads_per_row, rows_per_block,
elements_per_thread, row_steps, vector_width, interleaved>`; `gemm<tile = MxNxK,
thread = MxN>` (the block tile and each thread's micro-tile; `conv<...>` the same for
an implicit GEMM). Their verifiers hold every rule on the parameters alone; the kernel's
verifier checks its block size against them. `cost` holds what is known statically
(warps, global_bytes, smem_bytes); the latency-evaluator adds its estimate (cycles,
occupancy, ...).

```mlir
%y = schedule.kernel @ln row<threads_per_row = 256, rows_per_block = 1> grid [4096, 1, 1] block [256, 1, 1] cost {global_bytes = 25165824 : i64, warps = 32768 : i64} (%x) : (tensor<4096x768xf32>) -> tensor<4096x768xf32> {
^bb0(%x0: tensor<4096x768xf32>):
  schedule.shared @partials : memref<8xf32, 3>
  schedule.shared @results : memref<1xf32, 3>
  %s = schedule.group block -> shared @results[0] : tensor<4096xf32> {
    %r = graph.reduce sum %x0 dims [1] : (tensor<4096x768xf32>) -> tensor<4096xf32>
    schedule.yield %r : tensor<4096xf32>
  }
  %y = schedule.group block -> global : tensor<4096x768xf32> {
    %b = graph.broadcast %s dims [0] : (tensor<4096xf32>) -> tensor<4096x768xf32>
    %d = graph.sub %x0, %b : tensor<4096x768xf32>
    schedule.yield %d : tensor<4096x768xf32>
  }
  schedule.yield %y : tensor<4096x768xf32>
}
```
"""  # noqa: E501 (an IR example)

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from collections.abc import Mapping as MappingOf
from collections.abc import Sequence
from typing import ClassVar, cast

from xdsl.dialects.builtin import (
    AffineMapAttr,
    DenseArrayBase,
    DictionaryAttr,
    FixedBitwidthType,
    IntAttr,
    IntegerAttr,
    IntegerType,
    MemRefType,
    NoneAttr,
    StringAttr,
    SymbolRefAttr,
    TensorType,
    UnitAttr,
    i64,
)
from xdsl.dialects.utils import EnumAttribute
from xdsl.ir import (
    Attribute,
    Block,
    Dialect,
    Operation,
    OpResult,
    ParametrizedAttribute,
    Region,
    SpacedOpaqueSyntaxAttribute,
    SSAValue,
)
from xdsl.ir.affine import AffineMap
from xdsl.irdl import (
    IRDLOperation,
    irdl_attr_definition,
    irdl_op_definition,
    opt_prop_def,
    prop_def,
    region_def,
    traits_def,
    var_operand_def,
    var_result_def,
)
from xdsl.parser import AttrParser, Parser
from xdsl.printer import Printer
from xdsl.traits import RecursiveMemoryEffect, SymbolOpInterface
from xdsl.utils.exceptions import ParseError, VerifyException
from xdsl.utils.str_enum import StrEnum

from fsir.dialects.common import TensorYieldOp
from fsir.dialects.gpu import VECTOR_WIDTHS
from fsir.dialects.stitch import (
    check_region_signature,
    parse_region_op,
    print_region_op,
)

DYNAMIC = -1  # a launch dimension computed at run time from the sizes
WARP = 32  # lanes of a warp: threads_per_row above it compose a row across warps
MAX_BLOCK_THREADS = 1024


# ----------------------------------------------------------------------------- enums


class Mapping(StrEnum):
    """How a kernel's work is split over threads (FusionStitching §4)."""

    LOOP = "loop"
    ROW = "row"
    GEMM = "gemm"
    CONV = "conv"
    COLUMNS = "columns"
    ATTENTION = "attention"
    SEGMENTS = "segments"


class Composition(StrEnum):
    """Who computes one row of a group: a thread, a warp (shuffles) or a block (shared
    memory and barriers)."""

    THREAD = "thread"
    WARP = "warp"
    BLOCK = "block"


class Storage(StrEnum):
    """Where a group's results live for later groups."""

    REG = "reg"
    LANES = "lanes"
    SHARED = "shared"
    GLOBAL = "global"


@irdl_attr_definition
class MappingAttr(EnumAttribute[Mapping], SpacedOpaqueSyntaxAttribute):
    """`#schedule<mapping row>`; a kernel's mapping is the kind of its parameters."""

    name = "schedule.mapping"


@irdl_attr_definition
class CompositionAttr(EnumAttribute[Composition], SpacedOpaqueSyntaxAttribute):
    """`#schedule<composition warp>`; printed as the bare word in `schedule.group`."""

    name = "schedule.composition"


@irdl_attr_definition
class StorageAttr(EnumAttribute[Storage], SpacedOpaqueSyntaxAttribute):
    """`#schedule<storage shared>`; printed as the bare word in `schedule.group`."""

    name = "schedule.storage"


def _parse_word(parser: AttrParser, enum: type[StrEnum], what: str) -> str:
    """A bare enum word (`row`, `warp`, `shared`) with an error naming the choices."""
    start = parser.pos
    word = parser.parse_identifier(f" ({what})")
    choices = [member.value for member in enum.__members__.values()]
    if word not in choices:
        parser.raise_error(f"unknown {what} '{word}' (expected {', '.join(choices)})", start, parser.pos)
    return word


# ----------------------------------------------------------------------------- mapping parameters
#
# Each mapping's parameters are one attribute kind, written `<key = value, ...>` with
# keys in any order and fields at their default left out (a bare flag for booleans,
# `AxB` for tile shapes). Its verifier holds every rule on the parameters alone; the
# kernel op checks them against its launch dims.

_Value = int | tuple[int, ...] | bool | str
WORD = -1  # the kind of a parameter whose value is a bare word (an enum's)


def _parse_entries(parser: AttrParser, mapping: Mapping, kinds: MappingOf[str, int]) -> dict[str, _Value]:
    """`<key = value, ...>` (optional when empty). `kinds[key]` is 0 for a flag, 1 for
    an integer, n > 1 for an `AxB...` shape of n sizes, WORD for a bare word."""
    entries: dict[str, _Value] = {}

    def entry() -> None:
        start = parser.pos
        key = parser.parse_identifier(f" (a {mapping} parameter)")
        if key not in kinds:
            parser.raise_error(f"unknown {mapping} parameter '{key}' (expected {', '.join(kinds)})",
                               start, parser.pos)
        if key in entries:
            parser.raise_error(f"{mapping} parameter '{key}' is given twice", start, parser.pos)
        n = kinds[key]
        if n == 0:
            entries[key] = True
            return
        parser.parse_punctuation("=")
        if n == WORD:
            entries[key] = parser.parse_identifier(f" (the value of {mapping} parameter '{key}')")
            return
        if n == 1:
            entries[key] = parser.parse_integer(allow_boolean=False)
            return
        start = parser.pos
        sizes: list[int] = []
        try:
            sizes.append(parser.parse_shape_dimension(allow_dynamic=False))
            for _ in range(n - 1):
                parser.parse_shape_delimiter()
                sizes.append(parser.parse_shape_dimension(allow_dynamic=False))
        except ParseError:
            parser.raise_error(f"{mapping} parameter '{key}' is {n} sizes ({'x'.join('ABC'[:n])})", start, parser.pos)
        entries[key] = tuple(sizes)

    if parser.parse_optional_punctuation("<") is not None and parser.parse_optional_punctuation(">") is None:
        parser.parse_comma_separated_list(parser.Delimiter.NONE, entry)
        parser.parse_punctuation(">")
    return entries


def _print_entries(printer: Printer, entries: Sequence[tuple[str, _Value]]) -> None:
    def text(key: str, value: _Value) -> str:
        if value is True:
            return key
        if isinstance(value, tuple):
            return f"{key} = {'x'.join(map(str, value))}"
        return f"{key} = {value}"

    if entries:
        printer.print_string("<" + ", ".join(text(k, v) for k, v in entries) + ">")


class MappingParamsAttr(ParametrizedAttribute, ABC):
    """The parameters of one mapping; the attribute's kind is the kernel's mapping."""

    MAPPING: ClassVar[Mapping]
    # textual key -> 0 (a flag), 1 (an integer) or n (an AxB... shape of n sizes), in printed order
    KEYS: ClassVar[dict[str, int]]

    @classmethod
    @abstractmethod
    def from_entries(cls, entries: MappingOf[str, _Value]) -> MappingParamsAttr:
        """Build from `key = value` entries; missing keys take their defaults (a
        missing required key raises KeyError naming it)."""

    @abstractmethod
    def entries(self) -> list[tuple[str, _Value]]:
        """The `key = value` entries that differ from their defaults, in printed order."""

    @property
    def threads(self) -> int | None:
        """The threads of a block of this mapping (None: any number)."""
        return None

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> Sequence[Attribute]:
        start = parser.pos
        entries = _parse_entries(parser, cls.MAPPING, cls.KEYS)
        try:
            return cls.from_entries(entries).parameters
        except KeyError as err:
            message = f"the {cls.MAPPING} mapping needs the parameter {err}"
        except VerifyException as err:
            message = str(err)
        parser.raise_error(message, start, parser.pos)

    def print_parameters(self, printer: Printer) -> None:
        _print_entries(printer, self.entries())

    @property
    def vector_width(self) -> int:
        """Elements a thread accesses per memory instruction (1: no vectors)."""
        return 1


def _check_vector_width(vector_width: int) -> None:
    if vector_width != 1 and vector_width not in VECTOR_WIDTHS:
        widths = ", ".join(map(str, (1, *VECTOR_WIDTHS[:-1])))
        raise VerifyException(f"vector_width must be {widths} or {VECTOR_WIDTHS[-1]}, got {vector_width}")


def _int(value: _Value) -> IntAttr:
    if isinstance(value, bool) or not isinstance(value, int):
        raise VerifyException(f"expected an integer, got {value}")
    return IntAttr(value)


@irdl_attr_definition
class LoopParamsAttr(MappingParamsAttr):
    """`loop`: a thread per output element, or per vector of `vector_width` consecutive
    elements of a row (the innermost extents of the outputs are multiples of it).

        #schedule.loop
        #schedule.loop<vector_width = 4>
    """

    name = "schedule.loop"
    MAPPING: ClassVar[Mapping] = Mapping.LOOP
    KEYS: ClassVar[dict[str, int]] = {"vector_width": 1}

    _vector_width: IntAttr

    def __init__(self, vector_width: int = 1):
        super().__init__(IntAttr(vector_width))

    @property
    def vector_width(self) -> int:
        return self._vector_width.data

    @property
    def elements_per_thread(self) -> int:
        """Each thread computes one vector."""
        return self.vector_width

    def verify(self) -> None:
        _check_vector_width(self.vector_width)

    @classmethod
    def from_entries(cls, entries: MappingOf[str, _Value]) -> LoopParamsAttr:
        return cls.new([_int(entries.get("vector_width", 1))])

    def entries(self) -> list[tuple[str, _Value]]:
        return [("vector_width", self.vector_width)] if self.vector_width != 1 else []


@irdl_attr_definition
class RowParamsAttr(MappingParamsAttr):
    """`row`: a block takes `rows_per_block` rows with `threads_per_row` threads each
    (consecutive threads share a row, or take consecutive rows when `interleaved`);
    with `elements_per_thread` each thread keeps its columns of the row in that many
    registers (values read before a reduction and used after it are loaded once) and
    may load them `vector_width` at a time; `row_steps` row-blocks per block, in a
    loop that reuses the row-invariant operands it loaded.

        #schedule.row<threads_per_row = 256, rows_per_block = 1>
        #schedule.row<threads_per_row = 32, rows_per_block = 8, elements_per_thread = 8, row_steps = 2, vector_width = 4>
        #schedule.row<threads_per_row = 8, rows_per_block = 32, interleaved>
    """  # noqa: E501 (an IR example)

    name = "schedule.row"
    MAPPING: ClassVar[Mapping] = Mapping.ROW
    KEYS: ClassVar[dict[str, int]] = {"threads_per_row": 1, "rows_per_block": 1, "elements_per_thread": 1,
                                      "row_steps": 1, "vector_width": 1, "interleaved": 0}

    _threads_per_row: IntAttr
    _rows_per_block: IntAttr
    _elements_per_thread: IntAttr | NoneAttr
    _row_steps: IntAttr
    _vector_width: IntAttr
    _interleaved: UnitAttr | NoneAttr

    def __init__(self, threads_per_row: int, rows_per_block: int, elements_per_thread: int | None = None,
                 row_steps: int = 1, vector_width: int = 1, interleaved: bool = False):
        super().__init__(IntAttr(threads_per_row), IntAttr(rows_per_block),
                         NoneAttr() if elements_per_thread is None else IntAttr(elements_per_thread),
                         IntAttr(row_steps), IntAttr(vector_width), UnitAttr() if interleaved else NoneAttr())

    @property
    def threads_per_row(self) -> int:
        return self._threads_per_row.data

    @property
    def rows_per_block(self) -> int:
        return self._rows_per_block.data

    @property
    def elements_per_thread(self) -> int | None:
        """Register slots per thread for its columns of the row (None: re-read)."""
        e = self._elements_per_thread
        return e.data if isinstance(e, IntAttr) else None

    @property
    def row_steps(self) -> int:
        return self._row_steps.data

    @property
    def vector_width(self) -> int:
        return self._vector_width.data

    @property
    def interleaved(self) -> bool:
        return isinstance(self._interleaved, UnitAttr)

    @property
    def threads(self) -> int:
        return self.threads_per_row * self.rows_per_block

    def verify(self) -> None:
        per_row, rows = self.threads_per_row, self.rows_per_block
        if per_row < 1 or rows < 1:
            raise VerifyException(f"threads_per_row ({per_row}) and rows_per_block ({rows}) must be positive")
        if per_row * rows > MAX_BLOCK_THREADS:
            raise VerifyException(f"threads_per_row x rows_per_block ({per_row} x {rows}) is more than "
                                  f"{MAX_BLOCK_THREADS} threads")
        if per_row > WARP and per_row % WARP:
            raise VerifyException(f"a block-composed row needs a multiple of {WARP} threads, got {per_row}")
        if 1 < per_row <= WARP and per_row & (per_row - 1) and not self.interleaved:
            raise VerifyException(f"threads_per_row {per_row} must be a power of two up to {WARP} "
                                  "(or the rows interleaved)")
        per_thread = self.elements_per_thread
        if per_thread is not None and per_thread < 1:
            raise VerifyException(f"elements_per_thread must be positive, got {per_thread}")
        if self.row_steps < 1:
            raise VerifyException(f"row_steps must be positive, got {self.row_steps}")
        _check_vector_width(self.vector_width)
        if self.vector_width > 1:
            if per_thread is None:
                raise VerifyException("vector_width needs elements_per_thread (the row kept in registers)")
            if per_thread % self.vector_width:
                raise VerifyException(f"vector_width {self.vector_width} must divide elements_per_thread {per_thread}")

    @classmethod
    def from_entries(cls, entries: MappingOf[str, _Value]) -> RowParamsAttr:
        per_thread = entries.get("elements_per_thread")
        return cls.new([_int(entries["threads_per_row"]), _int(entries["rows_per_block"]),
                        NoneAttr() if per_thread is None else _int(per_thread),
                        _int(entries.get("row_steps", 1)), _int(entries.get("vector_width", 1)),
                        UnitAttr() if entries.get("interleaved") else NoneAttr()])

    def entries(self) -> list[tuple[str, _Value]]:
        out: list[tuple[str, _Value]] = [("threads_per_row", self.threads_per_row),
                                         ("rows_per_block", self.rows_per_block)]
        if self.elements_per_thread is not None:
            out.append(("elements_per_thread", self.elements_per_thread))
        if self.row_steps != 1:
            out.append(("row_steps", self.row_steps))
        if self.vector_width != 1:
            out.append(("vector_width", self.vector_width))
        if self.interleaved:
            out.append(("interleaved", True))
        return out


class TiledParamsAttr(MappingParamsAttr, ABC):
    """The parameters of the register-blocked tiled GEMM, shared by the mappings that
    run on it (`gemm`, `conv`): a block computes a `tile_m` x `tile_n` tile of the
    product, staging `tile_k`-deep slices of the operands in shared memory; each thread
    accumulates a `thread_m` x `thread_n` micro-tile (1x1 when left out), so a block has
    (tile_m / thread_m) x (tile_n / thread_n) threads."""

    KEYS: ClassVar[dict[str, int]] = {"tile": 3, "thread": 2}

    _tile_m: IntAttr
    _tile_n: IntAttr
    _tile_k: IntAttr
    _thread_m: IntAttr
    _thread_n: IntAttr

    def __init__(self, tile_m: int, tile_n: int, tile_k: int, thread_m: int = 1, thread_n: int = 1):
        super().__init__(*(IntAttr(v) for v in (tile_m, tile_n, tile_k, thread_m, thread_n)))

    @property
    def tile_m(self) -> int:
        return self._tile_m.data

    @property
    def tile_n(self) -> int:
        return self._tile_n.data

    @property
    def tile_k(self) -> int:
        return self._tile_k.data

    @property
    def thread_m(self) -> int:
        return self._thread_m.data

    @property
    def thread_n(self) -> int:
        return self._thread_n.data

    @property
    def threads(self) -> int:
        return (self.tile_m // self.thread_m) * (self.tile_n // self.thread_n)

    def verify(self) -> None:
        bm, bn, bk, tm, tn = self.tile_m, self.tile_n, self.tile_k, self.thread_m, self.thread_n
        if min(bm, bn, bk, tm, tn) < 1:
            raise VerifyException(f"tile sizes must be positive, got tile = {bm}x{bn}x{bk}, thread = {tm}x{tn}")
        if bm % tm or bn % tn:
            raise VerifyException(f"the micro-tile {tm}x{tn} must divide the block tile {bm}x{bn}")
        if self.threads > MAX_BLOCK_THREADS:
            raise VerifyException(f"a {bm}x{bn} tile of {tm}x{tn} micro-tiles has {self.threads} threads "
                                  f"(at most {MAX_BLOCK_THREADS})")

    @classmethod
    def from_entries(cls, entries: MappingOf[str, _Value]) -> TiledParamsAttr:
        tile, thread = entries["tile"], entries.get("thread", (1, 1))
        assert isinstance(tile, tuple) and isinstance(thread, tuple)
        return cls.new([IntAttr(v) for v in (*tile, *thread)])

    def entries(self) -> list[tuple[str, _Value]]:
        out: list[tuple[str, _Value]] = [("tile", (self.tile_m, self.tile_n, self.tile_k))]
        if (self.thread_m, self.thread_n) != (1, 1):
            out.append(("thread", (self.thread_m, self.thread_n)))
        return out


class GemmMath(StrEnum):
    """How a GEMM multiplies: `fma` (f32 fused multiply-adds, exact in f32) or on the
    tensor cores (`mma.sync`) with f16, bf16 or tf32 operands and f32 accumulation."""

    FMA = "fma"
    F16 = "f16"
    BF16 = "bf16"
    TF32 = "tf32"


@irdl_attr_definition
class GemmMathAttr(EnumAttribute[GemmMath], SpacedOpaqueSyntaxAttribute):
    """`#schedule<gemm_math f16>`; printed as the bare word in `gemm<..., math = f16>`."""

    name = "schedule.gemm_math"


MMA_WARP = (16, 16)
"""A warp tile is made of 16 x 16 pieces: two 16x8 mma tiles sharing an A fragment,
their B fragments loaded by one `ldmatrix.x4.trans`."""


@irdl_attr_definition
class GemmParamsAttr(TiledParamsAttr):
    """`gemm`: a `graph.dot` as a tiled GEMM (`TiledParamsAttr`). With `math = f16`,
    `bf16` or `tf32` the block tile is computed on the tensor cores: `thread` is then the
    tile of each warp (multiples of 16 x 16, made of 16 x 8 mma tiles), so a block has
    32 threads per warp tile, and `tile_k` is a multiple of 16.

        #schedule.gemm<tile = 64x64x16, thread = 4x4>
        #schedule.gemm<tile = 16x16x16>
        #schedule.gemm<tile = 128x128x32, thread = 64x64, math = f16>
        #schedule.gemm<tile = 64x64x16, thread = 8x8, split_k = 4>

    With `split_k = S` (split-K, `fsir/lowering/split_k.py`) S blocks share each
    output tile, each reducing one slice of the k-steps; the slices add up in k order
    (in the f32 output, else in an f32 workspace) and the last one applies the epilogue.
    """

    name = "schedule.gemm"
    MAPPING: ClassVar[Mapping] = Mapping.GEMM
    KEYS: ClassVar[dict[str, int]] = {"tile": 3, "thread": 2, "math": WORD, "split_k": 1}

    _math: GemmMathAttr
    _split_k: IntAttr

    def __init__(self, tile_m: int, tile_n: int, tile_k: int, thread_m: int = 1, thread_n: int = 1,
                 math: GemmMath = GemmMath.FMA, split_k: int = 1):
        ParametrizedAttribute.__init__(self, *(IntAttr(v) for v in (tile_m, tile_n, tile_k, thread_m, thread_n)),
                                       GemmMathAttr(math), IntAttr(split_k))

    @property
    def split_k(self) -> int:
        """The number of blocks (k slices) computing each output tile."""
        return self._split_k.data

    @property
    def math(self) -> GemmMath:
        return self._math.data

    @property
    def tensor_cores(self) -> bool:
        return self.math != GemmMath.FMA

    @property
    def warps(self) -> int:
        """Warps of a tensor-core block (one per warp tile)."""
        return (self.tile_m // self.thread_m) * (self.tile_n // self.thread_n)

    @property
    def threads(self) -> int:
        return self.warps * WARP if self.tensor_cores else super().threads

    def verify(self) -> None:
        super().verify()
        if self.split_k < 1:
            raise VerifyException(f"split_k must be positive, got {self.split_k}")
        if not self.tensor_cores:
            return
        wm, wn = MMA_WARP
        if self.thread_m % wm or self.thread_n % wn or self.tile_k % 16:
            raise VerifyException(f"a tensor-core gemm needs warp tiles of multiples of {wm}x{wn} and a k-step of "
                                  f"a multiple of 16, got thread = {self.thread_m}x{self.thread_n}, tile_k = "
                                  f"{self.tile_k}")

    @classmethod
    def from_entries(cls, entries: MappingOf[str, _Value]) -> GemmParamsAttr:
        tile, thread, math_ = entries["tile"], entries.get("thread", (1, 1)), entries.get("math", "fma")
        assert isinstance(tile, tuple) and isinstance(thread, tuple)
        choices = [m.value for m in GemmMath]
        if math_ not in choices:
            raise VerifyException(f"unknown gemm math '{math_}' (expected {', '.join(choices)})")
        split = entries.get("split_k", 1)
        assert isinstance(split, int)
        return cls(*tile, *thread, math=GemmMath(math_), split_k=split)

    def entries(self) -> list[tuple[str, _Value]]:
        out = super().entries()
        if self.tensor_cores:
            out.append(("math", self.math.value))
        if self.split_k != 1:
            out.append(("split_k", self.split_k))
        return out


@irdl_attr_definition
class ConvParamsAttr(TiledParamsAttr):
    """`conv`: a `graph.conv` as an implicit GEMM (rows: batch x output positions,
    columns: output channels of a group, contraction: a group's input channels x kernel
    positions; groups on grid z), tiled as `gemm` is.

        #schedule.conv<tile = 64x64x16, thread = 4x4>
    """

    name = "schedule.conv"
    MAPPING: ClassVar[Mapping] = Mapping.CONV

    def __init__(self, tile_m: int, tile_n: int, tile_k: int, thread_m: int = 1, thread_n: int = 1):
        super().__init__(tile_m, tile_n, tile_k, thread_m, thread_n)


# -- columns (embedding columns, RECom) ---------------------------------------------------


@irdl_attr_definition
class ColumnsParamsAttr(MappingParamsAttr):
    """`columns`: embedding columns feeding one concat, each computed by its own range
    of warps. Grid y walks the batch in tiles of `rows_per_tile` rows; within a tile,
    concat operand i owns warps [warps[i], warps[i + 1]) of grid x (the root group's
    `warps` attribute: prefix sums over the operands, in proportion to their work);
    `lanes[i]` consecutive threads share one row and `vectors[i]` consecutive elements
    of it, splitting the bag and combining by shuffles. `vector_width`: the widest of
    the `vectors`.

        #schedule.columns<rows_per_tile = 8>
        #schedule.columns<rows_per_tile = 32, vector_width = 4>
    """

    name = "schedule.columns"
    MAPPING: ClassVar[Mapping] = Mapping.COLUMNS
    KEYS: ClassVar[dict[str, int]] = {"rows_per_tile": 1, "vector_width": 1}

    _rows_per_tile: IntAttr
    _vector_width: IntAttr

    def __init__(self, rows_per_tile: int, vector_width: int = 1):
        super().__init__(IntAttr(rows_per_tile), IntAttr(vector_width))

    @property
    def rows_per_tile(self) -> int:
        return self._rows_per_tile.data

    @property
    def vector_width(self) -> int:
        return self._vector_width.data

    @property
    def elements_per_thread(self) -> int:
        return self.vector_width

    def verify(self) -> None:
        if self.rows_per_tile < 1:
            raise VerifyException(f"rows_per_tile must be positive, got {self.rows_per_tile}")
        _check_vector_width(self.vector_width)

    @classmethod
    def from_entries(cls, entries: MappingOf[str, _Value]) -> ColumnsParamsAttr:
        return cls.new([_int(entries["rows_per_tile"]), _int(entries.get("vector_width", 1))])

    def entries(self) -> list[tuple[str, _Value]]:
        out: list[tuple[str, _Value]] = [("rows_per_tile", self.rows_per_tile)]
        return out + ([("vector_width", self.vector_width)] if self.vector_width != 1 else [])


# ----------------------------------------------------------------------------- attention parameters


@irdl_attr_definition
class AttentionParamsAttr(MappingParamsAttr):
    """`attention`: softmax(Q·Kᵀ·scale + mask)·V as one FlashAttention-style kernel
    (`fsir/codegen/mappings/attention.py`): a block takes `block_q` query rows of one
    batch entry, a thread per row; key and value tiles of `block_k` keys are staged in
    shared memory, and each thread keeps its row's running max, running sum and output
    accumulator in registers (online softmax), so the score matrix never reaches global
    memory.

        #schedule.attention<block_q = 64, block_k = 16>

    With `warp_rows = R` a warp computes R query rows together: its lanes split the
    keys of a `block_k` = 32 key tile for Q·Kᵀ (a key per lane), shuffles give the rows'
    max and share the probabilities, and the lanes split the head dim for P·V; a block
    is block_q / R warps.

        #schedule.attention<block_q = 32, block_k = 32, warp_rows = 4>

    With `mma` (warp_rows = 16) a warp's 16 rows compute S = Q·Kᵀ and O += P·V with
    `mma.sync` on the tensor cores (f16 / bf16 operands, or tf32 for f32), the
    probabilities staying in registers as the second mma's A fragment (FlashAttention-2).

        #schedule.attention<block_q = 64, block_k = 32, warp_rows = 16, mma>
    """

    name = "schedule.attention"
    MAPPING: ClassVar[Mapping] = Mapping.ATTENTION
    KEYS: ClassVar[dict[str, int]] = {"block_q": 1, "block_k": 1, "warp_rows": 1, "mma": 0}
    MAX_BLOCK_K: ClassVar[int] = 64  # a key tile is unrolled in the kernel
    WARP: ClassVar[int] = 32  # the warp schedule's key tile: a key per lane
    MMA_ROWS: ClassVar[int] = 16  # an mma tile's rows

    _block_q: IntAttr
    _block_k: IntAttr
    _warp_rows: IntAttr  # 0: a thread per query row
    _mma: IntAttr  # 1: on the tensor cores

    def __init__(self, block_q: int, block_k: int, warp_rows: int = 0, mma: bool = False):
        super().__init__(IntAttr(block_q), IntAttr(block_k), IntAttr(warp_rows), IntAttr(int(mma)))

    @property
    def mma(self) -> bool:
        return bool(self._mma.data)

    @property
    def block_q(self) -> int:
        return self._block_q.data

    @property
    def block_k(self) -> int:
        return self._block_k.data

    @property
    def warp_rows(self) -> int:
        return self._warp_rows.data

    @property
    def threads(self) -> int:
        return self.block_q if not self.warp_rows else self.WARP * (self.block_q // self.warp_rows)

    def verify(self) -> None:
        if self.mma:
            if self.warp_rows != self.MMA_ROWS or self.block_q % self.MMA_ROWS or self.block_k % 16 \
                    or not 16 <= self.block_k <= self.MAX_BLOCK_K or self.threads > MAX_BLOCK_THREADS:
                raise VerifyException(f"with mma, warp_rows must be {self.MMA_ROWS}, block_q a multiple of it "
                                      f"and block_k a multiple of 16 up to {self.MAX_BLOCK_K}, got block_q = "
                                      f"{self.block_q}, block_k = {self.block_k}, warp_rows = {self.warp_rows}")
            return
        if self.warp_rows:
            if self.warp_rows < 0 or self.block_q % self.warp_rows or self.block_k != self.WARP \
                    or self.threads > MAX_BLOCK_THREADS:
                raise VerifyException(f"with warp_rows, block_q must be a multiple of warp_rows (a warp per "
                                      f"warp_rows rows, at most {MAX_BLOCK_THREADS // self.WARP} warps) and "
                                      f"block_k must be {self.WARP} (a key per lane), got block_q = "
                                      f"{self.block_q}, block_k = {self.block_k}, warp_rows = {self.warp_rows}")
            return
        if not 1 <= self.block_q <= MAX_BLOCK_THREADS:
            raise VerifyException(f"block_q must be 1 to {MAX_BLOCK_THREADS} (a thread per query row), "
                                  f"got {self.block_q}")
        if not 1 <= self.block_k <= self.MAX_BLOCK_K:
            raise VerifyException(f"block_k must be 1 to {self.MAX_BLOCK_K} (a key tile is unrolled), "
                                  f"got {self.block_k}")

    @classmethod
    def from_entries(cls, entries: MappingOf[str, _Value]) -> AttentionParamsAttr:
        return cls.new([_int(entries["block_q"]), _int(entries["block_k"]), _int(entries.get("warp_rows", 0)),
                        IntAttr(int(bool(entries.get("mma", False))))])

    def entries(self) -> list[tuple[str, _Value]]:
        rows: list[tuple[str, _Value]] = [("warp_rows", self.warp_rows)] if self.warp_rows else []
        mma: list[tuple[str, _Value]] = [("mma", True)] if self.mma else []
        return [("block_q", self.block_q), ("block_k", self.block_k), *rows, *mma]


# ----------------------------------------------------------------------------- segments parameters


@irdl_attr_definition
class SegmentsParamsAttr(MappingParamsAttr):
    """`segments`: a ragged bag reduction (`graph.segment_reduce` over offsets,
    `fsir/codegen/mappings/segments.py`). A segment's result row of `dim` elements is
    split into runs of `elements` consecutive elements (accessed `vector_width` at a
    time); `lanes` consecutive threads share one run and split the segment's rows,
    combining their partials by shuffles (up to a warp) or through shared memory (a
    block). A segment takes dim / elements x lanes threads: one (a thread per segment),
    up to a warp, or the whole block.

        #schedule.segments<elements = 16, lanes = 1, vector_width = 4>
        #schedule.segments<elements = 4, lanes = 64, vector_width = 4>
    """

    name = "schedule.segments"
    MAPPING: ClassVar[Mapping] = Mapping.SEGMENTS
    KEYS: ClassVar[dict[str, int]] = {"elements": 1, "lanes": 1, "vector_width": 1}

    _elements: IntAttr
    _lanes: IntAttr
    _vector_width: IntAttr

    def __init__(self, elements: int, lanes: int, vector_width: int = 1):
        super().__init__(IntAttr(elements), IntAttr(lanes), IntAttr(vector_width))

    @property
    def elements(self) -> int:
        return self._elements.data

    @property
    def lanes(self) -> int:
        return self._lanes.data

    @property
    def vector_width(self) -> int:
        return self._vector_width.data

    def verify(self) -> None:
        if self.elements < 1:
            raise VerifyException(f"elements must be positive, got {self.elements}")
        if not 1 <= self.lanes <= MAX_BLOCK_THREADS or self.lanes & (self.lanes - 1):
            raise VerifyException(f"lanes must be a power of two up to {MAX_BLOCK_THREADS}, got {self.lanes}")
        _check_vector_width(self.vector_width)
        if self.elements % self.vector_width:
            raise VerifyException(f"elements ({self.elements}) must be a multiple of vector_width "
                                  f"({self.vector_width})")

    @classmethod
    def from_entries(cls, entries: MappingOf[str, _Value]) -> SegmentsParamsAttr:
        return cls.new([_int(entries["elements"]), _int(entries["lanes"]), _int(entries.get("vector_width", 1))])

    def entries(self) -> list[tuple[str, _Value]]:
        out: list[tuple[str, _Value]] = [("elements", self.elements), ("lanes", self.lanes)]
        return out + ([("vector_width", self.vector_width)] if self.vector_width != 1 else [])


PARAMS_OF: dict[Mapping, type[MappingParamsAttr]] = {
    Mapping.LOOP: LoopParamsAttr, Mapping.ROW: RowParamsAttr, Mapping.GEMM: GemmParamsAttr,
    Mapping.CONV: ConvParamsAttr, Mapping.COLUMNS: ColumnsParamsAttr,
    Mapping.ATTENTION: AttentionParamsAttr,
    Mapping.SEGMENTS: SegmentsParamsAttr,
}


def element_bytes(t: Attribute) -> int:
    """Bytes per element in memory (i1 is one byte; a type of no fixed width, 4)."""
    width = t.bitwidth if isinstance(t, FixedBitwidthType) else 32
    return max(1, width // 8)


def int_values(attr: Attribute) -> tuple[int, ...]:
    """The integers of an integer `DenseArrayBase` (launch dims, `row_dims`, a
    reduction's dims)."""
    assert isinstance(attr, DenseArrayBase) and isinstance(attr.elt_type, IntegerType)
    return cast("DenseArrayBase[IntegerType]", attr).get_values()


def inner_value(v: SSAValue) -> SSAValue:
    """The graph value a kernel-level value stands for: a group's result is the value
    the group yields; any other value is itself."""
    op = v.owner
    if isinstance(op, GroupOp):
        assert isinstance(v, OpResult)
        return op.yielded()[v.index]
    return v


def _yield_of(block: Block) -> YieldOp:
    last = block.last_op
    assert isinstance(last, YieldOp), "the verifier: a kernel or group ends with schedule.yield"
    return last


@irdl_op_definition
class YieldOp(TensorYieldOp):
    """Ends a `schedule.group` (its results) or a `schedule.kernel` (the kernel's results).

        schedule.yield %y : tensor<4x8xf32>
    """

    name = "schedule.yield"
    PARENT_ERROR: ClassVar = "schedule.yield must end a schedule.kernel or a schedule.group"

    @classmethod
    def parents(cls) -> tuple[type[Operation], ...]:
        return (KernelOp, GroupOp)


@irdl_op_definition
class SharedOp(IRDLOperation):
    """A shared-memory buffer of the kernel (one per block), addressed by its symbol.

        schedule.shared @partials : memref<8xf32, 3>
    """

    name = "schedule.shared"
    sym_name = prop_def(StringAttr)
    buffer_type = prop_def(MemRefType)
    traits = traits_def(SymbolOpInterface())

    @classmethod
    def parse(cls, parser: Parser) -> SharedOp:
        name = parser.parse_symbol_name().data
        parser.parse_punctuation(":")
        pos = parser.pos
        t = parser.parse_type()
        if not isinstance(t, MemRefType):
            parser.raise_error("expected a memref type", pos, parser.pos)
        op = cls(name, t)
        op.attributes |= parser.parse_optional_attr_dict()
        return op

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_symbol_name(self.sym_name.data)
        printer.print_string(" : ")
        printer.print_attribute(self.buffer_type)
        printer.print_op_attributes(self.attributes)

    def __init__(self, name: str, buffer_type: MemRefType):
        super().__init__(properties={"sym_name": StringAttr(name), "buffer_type": buffer_type})

    @property
    def size(self) -> int:
        return math.prod(self.buffer_type.get_shape())

    @property
    def bytes(self) -> int:
        return self.size * element_bytes(self.buffer_type.element_type)

    def verify_(self) -> None:
        t = self.buffer_type
        if any(d < 0 for d in t.get_shape()) or len(t.get_shape()) != 1:
            raise VerifyException("a shared buffer must be 1-D with a static size")
        space = t.memory_space
        if not (isinstance(space, IntegerAttr) and space.value.data == 3):
            raise VerifyException("a shared buffer must be in memory space 3 (workgroup)")
        if not isinstance(self.parent_op(), KernelOp):
            raise VerifyException("schedule.shared must be directly inside a schedule.kernel")


def _parse_int_list(parser: Parser) -> list[int]:
    def item() -> int:
        if parser.parse_optional_punctuation("?") is not None:
            return DYNAMIC
        return parser.parse_integer()

    return parser.parse_comma_separated_list(parser.Delimiter.SQUARE, item)


def _fmt_int_list(values: Sequence[int]) -> str:
    return "[" + ", ".join("?" if v == DYNAMIC else str(v) for v in values) + "]"


@irdl_op_definition
class GroupOp(IRDLOperation):
    """A group: a sub-root (or the root) and the ops computed with it, its composition
    scheme and where its results live. Its region uses kernel arguments and earlier
    groups' results directly.

        %m = schedule.group warp -> lanes : tensor<4xf32> {
          %r = graph.reduce max %x0 dims [1] : (tensor<4x8xf32>) -> tensor<4xf32>
          schedule.yield %r : tensor<4xf32>
        }
    """

    name = "schedule.group"
    composition = prop_def(CompositionAttr)
    storage = prop_def(StorageAttr)
    buffer = opt_prop_def(SymbolRefAttr)
    offset = opt_prop_def(IntegerAttr)
    outputs = var_result_def(TensorType)
    body = region_def("single_block")
    traits = traits_def(RecursiveMemoryEffect())

    def __init__(self, composition: Composition, storage: Storage, result_types: Sequence[Attribute],
                 body: Region, buffer: str | None = None, offset: int | None = None):
        props: dict[str, Attribute] = {"composition": CompositionAttr(composition), "storage": StorageAttr(storage)}
        if buffer is not None:
            props["buffer"] = SymbolRefAttr(buffer)
            props["offset"] = IntegerAttr(offset or 0, i64)
        super().__init__(result_types=[list(result_types)], regions=[body], properties=props)

    @property
    def block(self) -> Block:
        return self.body.blocks[0]

    def yielded(self) -> list[SSAValue]:
        """The graph values the group yields (its results, inside the group)."""
        return list(_yield_of(self.block).operands)

    def shared_slot(self) -> tuple[str, int]:
        """(buffer, offset) of a `shared` group's results."""
        assert self.buffer is not None and self.offset is not None, "the verifier: a shared group has a buffer"
        return self.buffer.root_reference.data, self.offset.value.data

    def row_dims(self) -> list[int]:
        """The dims of a root or elementwise sub-root group's results that are the rows
        (the `row_dims` attribute; none given: [])."""
        attr = self.attributes.get("row_dims")
        return [] if attr is None else list(int_values(attr))

    @classmethod
    def parse(cls, parser: Parser) -> GroupOp:
        comp = Composition(_parse_word(parser, Composition, "composition"))
        parser.parse_punctuation("->")
        storage = Storage(_parse_word(parser, Storage, "result storage"))
        props: dict[str, Attribute] = {"composition": CompositionAttr(comp), "storage": StorageAttr(storage)}
        if storage == Storage.SHARED:
            props["buffer"] = SymbolRefAttr(parser.parse_symbol_name())
            parser.parse_punctuation("[")
            props["offset"] = IntegerAttr(parser.parse_integer(), i64)
            parser.parse_punctuation("]")
        attrs = parser.parse_optional_attr_dict()
        parser.parse_punctuation(":")
        types = [parser.parse_type()]
        while parser.parse_optional_punctuation(","):
            types.append(parser.parse_type())
        region = parser.parse_region()
        return cls.build(result_types=[types], regions=[region], properties=props, attributes=attrs)

    def print(self, printer: Printer) -> None:
        printer.print_string(f" {self.composition.data} -> {self.storage.data}")
        if self.buffer is not None:
            printer.print_string(" ")
            printer.print_attribute(self.buffer)
            printer.print_string(f"[{self.offset.value.data if self.offset else 0}]")
        printer.print_op_attributes(self.attributes)
        printer.print_string(" : ")
        printer.print_list([r.type for r in self.results], printer.print_attribute)
        printer.print_string(" ")
        printer.print_region(self.body, print_entry_block_args=False, print_empty_block=True)

    def verify_(self) -> None:
        if (self.storage.data == Storage.SHARED) != (self.buffer is not None):
            raise VerifyException("a group's result lives in a shared buffer exactly when its storage is 'shared'")
        if self.body.blocks[0].args:
            raise VerifyException("a schedule.group region takes no block arguments")
        last = self.block.last_op
        if not isinstance(last, YieldOp):
            raise VerifyException("a schedule.group must end with schedule.yield")
        yt = [v.type for v in last.operands]
        rt = [r.type for r in self.results]
        if yt != rt:
            raise VerifyException("schedule.yield types must be the group's result types")
        for op in self.block.ops:
            if op is not last and not op.name.startswith("graph."):
                raise VerifyException(f"a schedule.group may hold only graph ops, found '{op.name}'")
        kernel = self.parent_op()
        if not isinstance(kernel, KernelOp):
            raise VerifyException("schedule.group must be directly inside a schedule.kernel")
        if self.buffer is not None:
            name = self.buffer.root_reference.data
            buf = kernel.shared_buffers().get(name)
            if buf is None:
                raise VerifyException(f"unknown shared buffer @{name}")
            off = self.offset.value.data if self.offset else 0
            if not 0 <= off or off + len(self.results) > buf.size:
                raise VerifyException(f"offset {off} is out of bounds of @{name} ({buf.size} elements)")


@irdl_op_definition
class KernelOp(IRDLOperation):
    """One kernel: its mapping parameters (whose kind is the mapping), launch dims,
    shared buffers, cost, and the groups in execution order. Entry block arguments
    mirror the operands.

        %y = schedule.kernel @k loop<vector_width = 4> grid [1, 1, 1] block [256, 1, 1] (%x) : (tensor<4x8xf32>) -> tensor<4x8xf32> {
        ^bb0(%x0: tensor<4x8xf32>):
          %g = schedule.group thread -> global : tensor<4x8xf32> {
            %e = graph.exp %x0 : tensor<4x8xf32>
            schedule.yield %e : tensor<4x8xf32>
          }
          schedule.yield %g : tensor<4x8xf32>
        }
    """  # noqa: E501 (an IR example)

    name = "schedule.kernel"
    sym_name = prop_def(StringAttr)
    params = prop_def(MappingParamsAttr)
    grid = prop_def(DenseArrayBase)
    block_dims = prop_def(DenseArrayBase, prop_name="block")
    cost = opt_prop_def(DictionaryAttr)
    inputs = var_operand_def(TensorType)
    outputs = var_result_def(TensorType)
    body = region_def("single_block")
    traits = traits_def(RecursiveMemoryEffect())

    def __init__(self, name: str, params: MappingParamsAttr, grid: Sequence[int], block: Sequence[int],
                 inputs: Sequence[SSAValue], result_types: Sequence[Attribute], body: Region,
                 cost: dict[str, Attribute] | None = None):
        """`params` is the mapping's parameter attribute; its kind is the kernel's mapping."""
        props: dict[str, Attribute] = {
            "sym_name": StringAttr(name),
            "params": params,
            "grid": DenseArrayBase.from_list(i64, list(grid)),
            "block": DenseArrayBase.from_list(i64, list(block)),
        }
        if cost is not None:
            props["cost"] = DictionaryAttr(cost)
        super().__init__(operands=[list(inputs)], result_types=[list(result_types)], regions=[body],
                         properties=props)

    @property
    def mapping(self) -> MappingAttr:
        """The mapping, the kind of `params`."""
        return MappingAttr(self.params.MAPPING)

    @property
    def block(self) -> Block:
        return self.body.blocks[0]

    def launch(self) -> tuple[tuple[int, ...], tuple[int, ...]]:
        return int_values(self.grid), int_values(self.block_dims)

    def yielded(self) -> list[SSAValue]:
        """The values the kernel yields (its results, inside the kernel)."""
        return list(_yield_of(self.block).operands)

    def shared_buffers(self) -> dict[str, SharedOp]:
        return {op.sym_name.data: op for op in self.block.ops if isinstance(op, SharedOp)}

    def groups(self) -> list[GroupOp]:
        return [op for op in self.block.ops if isinstance(op, GroupOp)]

    def shared_bytes(self) -> int:
        return sum(b.bytes for b in self.shared_buffers().values())

    @classmethod
    def parse(cls, parser: Parser) -> KernelOp:
        name = parser.parse_symbol_name()
        mapping = Mapping(_parse_word(parser, Mapping, "mapping"))
        params_type = PARAMS_OF[mapping]
        params = params_type.new(params_type.parse_parameters(parser))
        parser.parse_keyword("grid")
        grid = _parse_int_list(parser)
        parser.parse_keyword("block")
        block = _parse_int_list(parser)
        props: dict[str, Attribute] = {
            "sym_name": name, "params": params,
            "grid": DenseArrayBase.from_list(i64, grid), "block": DenseArrayBase.from_list(i64, block),
        }
        if parser.parse_optional_keyword("cost") is not None:
            cost = parser.parse_attribute()
            if not isinstance(cost, DictionaryAttr):
                parser.raise_error("expected the cost estimate as a dictionary {key = value, ...}")
            props["cost"] = cost
        return parse_region_op(parser, cls, props)

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_symbol_name(self.sym_name.data)
        printer.print_string(f" {self.params.MAPPING}")
        self.params.print_parameters(printer)
        grid, block = self.launch()
        printer.print_string(f" grid {_fmt_int_list(grid)} block {_fmt_int_list(block)}")
        if self.cost is not None:
            printer.print_string(" cost ")
            printer.print_attribute(self.cost)
        print_region_op(printer, self)

    def verify_(self) -> None:
        check_region_signature(self, self.body, YieldOp.name)
        grid, block = self.launch()
        if len(grid) != 3 or len(block) != 3:
            raise VerifyException("grid and block need 3 entries each (x, y, z)")
        if any(b < 1 for b in block):
            raise VerifyException(f"block dims {list(block)} must be positive")
        if math.prod(block) > MAX_BLOCK_THREADS:
            raise VerifyException(f"a block has at most {MAX_BLOCK_THREADS} threads, got {math.prod(block)}")
        if any(g < 1 and g != DYNAMIC for g in grid):
            raise VerifyException(f"grid dims {list(grid)} must be positive or '?'")
        p = self.params
        if p.threads is not None and block != (p.threads, 1, 1):
            if isinstance(p, RowParamsAttr):
                what = f"threads_per_row x rows_per_block ({p.threads_per_row} x {p.rows_per_block})"
            elif isinstance(p, TiledParamsAttr):
                what = f"a {p.tile_m}x{p.tile_n} tile of {p.thread_m}x{p.thread_n} micro-tiles"
            else:
                what = f"the {p.MAPPING} mapping"
            raise VerifyException(f"{what} needs block [{p.threads}, 1, 1], got {list(block)}")
        for op in self.block.ops:
            if not isinstance(op, (SharedOp, GroupOp, YieldOp)):
                raise VerifyException(
                    f"a schedule.kernel holds only schedule.shared and schedule.group ops, found '{op.name}'"
                )
        names = [op.sym_name.data for op in self.block.ops if isinstance(op, SharedOp)]
        if len(set(names)) != len(names):
            raise VerifyException("shared buffer names must be unique")




# ============================================================================= tile synchronisation
# cuSync (Jangda et al., "A Framework for Fine-Grained Synchronization of Dependent GPU
# Kernels"): dependent tiled kernels run concurrently on their own streams and
# synchronise tile by tile through semaphores in global memory. The `tile-sync` pass
# (fsir/codegen/tile_sync.py) adds these ops beside the kernels of a function;
# schedule-to-gpu lowers them (fsir/lowering/tile_sync.py).


class SyncPolicy(StrEnum):
    """How a producer's tiles map to semaphores (cuSync §III-E, §IV-B): `tile`
    (TileSync: a semaphore per tile, ready at 1), `row` (RowSync: a semaphore per row of
    tiles, ready when every tile of the row has posted), `strided` (StridedSync: the N
    tiles one consumer tile reads, a stride apart, share a semaphore) and `conv`
    (Conv2DTileSync: TileSync for implicit-GEMM convolutions)."""

    TILE = "tile"
    ROW = "row"
    STRIDED = "strided"
    CONV = "conv"

    def semaphores(self, grid_x: int, grid_y: int, stride: int = 1) -> int:
        """How many semaphores a producer of grid_x x grid_y tiles posts to (`stride`:
        StridedSync's, in tiles: the tiles of a row whose columns are congruent modulo
        it share a semaphore)."""
        if self is SyncPolicy.ROW:
            return grid_y
        return grid_y * stride if self is SyncPolicy.STRIDED else grid_x * grid_y

    def semaphore(self, px, py, grid_x: int, ib, stride: int = 1):
        """The semaphore of producer tile (px, py); `ib` builds index arithmetic (an
        IndexBuilder, or `PY_INDEX` for plain ints)."""
        if self is SyncPolicy.ROW:
            return py
        if self is SyncPolicy.STRIDED:
            return ib.add(ib.mul(py, stride), ib.rem(px, stride))
        return ib.add(ib.mul(py, grid_x), px)

    def ready(self, grid_x: int, stride: int = 1) -> int:
        """The value a semaphore holds once its producer tiles are stored."""
        if self is SyncPolicy.ROW:
            return grid_x
        return grid_x // stride if self is SyncPolicy.STRIDED else 1

    def per_row(self) -> bool:
        """Whether the tiles of one producer row share a semaphore (a consumer then
        waits once per row, not once per tile)."""
        return self is SyncPolicy.ROW


class _PyIndex:
    """Index arithmetic on Python ints (the IndexBuilder interface SyncPolicy uses)."""

    @staticmethod
    def add(a: int, b: int) -> int:
        return a + b

    @staticmethod
    def mul(a: int, b: int) -> int:
        return a * b

    @staticmethod
    def div(a: int, b: int) -> int:
        return a // b

    @staticmethod
    def rem(a: int, b: int) -> int:
        return a % b


PY_INDEX = _PyIndex()


class TileOrder(StrEnum):
    """The order in which a stage's blocks take tiles from its global atomic counter
    (cuSync §III-C): `row_major` (x fastest), `column_major` (y fastest) or `strided`
    (a StridedSync producer's: row by row, the tiles of one strided group one after
    another, x = (r mod n) * stride + r div n for the r-th tile of a row, n = grid x /
    stride, so a group's semaphore is ready as early as it can be, cuSync §IV-B)."""

    ROW_MAJOR = "row_major"
    COLUMN_MAJOR = "column_major"
    STRIDED = "strided"

    def tile(self, linear, grid_x: int, grid_y: int, ib, stride: int = 1):
        """(x, y) of the tile taken `linear`-th (y: the tile row, grid z folded in)."""
        if self is TileOrder.ROW_MAJOR:
            return ib.rem(linear, grid_x), ib.div(linear, grid_x)
        if self is TileOrder.STRIDED:
            r, n = ib.rem(linear, grid_x), grid_x // stride
            return ib.add(ib.mul(ib.rem(r, n), stride), ib.div(r, n)), ib.div(linear, grid_x)
        return ib.div(linear, grid_y), ib.rem(linear, grid_y)


@irdl_attr_definition
class SyncPolicyAttr(EnumAttribute[SyncPolicy], SpacedOpaqueSyntaxAttribute):
    """`#schedule<sync_policy row>`; printed as the bare word in `schedule.stage`."""

    name = "schedule.sync_policy"


@irdl_attr_definition
class TileOrderAttr(EnumAttribute[TileOrder], SpacedOpaqueSyntaxAttribute):
    """`#schedule<tile_order row_major>`; printed as the bare word in `schedule.stage`."""

    name = "schedule.tile_order"


def _kernel_named(op: IRDLOperation, name: str) -> KernelOp | None:
    block = op.parent_block()
    if block is None:
        return None
    return next((k for k in block.ops if isinstance(k, KernelOp) and k.sym_name.data == name), None)


@irdl_op_definition
class StageOp(IRDLOperation):
    """A kernel of a tile-synchronised pipeline (cuSync's `CuStage`): the pipeline it
    belongs to, its stream and the stream's priority (lower runs first, as CUDA's), the
    policy of the semaphores it posts after storing each tile (when another stage
    depends on it), the order in which its blocks take tiles from a global atomic
    counter (absent: the hardware's block order), `wait_kernel`: a one-thread kernel
    on its stream spins until the first producer block has started, so none of its
    blocks occupies an SM before the producer's (cuSync §III-B), and `reorder`: a GEMM
    consumer issues its first k-step's B tile loads before it waits on A (cuSync's R,
    §IV-C). StridedSync names its stride in tiles (attention's fused QKV GEMM: the Q, K
    and V column tiles of a head, `stride` apart, share a semaphore ready at 3):

        schedule.stage @mlp_k0 pipeline 0 stream 0 priority 0 policy row order row_major
        schedule.stage @mlp_k2 pipeline 0 stream 1 priority 1 policy row order row_major wait_kernel reorder
        schedule.stage @attention_k0 pipeline 0 stream 0 priority 0 policy strided stride 2
    """

    name = "schedule.stage"
    kernel = prop_def(SymbolRefAttr)
    pipeline = prop_def(IntAttr)
    stream = prop_def(IntAttr)
    priority = prop_def(IntAttr)
    policy = prop_def(SyncPolicyAttr)
    order = opt_prop_def(TileOrderAttr)
    wait_kernel = opt_prop_def(UnitAttr)
    reorder = opt_prop_def(UnitAttr)
    stride = opt_prop_def(IntAttr)

    def __init__(self, kernel: str, pipeline: int, stream: int, priority: int, policy: SyncPolicy,
                 order: TileOrder | None = None, wait_kernel: bool = False, reorder: bool = False,
                 stride: int | None = None):
        props: dict[str, Attribute] = {
            "kernel": SymbolRefAttr(kernel), "pipeline": IntAttr(pipeline), "stream": IntAttr(stream),
            "priority": IntAttr(priority), "policy": SyncPolicyAttr(policy),
        }
        if order is not None:
            props["order"] = TileOrderAttr(order)
        if wait_kernel:
            props["wait_kernel"] = UnitAttr()
        if reorder:
            props["reorder"] = UnitAttr()
        if stride is not None:
            props["stride"] = IntAttr(stride)
        super().__init__(properties=props)

    @property
    def kernel_name(self) -> str:
        return self.kernel.root_reference.data

    @property
    def sync_stride(self) -> int:
        """StridedSync's stride in tiles (1 under the other policies)."""
        return self.stride.data if self.stride is not None else 1

    def tile(self, linear, grid_x: int, grid_y: int, ib):
        """(x, y) of the tile its blocks take `linear`-th from the counter (`order`)."""
        assert self.order is not None
        return self.order.data.tile(linear, grid_x, grid_y, ib, self.sync_stride)

    def semaphore(self, px, py, grid_x: int, ib):
        """The semaphore this stage posts producer tile (px, py) to."""
        return self.policy.data.semaphore(px, py, grid_x, ib, self.sync_stride)

    @classmethod
    def parse(cls, parser: Parser) -> StageOp:
        kernel = parser.parse_symbol_name().data
        def number(word: str) -> int:
            parser.parse_keyword(word)
            return parser.parse_integer(allow_boolean=False, allow_negative=False)

        pipeline, stream, priority = number("pipeline"), number("stream"), number("priority")
        parser.parse_keyword("policy")
        policy = SyncPolicy(_parse_word(parser, SyncPolicy, "sync policy"))
        stride = None
        if parser.parse_optional_keyword("stride") is not None:
            stride = parser.parse_integer(allow_boolean=False, allow_negative=False)
        order = None
        if parser.parse_optional_keyword("order") is not None:
            order = TileOrder(_parse_word(parser, TileOrder, "tile order"))
        wait = parser.parse_optional_keyword("wait_kernel") is not None
        reorder = parser.parse_optional_keyword("reorder") is not None
        op = cls(kernel, pipeline, stream, priority, policy, order, wait, reorder, stride)
        op.attributes |= parser.parse_optional_attr_dict()
        return op

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_symbol_name(self.kernel_name)
        printer.print_string(f" pipeline {self.pipeline.data} stream {self.stream.data} priority "
                             f"{self.priority.data} policy {self.policy.data}")
        if self.stride is not None:
            printer.print_string(f" stride {self.stride.data}")
        if self.order is not None:
            printer.print_string(f" order {self.order.data}")
        if self.wait_kernel is not None:
            printer.print_string(" wait_kernel")
        if self.reorder is not None:
            printer.print_string(" reorder")
        printer.print_op_attributes(self.attributes)

    def verify_(self) -> None:
        k = _kernel_named(self, self.kernel_name)
        if k is None:
            raise VerifyException(f"schedule.stage names @{self.kernel_name}, which is no schedule.kernel "
                                  "of this function")
        grid, _ = k.launch()
        if DYNAMIC in grid:
            raise VerifyException(f"a stage needs a static grid, @{self.kernel_name} has {list(grid)}")
        if (self.stride is not None) != (self.policy.data is SyncPolicy.STRIDED):
            raise VerifyException("a stride belongs to policy strided, and policy strided needs one")
        if self.order is not None and self.order.data is TileOrder.STRIDED and self.stride is None:
            raise VerifyException("tile order strided belongs to policy strided")
        if self.stride is not None and (self.stride.data < 1 or grid[0] % self.stride.data):
            raise VerifyException(f"stride {self.stride.data} must divide @{self.kernel_name}'s {grid[0]} tile "
                                  "columns (each strided group has as many tiles)")


@irdl_op_definition
class TileDepOp(IRDLOperation):
    """A consumer kernel's tiles depend on a producer kernel's tiles (cuSyncGen's
    `Dep`): the affine map takes a consumer tile (x, y) and the positions (i, j) of
    two ranges [0, extents[0]) x [0, extents[1]) to a producer tile (px, py); the
    producer tiles the consumer tile (x, y) reads are the map's values over both ranges
    that lie inside the producer's grid. The GPT-3 MLP's second GEMM, whose tile
    (x, y) reads rows y of the first GEMM's result (a 2 x 2 grid of tiles), all
    columns:

        schedule.tile_dep @mlp_k2 on @mlp_k0 operand 0 map affine_map<(x, y, i, j) -> (i, y + j)> extents [2, 1]
    """

    name = "schedule.tile_dep"
    consumer = prop_def(SymbolRefAttr)
    producer = prop_def(SymbolRefAttr)
    operand = prop_def(IntAttr)
    map = prop_def(AffineMapAttr)
    extents = prop_def(DenseArrayBase)

    def __init__(self, consumer: str, producer: str, operand: int, map_: AffineMap, extents: Sequence[int]):
        super().__init__(properties={
            "consumer": SymbolRefAttr(consumer), "producer": SymbolRefAttr(producer), "operand": IntAttr(operand),
            "map": AffineMapAttr(map_), "extents": DenseArrayBase.from_list(i64, list(extents)),
        })

    @property
    def consumer_name(self) -> str:
        return self.consumer.root_reference.data

    @property
    def producer_name(self) -> str:
        return self.producer.root_reference.data

    @property
    def ranges(self) -> tuple[int, int]:
        i, j = int_values(self.extents)
        return i, j

    def producer_tiles(self, x: int, y: int, grid_x: int, grid_y: int) -> list[tuple[int, int]]:
        """The producer tiles consumer tile (x, y) reads, in the order it waits on them."""
        out: list[tuple[int, int]] = []
        ni, nj = self.ranges
        for j in range(nj):
            for i in range(ni):
                px, py = self.map.data.eval([x, y, i, j], [])
                if 0 <= px < grid_x and 0 <= py < grid_y and (px, py) not in out:
                    out.append((px, py))
        return out

    def row_varies(self, dim: int) -> bool:
        """Whether the producer row py depends on map dimension `dim` (2: i, 3: j); when
        not, that range walks tiles of one row, which share a row semaphore."""
        return dim in self.map.data.results[1].used_dims()

    @classmethod
    def parse(cls, parser: Parser) -> TileDepOp:
        consumer = parser.parse_symbol_name().data
        parser.parse_keyword("on")
        producer = parser.parse_symbol_name().data
        parser.parse_keyword("operand")
        operand = parser.parse_integer(allow_boolean=False, allow_negative=False)
        parser.parse_keyword("map")
        pos = parser.pos
        m = parser.parse_attribute()
        if not isinstance(m, AffineMapAttr):
            parser.raise_error("expected an affine_map<(x, y, i, j) -> (px, py)>", pos, parser.pos)
        parser.parse_keyword("extents")
        extents = _parse_int_list(parser)
        op = cls(consumer, producer, operand, m.data, extents)
        op.attributes |= parser.parse_optional_attr_dict()
        return op

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_symbol_name(self.consumer_name)
        printer.print_string(" on ")
        printer.print_symbol_name(self.producer_name)
        printer.print_string(f" operand {self.operand.data} map ")
        printer.print_attribute(self.map)
        printer.print_string(f" extents {_fmt_int_list(int_values(self.extents))}")
        printer.print_op_attributes(self.attributes)

    def verify_(self) -> None:
        m = self.map.data
        if m.num_dims != 4 or m.num_symbols != 0 or len(m.results) != 2:
            raise VerifyException(f"a tile dependency maps (x, y, i, j) to (px, py), got {m}")
        extents = int_values(self.extents)
        if len(extents) != 2 or min(extents) < 1:
            raise VerifyException(f"extents must be two positive sizes, got {list(extents)}")
        for name in (self.consumer_name, self.producer_name):
            if _kernel_named(self, name) is None:
                raise VerifyException(f"schedule.tile_dep names @{name}, which is no schedule.kernel of this "
                                      "function")
        k = _kernel_named(self, self.consumer_name)
        assert k is not None
        if self.operand.data >= len(k.operands):
            raise VerifyException(f"@{self.consumer_name} has {len(k.operands)} operands, not {self.operand.data + 1}")


Schedule = Dialect(
    "schedule",
    [KernelOp, GroupOp, SharedOp, YieldOp,
     StageOp, TileDepOp],  # tile synchronisation
    [MappingAttr, CompositionAttr, StorageAttr, LoopParamsAttr, RowParamsAttr, GemmParamsAttr,
     ConvParamsAttr, GemmMathAttr, ColumnsParamsAttr, AttentionParamsAttr, SegmentsParamsAttr,
     SyncPolicyAttr, TileOrderAttr],  # tile synchronisation
)
