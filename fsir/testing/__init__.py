"""Test support shared by fsir's test suites: random graph generation (random_graphs), gpu-level
kernels and their PTX (ptx), generated kernels for every op/type the PTX printer supports
(ptx_cases)."""
