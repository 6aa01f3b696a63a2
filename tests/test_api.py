"""The public API: `fsir.compile` from every kind of source, the Executable's kernels,
PTX and runs, its errors, and the pipeline it shares with fs-opt."""

from __future__ import annotations

import dataclasses
import doctest
import importlib
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import fsir
from fsir.errors import UserError
from fsir.pipeline import PipelineOptions, lower, pipeline_text, stages, target_text
from fsir.runtime.compare import compare
from fsir.runtime.reference import run
from fsir.testing.graphs import layernorm
from fsir.testing.paths import EXAMPLES, ROOT

# A small LayerNorm: two row reductions and elementwise work, one kernel when stitched.
LAYERNORM = layernorm(8, 64, mean_output=True)


def ln_inputs(seed: int = 0) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    return {"x": rng.standard_normal((8, 64)).astype(np.float32),
            "g": rng.standard_normal(64).astype(np.float32),
            "b": rng.standard_normal(64).astype(np.float32)}


@pytest.fixture(scope="module")
def ln():
    return fsir.compile(LAYERNORM)


def assert_matches_reference(exe, inputs, outputs):
    want = run(exe.source, inputs)
    assert len(outputs) == len(want)
    for i, (got, w) in enumerate(zip(outputs, want)):
        assert got.shape == w.shape and got.dtype == w.dtype, i
        c = compare(got, w)
        assert c.ok, f"output {i}: {c}"


# -- sources ------------------------------------------------------------------


def test_compile_from_path_text_and_module(ln, tmp_path):
    from fsir.parse import parse_module

    path = tmp_path / "ln.mlir"
    path.write_text(LAYERNORM)
    module = parse_module(LAYERNORM, "ln.mlir")
    before = str(module)
    for source in (str(path), path, module):
        exe = fsir.compile(source)
        assert isinstance(exe, fsir.Executable)
        assert exe.ptx == ln.ptx
    assert str(module) == before  # the caller's module is not lowered in place


def test_compile_hlo_example_and_text():
    path = EXAMPLES / "hlo" / "softmax.hlo"
    exe = fsir.compile(path)
    assert [k.mapping for k in exe.kernels] == ["row"]
    from_text = fsir.compile(path.read_text(), frontend="hlo")
    assert from_text.ptx == exe.ptx
    x = np.random.default_rng(1).standard_normal((32, 128)).astype(np.float32)
    assert_matches_reference(exe, [x], exe.run([x], device="sim"))


def tiny_onnx() -> bytes:
    from onnx import TensorProto, helper

    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [4, 8])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [4, 8])
    z = helper.make_tensor_value_info("z", TensorProto.FLOAT, [4, 8])
    nodes = [helper.make_node("Add", ["x", "y"], ["s"]), helper.make_node("Tanh", ["s"], ["z"])]
    model = helper.make_model(helper.make_graph(nodes, "tiny", [x, y], [z]))
    return model.SerializeToString()


def test_compile_onnx_path_and_bytes(tmp_path):
    path = tmp_path / "tiny.onnx"
    path.write_bytes(tiny_onnx())
    exe = fsir.compile(str(path))
    assert [k.mapping for k in exe.kernels] == ["loop"]  # add and tanh stitched into one kernel
    assert fsir.compile(tiny_onnx(), frontend="onnx").ptx == exe.ptx
    rng = np.random.default_rng(2)
    inputs = [rng.standard_normal((4, 8)).astype(np.float32) for _ in range(2)]
    (z,) = exe.run(inputs, device="sim")
    np.testing.assert_allclose(z, np.tanh(inputs[0] + inputs[1]), rtol=1e-5, atol=1e-6)


def test_compile_onnx_example_bytes():
    exe = fsir.compile((EXAMPLES / "onnx" / "bert_layer_legacy.onnx").read_bytes(), frontend="onnx", fusion="none")
    mappings = {k.mapping for k in exe.kernels}
    assert {"gemm", "loop", "row"} <= mappings
    assert ".entry" in exe.ptx


# -- the executable -------------------------------------------------------------


def test_layernorm_example_kernels():
    exe = fsir.compile(EXAMPLES / "layernorm.mlir")
    (k,) = exe.kernels
    assert k.name == "layernorm_k0" and k.mapping == "row"
    assert isinstance(k.config, str) and k.config.split("/")[0] in ("thread", "warp", "block", "interleaved")
    assert k.estimate_us is not None and k.estimate_us > 0
    assert k.registers is not None and 0 < k.registers <= 255
    assert len(k.grid) == len(k.block) == 3 and all(isinstance(g, int) and g > 0 for g in k.grid)
    assert 32 <= int(np.prod(k.block)) <= 1024
    with pytest.raises(dataclasses.FrozenInstanceError):
        k.name = "other"  # type: ignore[misc]
    # the kernel the summary describes is the one in the lowered module and the PTX
    assert f".entry {k.name}(" in exe.ptx
    assert exe.module is not exe.source and "gpu.module" in str(exe.module)


def test_run_list_and_dict_match_the_reference(ln):
    inputs = ln_inputs()
    assert ln.last_stats is None or ln.last_stats.launches == 1  # None until some test has run it
    by_list = ln.run([inputs["x"], inputs["g"], inputs["b"]], device="sim")
    assert ln.last_stats is not None and ln.last_stats.launches == len(ln.kernels) == 1
    assert len(by_list) == 2  # the function's two results
    assert_matches_reference(ln, [inputs["x"], inputs["g"], inputs["b"]], by_list)
    by_dict = ln.run(inputs, device="auto")
    by_position = ln.run({"arg0": inputs["x"], "arg1": inputs["g"], "arg2": inputs["b"]}, device="sim")
    for a, b, c in zip(by_list, by_dict, by_position):
        np.testing.assert_array_equal(a, b)
        np.testing.assert_array_equal(a, c)


def test_last_stats_none_before_a_run():
    exe = fsir.compile(LAYERNORM, fusion="none")
    assert exe.last_stats is None
    exe.run(ln_inputs(), device="sim")
    stats = exe.last_stats
    assert stats is not None and stats.launches == len(exe.kernels) > 1
    assert stats.global_unique_bytes > 0


@pytest.mark.parametrize("inputs, message", [
    ({"x": np.zeros((8, 64), np.float32), "g": np.zeros(64, np.float32)}, r"no input for argument\(s\) %b"),
    ({**ln_inputs(), "w": np.zeros(3)}, "arrays for no argument of @ln: w"),
    ({**ln_inputs(), "x": np.zeros((8, 65), np.float32)}, r"%x: expected shape 8x64, got 8x65"),
    ({**ln_inputs(), "g": np.zeros(64, np.int32)}, r"%g: expected element type f32 \(float32\), got int32"),
    ([np.zeros((8, 64), np.float32)], "@ln takes 3 arguments, got 1"),
    ("x", "inputs must be a list of arrays or a dict"),
])
def test_bad_inputs_are_user_errors(ln, inputs, message):
    with pytest.raises(UserError, match=message):
        ln.run(inputs, device="sim")


def test_bad_device_and_entry(ln):
    with pytest.raises(UserError, match="unknown device 'tpu'"):
        ln.run(ln_inputs(), device="tpu")
    with pytest.raises(UserError, match=r"no function @main in the module \(functions: @ln\)"):
        ln.run(ln_inputs(), device="sim", entry="main")


# -- compile errors and options ---------------------------------------------------


def test_nonexistent_file():
    with pytest.raises(UserError, match="cannot open 'nonexistent.mlir': no such file"):
        fsir.compile("nonexistent.mlir")


def test_invalid_ir_has_a_location():
    with pytest.raises(UserError) as info:
        fsir.compile("func.func @f(%a: tensor<4xf32>) -> tensor<4xf32> {\n  %b = graph.bogus %a\n}\n")
    assert info.value.loc is not None and (info.value.loc.file, info.value.loc.line) == ("<string>", 2)


@pytest.mark.parametrize("kwargs, message", [
    ({"fusion": "greedy"}, "fusion-explore: mode=greedy"),
    ({"vector": 3}, "stitch-codegen: vector=3"),
    ({"frontend": "tflite"}, "unknown input format 'tflite'"),
    ({"tile": 4}, r"unknown compile option\(s\) tile"),
])
def test_bad_options_are_user_errors(kwargs, message):
    with pytest.raises(UserError, match=message):
        fsir.compile(LAYERNORM, **kwargs)


def test_fusion_modes(ln):
    assert ln.options.fusion == "stitch" and len(ln.kernels) == 1
    none = fsir.compile(LAYERNORM, fusion="none")
    xla = fsir.compile(LAYERNORM, fusion="xla")
    assert len(ln.kernels) < len(xla.kernels) <= len(none.kernels)
    assert all(k.mapping in ("loop", "row") for k in none.kernels)
    inputs = ln_inputs(3)
    for exe in (none, xla):
        assert_matches_reference(exe, inputs, exe.run(inputs, device="sim"))


def test_arch_reaches_the_ptx():
    exe = fsir.compile(LAYERNORM, arch="sm_90")
    assert ".target sm_90" in exe.ptx and exe.target == "ptx{arch=sm_90}"


# -- the pipeline shared with fs-opt ------------------------------------------------


def fs_opt_ptx(path: Path, pipeline: str, target: str, out: Path) -> str:
    from fsir.tools.fs_opt import FsOptMain

    assert FsOptMain([str(path), "-p", pipeline, "-t", target, "-o", str(out)]).run() == 0
    return out.read_text()


@pytest.mark.parametrize("kwargs", [{}, {"fusion": "xla", "rows": "warp", "vector": 2, "arch": "sm_90"}],
                         ids=["defaults", "options"])
def test_pipeline_text_reproduces_the_api_with_fs_opt(kwargs, tmp_path):
    path = tmp_path / "ln.mlir"
    path.write_text(LAYERNORM)
    exe = fsir.compile(path, **kwargs)
    options = PipelineOptions(**kwargs)
    assert exe.pipeline == pipeline_text(options) and exe.target == target_text(options)
    if not kwargs:  # the passes' defaults are the pipeline's: no options to spell out
        assert exe.pipeline == "prove-gather-bounds,fusion-explore,stitch-codegen,schedule-to-gpu"
    assert fs_opt_ptx(path, exe.pipeline, exe.target, tmp_path / "out.ptx") == exe.ptx


def test_lower_reports_every_stage_and_stops_at_until(ln):
    seen = []
    lowered = lower(ln.source, ln.options, on_stage=lambda stage, seconds, ir: seen.append((stage, seconds >= 0)))
    assert seen == [(s, True) for s in stages()[:-1]] and stages()[-1] == "ptx"
    assert "gpu.module" in str(lowered)
    scheduled = lower(ln.source, ln.options, until="stitch-codegen")
    assert "schedule.kernel" in str(scheduled) and "gpu.module" not in str(scheduled)
    with pytest.raises(UserError, match="unknown stage 'ptxas'"):
        lower(ln.source, until="ptxas")


# -- the package ---------------------------------------------------------------------


def test_import_fsir_is_light():
    code = "import sys, fsir; print(sorted(m for m in ('xdsl', 'numpy', 'fsir.api') if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
    assert set(fsir.__all__) == {"Executable", "KernelSummary", "PipelineOptions", "UserError", "compile"}
    assert importlib.import_module("fsir.dialects.graph").Graph.name == "graph"  # subpackages stay importable

    with pytest.raises(AttributeError):
        fsir.no_such_name  # noqa: B018


def test_docs_example(monkeypatch):
    monkeypatch.chdir(ROOT)
    result = doctest.testfile(str(ROOT / "docs" / "api.md"), module_relative=False)
    assert result.attempted >= 8 and result.failed == 0
