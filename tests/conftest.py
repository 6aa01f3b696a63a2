"""pytest options shared by the suites."""

import atexit
import os
import shutil
import tempfile

# The persistent kernel cache (fsir/cache.py) is off in the suite (fs-run uses it by
# default), for the tools run in subprocesses too: a test's result must not depend on which tests ran before it, and
# the user's cache must not be read or written. The cache's own tests turn it on, in
# their own directories; this one (removed at exit) catches any that forget to.
os.environ["FSIR_CACHE"] = "0"
os.environ["FSIR_CACHE_DIR"] = tempfile.mkdtemp(prefix="fsir-test-cache-")
atexit.register(shutil.rmtree, os.environ["FSIR_CACHE_DIR"], ignore_errors=True)
# Compiles lower their kernels in this process (fsir/codegen/parallel.py): the suite's
# own workers (pytest -n) fill the cores already, so compile workers would only add
# their start-up. tests/pipeline/test_parallel_lowering.py asks for workers explicitly.
os.environ["FSIR_JOBS"] = "1"

RANDOM_GRAPHS = 200  # tests/pipeline/test_pipeline_fuzz.py: random graphs per run
MUTANTS = 1000  # tests/fuzz/test_mutation_fuzz.py: mutants of the examples per run (CI; --fuzz-count for more)
ATTENTION_GRAPHS = 60  # tests/pipeline/test_pipeline_fuzz_attention.py: attention/normalisation graphs per run
MUTANT_BATCH = 100  # mutants per test item (items spread over xdist workers)


def pytest_addoption(parser):
    parser.addoption(
        "--fuzz-count", type=int, default=None,
        help=f"how many random graphs are compiled to PTX and run on the simulator (default {RANDOM_GRAPHS}) "
             f"and how many mutants of the examples are run through fs-run (default {MUTANTS}) per run",
    )
    parser.addoption("--fuzz-seed", type=int, default=0,
                     help="first seed of the random graphs and of the mutants (default 0)")
    parser.addoption(
        "--full", action="store_true",
        help="also run the tests marked `full` (deselected by default, minutes each): the full-size "
             "BERT layer (examples/bert_layer.mlir, B=2 S=128 H=768) on the simulator; CI runs the same "
             "checks on the BERT layer at B=2 S=16 H=64. `pytest --full` runs everything, "
             "`pytest --full -m full` only these",
    )


def pytest_configure(config):
    config.addinivalue_line(
        "markers", "full: minutes-long case of a check CI runs on smaller inputs; runs only with --full")


def pytest_collection_modifyitems(config, items):
    if config.getoption("--full"):
        return
    # deselected, not skipped: the summary line counts them as "deselected"
    deselected = [item for item in items if item.get_closest_marker("full")]
    if deselected:
        config.hook.pytest_deselected(items=deselected)
        items[:] = [item for item in items if not item.get_closest_marker("full")]


def pytest_generate_tests(metafunc):
    start = metafunc.config.getoption("--fuzz-seed")
    count = metafunc.config.getoption("--fuzz-count")
    if "fuzz_seed" in metafunc.fixturenames:
        count = RANDOM_GRAPHS if count is None else count
        metafunc.parametrize("fuzz_seed", range(start, start + count))
    if "attention_seed" in metafunc.fixturenames:
        count = ATTENTION_GRAPHS if count is None else count
        metafunc.parametrize("attention_seed", range(start, start + count))
    if "mutant_seeds" in metafunc.fixturenames:
        count = MUTANTS if count is None else count
        batches = [range(s, min(s + MUTANT_BATCH, start + count)) for s in range(start, start + count, MUTANT_BATCH)]
        metafunc.parametrize("mutant_seeds", batches, ids=[f"{b.start}-{b.stop - 1}" for b in batches])
