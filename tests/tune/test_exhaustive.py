"""`fs-tune --exhaustive`: every statically valid candidate of a kernel's space measured
once, as log records of the search's format; resumed from the log; a space over the
limit refused before anything is measured."""

from __future__ import annotations

import math

import pytest
from tune_graphs import column_sum

from fsir.errors import UserError
from fsir.pipeline import PipelineOptions
from fsir.tune.cli import main, summary_table, tune_model
from fsir.tune.database import Database
from fsir.tune.exhaustive import SpaceTooLarge, rule_valid
from fsir.tune.measure import stitched_from_text, task_space
from fsir.tune.search import SearchOptions
from fsir.tune.space import Checked, Checker
from fsir.tune.task import capture, discover

H100 = PipelineOptions(fusion="stitch", gpu="H100")
TEXT = column_sum(256, 32)  # a row space of a few candidates (thread and interleaved columns)


def valid_traces() -> tuple[str, set]:
    stitched = stitched_from_text(TEXT, H100)
    (task,) = discover(stitched, H100)
    space = task_space(TEXT, H100, task.key)
    checker = Checker(capture(stitched, H100, task.key), space)
    return task.key, {c.trace for c in map(checker.check, space.traces()) if isinstance(c, Checked)}


def test_exhaustive_measures_every_valid_candidate_once_and_resumes(tmp_path):
    log = tmp_path / "tune.jsonl"
    key, valid = valid_traces()
    assert 2 <= len(valid) <= 40
    ((kernel, result),) = tune_model(TEXT, H100, SearchOptions(batch=4), str(log), workers=0, progress=False,
                                     exhaustive=64)
    records = Database(log).records
    assert {r.trace for r in records} == valid and len(records) == len(valid)
    assert all(r.key == key and r.measurer == "model" for r in records)
    ok = [r for r in records if r.ok]
    assert result.best is not None and result.best.seconds == min(r.seconds or math.inf for r in ok)
    assert result.default is not None and records[0].config == result.default.config  # today's choice first
    assert result.best.seconds <= result.default.seconds
    assert kernel in summary_table([(kernel, result)])
    lines = log.read_text()
    tune_model(TEXT, H100, SearchOptions(batch=4), str(log), workers=0, progress=False, exhaustive=64)
    assert log.read_text() == lines  # everything was logged: nothing measured again


def test_a_space_over_the_limit_is_refused_before_anything_is_measured(tmp_path, capsys):
    log = tmp_path / "tune.jsonl"
    key, _ = valid_traces()
    space = task_space(TEXT, H100, key)
    n = len(rule_valid(space, 10_000, "k"))
    with pytest.raises(SpaceTooLarge, match=rf"k: its space has {n} rule-valid candidates, over the exhaustive "
                                            rf"limit of {n - 1}; --limit {n} measures them all"):
        rule_valid(space, n - 1, "k")
    assert isinstance(SpaceTooLarge("x"), UserError)
    with pytest.raises(SystemExit) as exit_:
        main([str(tmp_path / "m.mlir"), "--log", str(log), "--exhaustive", "--limit", "1", "--workers", "0"]
             if (tmp_path / "m.mlir").write_text(TEXT) else [])
    assert exit_.value.code == 1
    err = capsys.readouterr().err
    assert f"over the exhaustive limit of 1; --limit {n} measures them all" in err and "Traceback" not in err
    assert not log.exists()
