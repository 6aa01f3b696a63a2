"""PyTorch models compiled by fsir: `torch.compile(model, backend="fsir")`.

    import torch, fsir.torch
    y = torch.compile(model, backend="fsir")(x)                      # the entry point (pip install 'fsir[torch]')
    y = torch.compile(model, backend=fsir.torch.backend(device="sim", fusion="xla"))(x)

Dynamo captures FX graphs; AOTAutograd lowers each to core ATen
(`torch._decomp.core_aten_decompositions()`), with parameters and buffers lifted to
inputs; `fsir.torch.aten.convert_graph` turns it into the graph dialect (one converter
per ATen op, `ATEN_TO_GRAPH`) and `fsir.compile` compiles it once per graph and guard set
(dynamo calls the backend again when a guard fails). A graph holding an op fsir does not
support runs in eager PyTorch instead, with one warning naming the op. Sizes dynamo
marks dynamic become `?` dims, so one compile serves every batch size. Training:
AOTAutograd's backward graphs are compiled the same way (their extra rows are in
`fsir.torch.aten_training`).

Running: on a GPU, fsir's kernels take the CUDA tensors by pointer and write outputs
that torch allocates (`fsir.torch.device.TorchCudaDevice`: no copies). On the simulator,
tensors are copied to numpy and the outputs back to torch tensors on the inputs'
device; a warning says so once.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import ml_dtypes
import numpy as np
import torch
from torch import fx

from fsir.api import Background, BackgroundExecutable, Executable, QuickPlan
from fsir.api import compile as fsir_compile
from fsir.torch.aten import ATEN_TO_GRAPH, Converted, Unsupported, convert_graph, unsupported_ops

__all__ = ["ATEN_TO_GRAPH", "CompiledGraph", "backend", "fsir_backend"]

_copy_warned = False


def _warn_copies(device: str) -> None:
    global _copy_warned
    if not _copy_warned:
        _copy_warned = True
        warnings.warn(f"fsir.torch: running on {device} copies each input to numpy and each output back "
                      "(CUDA tensors on a GPU are passed by pointer instead)", stacklevel=3)


def to_numpy(t: torch.Tensor) -> np.ndarray:
    """A tensor's values as a numpy array (bf16 as ml_dtypes.bfloat16)."""
    t = t.detach().cpu().contiguous()
    if t.dtype == torch.bfloat16:
        return t.view(torch.int16).numpy().view(ml_dtypes.bfloat16)
    return t.numpy()


def from_numpy(a: np.ndarray, dtype: torch.dtype, device: torch.device) -> torch.Tensor:
    a = np.require(a, requirements="C")  # (np.ascontiguousarray makes rank 0 rank 1)
    if dtype == torch.bfloat16:
        return torch.from_numpy(a.view(np.int16)).view(torch.bfloat16).to(device)
    return torch.from_numpy(a).to(dtype=dtype, device=device)


@dataclass
class CompiledGraph:
    """One FX graph compiled by fsir: `__call__` runs it on the tensors AOTAutograd passes."""

    converted: Converted
    executable: Executable | BackgroundExecutable
    out_dtypes: tuple[torch.dtype | None, ...]
    device: str = "auto"
    eager: Callable[..., Any] | None = None  # runs the graph while a background compile is not done
    runs: int = field(default=0, init=False)  # runs of fsir's kernels
    eager_runs: int = field(default=0, init=False)  # runs in eager PyTorch (background compile not done)
    swapped_at: int | None = field(default=None, init=False)  # background: eager runs before fsir's first
    _device: Any = field(default=None, init=False, repr=False)  # the TorchCudaDevice of GPU runs

    def __call__(self, *args: Any) -> tuple[torch.Tensor | None, ...]:
        if self.eager is not None and isinstance(self.executable, BackgroundExecutable) \
                and not self.executable.ready:
            self.eager_runs += 1
            return tuple(self.eager(*args))
        if self.eager is not None and self.swapped_at is None:
            self.swapped_at = self.eager_runs  # between two runs: this one is the first on fsir's kernels
        tensors = [args[i] for i in self.converted.tensor_args]
        if self.device != "sim" and tensors and all(t.is_cuda for t in tensors) and _gpu():
            return self._by_pointer(tensors)
        where = tensors[0].device if tensors else torch.device("cpu")
        _warn_copies("the simulator" if self.device == "sim" or not _gpu() else "a GPU with host tensors")
        outs = self.executable.run([to_numpy(t) for t in tensors], device=self.device, progress=False)
        self.runs += 1
        return tuple(None if i is None or d is None else from_numpy(outs[i], d, where)
                     for i, d in zip(self.converted.outputs, self.out_dtypes))


    def _by_pointer(self, tensors: list[torch.Tensor], memory: torch.device | str = "cuda") -> tuple[Any, ...]:
        """A run on the GPU that holds `tensors`: fsir's kernels take their addresses and
        write outputs torch allocates (`fsir.torch.device`: no copies)."""
        from fsir.torch.device import TorchCudaDevice

        exe = self.executable if isinstance(self.executable, Executable) else self.executable.wait()
        if self._device is None:
            self._device = TorchCudaDevice(memory)
        outs = self._device.run(exe.module, tensors, exe.ptx)
        self.runs += 1
        return tuple(None if i is None else outs[i] for i in self.converted.outputs)


def _gpu() -> bool:
    from fsir.runtime.device import gpu_available

    return gpu_available()


# Every fsir compile the backend made (a test counts them: one per graph and guard set).
compiles: list[CompiledGraph] = []


def compile_graph(gm: fx.GraphModule, example_inputs: Sequence[Any], device: str = "auto",
                  background: bool | Background = False, **options: Any) -> Callable[..., Any]:
    """AOTAutograd's compiler: `gm` compiled by fsir, or `gm.forward` (eager) with one
    warning naming the op when fsir cannot compile it. background: compile in a worker
    (`fsir.api.Background`) and run `gm` eagerly until the compile is done (a compile
    error then surfaces at the first run after it)."""
    missing = unsupported_ops(gm)
    if missing:
        return _eager(gm, missing[0])
    try:
        converted = convert_graph(gm)
        exe: Executable | BackgroundExecutable
        if background:
            settings = background if isinstance(background, Background) else Background()
            exe = fsir_compile(converted.module, background=replace(settings, quick=QuickPlan.BLOCK), **options)
        else:
            exe = fsir_compile(converted.module, **options)
    except Unsupported as err:
        return _eager(gm, err.what, str(err))
    except Exception as err:  # fsir's own limits (a pass, a verifier): never a crash in the user's model
        return _eager(gm, "this graph", f"{type(err).__name__}: {err}")
    outs = [n for n in gm.graph.nodes if n.op == "output"][0].args[0]
    outs = outs if isinstance(outs, (list, tuple)) else [outs]
    dtypes = tuple(None if o is None else o.meta["val"].dtype for o in outs)
    compiled = CompiledGraph(converted, exe, dtypes, device, gm.forward if background else None)
    compiles.append(compiled)
    return compiled


def _eager(gm: fx.GraphModule, what: str, detail: str = "") -> Callable[..., Any]:
    """`gm.forward`, after one warning: `what` names the op fsir does not support."""
    if what == "this graph":
        message = f"fsir could not compile this graph ({detail}); running it in eager PyTorch"
    else:
        extra = f" ({detail})" if detail and detail != what else ""
        message = f"fsir does not support {what}; running this graph in eager PyTorch{extra}"
    warnings.warn(message, stacklevel=2)
    return gm.forward


def backend(device: str = "auto", background: bool | Background = False, **options: Any) -> Callable[..., Any]:
    """A `torch.compile` backend running fsir's kernels on `device` (auto, cuda, sim) with
    `fsir.compile` options (fusion, arch, gpu, ...). background: each graph compiles in a
    worker (`fsir.api.Background`: process or thread) while it runs in eager PyTorch; fsir's
    kernels take over from the first run after its compile is done."""
    from torch._decomp import core_aten_decompositions
    from torch._dynamo.backends.common import aot_autograd

    def fw(gm: fx.GraphModule, example_inputs: Sequence[Any]) -> Callable[..., Any]:
        return compile_graph(gm, example_inputs, device, background, **options)

    def bw(gm: fx.GraphModule, example_inputs: Sequence[Any]) -> Callable[..., Any]:
        from torch._functorch._aot_autograd.utils import make_boxed_func

        # AOTAutograd calls a backward with one list of arguments (boxed)
        return make_boxed_func(compile_graph(gm, example_inputs, device, background, **options))

    return aot_autograd(fw_compiler=fw, bw_compiler=bw, decompositions=core_aten_decompositions())


def fsir_backend(gm: fx.GraphModule, example_inputs: Sequence[Any]) -> Callable[..., Any]:
    """The `torch_dynamo_backends` entry point `fsir`: `backend()` with fsir's defaults."""
    return backend()(gm, example_inputs)
