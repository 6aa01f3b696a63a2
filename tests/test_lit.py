"""Runs the lit/FileCheck suite (lit_tests/) as part of pytest, one item per test file."""

import subprocess
import sysconfig
from pathlib import Path

import pytest

from fsir.testing.paths import LIT_TESTS

LIT_FILES = sorted(
    p for p in LIT_TESTS.rglob("*")
    if p.suffix in (".mlir", ".hlo", ".ptx") and "Inputs" not in p.parts and "Output" not in p.parts
)


@pytest.mark.parametrize("path", LIT_FILES, ids=[str(p.relative_to(LIT_TESTS)) for p in LIT_FILES])
def test_lit(path: Path, tmp_path: Path):
    # each run its own exec root: lit rewrites its timing file there after every run
    lit = str(Path(sysconfig.get_path("scripts")) / "lit")
    proc = subprocess.run([lit, "-v", f"--param=exec_root={tmp_path}", str(path)], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout[-6000:] + proc.stderr[-3000:]
