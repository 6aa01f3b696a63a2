"""The schedule dialect's mapping parameters: the `Mapping` enum and one parameters
attribute per mapping (`#schedule.loop<...>`, `row`, `gemm`, `conv`, `columns`,
`attention`, `segments`), whose verifiers hold every rule on the parameters alone.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping as MappingOf
from collections.abc import Sequence
from typing import ClassVar, cast

from xdsl.dialects.builtin import DenseArrayBase, IntAttr, IntegerType, NoneAttr, UnitAttr, i64
from xdsl.dialects.utils import EnumAttribute
from xdsl.ir import Attribute, ParametrizedAttribute, SpacedOpaqueSyntaxAttribute
from xdsl.irdl import irdl_attr_definition
from xdsl.parser import AttrParser
from xdsl.printer import Printer
from xdsl.utils.exceptions import ParseError, VerifyException
from xdsl.utils.str_enum import StrEnum

from fsir.dialects.gpu import VECTOR_WIDTHS

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


@irdl_attr_definition
class MappingAttr(EnumAttribute[Mapping], SpacedOpaqueSyntaxAttribute):
    """`#schedule<mapping row>`; a kernel's mapping is the kind of its parameters."""

    name = "schedule.mapping"


def parse_word(parser: AttrParser, enum: type[StrEnum], what: str) -> str:
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

ParamValue = int | tuple[int, ...] | list[int] | bool | str
WORD = -1  # the kind of a parameter whose value is a bare word (an enum's)
LIST = -2  # the kind of a parameter whose value is a list of integers `[a, b, ...]`


def _parse_entries(parser: AttrParser, mapping: Mapping, kinds: MappingOf[str, int]) -> dict[str, ParamValue]:
    """`<key = value, ...>` (optional when empty). `kinds[key]` is 0 for a flag, 1 for
    an integer, n > 1 for an `AxB...` shape of n sizes, WORD for a bare word, LIST for
    a list of integers."""
    entries: dict[str, ParamValue] = {}

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
        if n == LIST:
            entries[key] = parser.parse_comma_separated_list(parser.Delimiter.SQUARE,
                                                             lambda: parser.parse_integer(allow_boolean=False))
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


def _print_entries(printer: Printer, entries: Sequence[tuple[str, ParamValue]]) -> None:
    def text(key: str, value: ParamValue) -> str:
        if value is True:
            return key
        if isinstance(value, tuple):
            return f"{key} = {'x'.join(map(str, value))}"
        if isinstance(value, list):
            return f"{key} = [{', '.join(map(str, value))}]"
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
    def from_entries(cls, entries: MappingOf[str, ParamValue]) -> MappingParamsAttr:
        """Build from `key = value` entries; missing keys take their defaults (a
        missing required key raises KeyError naming it)."""

    @abstractmethod
    def entries(self) -> list[tuple[str, ParamValue]]:
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

    def verify_launch(self, grid: Sequence[int], block: Sequence[int]) -> None:
        """Raise VerifyException when the launch dims do not fit the parameters (beyond
        the block size `threads` fixes, which the kernel checks)."""


def check_vector_width(vector_width: int) -> None:
    if vector_width != 1 and vector_width not in VECTOR_WIDTHS:
        widths = ", ".join(map(str, (1, *VECTOR_WIDTHS[:-1])))
        raise VerifyException(f"vector_width must be {widths} or {VECTOR_WIDTHS[-1]}, got {vector_width}")


def int_param(value: ParamValue) -> IntAttr:
    if isinstance(value, bool) or not isinstance(value, int):
        raise VerifyException(f"expected an integer, got {value}")
    return IntAttr(value)


def int_list_param(value: ParamValue) -> list[int]:
    if not isinstance(value, list):
        raise VerifyException(f"expected a list of integers, got {value}")
    return value


def i64_array(values: Sequence[int]) -> DenseArrayBase:
    return DenseArrayBase.from_list(i64, list(values))


def array_values(array: DenseArrayBase) -> tuple[int, ...]:
    return cast("DenseArrayBase[IntegerType]", array).get_values()


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
        check_vector_width(self.vector_width)

    @classmethod
    def from_entries(cls, entries: MappingOf[str, ParamValue]) -> LoopParamsAttr:
        return cls.new([int_param(entries.get("vector_width", 1))])

    def entries(self) -> list[tuple[str, ParamValue]]:
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
        check_vector_width(self.vector_width)
        if self.vector_width > 1:
            if per_thread is None:
                raise VerifyException("vector_width needs elements_per_thread (the row kept in registers)")
            if per_thread % self.vector_width:
                raise VerifyException(f"vector_width {self.vector_width} must divide elements_per_thread {per_thread}")

    @classmethod
    def from_entries(cls, entries: MappingOf[str, ParamValue]) -> RowParamsAttr:
        per_thread = entries.get("elements_per_thread")
        return cls.new([int_param(entries["threads_per_row"]), int_param(entries["rows_per_block"]),
                        NoneAttr() if per_thread is None else int_param(per_thread),
                        int_param(entries.get("row_steps", 1)), int_param(entries.get("vector_width", 1)),
                        UnitAttr() if entries.get("interleaved") else NoneAttr()])

    def entries(self) -> list[tuple[str, ParamValue]]:
        out: list[tuple[str, ParamValue]] = [("threads_per_row", self.threads_per_row),
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
    def from_entries(cls, entries: MappingOf[str, ParamValue]) -> TiledParamsAttr:
        tile, thread = entries["tile"], entries.get("thread", (1, 1))
        assert isinstance(tile, tuple) and isinstance(thread, tuple)
        return cls.new([IntAttr(v) for v in (*tile, *thread)])

    def entries(self) -> list[tuple[str, ParamValue]]:
        out: list[tuple[str, ParamValue]] = [("tile", (self.tile_m, self.tile_n, self.tile_k))]
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
    def from_entries(cls, entries: MappingOf[str, ParamValue]) -> GemmParamsAttr:
        tile, thread, math_ = entries["tile"], entries.get("thread", (1, 1)), entries.get("math", "fma")
        assert isinstance(tile, tuple) and isinstance(thread, tuple)
        choices = [m.value for m in GemmMath]
        if math_ not in choices:
            raise VerifyException(f"unknown gemm math '{math_}' (expected {', '.join(choices)})")
        split = entries.get("split_k", 1)
        assert isinstance(split, int)
        return cls(*tile, *thread, math=GemmMath(math_), split_k=split)

    def entries(self) -> list[tuple[str, ParamValue]]:
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
    def from_entries(cls, entries: MappingOf[str, ParamValue]) -> AttentionParamsAttr:
        return cls.new([int_param(entries["block_q"]), int_param(entries["block_k"]),
                        int_param(entries.get("warp_rows", 0)), IntAttr(int(bool(entries.get("mma", False))))])

    def entries(self) -> list[tuple[str, ParamValue]]:
        rows: list[tuple[str, ParamValue]] = [("warp_rows", self.warp_rows)] if self.warp_rows else []
        mma: list[tuple[str, ParamValue]] = [("mma", True)] if self.mma else []
        return [("block_q", self.block_q), ("block_k", self.block_k), *rows, *mma]
