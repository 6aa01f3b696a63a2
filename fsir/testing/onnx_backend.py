"""ONNX's own runner (`onnx.backend.test.BackendTest`) on fsir.onnx.backend, for test files.

    globals().update(backend_test_cases(__name__, r"^test_(relu|add)_cpu$"))

BackendTest builds a test method for every case it knows and skips those its `include`
patterns leave out; these classes keep only the included methods, so a test file's
report lists the cases it runs, not thousands of skips.
"""

from __future__ import annotations

import re

import onnx.backend.test


def backend_test_cases(module: str, pattern: str) -> dict[str, type]:
    from fsir.onnx.backend import FsirBackend

    backend_test = onnx.backend.test.BackendTest(FsirBackend, module)
    backend_test.include(pattern)
    classes = backend_test.test_cases  # a property: each read builds new classes
    for cls in classes.values():
        for name in [n for n in vars(cls) if n.startswith("test_")]:
            if not re.match(pattern, name):
                delattr(cls, name)
    return classes
