"""Compile work, pinned: a change that multiplies what a compile does fails here, by name.

The counts (`fsir.stats.CompileStats`: fusion candidates, plans evaluated, fusions
generated to time them, summaries scored, candidates and kernels lowered, fusions split,
ptxas runs)
are deterministic, so unlike a timing they can be asserted. Each model is compiled in
stitch mode without the kernel cache, in one fresh process (fsir keeps kernels built
earlier in a process, so the counts depend on what the process compiled before).

An intended change in the work moves the pins: `python tests/test_compile_counts.py`
prints the current counts to paste into PINNED.
"""

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
MARGIN = 0.10  # relative; and at least ABSOLUTE
ABSOLUTE = 2

# the BERT layer at CI size (B=2 S=16 H=64) from PyTorch and from JAX, a CNN, RECom
PINNED: dict[str, dict[str, int]] = {
    "examples/onnx/bert_layer.onnx": {
        "fusion_candidates": 142, "plans_evaluated": 7, "fusions_generated": 19, "summaries_scored": 124,
        "candidates_lowered": 0, "kernels_lowered": 7, "fusions_split": 0, "ptxas_calls": 0,
    },
    "examples/hlo/bert_layer.hlo": {
        "fusion_candidates": 440, "plans_evaluated": 3, "fusions_generated": 5, "summaries_scored": 66,
        "candidates_lowered": 0, "kernels_lowered": 5, "fusions_split": 0, "ptxas_calls": 0,
    },
    "examples/cusync/conv2.mlir": {
        "fusion_candidates": 2, "plans_evaluated": 1, "fusions_generated": 0, "summaries_scored": 2,
        "candidates_lowered": 0, "kernels_lowered": 1, "fusions_split": 0, "ptxas_calls": 0,
    },
    "examples/recom/recom_8.mlir": {
        "fusion_candidates": 27, "plans_evaluated": 3, "fusions_generated": 6, "summaries_scored": 113,
        "candidates_lowered": 0, "kernels_lowered": 3, "fusions_split": 0, "ptxas_calls": 0,
    },
}

COUNT = """
import json, sys
import fsir
print(json.dumps({m: fsir.compile(m, cache=False).compile_stats.as_dict() for m in sys.argv[1:]}))
"""


def current_counts() -> dict[str, dict[str, int]]:
    """Every pinned model's counts, from one fresh process (models in PINNED's order)."""
    run = subprocess.run([sys.executable, "-c", COUNT, *PINNED], cwd=ROOT, capture_output=True, text=True,
                         timeout=300)
    assert run.returncode == 0, run.stderr
    return json.loads(run.stdout)


@pytest.fixture(scope="module")
def counts() -> dict[str, dict[str, int]]:
    return current_counts()


@pytest.mark.parametrize("model", PINNED)
def test_compile_counts_stay_pinned(counts, model):
    got = counts[model]
    off = []
    for name, pinned in PINNED[model].items():
        margin = max(ABSOLUTE, round(MARGIN * pinned))
        if abs(got[name] - pinned) > margin:
            off.append(f"{name} = {got[name]}, pinned {pinned} ± {margin}")
    assert not off, (f"{model}: compile work changed: " + "; ".join(off)
                     + " (if intended, re-pin from `python tests/test_compile_counts.py`)")


def test_a_compile_without_the_cache_looks_nothing_up(counts):
    assert all(c["cache_hits"] == c["cache_misses"] == 0 for c in counts.values())


if __name__ == "__main__":
    for model, c in current_counts().items():
        print(f'    "{model}": {{')
        items = [f'"{k}": {v}' for k, v in c.items() if not k.startswith("cache_")]
        print("        " + ", ".join(items[:4]) + ",\n        " + ", ".join(items[4:]) + ",\n    },")
