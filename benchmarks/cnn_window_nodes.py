"""The window nodes of the CNNs in the onnx wheel's `light` models, one at a time.

    python benchmarks/cnn_window_nodes.py

Every distinct pooling, LRN, Pad, Resize, DepthToSpace and SpaceToDepth node of the
nine light models (ResNet-50, VGG-19, Inception v1/v2, DenseNet-121, ShuffleNet,
SqueezeNet, AlexNet, ZFNet-512), with its input shape from ONNX shape inference, is
made a one-node model, compiled with stitch fusion, run on the simulator on random
data and compared with onnxruntime. Prints one row per node (model, op, input shape,
attributes, ok or the difference, kernels, simulator seconds) and the totals; the
exit status is 1 if any node differs or fails.
"""

from __future__ import annotations

import glob
import os
import sys
import time
import warnings

import numpy as np
import onnx
import onnxruntime as ort
from onnx import helper, shape_inference

from fsir.frontend.onnx_import import import_onnx
from fsir.onnx.conformance import DATA_DIR
from fsir.pipeline import PipelineOptions, lower
from fsir.runtime.compare import compare
from fsir.runtime.executor import execute

WINDOW_OPS = {"MaxPool", "AveragePool", "GlobalAveragePool", "GlobalMaxPool", "LpPool", "LRN", "Pad", "Resize",
              "Upsample", "DepthToSpace", "SpaceToDepth"}


def window_nodes():
    """(model file, node, input shape, opset) of each distinct window node."""
    seen = set()
    for path in sorted(glob.glob(os.path.join(DATA_DIR, "light", "*.onnx"))):
        m = shape_inference.infer_shapes(onnx.load(path))
        shapes = {v.name: [d.dim_value for d in v.type.tensor_type.shape.dim]
                  for v in [*m.graph.value_info, *m.graph.input]}
        opset = next(o.version for o in m.opset_import if o.domain in ("", "ai.onnx"))
        for n in m.graph.node:
            if n.op_type not in WINDOW_OPS or len(n.input) != 1:
                continue
            key = (n.op_type, str(n.attribute), tuple(shapes.get(n.input[0], [])))
            if key not in seen:
                seen.add(key)
                yield os.path.basename(path), n, shapes[n.input[0]], opset


def one_node_model(n: onnx.NodeProto, x_shape, opset: int) -> onnx.ModelProto:
    node = helper.make_node(n.op_type, ["x"], ["y"])
    node.attribute.extend(n.attribute)
    g = helper.make_graph([node], "g", [helper.make_tensor_value_info("x", onnx.TensorProto.FLOAT, x_shape)],
                          [helper.make_tensor_value_info("y", onnx.TensorProto.FLOAT, None)])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = 7
    return m


def main() -> int:
    warnings.simplefilter("ignore")
    bad = total = 0
    for name, n, x_shape, opset in window_nodes():
        m = one_node_model(n, x_shape, opset)
        x = np.random.default_rng(0).standard_normal(x_shape).astype(np.float32)
        (want,) = ort.InferenceSession(m.SerializeToString()).run(None, {"x": x})
        attrs = {a.name: helper.get_attribute_value(a) for a in n.attribute}
        start = time.perf_counter()
        kernels = 0
        try:
            lowered = lower(import_onnx(m.SerializeToString(), "m.onnx"), PipelineOptions(fusion="stitch"))
            kernels = sum(op.name == "gpu.func" for op in lowered.walk())
            (got,), _ = execute(lowered, [x])
            c = compare(got, want)
            status = "ok" if c.ok else f"differs: {c}"
        except Exception as err:  # reported, not hidden
            status = f"{type(err).__name__}: {err}"
        total += 1
        bad += status != "ok"
        print(f"{name:28} {n.op_type:18} {'x'.join(map(str, x_shape)):16} {str(attrs)[:70]:70} {status} "
              f"kernels={kernels} {time.perf_counter() - start:.1f}s", flush=True)
    print(f"{total - bad} of {total} window nodes match onnxruntime")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
