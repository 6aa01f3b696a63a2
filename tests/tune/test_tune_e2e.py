"""A tiny tune of a small GEMM on the `model` measurer: the result is never slower
than today's choice measured the same way, a second run resumes from the log, and
the log applied to a compile forces the best configuration."""

from __future__ import annotations

import io

from tune_graphs import gemm

import fsir
from fsir.dialects.schedule import KernelOp
from fsir.parse import parse_module
from fsir.pipeline import PipelineOptions, lower
from fsir.tools import fs_run
from fsir.tune.apply import tuned
from fsir.tune.cli import summary_table, tune_model
from fsir.tune.database import Database
from fsir.tune.search import SearchMode, SearchOptions

H100 = PipelineOptions(fusion="stitch", gpu="H100")
TEXT = gemm(128, 128, 128, "f16")


def test_tiny_tune_improves_or_equals_today_and_applies(tmp_path):
    log = str(tmp_path / "tune.jsonl")
    search = SearchOptions(trials=6, batch=3, mode=SearchMode.EVOLUTION, seed=0, population=32, generations=2)
    ((kernel, result),) = tune_model(TEXT, H100, search, log, workers=0, progress=False)
    assert result.default is not None and result.default.ok  # today's choice, measured first
    assert result.best is not None and result.best.seconds is not None and result.default.seconds is not None
    assert result.best.seconds <= result.default.seconds
    assert len(result.history) == 6 and result.history == sorted(result.history, reverse=True)
    db = Database(log)
    assert len(db.records) == 6 and len({r.trace for r in db.records}) == 6  # none measured twice
    assert kernel in summary_table([(kernel, result)])
    # resuming: 3 more trials, none of the logged ones again
    more = SearchOptions(trials=3, batch=3, mode=SearchMode.FAST, seed=1)
    tune_model(TEXT, H100, more, log, workers=0, progress=False)
    db = Database(log, warn=io.StringIO())
    assert len(db.records) == 9 and len({r.trace for r in db.records}) == 9
    best = db.best_per_key()
    (rec,) = best.values()
    with tuned(log, H100) as applied:
        assert set(applied) == set(best)
        scheduled = lower(parse_module(TEXT, "<t>"), H100, until="stitch-codegen")
    (k,) = [op for op in scheduled.walk() if isinstance(op, KernelOp)]
    assert k.cost is not None and k.cost.data["config"].data == rec.config
    # fsir.compile(tuning_log=) and fs-run --tuning-log apply it too; without, today's choice
    (kernel,) = fsir.compile(TEXT, gpu="H100", tuning_log=log).kernels
    assert kernel.config == rec.config
    (plain,) = fsir.compile(TEXT, gpu="H100").kernels
    assert plain.config == result.default.config
    model = tmp_path / "gemm.mlir"
    model.write_text(TEXT)
    ptx = {}
    for name, extra in (("tuned", ["--tuning-log", log]), ("plain", [])):
        ptx[name] = tmp_path / f"{name}.ptx"
        assert fs_run.main_impl([str(model), "--device", "sim", "--quiet", "--dump-ptx", str(ptx[name]),
                                 *extra]) == 0
    # the tuned kernel is another kernel exactly when its configuration is another
    differs = ptx["tuned"].read_text() != ptx["plain"].read_text()
    assert differs == (rec.config != result.default.config)
