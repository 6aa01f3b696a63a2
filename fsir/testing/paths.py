"""Where the tests find the checkout's files: the examples, the lit tests, the nvcc-made PTX.

The tests run from a source checkout with fsir installed in development mode
(`pip install -e`), so the checkout is the package's parent directory.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"
LIT_TESTS = ROOT / "lit_tests"
CUDA_PTX = ROOT / "tests" / "sim" / "cuda"  # nvcc's PTX of tests/sim/cuda/*.cu (regen.sh)


def example_module(relative: str) -> ModuleType:
    """An example's Python script (e.g. "recom/generate.py") as a module of its own
    name ("examples.recom.generate"): several examples name their generator
    `generate.py`, and importing them by path entry would let the first one loaded in
    a test process stand for all of them."""
    name = "examples." + relative.removesuffix(".py").replace("/", ".")
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, EXAMPLES / relative)
        assert spec is not None and spec.loader is not None, relative
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module  # dataclasses look their module up while the file runs
        spec.loader.exec_module(module)
    return sys.modules[name]
