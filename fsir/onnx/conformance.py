"""ONNX's own backend test suite, run through `fsir.onnx.backend` and classified.

Each case ends in one of four outcomes:

- passed: fsir compiled the model and its outputs match ONNX's expected outputs
  (within the case's rtol/atol, as `onnx.backend.test.BackendTest` compares them);
- refused: fsir raised a `UserError` (a clear, located message: an op, attribute or
  dtype it does not support);
- failed: the outputs differ from the expected ones (a wrong result);
- crashed: anything else escaped (an internal error).

Node cases come from `onnx.backend.test.case.node.collect_testcases()`; model cases
from the `pytorch-converted`, `pytorch-operator`, `simple` and `light` directories of
the onnx wheel (light models run on inputs made by `BackendTest.generate_dummy_data`,
as ONNX's runner does, and compare with the expected outputs shipped beside them).
`tests/onnx/test_onnx_backend.py` runs a fixed sample in CI;
`benchmarks/onnx_conformance.py` runs everything and prints the table.
"""

from __future__ import annotations

import functools
import glob
import json
import os
import re
import time
import traceback
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from enum import StrEnum

import ml_dtypes
import numpy as np
import onnx
from onnx import numpy_helper

from fsir.errors import UserError

DATA_DIR = os.path.join(os.path.dirname(onnx.__file__), "backend", "test", "data")
MODEL_KINDS = ("pytorch-converted", "pytorch-operator", "simple", "light")


class Outcome(StrEnum):
    PASSED = "passed"
    REFUSED = "refused"
    FAILED = "failed"
    CRASHED = "crashed"


@dataclass
class Case:
    """One test: a model, its input/expected-output sets and tolerances."""

    name: str
    kind: str  # node, or one of MODEL_KINDS
    op_types: tuple[str, ...]  # the op types of the model's nodes (node cases: one)
    rtol: float
    atol: float
    _model: onnx.ModelProto | None = None
    _data: list[tuple[list, list]] | None = None
    _loader: Callable[[], tuple[onnx.ModelProto, list[tuple[list, list]]]] | None = None

    @property
    def op_type(self) -> str:
        """The op type a node case tests (read from its name, as ONNX names them:
        test_reduce_sum_... and test_castlike_..._expanded test ReduceSum and CastLike,
        whatever ops their expansions use); the kind for model cases."""
        if self.kind != "node":
            return self.kind
        return _op_of_name(self.name) or (self.op_types[0] if self.op_types else "?")

    def load(self) -> tuple[onnx.ModelProto, list[tuple[list, list]]]:
        """The model and its (inputs, expected outputs) sets; arrays, or lists for
        sequence values."""
        if self._model is None or self._data is None:
            assert self._loader is not None
            self._model, self._data = self._loader()
        return self._model, self._data


@functools.cache
def _op_names() -> dict[str, str]:
    """Test-name spellings of every default-domain op type: castlike and cast_like."""
    names: dict[str, str] = {}
    for schema in onnx.defs.get_all_schemas_with_history():
        if schema.domain in ("", "ai.onnx"):
            op = schema.name
            names[op.lower()] = op
            names[re.sub(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])", "_", op).lower()] = op
    return names


def _op_of_name(name: str) -> str | None:
    rest = name.removeprefix("test_")
    parts = rest.split("_")
    names = _op_names()
    for n in range(len(parts), 0, -1):  # the longest prefix of whole words that names an op
        if "_".join(parts[:n]).lower() in names:
            return names["_".join(parts[:n]).lower()]
    return None


@dataclass
class Result:
    case: Case
    outcome: Outcome
    message: str = ""
    seconds: float = 0.0
    located: bool = field(default=False)


def node_cases() -> list[Case]:
    from onnx.backend.test.case.node import collect_testcases

    cases = []
    for tc in collect_testcases():
        model = tc.model
        assert model is not None and tc.data_sets is not None
        data = [([_array(a) for a in ins], [_array(a) for a in outs]) for ins, outs in tc.data_sets]
        ops = tuple(dict.fromkeys(n.op_type for n in model.graph.node))
        cases.append(Case(tc.name, "node", ops, tc.rtol, tc.atol, model, data))
    return sorted(cases, key=lambda c: c.name)


def _array(value) -> np.ndarray | list:
    """A test value as numpy (some cases hold TensorProtos, e.g. for bfloat16)."""
    if isinstance(value, onnx.TensorProto):
        return numpy_helper.to_array(value)
    return value if isinstance(value, list) else np.asarray(value)


def _read_pb(path: str) -> np.ndarray:
    t = onnx.TensorProto()
    with open(path, "rb") as f:
        t.ParseFromString(f.read())
    return numpy_helper.to_array(t)


def _dir_loader(case_dir: str):
    def load():
        model = onnx.load(os.path.join(case_dir, "model.onnx"))
        data = []
        for ds in sorted(glob.glob(os.path.join(case_dir, "test_data_set_*"))):
            ins = [_read_pb(p) for p in sorted(glob.glob(os.path.join(ds, "input_*.pb")))]
            outs = [_read_pb(p) for p in sorted(glob.glob(os.path.join(ds, "output_*.pb")))]
            data.append((ins, outs))
        return model, data
    return load


def _light_loader(model_path: str):
    def load():
        from onnx.backend.test.runner import Runner

        model = onnx.load(model_path)
        inits = {i.name for i in model.graph.initializer}
        name = os.path.basename(model_path)[: -len(".onnx")]
        ins = [Runner.generate_dummy_data(x, seed=0, name=name, random=False)
               for x in model.graph.input if x.name not in inits]
        prefix = model_path[: -len(".onnx")]
        outs = [_read_pb(f"{prefix}_output_{i}.pb") for i in range(len(model.graph.output))]
        return model, [(ins, outs)]
    return load


def model_cases(kinds: Sequence[str] = MODEL_KINDS) -> list[Case]:
    cases = []
    for kind in kinds:
        kind_dir = os.path.join(DATA_DIR, kind)
        if kind == "light":
            for path in sorted(glob.glob(os.path.join(kind_dir, "*.onnx"))):
                name = "test_" + os.path.basename(path)[len("light_"): -len(".onnx")]
                cases.append(Case(name, kind, (), 1e-3, 1e-7, _loader=_light_loader(path)))
            continue
        for name in sorted(os.listdir(kind_dir)):
            case_dir = os.path.join(kind_dir, name)
            if not os.path.exists(os.path.join(case_dir, "model.onnx")):
                continue
            rtol, atol = 1e-3, 1e-7
            if os.path.exists(os.path.join(case_dir, "data.json")):
                with open(os.path.join(case_dir, "data.json")) as f:
                    meta = json.load(f)
                rtol, atol = meta.get("rtol", rtol), meta.get("atol", atol)
            cases.append(Case(name, kind, (), rtol, atol, _loader=_dir_loader(case_dir)))
    return cases


_ML_FLOATS = {np.dtype(t) for t in (ml_dtypes.bfloat16, ml_dtypes.float8_e4m3fn, ml_dtypes.float8_e4m3fnuz,
                                     ml_dtypes.float8_e5m2, ml_dtypes.float8_e5m2fnuz, ml_dtypes.float4_e2m1fn,
                                     ml_dtypes.float8_e8m0fnu)}


def _similar(expected: np.ndarray, actual: np.ndarray, rtol: float, atol: float) -> str | None:
    """None if `actual` matches `expected` as ONNX's runner checks it, else why not."""
    expected, actual = np.asarray(expected), np.asarray(actual)
    if expected.dtype in _ML_FLOATS and actual.dtype == expected.dtype:
        # (numpy sees bfloat16, float8, float4 as an opaque kind 'V': compare as floats, NaN equal to NaN)
        expected, actual = expected.astype(np.float32), actual.astype(np.float32)
    if expected.dtype != actual.dtype and not (expected.dtype.kind == actual.dtype.kind == "f"):
        return f"dtype {actual.dtype}, expected {expected.dtype}"
    if expected.shape != actual.shape:
        return f"shape {actual.shape}, expected {expected.shape}"
    if expected.dtype.kind in "fc":
        if np.allclose(actual.astype(np.float64), expected.astype(np.float64), rtol=rtol, atol=atol, equal_nan=True):
            return None
        bad = ~np.isclose(actual.astype(np.float64), expected.astype(np.float64), rtol=rtol, atol=atol,
                          equal_nan=True)
        return f"{int(bad.sum())} of {bad.size} values differ (max abs {np.nanmax(np.abs(actual - expected)):.3g})"
    if expected.dtype == object:
        return None if list(expected.reshape(-1)) == list(actual.reshape(-1)) else "values differ"
    return None if np.array_equal(expected, actual) else f"{int((expected != actual).sum())} values differ"


MODES = ("stitch", "xla", "none")  # the fusion modes a case runs in, the default first


@dataclass
class ModeResults:
    """One case run in several fusion modes: each mode's result, and why the modes
    disagree (None when they agree: the same outcome, outputs within the case's
    tolerance of each other)."""

    case: Case
    results: dict[str, Result]
    disagreement: str | None = None

    @property
    def outcome(self) -> Outcome:
        """The first mode's outcome, or FAILED when the modes disagree."""
        return Outcome.FAILED if self.disagreement else next(iter(self.results.values())).outcome


def run_case(case: Case, device: str = "CPU", **options) -> Result:
    """Compile and run one case on fsir (options: `fsir.compile`'s) and classify it."""
    fusion = options.pop("fusion", MODES[0])
    return run_case_modes(case, (fusion,), device, **options).results[fusion]


def run_case_modes(case: Case, modes: Sequence[str] = MODES, device: str = "CPU", **options) -> ModeResults:
    """Run one case in each fusion mode of `modes`, classify each and compare the modes
    with each other. Modes whose fusion plans are equal share one lowering and one run
    (`fsir.api.PlanCache`)."""
    from fsir.api import PlanCache

    plans = PlanCache()
    results: dict[str, Result] = {}
    outputs: dict[str, list[list]] = {}
    ran: list[tuple[object, list[list]]] = []  # (lowered module, outputs per data set) of earlier modes
    for mode in modes:
        results[mode], outputs[mode] = _run_mode(case, device, ran, fusion=mode, plans=plans, **options)
    return ModeResults(case, results, _disagreement(case, results, outputs))


def _run_mode(case: Case, device: str, ran: list[tuple[object, list[list]]],
              **options) -> tuple[Result, list[list]]:
    """One mode's result and outputs per data set; a mode whose executable shares its
    lowered module with an earlier mode's reuses that mode's outputs."""
    from fsir.onnx.backend import FsirBackend

    start = time.perf_counter()
    outputs: list[list] = []
    try:
        model, data = case.load()
        rep = FsirBackend.prepare(model, device, **options)
        module = rep.executable.module if rep.executable is not None else None
        earlier = next((outs for m, outs in ran if module is not None and m is module), None)
        outputs = earlier if earlier is not None else [list(rep.run(ins)) for ins, _ in data]
        if earlier is None and module is not None:
            ran.append((module, outputs))
        why = _mismatch(outputs, [expected for _, expected in data], case.rtol, case.atol)
        outcome = Outcome.PASSED if why is None else Outcome.FAILED
        return Result(case, outcome, why or "", time.perf_counter() - start), outputs
    except UserError as err:
        where = f"{err.loc}: " if err.loc else ""
        return Result(case, Outcome.REFUSED, f"{where}{err.message}", time.perf_counter() - start,
                      located=err.loc is not None), outputs
    except Exception:  # classified, not hidden: the caller reports crashes
        return Result(case, Outcome.CRASHED, traceback.format_exc(limit=-3), time.perf_counter() - start), outputs


def _mismatch(outputs: list[list], expected: list[list], rtol: float, atol: float) -> str | None:
    """Why the outputs (per data set) differ from the expected ones, or None."""
    for got, want in zip(outputs, expected):
        if len(got) != len(want):
            return f"{len(got)} outputs, expected {len(want)}"
        for i, (e, a) in enumerate(zip(want, got)):
            why = _similar(e, a, rtol, atol)
            if why is not None:
                return f"output {i}: {why}"
    return None


def _disagreement(case: Case, results: dict[str, Result], outputs: dict[str, list[list]]) -> str | None:
    """Why the modes disagree: different outcomes, or outputs of modes that both ran
    beyond the case's tolerance of each other (the first mode's as the expected)."""
    outcomes = {mode: r.outcome for mode, r in results.items()}
    if len(set(outcomes.values())) > 1:
        return ", ".join(f"{mode} {o.value}" for mode, o in outcomes.items())
    ran = [m for m in results if outputs[m]]
    for mode in ran[1:]:
        why = _mismatch(outputs[mode], outputs[ran[0]], case.rtol, case.atol)
        if why is not None:
            return f"{mode} differs from {ran[0]}: {why}"
    return None


def run_cases(cases: Sequence[Case], device: str = "CPU", **options) -> Iterator[Result]:
    for case in cases:
        yield run_case(case, device, **options)


# The op types the inference graphs of CNNs, transformers and recommenders use, by
# family: each should pass at least 90% of its node tests (the rest refused, located).
TARGET_FAMILIES: dict[str, tuple[str, ...]] = {
    "elementwise": ("Abs", "Add", "And", "Ceil", "Clip", "Div", "Equal", "Erf", "Exp", "Floor", "Greater",
                    "GreaterOrEqual", "IsInf", "IsNaN", "Less", "LessOrEqual", "Log", "Max", "Mean", "Min", "Mod",
                    "Mul", "Neg", "Not", "Or", "Pow", "Reciprocal", "Sign", "Sqrt", "Sub", "Sum", "Xor", "Round"),
    "trigonometric": ("Sin", "Cos", "Tan", "Asin", "Acos", "Atan", "Sinh", "Cosh", "Asinh", "Acosh", "Atanh"),
    "activations": ("Relu", "LeakyRelu", "PRelu", "Elu", "Selu", "Celu", "Gelu", "HardSigmoid", "HardSwish",
                    "Mish", "Sigmoid", "Softplus", "Softsign", "Swish", "Tanh", "ThresholdedRelu", "Shrink"),
    "convolution": ("Conv", "ConvTranspose"),
    "pooling": ("AveragePool", "MaxPool", "GlobalAveragePool", "GlobalMaxPool", "LpPool"),
    "normalization": ("BatchNormalization", "LayerNormalization", "InstanceNormalization", "GroupNormalization",
                      "RMSNormalization", "LpNormalization"),
    "softmax": ("Softmax", "LogSoftmax", "Hardmax"),
    "gather/scatter": ("Gather", "GatherElements", "GatherND", "ScatterND", "ScatterElements"),
    "data movement": ("Pad", "Resize", "Slice", "Expand", "Tile", "Where", "Concat", "Split", "Reshape", "Flatten",
                      "Squeeze", "Unsqueeze", "Transpose", "DepthToSpace", "SpaceToDepth"),
    "reductions": ("ArgMax", "ArgMin", "ReduceL1", "ReduceL2", "ReduceLogSum", "ReduceLogSumExp", "ReduceMax",
                   "ReduceMean", "ReduceMin", "ReduceProd", "ReduceSum", "ReduceSumSquare", "CumSum"),
    "matmul": ("MatMul", "Gemm", "Einsum", "Trilu"),
    "cast": ("Cast", "CastLike"),
}
TARGET_OPS = {op: family for family, ops in TARGET_FAMILIES.items() for op in ops}


def sample(cases: Sequence[Case], every: int) -> list[Case]:
    """A fixed sample: every `every`-th case of each op type (at least one of each)."""
    seen: dict[str, int] = {}
    out = []
    for c in cases:
        i = seen.get(c.op_type, 0)
        seen[c.op_type] = i + 1
        if i % every == 0:
            out.append(c)
    return out
