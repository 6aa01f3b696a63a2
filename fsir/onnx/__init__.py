"""fsir as an ONNX runtime: `fsir.onnx.backend` implements `onnx.backend.base.Backend`."""
