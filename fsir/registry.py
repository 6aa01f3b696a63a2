"""The one table of everything fsir adds to xDSL: dialects, passes, targets, frontends.

fs-opt registers these on top of xDSL's own; `fsir.universe` exposes them to plain
`xdsl-opt` through the `xdsl.universe` entry point. Add a pass or dialect here, once.
Entries are factories (imports happen on first use) so start-up stays fast.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from xdsl.dialects.builtin import ModuleOp
    from xdsl.ir import Dialect
    from xdsl.passes import ModulePass
    from xdsl.utils.target import Target


def _graph() -> Dialect:
    from fsir.dialects.graph import Graph

    return Graph


def _stitch() -> Dialect:
    from fsir.dialects.stitch import Stitch

    return Stitch


def _schedule() -> Dialect:
    from fsir.dialects.schedule import Schedule

    return Schedule


DIALECTS: dict[str, Callable[[], Dialect]] = {
    "graph": _graph,
    "stitch": _stitch,
    "schedule": _schedule,
}


def _gpu() -> Dialect:
    from fsir.dialects.gpu import GPU

    return GPU


# Dialects that replace an xDSL dialect of the same name inside fs-opt (e.g. fsir's
# `gpu`, a superset of xDSL's with MLIR's syntax). The universe cannot register them
# (xDSL refuses duplicate names), so plain xdsl-opt keeps xDSL's version.
OVERRIDING_DIALECTS: dict[str, Callable[[], Dialect]] = {
    "gpu": _gpu,
}


def _canonicalize() -> type[ModulePass]:
    from fsir.transforms.canonicalize import GraphCanonicalizePass

    return GraphCanonicalizePass


def _shape_inference() -> type[ModulePass]:
    from fsir.transforms.shape_inference import ShapeInferencePass

    return ShapeInferencePass


def _fusion_explore() -> type[ModulePass]:
    from fsir.fusion.explore import FusionExplorePass

    return FusionExplorePass


def _stitch_codegen() -> type[ModulePass]:
    from fsir.codegen.stitch_codegen import StitchCodegenPass

    return StitchCodegenPass


def _schedule_to_gpu() -> type[ModulePass]:
    from fsir.lowering.schedule_to_gpu import ScheduleToGpuPass

    return ScheduleToGpuPass


def _tile_sync() -> type[ModulePass]:
    from fsir.transforms.tile_sync import TileSyncPass

    return TileSyncPass


def _gpu_vectorize_memory() -> type[ModulePass]:
    from fsir.lowering.vectorize import VectorizeMemoryPass

    return VectorizeMemoryPass


def _prove_gather_bounds() -> type[ModulePass]:
    from fsir.transforms.intervals import ProveGatherBoundsPass

    return ProveGatherBoundsPass


def _symbolic_dims() -> type[ModulePass]:
    from fsir.transforms.symbolic_dims import SymbolicDimsPass

    return SymbolicDimsPass


PASSES: dict[str, Callable[[], type[ModulePass]]] = {
    "graph-canonicalize": _canonicalize,
    "graph-shape-inference": _shape_inference,
    "fusion-explore": _fusion_explore,
    "stitch-codegen": _stitch_codegen,
    "tile-sync": _tile_sync,
    "schedule-to-gpu": _schedule_to_gpu,
    "gpu-vectorize-memory": _gpu_vectorize_memory,
    "prove-gather-bounds": _prove_gather_bounds,
    "symbolic-dims": _symbolic_dims,
}


def _ptx() -> type[Target]:
    from fsir.ptx.target import PTXTarget

    return PTXTarget


TARGETS: dict[str, Callable[[], type[Target]]] = {
    "ptx": _ptx,
}



# Input formats other than .mlir: name (also the file extension) -> factory of a
# function (text or bytes, file name) -> ModuleOp.
Importer = Callable[..., "ModuleOp"]


def _hlo() -> Importer:
    from fsir.frontend.hlo import import_hlo

    return import_hlo


def _onnx() -> Importer:
    from fsir.frontend.onnx_import import import_onnx

    return import_onnx


FRONTENDS: dict[str, Callable[[], Importer]] = {
    "hlo": _hlo,
    "onnx": _onnx,
}

# Frontends that take the file's bytes instead of its text.
BINARY_FRONTENDS = {"onnx"}
