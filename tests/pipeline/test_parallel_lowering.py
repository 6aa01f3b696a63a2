"""Kernels lowered and printed in worker processes (fsir/codegen/parallel.py,
`fsir.pipeline.compile_ptx`): the PTX is byte-identical to the serial compile's, the
compile counts are the same, and a worker that dies or a kernel that refuses to lower
falls back to the serial compile."""

import json
import os
import re
import sys
from pathlib import Path

import pytest

from fsir.codegen import parallel
from fsir.codegen.options import PipelineOptions
from fsir.dialects import gpu
from fsir.errors import UserError
from fsir.pipeline import compile_ptx, emit_ptx, load, lower
from fsir.stats import collecting

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = sorted((ROOT / "examples").glob("*.mlir"))

sys.path.insert(0, str(ROOT / "benchmarks"))
from compile_speed import bert_stack  # noqa: E402  (beside the benchmark)


@pytest.fixture
def always(monkeypatch):
    """Workers even for a module of one kernel."""
    monkeypatch.setattr(parallel, "MIN_KERNELS", 1)


def stubs(lowered) -> int:
    """The gpu.funcs of `lowered` that are stubs (their body only a `gpu.return`)."""
    return sum(1 for op in lowered.walk() if isinstance(op, gpu.FuncOp)
               and len(op.body.blocks[0].ops) == 1)


def serial(module, options):
    with collecting() as counts:
        lowered = lower(module, options)
        text = emit_ptx(lowered, options)
    return text, counts.result()


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.name)
def test_examples_identical_ptx(path, always):
    module = load(path)
    expected, counts = serial(module, PipelineOptions())
    with collecting() as got:
        lowered, text = compile_ptx(module, PipelineOptions(jobs=2))
    assert text == expected
    assert got.result() == counts
    kernels = len(parallel.first_kernels(lower(module, PipelineOptions(), until="stitch-codegen")))
    assert (stubs(lowered) > 0) == (kernels > 1)  # one kernel: nothing to share


def test_bert_layers_identical_ptx(always):
    """Two BERT layers: kernels of equal structure share a function, in both compiles."""
    module = load(bert_stack(2))
    expected, counts = serial(module, PipelineOptions())
    with collecting() as got:
        lowered, text = compile_ptx(module, PipelineOptions(jobs=3))
    assert text == expected
    assert got.result() == counts
    assert stubs(lowered) > 0
    assert len(re.findall(r"^\.visible \.entry", text, re.M)) == sum(
        1 for op in lowered.walk() if isinstance(op, gpu.FuncOp))


def test_few_kernels_stay_serial():
    module = load(ROOT / "examples" / "softmax.mlir")
    lowered, text = compile_ptx(module, PipelineOptions(jobs=2))
    assert stubs(lowered) == 0
    assert text == serial(module, PipelineOptions())[0]


def die(share):
    """A worker that dies (a module-level function: the pool pickles it by name)."""
    os._exit(3)


def refuse(share):
    """A worker whose kernels refuse to lower."""
    return None, {"kernels_lowered": 1}


def test_worker_crash_falls_back(always, monkeypatch):
    monkeypatch.setattr(parallel, "_work", die)
    module = load(bert_stack(1))
    expected, counts = serial(module, PipelineOptions())
    with pytest.warns(RuntimeWarning, match=r"compile worker failed \(BrokenProcessPool.*lowering serially"), \
            collecting() as got:
        lowered, text = compile_ptx(module, PipelineOptions(jobs=2))
    assert text == expected
    assert stubs(lowered) == 0
    assert got.result().kernels_lowered >= counts.kernels_lowered


def test_refusal_falls_back(always, monkeypatch):
    """A kernel a worker cannot lower sends the compile back to the serial path, which
    splits or reports it as stitch-codegen's trial lowering does."""
    monkeypatch.setattr(parallel, "_work", refuse)
    module = load(bert_stack(1))
    lowered, text = compile_ptx(module, PipelineOptions(jobs=2))
    assert text == serial(module, PipelineOptions())[0]
    assert stubs(lowered) == 0


def test_largest_first():
    class K:
        def __init__(self, n):
            self.n = n

        def walk(self):
            return range(self.n)

    ks = [K(n) for n in (50, 10, 40, 30, 20)]
    assert parallel.largest_first(ks) == [0, 2, 3, 4, 1]  # type: ignore[arg-type]  # sizes only


def test_jobs_option(monkeypatch):
    assert PipelineOptions(jobs=2).key() == PipelineOptions().key()
    with pytest.raises(UserError, match="jobs=0"):
        PipelineOptions(jobs=0)
    monkeypatch.setenv("FSIR_JOBS", "3")
    assert parallel.jobs_wanted(None) == 3
    assert parallel.jobs_wanted(1) == 1
    monkeypatch.setenv("FSIR_JOBS", "many")
    with pytest.raises(UserError, match="FSIR_JOBS"):
        parallel.jobs_wanted(None)


def test_fs_run_same_record(always, tmp_path):
    """fs-run with kernels lowered by workers: the same outputs, counters and per-launch
    model figures (registers, shared bytes, modeled time: from the workers' `resources`,
    the module holding only stubs)."""
    from fsir.tools.fs_run import main_impl

    lowered, _ = compile_ptx(load("examples/hlo/softmax.hlo"), PipelineOptions(fusion="none", jobs=2))
    assert stubs(lowered) > 1  # the workers lowered them
    records = []
    for jobs in ("1", "2"):
        js = tmp_path / f"stats{jobs}.json"
        assert main_impl(["examples/hlo/softmax.hlo", "--device", "sim", "--fusion", "none", "--stats-json",
                          str(js), "--quiet", "-j", jobs]) == 0
        records.append(json.loads(js.read_text()))
    assert records[0]["launches"] > 1 and records[0]["per_launch"][0]["registers"] > 0
    assert records[0] == records[1]


def test_workers_fill_and_read_the_kernel_cache(always, tmp_path):
    """Workers lower the kernels the cache the parent made active lacks, and the parent
    writes their PTX entries: a cold compile writes one entry per kernel (and one for
    the whole compile), a warm one without the whole-compile entry hits every kernel
    and lowers none, and the PTX is the same."""
    from fsir.cache import KernelCache, active

    module = load(bert_stack(1))
    store = KernelCache(tmp_path)
    texts, stats = [], []
    for _ in range(2):
        with collecting() as counts, active(store):
            texts.append(compile_ptx(module, PipelineOptions(jobs=2), whole=False)[1])
        stats.append(counts.result())
    kernels = stats[0].cache_misses
    assert kernels > 1 and stats[0].kernels_lowered == kernels and len(list(tmp_path.rglob("*.json"))) == kernels
    assert (stats[1].cache_hits, stats[1].cache_misses, stats[1].kernels_lowered) == (kernels, 0, 0)
    assert texts[0] == texts[1] == serial(module, PipelineOptions())[0]


@pytest.mark.full
def test_resnet50_identical_ptx():
    """ResNet-50 (the onnx wheel's light model, `compile_speed.py --resnet`): 36
    distinct kernels, enough for workers without forcing them."""
    from compile_speed import resnet50

    module = load(resnet50())
    expected, counts = serial(module, PipelineOptions())
    with collecting() as got:
        lowered, text = compile_ptx(module, PipelineOptions(jobs=2))
    assert stubs(lowered) >= parallel.MIN_KERNELS
    assert text == expected
    assert got.result() == counts
