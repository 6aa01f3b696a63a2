"""Test support shared by fsir's test suites: random graph generation (random_graphs)."""
