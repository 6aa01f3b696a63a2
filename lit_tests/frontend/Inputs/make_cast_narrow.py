"""Writes cast_narrow.onnx for onnx-cast-narrow.mlir: f32 -> FLOAT8E5M2 (saturate=0)
-> f16, and INT4 -> f32."""

import os

from onnx import TensorProto, helper, save

nodes = [helper.make_node("Cast", ["x"], ["y8"], to=TensorProto.FLOAT8E5M2, saturate=0),
         helper.make_node("Cast", ["y8"], ["back"], to=TensorProto.FLOAT16),
         helper.make_node("Cast", ["q"], ["qf"], to=TensorProto.FLOAT)]
graph = helper.make_graph(nodes, "cast_narrow",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4]),
                           helper.make_tensor_value_info("q", TensorProto.INT4, [4])],
                          [helper.make_tensor_value_info("y8", TensorProto.FLOAT8E5M2, [4]),
                           helper.make_tensor_value_info("back", TensorProto.FLOAT16, [4]),
                           helper.make_tensor_value_info("qf", TensorProto.FLOAT, [4])])
save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 25)]),
     os.path.join(os.path.dirname(__file__), "cast_narrow.onnx"))
