"""fs-run --profile, --trace, --stats-json's per-launch list, and the progress bar / --quiet."""

import io
import json
import sys

import pytest

from fsir.runtime import progress
from fsir.tools.fs_run import main_impl

MODEL = "examples/hlo/softmax.hlo"
COUNTERS = ("launches", "global_load_bytes", "global_store_bytes", "global_unique_bytes", "global_sectors",
            "instructions", "waits", "posts", "spins")


def test_stats_json_per_launch_sums_to_the_totals(tmp_path):
    js = tmp_path / "stats.json"
    assert main_impl([MODEL, "--device", "sim", "--fusion", "none", "--stats-json", str(js), "--quiet"]) == 0
    rec = json.loads(js.read_text())
    assert rec["launches"] == len(rec["per_launch"]) > 1
    for key in COUNTERS:
        assert rec[key] == sum(item[key] for item in rec["per_launch"]), key
    first = rec["per_launch"][0]
    assert first["grid"] == [4, 1, 1] and first["registers"] > 0 and first["kernel_time_us"] > 0
    assert sum(first["instructions_by_class"].values()) > 0
    assert "modeled_us" not in first  # the timeline model's µs, only with --timeline or --trace


def test_profile_table(capsys):
    assert main_impl([MODEL, "--device", "sim", "--fusion", "none", "--profile", "--quiet"]) == 0
    out = capsys.readouterr().out
    lines = out.splitlines()
    head = next(i for i, line in enumerate(lines) if line.startswith("profile:"))
    assert "8 launches" in lines[head] and "a model" in lines[head]
    assert "grid × block" in lines[head + 1] and "regs" in lines[head + 1] and "sectors" in lines[head + 1]
    rows = lines[head + 3:head + 11]
    times = [float(r.split()[1]) for r in rows]
    assert times == sorted(times, reverse=True)
    assert any("row warp/" in r for r in rows) and any("loop loop/" in r for r in rows)  # mapping and config


def test_trace_is_a_chrome_trace_of_the_timeline_model(tmp_path):
    trace, js = tmp_path / "run.json", tmp_path / "stats.json"
    assert main_impl([MODEL, "--device", "sim", "--fusion", "none", "--trace", str(trace), "--stats-json", str(js),
                      "--quiet"]) == 0
    events = json.loads(trace.read_text())["traceEvents"]
    rec = json.loads(js.read_text())
    slices = [e for e in events if e["ph"] == "X"]
    assert len(slices) == rec["launches"]
    assert [e["name"] for e in slices] == [item["kernel"] for item in rec["per_launch"]]
    for e, item in zip(slices, rec["per_launch"]):
        assert {"pid", "tid", "ts", "dur", "args"} <= set(e) and e["dur"] > 0
        assert e["args"]["bytes"] == item["global_unique_bytes"] and "timeline model" in e["args"]["time"]
        assert e["args"]["timeline_us"] == pytest.approx(item["modeled_us"], abs=1e-3)
    assert any(e["ph"] == "M" and e["name"] == "thread_name" for e in events)


class TtyStringIO(io.StringIO):
    def isatty(self) -> bool:
        return True


@pytest.mark.parametrize("quiet", [False, True])
def test_progress_bar_on_a_terminal_unless_quiet(monkeypatch, quiet):
    stderr = TtyStringIO()
    monkeypatch.setattr(progress, "PROGRESS_DELAY_S", 0.0)  # every run counts as long
    monkeypatch.setattr(sys, "stderr", stderr)
    assert main_impl([MODEL, "--device", "sim", "--fusion", "none"] + ["--quiet"] * quiet) == 0
    shown = "block" in stderr.getvalue() and "launch" in stderr.getvalue()
    assert shown is not quiet


def test_no_progress_bar_off_a_terminal(monkeypatch):
    stderr = io.StringIO()
    monkeypatch.setattr(progress, "PROGRESS_DELAY_S", 0.0)
    monkeypatch.setattr(sys, "stderr", stderr)
    assert main_impl([MODEL, "--device", "sim", "--fusion", "none"]) == 0
    assert stderr.getvalue() == ""
