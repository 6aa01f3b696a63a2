"""fs-opt starts in a blink: `--help` imports xDSL's driver and fsir's registry, none of
fsir's passes, dialects or IR utilities (those load when a command uses them). Checked
by the modules loaded, not by a clock."""

import json
import subprocess
import sys

from fsir import registry

HEAVY = ("fsir.fusion", "fsir.codegen", "fsir.lowering", "fsir.ptx", "fsir.dialects", "fsir.transforms",
         "fsir.frontend", "fsir.runtime", "fsir.sim", "fsir.ir", "fsir.parse", "fsir.api", "numpy", "onnx", "scipy")

HELP = """
import contextlib, io, json, sys
from fsir.tools.fs_opt import FsOptMain
with contextlib.redirect_stdout(io.StringIO()) as text, contextlib.suppress(SystemExit):
    FsOptMain(["--help"])
print(json.dumps({"help": text.getvalue(), "modules": sorted(sys.modules)}))
"""


def test_fs_opt_help_imports_no_pass():
    run = subprocess.run([sys.executable, "-c", HELP], capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    result = json.loads(run.stdout)
    loaded = [m for m in result["modules"] if any(m == h or m.startswith(h + ".") for h in HEAVY)]
    assert loaded == []
    for name, summary in registry.PASS_SUMMARIES.items():  # the help still lists every pass
        assert f"{name:24s} {summary}" in result["help"]


def test_pass_summaries_are_the_passes_docstrings():
    for name, factory in registry.PASSES.items():
        cls = factory()
        assert cls.name == name
        assert registry.PASS_SUMMARIES[name] == (cls.__doc__ or "").strip().splitlines()[0]


def test_every_registry_entry_loads():
    for table in (registry.DIALECTS, registry.OVERRIDING_DIALECTS, registry.TARGETS, registry.FRONTENDS):
        for name, factory in table.items():
            assert factory() is not None, name
