"""The mappings a fusion can become a kernel by, one object each (FusionStitching §4).

    mapping = mapping_for(ops)          # the first in MAPPINGS that claims the ops
    mapping.accepts(ops)                # the explorer's capability query
    kernel = mapping.build(ctx)         # stitch-codegen: the chosen configuration's kernel
    iface = lower_kernel(kernel)        # schedule-to-gpu: the kernel as a gpu.func

Adding a mapping is a module next to these (a `Mapping` subclass with its configurations
and its lowering in `fsir/lowering/`) and one entry below; the order is the order in
which the mappings are asked to claim a fusion (the most specific first).
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.ir import Operation

from fsir.codegen.mappings.base import Mapping
from fsir.codegen.mappings.gemm import GemmMapping
from fsir.codegen.mappings.loop import LoopMapping
from fsir.codegen.mappings.row import RowMapping
from fsir.dialects.schedule import KernelOp
from fsir.errors import UserError
from fsir.ir import location_of
from fsir.lowering.kernels import KernelInterface

MAPPINGS: dict[str, Mapping] = {m.name: m for m in (GemmMapping(), RowMapping(), LoopMapping())}


def mapping_for(ops: Sequence[Operation]) -> Mapping:
    """The mapping that generates `ops`."""
    return next(m for m in MAPPINGS.values() if m.claims(ops))


def mapping_of(k: KernelOp) -> Mapping:
    """The mapping of a (possibly hand-written) kernel."""
    m = MAPPINGS.get(k.mapping.data)
    if m is None:
        raise UserError(f"'schedule.kernel' op @{k.sym_name.data} has no mapping '{k.mapping.data}' "
                        f"(expected {', '.join(MAPPINGS)})", location_of(k))
    return m


def lower_kernel(k: KernelOp) -> KernelInterface:
    """`k` as a `gpu.func`, by its mapping."""
    return mapping_of(k).lower(k)
