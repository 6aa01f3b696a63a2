"""Entry point that lets plain `xdsl-opt` see fsir's dialects and passes."""

from xdsl.universe import Universe

from fsir.registry import DIALECTS, PASSES, TARGETS

FSIR_UNIVERSE = Universe(
    all_dialects=dict(DIALECTS),
    all_passes=dict(PASSES),
    all_targets=dict(TARGETS),
)
