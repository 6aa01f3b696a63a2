"""Tile synchronisation ops of the schedule dialect (cuSync's stages and tile
dependences): `schedule.stage` and `schedule.tile_dep`.
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects.builtin import AffineMapAttr, DenseArrayBase, IntAttr, SymbolRefAttr, UnitAttr, i64
from xdsl.dialects.utils import EnumAttribute
from xdsl.ir import Attribute, SpacedOpaqueSyntaxAttribute
from xdsl.ir.affine import AffineMap
from xdsl.irdl import IRDLOperation, irdl_attr_definition, irdl_op_definition, opt_prop_def, prop_def
from xdsl.parser import Parser
from xdsl.printer import Printer
from xdsl.utils.exceptions import VerifyException
from xdsl.utils.str_enum import StrEnum

from fsir.dialects.schedule.ops import KernelOp, format_int_list, int_values, parse_int_list
from fsir.dialects.schedule.params import DYNAMIC, parse_word

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
        policy = SyncPolicy(parse_word(parser, SyncPolicy, "sync policy"))
        stride = None
        if parser.parse_optional_keyword("stride") is not None:
            stride = parser.parse_integer(allow_boolean=False, allow_negative=False)
        order = None
        if parser.parse_optional_keyword("order") is not None:
            order = TileOrder(parse_word(parser, TileOrder, "tile order"))
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
        extents = parse_int_list(parser)
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
        printer.print_string(f" extents {format_int_list(int_values(self.extents))}")
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
