"""The one table of everything fsir adds to xDSL: dialects, passes, targets, frontends.

fs-opt registers these on top of xDSL's own; `fsir.universe` exposes them to plain
`xdsl-opt` through the `xdsl.universe` entry point. Add a pass or dialect here, once.
Entries are `"module:attribute"` strings behind factories, so nothing is imported until
a command uses it: `fs-opt --help` lists the passes from `PASS_SUMMARIES` without
importing one (tests/tools/test_startup.py holds both to that).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from xdsl.dialects.builtin import ModuleOp
    from xdsl.ir import Dialect
    from xdsl.passes import ModulePass
    from xdsl.utils.target import Target


def lazy(target: str) -> Callable[[], Any]:
    """A factory that imports `target` ("package.module:attribute") when called."""
    module, _, attribute = target.partition(":")

    def load() -> Any:
        return getattr(importlib.import_module(module), attribute)

    load.__qualname__ = load.__name__ = f"load_{attribute}"
    load.__doc__ = f"Imports and returns {target}."
    return load


DIALECTS: dict[str, Callable[[], Dialect]] = {
    "graph": lazy("fsir.dialects.graph:Graph"),
    "stitch": lazy("fsir.dialects.stitch:Stitch"),
    "schedule": lazy("fsir.dialects.schedule:Schedule"),
}

# Dialects that replace an xDSL dialect of the same name inside fs-opt (e.g. fsir's
# `gpu`, a superset of xDSL's with MLIR's syntax). The universe cannot register them
# (xDSL refuses duplicate names), so plain xdsl-opt keeps xDSL's version.
OVERRIDING_DIALECTS: dict[str, Callable[[], Dialect]] = {
    "gpu": lazy("fsir.dialects.gpu:GPU"),
}

# name -> (the pass class, the first line of its docstring: what `fs-opt --help` lists)
_PASSES: dict[str, tuple[str, str]] = {
    "graph-canonicalize": ("fsir.transforms.canonicalize:GraphCanonicalizePass",
                          "Fold small constant subgraphs and remove identity ops in graph-dialect IR."),
    "graph-embedding-bags": ("fsir.transforms.embedding_bags:EmbeddingBagsPass",
                             "Unrolled embedding bags (per-bag sums of slices) as one graph.segment_reduce."),
    "graph-shape-inference": ("fsir.transforms.shape_inference:ShapeInferencePass",
                             "Resolve `?` dims of graph ops and function results where the inputs make them known."),
    "fusion-explore": ("fsir.fusion.explore:FusionExplorePass",
                      "Group graph ops into stitch.fusion regions (mode=stitch by default, xla, none)."),
    "stitch-codegen": ("fsir.codegen.stitch_codegen:StitchCodegenPass",
                      "stitch.fusion → schedule.kernel (one kernel per fusion)."),
    "tile-sync": ("fsir.codegen.tile_sync:TileSyncPass",
                 "Dependent kernels as tile-synchronised pipelines (cuSync); see the module doc."),
    "schedule-to-gpu": ("fsir.codegen.schedule_to_gpu:ScheduleToGpuPass",
                       "schedule.kernel → gpu.module kernels + host func.func with gpu.launch_func."),
    "gpu-vectorize-memory": ("fsir.lowering.vectorize:VectorizeMemoryPass",
                            "`gpu-vectorize-memory{width=4}`: the peephole on every kernel gpu.func."),
    "prove-gather-bounds": ("fsir.transforms.intervals:ProveGatherBoundsPass",
                           "Mark gathers whose ids the interval analysis proves in range with `in_bounds`."),
    "symbolic-dims": ("fsir.transforms.symbolic_dims:SymbolicDimsPass",
                     "Name every `?` dim by its symbol class: `#graph.dims` on arguments and on the"),
}

PASSES: dict[str, Callable[[], type[ModulePass]]] = {name: lazy(target) for name, (target, _) in _PASSES.items()}
PASS_SUMMARIES: dict[str, str] = {name: summary for name, (_, summary) in _PASSES.items()}

TARGETS: dict[str, Callable[[], type[Target]]] = {
    "ptx": lazy("fsir.ptx.target:PTXTarget"),
}


# Input formats other than .mlir: name (also the file extension) -> factory of a
# function (text or bytes, file name) -> ModuleOp.
Importer = Callable[..., "ModuleOp"]


FRONTENDS: dict[str, Callable[[], Importer]] = {
    "hlo": lazy("fsir.frontend.hlo:import_hlo"),
    "onnx": lazy("fsir.frontend.onnx_import:import_onnx"),
}

# Frontends that take the file's bytes instead of its text.
BINARY_FRONTENDS = {"onnx"}
