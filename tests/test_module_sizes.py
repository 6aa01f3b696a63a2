"""Files a reader can hold: no module in fsir/ over 800 lines, no function over 80.

The allow-lists name what is not split yet, each with its reason; they only shrink.
An entry that no longer needs to be there fails too, so a split also removes its entry.
Run as a script to print the modules and functions over the limits:

    .venv/bin/python tests/test_module_sizes.py
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MODULE_LINES = 800
FUNCTION_LINES = 80

# module (relative to the repository) -> why it is still over MODULE_LINES
LONG_MODULES: dict[str, str] = {}

# `module::Qualified.name` -> why it is still over FUNCTION_LINES
LONG_FUNCTIONS: dict[str, str] = {
    "fsir/codegen/latency.py::live_intervals": "one linear scan over a kernel's instructions",
    "fsir/frontend/onnx_ops.py::attention": "ONNX Attention's optional inputs, one after another",
    "fsir/fusion/explorer.py::_explore": "the explorer's search loop",
    "fsir/lowering/columns.py::ColumnsLowering.body": "the columns kernel's emitter",
    "fsir/runtime/executor.py::_execute": "the host function's interpreter: one case per host op",
    "fsir/sim/chunk.py::Chunk.__init__": "a chunk's register and state arrays",
    "fsir/sim/concurrent.py::run_concurrent": "the concurrent-stream scheduler's event loop",
    "fsir/sim/engine.py::ChunkRunner.run": "the simulator's hot loop, inlined for speed",
    "fsir/sim/memory.py::atomic_rmw": "one case per atomic operation",
    "fsir/sim/timeline.py::model_timeline": "the timeline model's event loop",
    "fsir/testing/ptx_cases.py::cases": "a table of PTX test cases",
}


def _modules(package: Path) -> list[Path]:
    return sorted(package.rglob("*.py"))


def module_lines(package: Path = ROOT / "fsir") -> dict[str, int]:
    """Lines of every module in `package`, by its path from the package's parent."""
    return {p.relative_to(package.parent).as_posix(): p.read_text().count("\n") for p in _modules(package)}


def function_lines(package: Path = ROOT / "fsir") -> dict[str, int]:
    """Lines of every function and method in `package` (nested ones apart), `def` to its
    last line, as `module::Class.name`."""
    out: dict[str, int] = {}

    def walk(node: ast.AST, rel: str, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                name = prefix + child.name
                out[f"{rel}::{name}"] = (child.end_lineno or child.lineno) - child.lineno + 1
                walk(child, rel, name + ".")
            elif isinstance(child, ast.ClassDef):
                walk(child, rel, prefix + child.name + ".")

    for p in _modules(package):
        walk(ast.parse(p.read_text()), p.relative_to(package.parent).as_posix(), "")
    return out


def over(sizes: dict[str, int], limit: int) -> dict[str, int]:
    return {k: v for k, v in sizes.items() if v > limit}


def report() -> str:
    mods, funcs = over(module_lines(), MODULE_LINES), over(function_lines(), FUNCTION_LINES)
    lines = [f"{len(mods)} modules over {MODULE_LINES} lines:"]
    lines += [f"  {k} {v}" for k, v in sorted(mods.items())]
    lines += [f"{len(funcs)} functions over {FUNCTION_LINES} lines:"]
    lines += [f"  {k} {v}" for k, v in sorted(funcs.items())]
    return "\n".join(lines)


def test_no_module_over_the_limit():
    long = over(module_lines(), MODULE_LINES)
    new = sorted(set(long) - set(LONG_MODULES))
    assert not new, f"modules over {MODULE_LINES} lines (split them): {[(m, long[m]) for m in new]}"


def test_no_function_over_the_limit():
    print(report())
    long = over(function_lines(), FUNCTION_LINES)
    new = sorted(set(long) - set(LONG_FUNCTIONS))
    assert not new, f"functions over {FUNCTION_LINES} lines (split them into named stages): " \
                    f"{[(f, long[f]) for f in new]}"


def test_the_allow_lists_only_shrink():
    """An entry for a module or function that is within the limit (or gone) is stale."""
    mods, funcs = module_lines(), function_lines()
    stale = [m for m in LONG_MODULES if mods.get(m, 0) <= MODULE_LINES]
    stale += [f for f in LONG_FUNCTIONS if funcs.get(f, 0) <= FUNCTION_LINES]
    assert not stale, f"remove these allow-list entries, they are within the limits: {stale}"


def test_the_checker_measures_what_it_should(tmp_path):
    """The measures can fail: in a package of one 802-line module, a method of 81 lines
    is over, its nested function of 79 lines is not, and the module is."""
    body = "\n".join(f"            x{i} = {i}" for i in range(78))
    text = f"class C:\n    def f(self):\n        def g():\n{body}\n        return g\n" + "# pad\n" * 720
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "m.py").write_text(text)
    funcs = function_lines(tmp_path / "pkg")
    assert funcs == {"pkg/m.py::C.f": 81, "pkg/m.py::C.f.g": 79}
    assert over(funcs, FUNCTION_LINES) == {"pkg/m.py::C.f": 81}
    assert over(module_lines(tmp_path / "pkg"), MODULE_LINES) == {"pkg/m.py": 802}


if __name__ == "__main__":
    print(report())
