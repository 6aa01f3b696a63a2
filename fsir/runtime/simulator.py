"""The PTX simulator's entry points, kept importable from here; the simulator is fsir.sim."""

from fsir.sim import (
    CHUNK_LANES,
    LaunchStats,
    SimModule,
    launch,
    load_module,
    pack_params,
    param_layout,
    run_ptx,
)

__all__ = ["CHUNK_LANES", "LaunchStats", "SimModule", "launch", "load_module", "pack_params", "param_layout", "run_ptx"]
