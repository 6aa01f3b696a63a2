"""fsir's dialects and passes reach plain xdsl-opt through the xdsl.universe entry point."""

import subprocess
import sysconfig
from pathlib import Path

SCRIPTS = Path(sysconfig.get_path("scripts"))

SRC = """
func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  %c = graph.constant dense<1.0> : tensor<4xf32>
  %y = graph.mul %x, %c : tensor<4xf32>
  func.return %y : tensor<4xf32>
}
"""


def test_xdsl_opt_sees_graph_dialect_and_passes():
    proc = subprocess.run([SCRIPTS / "xdsl-opt", "-p", "graph-canonicalize"], input=SRC,
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert "graph.mul" not in proc.stdout  # x * 1 folded away by fsir's pattern
    assert "func.return %x" in proc.stdout


def test_fs_opt_help_lists_fsir_passes():
    proc = subprocess.run([SCRIPTS / "fs-opt", "--help"], capture_output=True, text=True)
    assert proc.returncode == 0
    assert "graph-canonicalize" in proc.stdout and "graph-shape-inference" in proc.stdout
