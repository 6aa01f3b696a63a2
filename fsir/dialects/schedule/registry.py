"""The mappings' parameters attributes, one per `Mapping`: what the dialect registers
and what a kernel's mapping word is parsed into (`PARAMS_OF`).
"""

from __future__ import annotations

from fsir.dialects.schedule.embedding import ColumnsParamsAttr, SegmentsParamsAttr
from fsir.dialects.schedule.params import (
    AttentionParamsAttr,
    ConvParamsAttr,
    GemmParamsAttr,
    LoopParamsAttr,
    Mapping,
    MappingParamsAttr,
    RowParamsAttr,
)

# The mappings' parameters attributes. Each names its mapping (`MAPPING`): the dialect
# registers these, and `PARAMS_OF` and the code generator's registry
# (`fsir.codegen.mappings.MAPPINGS`) are keyed from them.
MAPPING_PARAMS: tuple[type[MappingParamsAttr], ...] = (
    LoopParamsAttr, RowParamsAttr, GemmParamsAttr, ConvParamsAttr, ColumnsParamsAttr, AttentionParamsAttr,
    SegmentsParamsAttr,
)
PARAMS_OF: dict[Mapping, type[MappingParamsAttr]] = {cls.MAPPING: cls for cls in MAPPING_PARAMS}
if len(PARAMS_OF) != len(MAPPING_PARAMS) or set(PARAMS_OF) != set(Mapping):
    raise TypeError("every schedule.Mapping member needs exactly one parameters attribute in MAPPING_PARAMS")
