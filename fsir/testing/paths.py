"""Where the tests find the checkout's files: the examples, the lit tests, the nvcc-made PTX.

The tests run from a source checkout with fsir installed in development mode
(`pip install -e`), so the checkout is the package's parent directory.
"""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"
LIT_TESTS = ROOT / "lit_tests"
CUDA_PTX = ROOT / "tests" / "sim" / "cuda"  # nvcc's PTX of tests/sim/cuda/*.cu (regen.sh)
