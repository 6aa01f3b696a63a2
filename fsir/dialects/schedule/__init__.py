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
kernels say which output dims are the rows (`row_dims [0]`); `packed` groups are
independent parts that every thread of the grid takes elements of in turn. Both are
properties of the group, checked by its verifier.

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

The modules, bottom up (each imports only those above it; every name is re-exported
here, so `from fsir.dialects import schedule` reaches all of them):
  params.py    the `Mapping` enum, the parameters' syntax and the parameters attributes of
               the loop, row, tiled (gemm, conv) and attention mappings
  embedding.py the embedding mappings' parameters (columns, segments)
  registry.py  one parameters attribute per mapping: `MAPPING_PARAMS`, `PARAMS_OF`
  ops.py       kernel, group, shared, yield, and the group's composition and storage
  sync.py      tile synchronisation: stage and tile_dep
"""  # noqa: E501 (an IR example)

from xdsl.ir import Dialect

from fsir.dialects.schedule.embedding import ColumnsParamsAttr, SegmentsParamsAttr
from fsir.dialects.schedule.ops import (
    Composition,
    CompositionAttr,
    GroupOp,
    KernelOp,
    SharedOp,
    Storage,
    StorageAttr,
    YieldOp,
    element_bytes,
    inner_value,
    int_values,
)
from fsir.dialects.schedule.params import (
    DYNAMIC,
    LIST,
    MAX_BLOCK_THREADS,
    MMA_WARP,
    WARP,
    WORD,
    AttentionParamsAttr,
    ConvParamsAttr,
    GemmMath,
    GemmMathAttr,
    GemmParamsAttr,
    LoopParamsAttr,
    Mapping,
    MappingAttr,
    MappingParamsAttr,
    RowParamsAttr,
    TiledParamsAttr,
)
from fsir.dialects.schedule.registry import MAPPING_PARAMS, PARAMS_OF
from fsir.dialects.schedule.sync import (
    PY_INDEX,
    StageOp,
    SyncPolicy,
    SyncPolicyAttr,
    TileDepOp,
    TileOrder,
    TileOrderAttr,
)

Schedule = Dialect(
    "schedule",
    [KernelOp, GroupOp, SharedOp, YieldOp,
     StageOp, TileDepOp],  # tile synchronisation
    [MappingAttr, CompositionAttr, StorageAttr, *MAPPING_PARAMS, GemmMathAttr,
     SyncPolicyAttr, TileOrderAttr],  # tile synchronisation
)

__all__ = [
    "AttentionParamsAttr",
    "ColumnsParamsAttr",
    "Composition",
    "CompositionAttr",
    "ConvParamsAttr",
    "DYNAMIC",
    "GemmMath",
    "GemmMathAttr",
    "GemmParamsAttr",
    "GroupOp",
    "KernelOp",
    "LIST",
    "LoopParamsAttr",
    "MAX_BLOCK_THREADS",
    "MMA_WARP",
    "Mapping",
    "MappingAttr",
    "MappingParamsAttr",
    "MAPPING_PARAMS",
    "PARAMS_OF",
    "PY_INDEX",
    "RowParamsAttr",
    "SegmentsParamsAttr",
    "SharedOp",
    "StageOp",
    "Storage",
    "StorageAttr",
    "SyncPolicy",
    "SyncPolicyAttr",
    "TileDepOp",
    "TileOrder",
    "TileOrderAttr",
    "TiledParamsAttr",
    "WARP",
    "WORD",
    "YieldOp",
    "element_bytes",
    "inner_value",
    "int_values",
]
