"""The parameters of the embedding mappings (RECom): `#schedule.columns<...>` (many
embedding columns and their concat in one kernel) and `#schedule.segments<...>` (a
ragged bag reduction over offsets).
"""

from __future__ import annotations

from collections.abc import Mapping as MappingOf
from collections.abc import Sequence
from typing import ClassVar

from xdsl.dialects.builtin import DenseArrayBase, IntAttr, NoneAttr
from xdsl.irdl import irdl_attr_definition
from xdsl.utils.exceptions import VerifyException

from fsir.dialects.schedule.params import (
    DYNAMIC,
    LIST,
    MAX_BLOCK_THREADS,
    WARP,
    Mapping,
    MappingParamsAttr,
    ParamValue,
    array_values,
    check_vector_width,
    i64_array,
    int_list_param,
    int_param,
)

# -- columns (embedding columns, RECom) ---------------------------------------------------


@irdl_attr_definition
class ColumnsParamsAttr(MappingParamsAttr):
    """`columns`: embedding columns feeding one concat, each computed by its own range
    of warps. Grid y walks the batch in tiles of `rows_per_tile` rows; within a tile,
    concat operand i owns a range of warps of grid x: `warps` are prefix sums from 0
    over the operands in `warp_order` (in proportion to their work); `lanes[i]`
    consecutive threads share one row and `vectors[i]` consecutive elements of it,
    splitting the bag and combining by shuffles. `clusters[i]` is operand i's cluster:
    the operands of one cluster share one code body, so they take one schedule and
    equal warp ranges (left out: each operand is its own). `vector_width` is the widest
    of the `vectors`.

        #schedule.columns<rows_per_tile = 8, warps = [0, 1, 33], lanes = [1, 8], vectors = [1, 4]>
        #schedule.columns<rows_per_tile = 8, warps = [0, 4, 8, 10], lanes = [4, 4, 2], vectors = [1, 1, 1], clusters = [0, 0, 2]>
    """  # noqa: E501 (an IR example)

    name = "schedule.columns"
    MAPPING: ClassVar[Mapping] = Mapping.COLUMNS
    KEYS: ClassVar[dict[str, int]] = {"rows_per_tile": 1, "warps": LIST, "lanes": LIST, "vectors": LIST,
                                      "clusters": LIST}
    VECTORS: ClassVar[tuple[int, ...]] = (1, 2, 4)  # a vector load of a table row stays aligned

    _rows_per_tile: IntAttr
    _warps: DenseArrayBase
    _lanes: DenseArrayBase
    _vectors: DenseArrayBase
    _clusters: DenseArrayBase | NoneAttr

    def __init__(self, rows_per_tile: int, warps: Sequence[int], lanes: Sequence[int], vectors: Sequence[int],
                 clusters: Sequence[int] | None = None):
        super().__init__(IntAttr(rows_per_tile), *(i64_array(v) for v in (warps, lanes, vectors)),
                         NoneAttr() if clusters is None else i64_array(clusters))

    @property
    def rows_per_tile(self) -> int:
        return self._rows_per_tile.data

    @property
    def warps(self) -> tuple[int, ...]:
        """Prefix sums of the operands' warps, in `warp_order` (one more than operands)."""
        return array_values(self._warps)

    @property
    def lanes(self) -> tuple[int, ...]:
        return array_values(self._lanes)

    @property
    def vectors(self) -> tuple[int, ...]:
        return array_values(self._vectors)

    @property
    def clusters(self) -> tuple[int, ...]:
        """Each operand's cluster (operands of one id share one code body)."""
        c = self._clusters
        return tuple(range(len(self.lanes))) if isinstance(c, NoneAttr) else array_values(c)

    @property
    def shares_bodies(self) -> bool:
        """Whether some operands share a code body (`clusters` is given)."""
        return not isinstance(self._clusters, NoneAttr)

    @property
    def vector_width(self) -> int:
        return max(self.vectors, default=1)

    @property
    def elements_per_thread(self) -> int:
        return self.vector_width

    def warp_order(self) -> list[int]:
        """The concat operands in the order their warps follow each other: cluster by
        cluster (in the order of each cluster's first operand), a cluster's operands in
        order, so a cluster's columns are one range of warps."""
        return warp_order(self.clusters)

    def spans(self) -> list[tuple[int, int]]:
        """Each concat operand's warps [start, end)."""
        warps = self.warps
        out = [(0, 0)] * len(self.lanes)
        for pos, i in enumerate(self.warp_order()):
            out[i] = (warps[pos], warps[pos + 1])
        return out

    def verify(self) -> None:
        if self.rows_per_tile < 1:
            raise VerifyException(f"rows_per_tile must be positive, got {self.rows_per_tile}")
        lanes, vectors, warps, n = self.lanes, self.vectors, self.warps, len(self.lanes)
        if len(vectors) != n or len(warps) != n + 1 or (self.shares_bodies and len(self.clusters) != n):
            raise VerifyException(f"a columns kernel needs 'lanes' and 'vectors' (and 'clusters' when given) of one "
                                  f"entry per concat operand and 'warps' of one more, got {n} lanes, "
                                  f"{len(vectors)} vectors, {len(warps)} warps"
                                  + (f", {len(self.clusters)} clusters" if self.shares_bodies else ""))
        if warps[0] != 0 or any(b < a for a, b in zip(warps, warps[1:])):
            raise VerifyException(f"warps must be non-decreasing prefix sums from 0, got {list(warps)}")
        if any(x < 1 or x > WARP or x & (x - 1) for x in lanes):
            raise VerifyException(f"lanes must be powers of two up to {WARP}, got {list(lanes)}")
        if any(x not in self.VECTORS for x in vectors):
            raise VerifyException(f"vectors must be 1, 2 or 4, got {list(vectors)}")
        if any(not 0 <= c < n for c in self.clusters):
            raise VerifyException(f"clusters must be operand indices below {n}, got {list(self.clusters)}")
        spans, bodies = self.spans(), {}
        for i, c in enumerate(self.clusters):
            what = (lanes[i], vectors[i], spans[i][1] - spans[i][0])
            if bodies.setdefault(c, what) != what:
                raise VerifyException(f"concat operand {i} shares the code body of cluster {c} but not its lanes, "
                                      "vectors or number of warps")

    def verify_launch(self, grid: Sequence[int], block: Sequence[int]) -> None:
        if block[0] % WARP or tuple(block[1:]) != (1, 1):
            raise VerifyException(f"a columns kernel's block is whole warps along x, got {list(block)}")
        if grid[0] != DYNAMIC and grid[0] * block[0] < self.warps[-1] * WARP:
            raise VerifyException(f"grid x covers {grid[0] * block[0] // WARP} warps, the columns need "
                                  f"{self.warps[-1]}")

    @classmethod
    def from_entries(cls, entries: MappingOf[str, ParamValue]) -> ColumnsParamsAttr:
        clusters = entries.get("clusters")
        lists = (i64_array(int_list_param(entries[k])) for k in ("warps", "lanes", "vectors"))
        return cls.new([int_param(entries["rows_per_tile"]), *lists,
                        NoneAttr() if clusters is None else i64_array(int_list_param(clusters))])

    def entries(self) -> list[tuple[str, ParamValue]]:
        out: list[tuple[str, ParamValue]] = [("rows_per_tile", self.rows_per_tile), ("warps", list(self.warps)),
                                         ("lanes", list(self.lanes)), ("vectors", list(self.vectors))]
        return out + ([("clusters", list(self.clusters))] if self.shares_bodies else [])


def warp_order(clusters: Sequence[int]) -> list[int]:
    """Operands (by their `clusters`) in warp order: cluster by cluster, in the order
    of each cluster's first operand, a cluster's operands in order."""
    first: dict[int, int] = {}
    for i, c in enumerate(clusters):
        first.setdefault(c, i)
    return sorted(range(len(clusters)), key=lambda i: (first[clusters[i]], i))


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
        check_vector_width(self.vector_width)
        if self.elements % self.vector_width:
            raise VerifyException(f"elements ({self.elements}) must be a multiple of vector_width "
                                  f"({self.vector_width})")

    @classmethod
    def from_entries(cls, entries: MappingOf[str, ParamValue]) -> SegmentsParamsAttr:
        return cls.new([int_param(entries["elements"]), int_param(entries["lanes"]),
                        int_param(entries.get("vector_width", 1))])

    def entries(self) -> list[tuple[str, ParamValue]]:
        out: list[tuple[str, ParamValue]] = [("elements", self.elements), ("lanes", self.lanes)]
        return out + ([("vector_width", self.vector_width)] if self.vector_width != 1 else [])
