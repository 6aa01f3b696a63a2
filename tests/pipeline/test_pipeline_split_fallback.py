"""Issue 27: a batch-1 3-D MatMul followed by LayerNormalization (BERT, GPT-2, Whisper,
Swin and MobileViT exports at batch 1) stopped in stitch mode with "'graph.reduce' op
cannot be computed per element here".

Root cause: the GEMM's LayerNorm epilogue provides each row reduction at the index
grid z gives the batch, while the broadcast reading it asks for a size-1 dim's element
at 0; element values met index by index, so the reader found no value and no rule.
The epilogue now also provides each reduction where a reader of a size-1 dim asks,
at 0 (`fsir.lowering.emit.canonical_index`), for the coordinates known valid (memo keys
stay as given: a provider at an index outside the tensor must not stand for element 0). The safety net: a fusion whose kernel does not lower is
compiled as one kernel per op (counted in `fusions_split`, remarked on the kernels).
"""

from __future__ import annotations

import numpy as np
from onnx import TensorProto, helper, numpy_helper

import fsir
import fsir.lowering.emit as emit
import fsir.lowering.row_epilogue as row_epilogue
from fsir import stats
from fsir.pipeline import PipelineOptions, load, lower
from fsir.runtime.compare import compare
from fsir.runtime.reference import run


def matmul_layernorm(shape=(1, 16, 64)) -> bytes:
    rng = np.random.default_rng(0)
    k = shape[-1]
    inits = [numpy_helper.from_array((rng.standard_normal((k, k)) / 8).astype(np.float32), "w"),
             numpy_helper.from_array(rng.standard_normal(k).astype(np.float32), "b"),
             numpy_helper.from_array(rng.standard_normal(k).astype(np.float32), "g"),
             numpy_helper.from_array(rng.standard_normal(k).astype(np.float32), "beta")]
    nodes = [helper.make_node("MatMul", ["x", "w"], ["m"]), helper.make_node("Add", ["m", "b"], ["a"]),
             helper.make_node("LayerNormalization", ["a", "g", "beta"], ["y"], axis=-1, epsilon=1e-5)]
    graph = helper.make_graph(nodes, "ln", [helper.make_tensor_value_info("x", TensorProto.FLOAT, shape)],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]).SerializeToString()


def compile_and_check(model: bytes, shape) -> tuple[fsir.Executable, int]:
    with stats.collecting() as counts:
        exe = fsir.compile(model, fusion="stitch", cache=False)
    x = np.random.default_rng(1).standard_normal(shape).astype(np.float32)
    (got,) = exe.run([x], device="sim")
    (want,) = run(exe.source, [x])
    assert compare(got, want).ok
    return exe, counts.result().fusions_split


def test_batch_one_matmul_layernorm_is_one_kernel():
    exe, split = compile_and_check(matmul_layernorm(), (1, 16, 64))
    assert split == 0
    assert [k.mapping for k in exe.kernels] == ["gemm"]  # the LayerNorm is the GEMM's epilogue


def test_a_fusion_that_does_not_lower_is_split_not_refused(monkeypatch):
    # the rule before the fix: the epilogue's reductions are not found at a size-1 dim's 0
    monkeypatch.setattr(row_epilogue, "canonical_index", lambda v, idx: list(idx))
    exe, split = compile_and_check(matmul_layernorm(), (1, 16, 64))
    assert split == 1
    assert len(exe.kernels) > 1 and "gemm" in [k.mapping for k in exe.kernels]
    schedule = str(lower(load(matmul_layernorm()), PipelineOptions(fusion="stitch"), until="stitch-codegen"))
    assert 'remark = "split: stitch-codegen could not lower the fusion of these ops' in schedule
    assert "cannot be computed per element here" in schedule


def test_one_op_that_does_not_lower_is_still_the_error(monkeypatch):
    """Splitting stops at single ops: a refusal there is reported, located."""
    def refuse(self, v, idx):
        raise fsir.UserError("refused for the test")
    monkeypatch.setattr(emit.ElementEmitter, "_compute", refuse)
    try:
        fsir.compile(matmul_layernorm(), fusion="stitch", cache=False)
    except fsir.UserError as err:
        assert "refused for the test" in err.message
    else:
        raise AssertionError("expected the single op's refusal")

