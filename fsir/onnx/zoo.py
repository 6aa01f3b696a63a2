"""The model corpus (examples/zoo/) run through `fsir.onnx.backend` and classified.

Each variant (an architecture, exporter and precision: `bert.torchscript.f16`) is a
`.onnx` file beside a `.npz` holding its inputs (`in.<name>`) and onnxruntime's outputs
(`out.<i>`); `manifest.json` names the variants, their kinds and where their expected
outputs come from. A variant is compiled and run on the simulator in each fusion mode
and ends in one of four outcomes, as the ONNX conformance runner classifies them:
passed, refused (a `UserError`: fsir's located message), failed (a wrong result) or
crashed (an internal error).

A variant with a symbolic batch that passes runs once more, with the same compile, at
one more sample (its first sample repeated), against the expected outputs extended the
same way: its `?` dims are sized at run time, not fixed to the saved inputs' batch.

Outputs are compared with `fsir.runtime.compare` at the model's precision (f16
tolerances for an f16 model, also where its expected outputs come from onnxruntime's f32
run because onnxruntime has no f16 kernel for one of its ops or refuses the export, and
for an output the exporter left in f32 after computing in f16), scaled by the output's
largest magnitude: logits and hidden states of these models reach tens, and the
tolerances are per element relative to one.
"""

from __future__ import annotations

import json
import math
import time
import traceback
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import onnx

from fsir.errors import UserError
from fsir.onnx.conformance import MODES, Outcome


@dataclass(frozen=True)
class Variant:
    """One model of the corpus."""

    name: str  # arch.exporter.dtype
    arch: str
    kinds: tuple[str, ...]
    exporter: str
    dtype: str
    folder: Path

    @property
    def onnx_path(self) -> Path:
        return self.folder / f"{self.name}.onnx"

    def load(self) -> tuple[onnx.ModelProto, dict[str, np.ndarray], list[np.ndarray]]:
        """The model, its inputs by name and its expected outputs."""
        model = onnx.load(str(self.onnx_path))
        with np.load(self.folder / f"{self.name}.npz") as data:
            inputs = {k[3:]: data[k] for k in data.files if k.startswith("in.")}
            outs = sorted((int(k[4:]), data[k]) for k in data.files if k.startswith("out."))
        return model, inputs, [a for _, a in outs]


def variants(folder: Path) -> list[Variant]:
    """The exported variants `manifest.json` lists in `folder` (failed exports left out)."""
    entries = json.loads((folder / "manifest.json").read_text())
    return [Variant(e["name"], e["arch"], tuple(e["kinds"]), e["exporter"], e["dtype"], folder)
            for e in entries if "export_error" not in e]


@dataclass
class ModeRun:
    """One variant in one fusion mode."""

    outcome: Outcome
    message: str = ""
    compile_s: float = 0.0
    sim_s: float = 0.0
    kernels: int = 0  # launches of one run
    distinct_bytes: int = 0  # Σ over launches of the distinct global bytes each touches


@dataclass
class VariantResult:
    variant: Variant
    modes: dict[str, ModeRun] = field(default_factory=dict)
    lower_bound: int = 0  # inputs and weights read once, outputs written once

    @property
    def outcome(self) -> Outcome:
        """The worst outcome over the modes (crashed, failed, refused, passed)."""
        order = (Outcome.CRASHED, Outcome.FAILED, Outcome.REFUSED, Outcome.PASSED)
        return min((r.outcome for r in self.modes.values()), key=order.index)

    @property
    def message(self) -> str:
        worst = [f"{m}: {r.message}" for m, r in self.modes.items() if r.outcome == self.outcome and r.message]
        return worst[0] if worst else ""


def lower_bound(model: onnx.ModelProto, inputs: dict[str, np.ndarray], outputs: Sequence[np.ndarray]) -> int:
    """Bytes a perfect schedule moves: inputs, weights (initializers) and outputs once."""
    weights = sum(math.prod(t.dims) * onnx.helper.tensor_dtype_to_np_dtype(t.data_type).itemsize
                  for t in model.graph.initializer)
    return weights + sum(a.nbytes for a in inputs.values()) + sum(np.asarray(a).nbytes for a in outputs)


def mismatch(outputs: Sequence[np.ndarray], expected: Sequence[np.ndarray], half: bool = False) -> str | None:
    """Why `outputs` differ from `expected`, or None (see the module docstring); `half`:
    the model computes in f16, so its f32 outputs too are held to f16 tolerances."""
    from fsir.runtime.compare import compare

    if len(outputs) != len(expected):
        return f"{len(outputs)} outputs, expected {len(expected)}"
    for i, (got, want) in enumerate(zip(outputs, expected)):
        got, want = np.asarray(got), np.asarray(want)
        if got.dtype.kind == "f" and want.dtype.kind == "f" and got.dtype.itemsize < want.dtype.itemsize:
            want = want.astype(got.dtype)  # an f16 model checked against onnxruntime's f32 run
        if half and want.dtype.kind == "f" and want.dtype.itemsize > 2:
            want = want.astype(np.float16)  # an f16 model's output the exporter left in f32
        finite = np.abs(want[np.isfinite(want)]) if want.dtype.kind == "f" else np.zeros(1)
        scale = max(1.0, float(finite.max(initial=0.0)))
        c = compare(got, want, scale=scale)
        if not c.ok:
            return f"output {i}: {c} (tolerance scaled by {scale:.3g})"
    return None


def symbolic_batch(model: onnx.ModelProto) -> bool:
    """Whether every graph input's dim 0 is symbolic (a `dim_param`): the corpus's
    transformers, whose outputs are per sample along dim 0 too."""
    inputs = [i for i in model.graph.input if i.name not in {t.name for t in model.graph.initializer}]
    return bool(inputs) and all(i.type.tensor_type.shape.dim and i.type.tensor_type.shape.dim[0].dim_param
                                for i in inputs)


def run_mode(model: onnx.ModelProto, inputs: dict[str, np.ndarray], expected: list[np.ndarray], mode: str,
             plans, half: bool = False) -> ModeRun:
    from fsir.onnx.backend import FsirBackend

    start = time.perf_counter()
    try:
        rep = FsirBackend.prepare(model, "CPU", fusion=mode, plans=plans)
        feeds = {n: inputs[n] for n in rep.input_names}
        exe = rep.executable
        if exe is None:  # compiled with some inputs bound to their values
            exe = rep.specialise(dict(feeds))[0]
        compiled = time.perf_counter()
        outputs = list(rep.run(feeds))
        run = ModeRun(Outcome.PASSED, compile_s=compiled - start, sim_s=time.perf_counter() - compiled)
        if exe.last_stats is not None:
            run.kernels = int(exe.last_stats.launches)
            run.distinct_bytes = int(exe.last_stats.global_unique_bytes)
        why = mismatch(outputs, expected, half)
        if why is None and symbolic_batch(model):
            # the same compile at another batch: the first sample once more
            grown = {n: np.concatenate([a, a[:1]]) for n, a in feeds.items()}
            why = mismatch(list(rep.run(grown)), [np.concatenate([e, e[:1]]) for e in expected], half)
            why = None if why is None else f"at batch {len(next(iter(grown.values())))}: {why}"
        if why is not None:
            run.outcome, run.message = Outcome.FAILED, why
        return run
    except UserError as err:
        where = f"{err.loc}: " if err.loc else ""
        return ModeRun(Outcome.REFUSED, f"{where}{err.message}", compile_s=time.perf_counter() - start)
    except Exception:  # classified, not hidden: the caller reports crashes
        return ModeRun(Outcome.CRASHED, traceback.format_exc(limit=-4), compile_s=time.perf_counter() - start)


def run_variant(variant: Variant, modes: Sequence[str] = MODES) -> VariantResult:
    """Compile and run one variant in each fusion mode of `modes`."""
    from fsir.api import PlanCache

    result = VariantResult(variant)
    try:
        model, inputs, expected = variant.load()
    except Exception:
        result.modes["load"] = ModeRun(Outcome.CRASHED, traceback.format_exc(limit=-2))
        return result
    result.lower_bound = lower_bound(model, inputs, expected)
    plans = PlanCache()
    for mode in modes:
        result.modes[mode] = run_mode(model, inputs, expected, mode, plans, variant.dtype == "f16")
    return result
