"""JAX functions compiled by fsir: `fsir.jax.jit(f)` in place of `jax.jit(f)`.

    import fsir.jax
    f = fsir.jax.jit(layernorm, fusion="stitch", device="sim")
    y = f(x, gamma, beta)                   # numpy arrays in, numpy arrays out
    f.executable(x, gamma, beta).kernels    # the fsir.Executable of that signature

JAX lowers the function (`jax.jit(f).lower(*args)`) to unoptimised HLO text, which fsir's
HLO importer reads (`fsir.compile(text, frontend="hlo")`); nothing runs on JAX's own
backend, so the CPU wheels suffice (`pip install 'fsir[jax]'`). One Executable is compiled
per signature (the shapes and dtypes of the flattened arguments, and their tree) and kept;
outputs come back in the function's output tree, as numpy arrays.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from fsir.api import Executable
from fsir.api import compile as fsir_compile
from fsir.errors import UserError

__all__ = ["JitFunction", "jit"]

Signature = tuple[Any, tuple[tuple[tuple[int, ...], str], ...]]  # (input tree, (shape, dtype) per leaf)


def _jax() -> Any:
    try:
        import jax
    except ImportError as e:  # an optional dependency: say how to get it
        raise UserError("fsir.jax needs JAX: pip install 'fsir[jax]' (or jax jaxlib)") from e
    return jax


@dataclass
class JitFunction:
    """A JAX function compiled by fsir once per argument signature (`jit`)."""

    fun: Callable[..., Any]
    device: str = "auto"
    options: dict[str, Any] = field(default_factory=dict)
    compiled: dict[Signature, tuple[Executable, Any]] = field(default_factory=dict, repr=False)

    def __call__(self, *args: Any) -> Any:
        jax = _jax()
        leaves, tree = jax.tree_util.tree_flatten(args)
        arrays = [np.asarray(x) for x in leaves]
        exe, out_tree = self._compiled(args, tree, arrays)
        outputs = exe.run(arrays, device=self.device)
        return jax.tree_util.tree_unflatten(out_tree, outputs)

    def executable(self, *args: Any) -> Executable:
        """The fsir.Executable for arguments like `args` (compiled on first use)."""
        leaves, tree = _jax().tree_util.tree_flatten(args)
        return self._compiled(args, tree, [np.asarray(x) for x in leaves])[0]

    def hlo(self, *args: Any) -> str:
        """The HLO text JAX lowers the function to for arguments like `args`."""
        return self._lowered(args).as_text(dialect="hlo")

    def _lowered(self, args: tuple[Any, ...]) -> Any:
        return _jax().jit(self.fun).lower(*args)

    def _compiled(self, args: tuple[Any, ...], tree: Any, arrays: list[np.ndarray]) -> tuple[Executable, Any]:
        key: Signature = (tree, tuple((a.shape, a.dtype.str) for a in arrays))
        if key not in self.compiled:
            lowered = self._lowered(args)
            exe = fsir_compile(lowered.as_text(dialect="hlo"), frontend="hlo", **self.options)
            self.compiled[key] = (exe, lowered.out_tree)
        return self.compiled[key]


def jit(fun: Callable[..., Any] | None = None, *, device: str = "auto", **options: Any) -> Any:
    """`fun` compiled by fsir for each argument signature it is called with.

    device: where the kernels run (auto, cuda, sim: as `Executable.run`). options: those of
    `fsir.compile` (fusion, arch, gpu, rows, ...). Usable as `@fsir.jax.jit` or
    `@fsir.jax.jit(fusion="xla")`."""
    if fun is None:
        return lambda f: JitFunction(f, device, dict(options))
    return JitFunction(fun, device, dict(options))
