"""The lint gate: ruff and pyright, as configured in pyproject.toml, pass over the code.

Needs the `[test]` extra installed in the running interpreter's environment: ruff and
pyright are run from its scripts directory (`sysconfig.get_path("scripts")`), from the
repository root so the `[tool.ruff]` and `[tool.pyright]` sections apply. The pyright
package on PyPI is a wrapper around the Node.js type checker, which its wheel bundles:
it needs `node` (>= 14) on PATH, or it fetches one through nodeenv, which needs the
network once. PYRIGHT_PYTHON_IGNORE_WARNINGS keeps it from asking PyPI for a newer
version, so it runs offline. pyright over fsir/ takes one to two minutes.
"""

import os
import re
import subprocess
import sysconfig
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SCRIPTS = Path(sysconfig.get_path("scripts"))

# The checks hold fewer than this many suppressions in fsir/, each with a reason.
MAX_TYPE_IGNORES = 20


def _run(*command: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(SCRIPTS / command[0]), *command[1:]],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
        env={**os.environ, "PYRIGHT_PYTHON_IGNORE_WARNINGS": "1"},
    )


def test_ruff_is_clean():
    result = _run("ruff", "check", "fsir", "benchmarks", "tests")
    assert result.returncode == 0, f"ruff check failed:\n{result.stdout}{result.stderr}"


def test_pyright_is_clean():
    result = _run("pyright")
    assert result.returncode == 0, f"pyright failed:\n{result.stdout}{result.stderr}"
    assert re.search(r"\b0 errors\b", result.stdout), result.stdout


def test_type_ignores_are_few_and_explained():
    ignores = [
        (f"{path.relative_to(ROOT)}:{number}", line)
        for path in sorted((ROOT / "fsir").rglob("*.py"))
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if "type: ignore" in line
    ]
    listing = "\n".join(f"{where}: {line.strip()}" for where, line in ignores)
    assert len(ignores) < MAX_TYPE_IGNORES, f"{len(ignores)} `type: ignore` in fsir/:\n{listing}"
    unexplained = [f"{where}: {line.strip()}" for where, line in ignores
                   if not re.search(r"type: ignore\[[\w-]+(, *[\w-]+)*\]\s+#\s*\S", line)]
    assert not unexplained, "`type: ignore` without an error code and a reason:\n" + "\n".join(unexplained)
