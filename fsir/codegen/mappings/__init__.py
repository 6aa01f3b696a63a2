"""The mappings a fusion can become a kernel by, one object each (FusionStitching §4).

    mapping = mapping_for(ops)          # the first in MAPPINGS that claims the ops
    mapping.accepts(ops)                # the explorer's capability query
    kernel = mapping.build(ctx)         # stitch-codegen: the chosen configuration's kernel
    iface = lower_kernel(kernel)        # schedule-to-gpu: the kernel as a gpu.func

Adding a mapping is a module next to these (a `Mapping` subclass with its configurations
and its lowering in `fsir/lowering/`), one entry in `MAPPINGS`, and in the schedule
dialect its `schedule.Mapping` member and parameters attribute.
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.ir import Operation

from fsir.codegen.mappings.attention import AttentionMapping
from fsir.codegen.mappings.base import Mapping
from fsir.codegen.mappings.columns import ColumnsMapping
from fsir.codegen.mappings.conv import ConvMapping
from fsir.codegen.mappings.gemm import GemmMapping
from fsir.codegen.mappings.loop import LoopMapping
from fsir.codegen.mappings.row import RowMapping
from fsir.codegen.mappings.segments import SegmentsMapping
from fsir.dialects import schedule
from fsir.dialects.schedule import KernelOp
from fsir.errors import UserError
from fsir.lowering.kernels import KernelInterface
from fsir.stats import count as tally

# In the order in which the mappings are asked to claim a fusion (the most specific
# first). The keys are exactly the members of `fsir.dialects.schedule.Mapping` (which
# cannot import codegen; tests/test_mapping_registry.py holds the two together): a new
# mapping adds its enum member and its parameters attribute (`PARAMS_OF`) there.
MAPPINGS: dict[schedule.Mapping, Mapping] = {m.name: m for m in (
    AttentionMapping(), GemmMapping(), ConvMapping(), ColumnsMapping(), SegmentsMapping(), RowMapping(),
    LoopMapping())}


def mapping_for(ops: Sequence[Operation]) -> Mapping:
    """The mapping that generates `ops`."""
    return next(m for m in MAPPINGS.values() if m.claims(ops))


def mapping_of(k: KernelOp) -> Mapping:
    """The mapping of a (possibly hand-written) kernel."""
    return MAPPINGS[k.params.MAPPING]


def lower_kernel(k: KernelOp) -> KernelInterface:
    """`k` as a `gpu.func`, by its mapping (stitch-codegen's trial lowering of the same
    op, unchanged since, when it made one)."""
    if _TRIALS:
        tried = _TRIALS.pop(str(k), None)
        if tried is not None:
            return tried
    tally("kernels_lowered")
    return mapping_of(k).lower(k)


# Kernels stitch-codegen lowered to prove them lowerable, by the op as printed (all that
# lowering reads, as the kernel cache's key): schedule-to-gpu takes each once instead of
# lowering it again. Cleared by `forget_trials` at the start of each stitch-codegen.
_TRIALS: dict[str, KernelInterface] = {}


def trial_lower(k: KernelOp) -> UserError | None:
    """Lower `k` now; None when it lowers (the result is kept for `lower_kernel`), else
    the error its lowering raised."""
    tally("kernels_lowered")
    try:
        iface = mapping_of(k).lower(k)
    except UserError as err:
        return err
    _TRIALS[str(k)] = iface
    return None


def forget_trials() -> None:
    _TRIALS.clear()
