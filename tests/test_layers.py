"""fsir's floors, enforced: no module imports from a floor above its own.

The floors are import-linter's layers contract in pyproject.toml (their one home); the
order is explained in docs/architecture.md. import-linter checks the contract too, but
this test also reads the imports written inside functions and fails on a module that
no floor declares, so a new package has to be placed before it lands.
"""

from __future__ import annotations

import ast
import tomllib
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "fsir"


@dataclass(frozen=True)
class Edge:
    source: str
    target: str
    line: int

    def where(self) -> str:
        path = module_path(self.source).relative_to(ROOT)
        return f"{path}:{self.line}: {self.source} -> {self.target}"


def contract() -> dict:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]
    (layers,) = [c for c in config["contracts"] if c["type"] == "layers"]
    return layers


def floors() -> dict[str, int]:
    """Each declared member (package or module) -> its floor, 0 the lowest."""
    layers = contract()["layers"]
    out = {}
    for height, layer in enumerate(reversed(layers)):
        for member in layer.replace("|", ":").split(":"):
            out[member.strip()] = height
    return out


def allowed() -> set[tuple[str, str]]:
    return {tuple(part.strip() for part in rule.split("->")) for rule in contract().get("ignore_imports", [])}


def modules() -> dict[str, Path]:
    out = {}
    for path in PACKAGE.rglob("*.py"):
        parts = list(path.relative_to(ROOT).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join(parts)] = path
    return out


MODULES = modules()


def module_path(name: str) -> Path:
    return MODULES[name]


def resolve(name: str) -> str | None:
    """The fsir module an import names (a package's `__init__` for its attributes)."""
    while name and name not in MODULES:
        name = name.rpartition(".")[0]
    return name or None


def _is_type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def _imports(tree: ast.AST):
    """Every import statement, in functions too; not those only type checkers run."""
    stack = [tree]
    while stack:
        node = stack.pop()
        if isinstance(node, ast.If) and _is_type_checking(node):
            stack.extend(node.orelse)
            continue
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            yield node
        stack.extend(ast.iter_child_nodes(node))


def imports_of(name: str) -> list[Edge]:
    path = MODULES[name]
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    edges = []
    for node in _imports(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        else:
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(anchor + ([node.module] if node.module else []))
            targets = [f"{base}.{a.name}" for a in node.names]
        for target in targets:
            if target.split(".")[0] != "fsir":
                continue
            resolved = resolve(target)
            if resolved is not None and resolved != name:
                edges.append(Edge(name, resolved, node.lineno))
    return edges


def member_of(name: str, table: dict[str, int]) -> str | None:
    """The declared floor member holding module `name` (the longest declared prefix)."""
    while name:
        if name in table:
            return name
        name = name.rpartition(".")[0]
    return None


EDGES = [e for name in sorted(MODULES) for e in imports_of(name)]


def test_every_module_has_a_floor():
    table = floors()
    loose = sorted(n for n in MODULES if n != "fsir" and member_of(n, table) is None)
    assert not loose, ("modules on no floor (declare their package in pyproject.toml's layers "
                       f"contract): {', '.join(loose)}")


def test_no_module_imports_from_a_floor_above():
    table, ok = floors(), allowed()
    upward = []
    for e in EDGES:
        source, target = member_of(e.source, table), member_of(e.target, table)
        if source is None or target is None or (e.source, e.target) in ok:
            continue  # the package root (fsir/__init__.py) stands above every floor
        if table[target] > table[source]:
            upward.append(e.where())
    assert not upward, "imports from a higher floor:\n" + "\n".join(upward)


def test_every_allowed_exception_is_still_needed():
    present = {(e.source, e.target) for e in EDGES}
    stale = sorted(f"{a} -> {b}" for a, b in allowed() if (a, b) not in present)
    assert not stale, f"allowed imports that no longer exist (remove them): {stale}"


def test_no_circle_spans_two_packages():
    table, ok = floors(), allowed()
    graph: dict[str, set[str]] = defaultdict(set)
    for e in EDGES:
        if (e.source, e.target) not in ok:
            graph[e.source].add(e.target)
    crossing = []
    for component in strongly_connected(graph):
        members = {member_of(n, table) for n in component}
        if len(members) > 1:
            crossing.append(f"{sorted(members)}: {sorted(component)}")
    assert not crossing, "import circles across packages:\n" + "\n".join(crossing)


def strongly_connected(graph: dict[str, set[str]]) -> list[set[str]]:
    """Tarjan's algorithm, iterative; components of one module are left out."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    out = []
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            v, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.get(child, ())))))
                elif child in on_stack:
                    low[v] = min(low[v], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                component = set()
                while True:
                    w = stack.pop()
                    on_stack.discard(w)
                    component.add(w)
                    if w == v:
                        break
                if len(component) > 1:
                    out.append(component)
    return out


def test_the_walk_sees_imports_inside_functions():
    """The check can fail: an import written in a function is an edge."""
    edges = {(e.source, e.target) for e in EDGES}
    assert ("fsir.dialects.graph.base", "fsir.transforms.canonicalize") in edges


def test_import_linter_keeps_the_contract():
    from importlinter import cli

    assert cli.lint_imports(config_filename=str(ROOT / "pyproject.toml")) == 0


def test_the_architecture_doc_states_the_contract():
    """docs/architecture.md's table of floors is the contract, floor by floor."""
    import re

    doc = (ROOT / "docs" / "architecture.md").read_text()
    rows = re.findall(r"^\| (\d+) \| ([^|]+) \|", doc, re.M)
    stated = {f"fsir.{name}": int(floor) for floor, names in rows for name in re.findall(r"`(\w+)`", names)}
    assert stated == floors()
