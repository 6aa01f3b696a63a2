"""Test support shared by fsir's test suites and benchmarks: compiling a graph to PTX and
checking it on the simulator against the reference interpreter (pipeline), graphs several
suites compile (graphs), random graph generation (random_graphs), gpu-level kernels and
their PTX (ptx), generated kernels for every op/type the PTX printer supports (ptx_cases),
and the checkout's files the tests read (paths)."""
