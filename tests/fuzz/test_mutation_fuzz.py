"""Mutation fuzzing (issue #11 item 6): mutants of the ONNX, HLO and .mlir examples
(tests/fuzz/mutants.py) are run as a user would, through fs-run's main() in-process, on the
simulator with --check for the small models and on the reference interpreter for the large
ones. Each must either run (exit 0; with --check, its outputs match the reference) or be
refused with exit 1 and a located `file:line:col: error:` message: no traceback, no internal
error (exit 3), no wrong result (exit 2).

1,000 mutants per run by default (seeds 0..999, in batches of 100);
`pytest tests/fuzz --fuzz-count 20000 --fuzz-seed 5000` runs more. A failing seed is
reproduced by `.venv/bin/python tests/fuzz/mutants.py --seed N`.
"""

from __future__ import annotations

import contextlib
import io
import random
import re
import signal

import pytest
from mutants import CORPUS, PATTERN_MUTATORS, fs_run_argv, mutant

from fsir.tools import fs_run

LOCATED = re.compile(r"^(?P<file>[^\s:][^:]*):(?P<line>\d+):(?P<col>\d+): error: ", re.M)
SECONDS_PER_MUTANT = 30


class _Timeout(BaseException):  # not an Exception, so fs-run's internal-error handler lets it through
    pass


def _alarm(signum, frame):
    raise _Timeout


def run_mutant(seed: int, tmp_path) -> str | None:
    """Run one mutant with fs-run; None when it behaved, else what went wrong."""
    m = mutant(seed)
    path = tmp_path / f"mutant.{m.example.kind}"  # one name per kind: fs-run remembers sources by name
    path.write_bytes(m.data)
    out, err = io.StringIO(), io.StringIO()
    old = signal.signal(signal.SIGALRM, _alarm)
    signal.alarm(SECONDS_PER_MUTANT)
    code: int | str | None
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            fs_run.main(fs_run_argv(m, path))
        code = 0
    except SystemExit as exit_:
        code = exit_.code
    except _Timeout:
        code = f"timeout after {SECONDS_PER_MUTANT} s"
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)
    stderr = err.getvalue()
    what = f"seed {seed} ({m.mutator} of {m.example.path.name})"
    if code == 0 and "Traceback" not in stderr:
        return None
    if code == 1:
        located = LOCATED.search(stderr)
        if located and located.group("file") == str(path) and "Traceback" not in stderr:
            return None
        return f"{what}: refused without a location: {stderr.strip()[:400]}"
    return f"{what}: exit {code}: {stderr.strip()[:600]}"


def test_mutants(mutant_seeds, tmp_path):
    failures = [f for f in (run_mutant(s, tmp_path) for s in mutant_seeds) if f is not None]
    assert not failures, (f"{len(failures)} of {len(mutant_seeds)} mutants misbehaved "
                          "(reproduce: .venv/bin/python tests/fuzz/mutants.py --seed N):\n" + "\n".join(failures))


def test_mutants_are_reproducible():
    """A seed names one mutant: the same bytes every time."""
    assert mutant(12345).data == mutant(12345).data
    assert len({mutant(s).data for s in range(20)}) > 15


@pytest.mark.parametrize("seed", [0])
def test_an_unmutated_example_runs(seed, tmp_path):
    """The harness itself: an example as written runs and exits 0."""
    m = mutant(seed)
    path = tmp_path / f"ok.{m.example.kind}"
    path.write_bytes(m.example.path.read_bytes())
    with pytest.raises(SystemExit) as exit_, contextlib.redirect_stdout(io.StringIO()):
        fs_run.main(fs_run_argv(m, path))
    assert exit_.value.code == 0


@pytest.mark.parametrize("example", ["attention.mlir", "layernorm_dot.mlir"])
@pytest.mark.parametrize("pattern", sorted(PATTERN_MUTATORS))
def test_pattern_mutants_run_on_the_simulator(example, pattern, tmp_path):
    """A pattern insertion keeps the graph valid: its mutant is not refused but runs
    with stitch fusion on the simulator and matches the reference (exit 0)."""
    path = tmp_path / example
    path.write_bytes(PATTERN_MUTATORS[pattern]((CORPUS / example).read_bytes(), random.Random(7)))
    with pytest.raises(SystemExit) as exit_, contextlib.redirect_stdout(io.StringIO()):
        fs_run.main([str(path), "--device", "sim", "--check"])
    assert exit_.value.code == 0, path.read_text()
    assert "%mut" in path.read_text()  # the pattern was inserted, not a text mutation instead


def test_the_corpus_gets_pattern_mutants():
    """Within the CI seeds, every pattern reaches the corpus graphs run on the simulator."""
    from conftest import MUTANTS

    picked = {(m.example.path.name, m.mutator) for m in map(mutant, range(MUTANTS)) if m.example.path.parent == CORPUS}
    assert {name for _, name in picked} == set(PATTERN_MUTATORS)
    assert {example for example, _ in picked} == {"attention.mlir", "layernorm_dot.mlir"}
