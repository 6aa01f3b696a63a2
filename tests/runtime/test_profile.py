"""Per-launch records, figures, the profile table, the Chrome trace and the progress bar
(fsir/runtime/profile.py, progress.py)."""

import io
import json
from dataclasses import fields

import numpy as np
import pytest

import fsir
from fsir.runtime.device import SimDevice
from fsir.runtime.executor import execute
from fsir.runtime.profile import LaunchRecord, RunStats, chrome_trace, format_profile, model_launches
from fsir.runtime.progress import progress_over, sim_progress
from fsir.sim import LaunchStats

SOFTMAX = "examples/hlo/softmax.hlo"


def softmax_input():
    return np.random.default_rng(0).standard_normal((32, 128)).astype(np.float32)


@pytest.fixture(scope="module")
def unfused():
    exe = fsir.compile(SOFTMAX, fusion="none")
    exe.run([softmax_input()], device="sim")
    return exe


def test_last_stats_keeps_the_count_and_lists_each_launch(unfused):
    stats = unfused.last_stats
    assert isinstance(stats, RunStats) and isinstance(stats.totals, LaunchStats)
    assert isinstance(stats.launches, int) and stats.launches == len(stats.per_launch) > 1
    for f in fields(LaunchStats):  # every summed counter is the sum of the launches'
        assert getattr(stats, f.name) == sum(getattr(r.stats, f.name) for r in stats.per_launch), f.name
    assert all(isinstance(r, LaunchRecord) and r.kernel.startswith("main_k") for r in stats.per_launch)
    assert stats.global_unique_bytes > 0 and stats.per_launch[0].grid == (4, 1, 1)


def test_figures_and_profile_table(unfused):
    figures = unfused.last_stats.figures("A100")
    assert len(figures) == unfused.last_stats.launches
    assert sum(f.bytes for f in figures) == unfused.last_stats.global_unique_bytes
    assert all(f.modeled_us > 0 and f.registers > 0 and f.instructions["int"] > 0 for f in figures)
    table = format_profile(figures, "A100", {k.name: k for k in unfused.kernels})
    lines = table.splitlines()
    assert "kernel-time model" in lines[0] and "A100" in lines[0]
    rows = lines[3:]
    assert len(rows) == len(figures)
    times = [float(row.split()[1]) for row in rows]
    assert times == sorted(times, reverse=True)  # sorted by time
    assert sum(float(row.split()[0]) for row in rows) == pytest.approx(100, abs=0.5)
    assert all(" × " in row for row in rows) and any("loop" in row for row in rows)  # dims and mapping


def test_chrome_trace_of_timeline_modeled_launches():
    exe = fsir.compile(SOFTMAX, fusion="none")
    records: list[LaunchRecord] = []
    _, totals = execute(exe.module, [softmax_input()], SimDevice(model_launches=True), ptx=exe.ptx, record=records)
    assert all(r.timeline is not None and r.timeline_us is not None for r in records)
    figures = model_launches(exe.module, records, fsir.gpuspec.gpu_spec("A100"))
    trace = json.loads(json.dumps(chrome_trace(records, figures, "A100")))  # valid JSON
    slices = [e for e in trace["traceEvents"] if e["ph"] == "X"]
    assert len(slices) == totals.launches == len(records)
    for e, r in zip(slices, records):
        assert e["name"] == r.kernel and e["tid"] == r.stream and e["pid"] == 0 and e["dur"] > 0
        assert "timeline model" in e["args"]["time"] and e["args"]["registers"] > 0
        assert e["args"]["bytes"] == r.stats.global_unique_bytes
    starts = [e["ts"] for e in slices]
    assert starts == sorted(starts) and all(a["ts"] + a["dur"] <= b["ts"] for a, b in zip(slices, slices[1:]))
    names = {e["name"]: e["args"]["name"] for e in trace["traceEvents"] if e["ph"] == "M"}
    assert "a model" in names["process_name"] and names["thread_name"] == "stream 0"


def test_trace_without_timeline_lays_launches_end_to_end(unfused):
    records = list(unfused.last_stats.per_launch)
    figures = unfused.last_stats.figures()
    slices = [e for e in chrome_trace(records, figures, "A100")["traceEvents"] if e["ph"] == "X"]
    assert [e["dur"] for e in slices] == pytest.approx([f.modeled_us for f in figures])
    assert all(b["ts"] == pytest.approx(a["ts"] + a["dur"]) for a, b in zip(slices, slices[1:]))
    assert all("kernel-time model" in e["args"]["time"] for e in slices)


class TtyStringIO(io.StringIO):
    def isatty(self) -> bool:
        return True


def run_softmax_with_bar(file, enabled):
    """The softmax run inside a bar of our own (the run's own bar off), so the blocks the
    simulator reports through its hook land in ours."""
    exe = fsir.compile(SOFTMAX, fusion="none")
    records: list[LaunchRecord] = []
    with sim_progress(1, enabled=enabled, file=file, delay=0) as bar:
        bar.launch_started(1)
        execute(exe.module, [softmax_input()], SimDevice(), ptx=exe.ptx, progress=False, record=records)
    return bar, records


def test_progress_bar_on_a_forced_stream_counts_blocks():
    out = io.StringIO()
    bar, records = run_softmax_with_bar(out, enabled=True)
    assert "launch 1/1" in out.getvalue() and "block" in out.getvalue()
    assert bar.bar.n == sum(int(np.prod(r.grid)) for r in records)  # every block, through the hook


def test_progress_bar_silent_off_a_terminal_and_when_disabled():
    for file, enabled in ((io.StringIO(), None), (TtyStringIO(), False)):
        run_softmax_with_bar(file, enabled)
        assert file.getvalue() == ""


def test_progress_over_shows_only_when_enabled_or_on_a_terminal():
    shown, tty, hidden = io.StringIO(), TtyStringIO(), io.StringIO()
    assert list(progress_over(range(3), desc="cases", enabled=True, file=shown, delay=0)) == [0, 1, 2]
    assert list(progress_over(range(3), desc="cases", file=tty, delay=0)) == [0, 1, 2]
    assert list(progress_over(range(3), desc="cases", file=hidden, delay=0)) == [0, 1, 2]
    assert "cases" in shown.getvalue() and "0/3" in shown.getvalue() and "cases" in tty.getvalue()
    assert hidden.getvalue() == ""
