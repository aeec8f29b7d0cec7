"""The house's floors: no import cycles among edge and peripherals modules, counting imports
inside functions (a function-level import hides a cycle from Python, not from this test) and
imports under ``if TYPE_CHECKING:`` (a type-only cycle is still two rooms that know each other),
and peripherals never imports edge."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("edge", "peripherals")


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def modules() -> dict[str, Path]:
    return {module_name(p): p for pkg in PACKAGES for p in (ROOT / pkg).rglob("*.py")}


def imports_of(name: str, path: Path, known: set[str], *, type_only: bool = True) -> set[str]:
    """Project modules ``name`` imports anywhere in its file; with ``type_only=False``, without
    those under ``if TYPE_CHECKING:``."""
    tree = ast.parse(path.read_text(), str(path))
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()

    class Visitor(ast.NodeVisitor):
        def visit_If(self, node: ast.If) -> None:
            test = node.test
            if not type_only and isinstance(test, ast.Name) and test.id == "TYPE_CHECKING":
                for child in node.orelse:  # only the runtime branch
                    self.visit(child)
                return
            self.generic_visit(node)

        def visit_Import(self, node: ast.Import) -> None:
            for alias in node.names:
                found.add(alias.name)

        def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(anchor + ([base] if base else []))
            found.add(base)
            for alias in node.names:
                found.add(f"{base}.{alias.name}")

    Visitor().visit(tree)
    resolved = set()
    for target in found:
        while target and target not in known:
            target = target.rpartition(".")[0]
        if target and target != name and not name.startswith(target + "."):
            resolved.add(target)  # a package's own __init__ is not an edge back to it
    return resolved


def graph(*, type_only: bool = True) -> dict[str, set[str]]:
    mods = modules()
    known = set(mods)
    return {name: imports_of(name, path, known, type_only=type_only) for name, path in mods.items()}


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in edges.get(node, ()):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(edges):
        if node not in index:
            visit(node)
    return found


def test_the_walker_sees_function_level_imports():
    edges = graph()
    assert "edge.config.loader" in edges["edge.cli.oneshot"]  # imported inside run_direct
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_the_walker_sees_type_only_imports():
    """The faces import their names only for type checkers: seen here, and only here."""
    assert "edge.mqtt.bridge" in graph()["edge.mqtt"]
    assert "edge.mqtt.bridge" not in graph(type_only=False)["edge.mqtt"]


def test_no_import_cycles():
    assert cycles(graph()) == []


def test_peripherals_import_nothing_from_edge():
    edges = graph()
    leaks = {m: sorted(t for t in targets if t.split(".")[0] == "edge")
             for m, targets in edges.items() if m.startswith("peripherals")}
    assert {m: t for m, t in leaks.items() if t} == {}


def package_of(module: str) -> str:
    """``edge.config.model`` -> ``edge.config``; a top-level module of ``edge`` is its own room
    (``edge.runtime``), and so is a package's face (``edge.config``)."""
    path = ROOT / Path(*module.split("."))
    return module if path.is_dir() or module.count(".") < 2 else ".".join(module.split(".")[:2])


def package_graph() -> dict[str, set[str]]:
    packages: dict[str, set[str]] = {}
    for module, targets in graph().items():
        source = package_of(module)
        packages.setdefault(source, set()).update(
            package_of(t) for t in targets if package_of(t) != source)
    return packages


def test_package_graph_groups_modules_by_package():
    edges = package_graph()
    assert "edge.config" in edges["edge.cli"] and "edge.core" in edges["edge.config"]
    assert "edge.cli.main" not in edges and "edge.runtime" in edges


def test_no_package_cycles():
    """Packages form floors too: no package reaches another that reaches back (edge.config and
    edge.providers, edge.memory and edge.providers each did)."""
    assert cycles(package_graph()) == []


def test_the_bottom_floor_imports_nothing_above_it():
    edges = graph()
    above = {m: sorted(t for t in targets if t.startswith("edge.") and not t.startswith("edge.core"))
             for m, targets in edges.items() if m.startswith("edge.core")}
    assert {m: t for m, t in above.items() if t} == {}
