"""pytest options shared by the suites."""


def pytest_addoption(parser):
    parser.addoption(
        "--fuzz-count", type=int, default=200,
        help="random graphs compiled to PTX and run on the simulator per run (default 200)",
    )
    parser.addoption("--fuzz-seed", type=int, default=0, help="first seed of the random graphs (default 0)")


def pytest_generate_tests(metafunc):
    if "fuzz_seed" in metafunc.fixturenames:
        start = metafunc.config.getoption("--fuzz-seed")
        count = metafunc.config.getoption("--fuzz-count")
        metafunc.parametrize("fuzz_seed", range(start, start + count))
