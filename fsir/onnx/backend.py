"""fsir as an ONNX backend (`onnx.backend.base.Backend`).

    import fsir.onnx.backend as backend
    rep = backend.prepare(model)            # compiles once (stitch fusion, sm_80 PTX)
    outputs = rep.run([x])                  # on the simulator, or a GPU with device="CUDA"

ONNX harnesses (`onnx.backend.test.BackendTest`) address devices as "CPU" and "CUDA".
fsir has no CPU code generator: "CPU" means fsir's PTX simulator, which runs the same
PTX a GPU would, on the host; "CUDA" means a GPU through cuda-python and is supported
only when one is present.

Shape-like inputs are specialised. When the model needs the value of a graph input at
compile time — a Reshape's or Expand's shape, a Reduce*'s axes, Slice's starts/ends,
Trilu's k, Range's bounds, Tile's repeats, Split's sizes, OneHot's depth — `prepare`
cannot compile it yet: it returns a rep that compiles on `run`, with those inputs bound
to the values given (they become constants; the importer raises
`ConstantInputsNeeded` naming them). Executables are cached by the bound values, so
runs with the same shape inputs compile once and new values compile again (as the TVM
and onnx-mlir backends treat shape inputs). See docs/onnx.md.

ONNX's narrow types (float8, float4, e8m0, int4/uint4, int2/uint2) are held by fsir as
storage only (fsir/frontend/onnx_storage.py): the rep takes and returns them as the
ml_dtypes arrays `onnx.numpy_helper.to_array` gives, converting to and from storage.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import onnx
from onnx.backend.base import Backend, BackendRep, Device, DeviceType, namedtupledict

from fsir.api import Executable
from fsir.api import compile as fsir_compile
from fsir.frontend import onnx_storage
from fsir.frontend.onnx_import import ConstantInputsNeeded, import_onnx

__all__ = ["FsirBackend", "FsirRep", "prepare", "run_model", "run_node", "supports_device"]


def _device_kind(device: str) -> str:
    """The fsir device ('sim' or 'cuda') of an ONNX device string ('CPU', 'CUDA:0')."""
    return "cuda" if Device(device).type == DeviceType.CUDA else "sim"


class FsirRep(BackendRep):
    """A model compiled by fsir; `run` takes the graph inputs (a list in graph order or
    a dict by name) and returns the graph outputs as a namedtuple by output name.

    A model whose compilation needs the values of some inputs (`bound`) compiles on
    `run`, once per distinct value of those inputs."""

    def __init__(self, model: bytes, inputs: list[str], outputs: list[str], device: str,
                 options: dict[str, Any], exe: Executable | None = None, bound: Sequence[str] = (),
                 narrow: Mapping[str, int] | None = None):
        self.model = model
        self.input_names = inputs
        self.output_names = outputs
        self.device = device
        self.options = options
        self.executable = exe
        self.bound = tuple(bound)
        self.cache: dict[tuple, tuple[Executable, tuple[str, ...]]] = {}
        self.narrow = dict(narrow or {})  # inputs and outputs of narrow ONNX types: the type

    def run(self, inputs: Any, **kwargs: Any) -> tuple[Any, ...]:
        if isinstance(inputs, Mapping):
            arrays = [inputs[n] for n in self.input_names]
        elif isinstance(inputs, np.ndarray) and len(self.input_names) == 1:
            arrays = [inputs]
        else:
            arrays = list(inputs) if isinstance(inputs, Sequence) else [inputs]
        arrays = [onnx_storage.to_storage(a, self.narrow[n]) if n in self.narrow else a
                  for n, a in zip(self.input_names, arrays)]
        if self.executable is not None:
            outputs = self.executable.run(arrays, device=self.device)
        else:
            by_name = dict(zip(self.input_names, (np.asarray(a) for a in arrays)))
            exe, bound = self.specialise(by_name)
            outputs = exe.run([by_name[n] for n in self.input_names if n not in bound], device=self.device)
        outputs = [onnx_storage.from_storage(a, self.narrow[n]) if n in self.narrow else a
                   for n, a in zip(self.output_names, outputs)]
        return namedtupledict("Outputs", self.output_names)(*outputs)

    def specialise(self, values: dict[str, np.ndarray]) -> tuple[Executable, tuple[str, ...]]:
        """The executable for these values of the bound inputs (compiled on first use),
        and the names of the inputs it was specialised to."""
        while True:
            key = tuple((n, values[n].dtype.str, values[n].shape, values[n].tobytes()) for n in self.bound)
            if key in self.cache:
                return self.cache[key]
            try:
                module = import_onnx(self.model, bind={n: values[n] for n in self.bound})
            except ConstantInputsNeeded as err:  # binding some inputs showed others are needed too
                new = [n for n in err.inputs if n not in self.bound and n in values]
                if not new:
                    raise
                self.bound += tuple(new)
                continue
            self.cache[key] = (fsir_compile(module, **self.options), self.bound)


class FsirBackend(Backend):
    """Compiles an ONNX model with `fsir.compile` and runs it on fsir's devices."""

    @classmethod
    def is_compatible(cls, model: onnx.ModelProto, device: str = "CPU", **kwargs: Any) -> bool:
        return cls.supports_device(device)

    @classmethod
    def prepare(cls, model: onnx.ModelProto, device: str = "CPU", **kwargs: Any) -> FsirRep:
        """Compile `model`; kwargs are `fsir.compile` options (fusion, arch, gpu, ...)."""
        if not isinstance(model, onnx.ModelProto):
            raise TypeError(f"prepare takes an onnx.ModelProto, got {type(model).__name__}")
        inits = {t.name for t in model.graph.initializer}
        inputs = [i.name for i in model.graph.input if i.name not in inits]
        outputs = [o.name for o in model.graph.output]
        data = model.SerializeToString()
        narrow = {v.name: v.type.tensor_type.elem_type for v in [*model.graph.input, *model.graph.output]
                  if v.type.HasField("tensor_type") and onnx_storage.is_narrow(v.type.tensor_type.elem_type)}
        try:
            module = import_onnx(data)
        except ConstantInputsNeeded as err:  # compiled on run, with these inputs bound
            return FsirRep(data, inputs, outputs, _device_kind(device), kwargs, bound=err.inputs, narrow=narrow)
        return FsirRep(data, inputs, outputs, _device_kind(device), kwargs, fsir_compile(module, **kwargs),
                       narrow=narrow)

    @classmethod
    def run_model(cls, model: onnx.ModelProto, inputs: Any, device: str = "CPU", **kwargs: Any) -> tuple[Any, ...]:
        return cls.prepare(model, device, **kwargs).run(inputs)

    @classmethod
    def run_node(cls, node: onnx.NodeProto, inputs: Any, device: str = "CPU", outputs_info=None,
                 **kwargs: Any) -> tuple[Any, ...]:
        """Run one node: a one-node model whose input types come from `inputs`."""
        arrays = [np.asarray(a) for a in inputs]
        graph_inputs = [onnx.helper.make_tensor_value_info(n, onnx.helper.np_dtype_to_tensor_dtype(a.dtype), a.shape)
                        for n, a in zip(node.input, arrays) if n]
        graph_outputs = [onnx.helper.make_empty_tensor_value_info(n) for n in node.output if n]
        g = onnx.helper.make_graph([node], "node", graph_inputs, graph_outputs)
        model = onnx.helper.make_model(g)
        return cls.prepare(model, device, **kwargs).run([a for n, a in zip(node.input, arrays) if n])

    @classmethod
    def supports_device(cls, device: str) -> bool:
        if _device_kind(device) == "sim":
            return True
        from fsir.runtime.cuda_device import probe_gpu

        return bool(probe_gpu()[0])


prepare = FsirBackend.prepare
run_model = FsirBackend.run_model
run_node = FsirBackend.run_node
supports_device = FsirBackend.supports_device
