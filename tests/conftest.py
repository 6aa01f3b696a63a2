"""pytest options shared by the suites."""

RANDOM_GRAPHS = 200  # tests/pipeline/test_pipeline_fuzz.py: random graphs per run
MUTANTS = 2000  # tests/fuzz/test_mutation_fuzz.py: mutants of the examples per run
MUTANT_BATCH = 100  # mutants per test item (items spread over xdist workers)


def pytest_addoption(parser):
    parser.addoption(
        "--fuzz-count", type=int, default=None,
        help=f"how many random graphs are compiled to PTX and run on the simulator (default {RANDOM_GRAPHS}) "
             f"and how many mutants of the examples are run through fs-run (default {MUTANTS}) per run",
    )
    parser.addoption("--fuzz-seed", type=int, default=0,
                     help="first seed of the random graphs and of the mutants (default 0)")


def pytest_generate_tests(metafunc):
    start = metafunc.config.getoption("--fuzz-seed")
    count = metafunc.config.getoption("--fuzz-count")
    if "fuzz_seed" in metafunc.fixturenames:
        count = RANDOM_GRAPHS if count is None else count
        metafunc.parametrize("fuzz_seed", range(start, start + count))
    if "mutant_seeds" in metafunc.fixturenames:
        count = MUTANTS if count is None else count
        batches = [range(s, min(s + MUTANT_BATCH, start + count)) for s in range(start, start + count, MUTANT_BATCH)]
        metafunc.parametrize("mutant_seeds", batches, ids=[f"{b.start}-{b.stop - 1}" for b in batches])
