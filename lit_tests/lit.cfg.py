# lit configuration for fsir's FileCheck tests (MLIR style: `// RUN:` lines).
import os
import sysconfig

import lit.formats

config.name = "fsir"
config.test_format = lit.formats.ShTest(execute_external=False)
config.suffixes = [".mlir", ".hlo", ".ptx"]
config.test_source_root = os.path.dirname(__file__)
# Where lit writes its outputs and its timing file; tests/test_lit.py gives each run its
# own (`--param exec_root=...`), so concurrent pytest workers never write one file at once.
config.test_exec_root = lit_config.params.get("exec_root", config.test_source_root)
config.excludes = ["Inputs", "lit.cfg.py"]

# Console scripts (fs-opt, fs-run, filecheck) of the interpreter running lit come first.
scripts = sysconfig.get_path("scripts")
config.environment["PATH"] = os.pathsep.join([scripts, os.environ.get("PATH", "")])
for var in ("HOME", "TMPDIR", "FSIR_DEBUG"):
    if var in os.environ:
        config.environment[var] = os.environ[var]
