"""fsir: a FusionStitching compiler on xDSL.

    import fsir
    exe = fsir.compile("examples/layernorm.mlir", fusion="stitch", arch="sm_80")
    outputs = exe.run([x, gamma, beta])          # or {"x": x, ...}; on a GPU or the simulator
    exe.ptx, exe.module, exe.kernels, exe.last_stats

See docs/api.md. `import fsir` stays light: the compiler is imported on first use.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from fsir.errors import UserError

if TYPE_CHECKING:
    from fsir.api import Executable, KernelSummary, compile
    from fsir.pipeline import PipelineOptions

__all__ = ["Executable", "KernelSummary", "PipelineOptions", "UserError", "compile"]

_LAZY = {
    "compile": "fsir.api",
    "Executable": "fsir.api",
    "KernelSummary": "fsir.api",
    "PipelineOptions": "fsir.pipeline",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'fsir' has no attribute '{name}'")
    import importlib

    return getattr(importlib.import_module(module), name)
