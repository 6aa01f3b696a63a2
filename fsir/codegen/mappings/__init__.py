"""The mappings a fusion can become a kernel by, one object each (FusionStitching §4).

    mapping = mapping_for(ops)          # the first in MAPPINGS that claims the ops
    mapping.accepts(ops)                # the explorer's capability query
    kernel = mapping.build(ctx)         # stitch-codegen: the chosen configuration's kernel
    iface = lower_kernel(kernel)        # schedule-to-gpu: the kernel as a gpu.func

Adding a mapping is a module next to these (a `Mapping` subclass with its configurations
and its `PARAMS`), its lowering in `fsir/lowering/`, one entry in `MAPPINGS`, and in the
schedule dialect its parameters attribute (`fsir/dialects/schedule/params.py`: the
attribute, its `schedule.Mapping` member and its place in `MAPPING_PARAMS`).
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.ir import Operation

from fsir.codegen.kernel_plans import kernel_names, kernel_structure
from fsir.codegen.mappings.attention import AttentionMapping
from fsir.codegen.mappings.base import Mapping
from fsir.codegen.mappings.columns import ColumnsMapping
from fsir.codegen.mappings.conv import ConvMapping
from fsir.codegen.mappings.gemm import GemmMapping
from fsir.codegen.mappings.loop import LoopMapping
from fsir.codegen.mappings.row import RowMapping
from fsir.codegen.mappings.segments import SegmentsMapping
from fsir.dialects.schedule import KernelOp, MappingParamsAttr
from fsir.errors import UserError
from fsir.ir import collector_paused
from fsir.lowering.kernels import KernelInterface
from fsir.stats import count as tally

# In the order in which the mappings are asked to claim a fusion (the most specific
# first), keyed by their kernels' parameters attribute.
MAPPINGS: dict[type[MappingParamsAttr], Mapping] = {m.PARAMS: m for m in (
    AttentionMapping(), GemmMapping(), ConvMapping(), ColumnsMapping(), SegmentsMapping(), RowMapping(),
    LoopMapping())}


def mapping_for(ops: Sequence[Operation]) -> Mapping:
    """The mapping that generates `ops`."""
    return next(m for m in MAPPINGS.values() if m.claims(ops))


def mapping_of(k: KernelOp) -> Mapping:
    """The mapping of a (possibly hand-written) kernel."""
    return MAPPINGS[type(k.params)]


def has_trial(k: KernelOp, structure: tuple | None = None) -> bool:
    """Whether `lower_kernel(k)` will take stitch-codegen's trial lowering of `k`."""
    tried = _TRIALS.get(k)
    return tried is not None and tried[0] == _trial_key(k, structure)


def lower_kernel(k: KernelOp, structure: tuple | None = None) -> KernelInterface:
    """`k` as a `gpu.func`, by its mapping (stitch-codegen's trial lowering of the same
    op, unchanged since, when it made one). `structure`: `kernel_structure(k)` when the
    caller has it."""
    tried = _TRIALS.pop(k, None)
    if tried is not None:
        key, iface = tried
        if key == _trial_key(k, structure):
            return iface
    return _lower(k)


# Kernels stitch-codegen lowered to prove them lowerable, by the op, with what lowering
# read of it (its structure and names, as the op stood then): schedule-to-gpu takes each
# once instead of lowering it again, unless the op changed since. Cleared by
# `forget_trials` at the start of each stitch-codegen.
_TRIALS: dict[KernelOp, tuple[tuple, KernelInterface]] = {}


def _trial_key(k: KernelOp, structure: tuple | None = None) -> tuple:
    return (kernel_structure(k) if structure is None else structure, kernel_names(k))


def trial_lower(k: KernelOp) -> UserError | None:
    """Lower `k` now; None when it lowers (the result is kept for `lower_kernel`), else
    the error its lowering raised."""
    try:
        iface = _lower(k)
    except UserError as err:
        return err
    _TRIALS[k] = (_trial_key(k), iface)
    return None


def _lower(k: KernelOp) -> KernelInterface:
    """`k` lowered by its mapping, with Python's cycle collector paused
    (`collector_paused`; a no-op inside the pipeline, which pauses it throughout)."""
    tally("kernels_lowered")
    with collector_paused():
        return mapping_of(k).lower(k)


def forget_trials() -> None:
    _TRIALS.clear()
