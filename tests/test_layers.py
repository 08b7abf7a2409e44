"""The layers of docs/ARCHITECTURE.md, checked from the modules' own imports: nothing imports
upwards and no two modules import each other, directly or round a longer cycle."""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("sssp_common", "sssp_gpu", "reference", "report", "grader")

# What each layer may import of ours (itself always). Order of grader's layers, top to bottom:
# commands -> grading -> sweep -> jail, data -> tomlfile, progress (leaves).
MAY_IMPORT = {
    "sssp_common": set(),
    "sssp_gpu": {"sssp_common"},
    "reference": {"sssp_common"},
    "report": {"sssp_common"},
    "grader.tomlfile": set(),
    "grader.progress": set(),
    "grader.data": {"grader.tomlfile", "grader.progress", "sssp_common", "reference"},
    "grader.jail": {"sssp_common"},
    "grader.sweep": {"grader.jail", "grader.data", "grader.tomlfile", "grader.progress", "sssp_common", "reference", "sssp_gpu"},
    "grader.grading": {"grader.sweep", "grader.jail", "grader.data", "grader.tomlfile", "grader.progress", "sssp_common",
                       "reference", "sssp_gpu"},
    "grader.commands": {"grader.grading", "grader.sweep", "grader.jail", "grader.data", "grader.tomlfile", "grader.progress",
                        "sssp_common", "reference", "report", "sssp_gpu"},
    "grader.__main__": {"grader.commands", "sssp_common"},
    "grader": set(),     # grader/__init__.py
}


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def our_modules() -> dict[str, Path]:
    return {module_name(p): p for package in PACKAGES for p in (ROOT / package).rglob("*.py")}


def imports_of(name: str, path: Path, known: set[str]) -> set[str]:
    """The modules of ours that this file imports (at any depth: a lazy import is still an edge)."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                base = ".".join(anchor + ([base] if base else []))
            targets = [f"{base}.{alias.name}" for alias in node.names] + [base]
        else:
            continue
        for target in targets:
            while target and target not in known:        # `from a.b import c` where c is a name
                target = target.rpartition(".")[0]
            if target and target != name:
                found.add(target)
    return found


def layer_of(module: str) -> str:
    for layer in sorted(MAY_IMPORT, key=len, reverse=True):
        if module == layer or module.startswith(layer + "."):
            return layer
    raise AssertionError(f"{module}: in no layer of MAY_IMPORT (add it, and to docs/ARCHITECTURE.md)")


def graph() -> dict[str, set[str]]:
    modules = our_modules()
    known = set(modules)
    return {name: imports_of(name, path, known) for name, path in modules.items()}


def test_no_module_imports_a_layer_above_or_beside_it():
    wrong = []
    for module, targets in graph().items():
        layer = layer_of(module)
        for target in targets:
            other = layer_of(target)
            if other != layer and other not in MAY_IMPORT[layer] and not (layer == "grader" and other == layer):
                wrong.append(f"{module} imports {target} ({layer} may not import {other})")
    assert not wrong, "\n".join(sorted(wrong))


def test_no_import_cycles():
    edges = graph()
    # a package __init__ re-exporting its own modules is not a cycle of meaning; drop child -> parent-init edges
    for module in edges:
        edges[module] = {t for t in edges[module] if not module.startswith(t + ".")}
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str):
        state[node] = 1
        stack.append(node)
        for target in sorted(edges.get(node, ())):
            if state.get(target) == 1:
                cycle = stack[stack.index(target):] + [target]
                pytest.fail("import cycle: " + " -> ".join(cycle))
            if target not in state:
                visit(target)
        stack.pop()
        state[node] = 2

    for node in sorted(edges):
        if node not in state:
            visit(node)


def test_the_check_sees_a_planted_upward_import(tmp_path):
    """The check itself can fail: an import of grader.commands from the jail is caught."""
    planted = tmp_path / "planted.py"
    planted.write_text("from grader.commands import grade\n")
    targets = imports_of("grader.jail.planted", planted, set(our_modules()))
    assert "grader.commands.grade" in targets
    assert layer_of("grader.commands.grade") not in MAY_IMPORT[layer_of("grader.jail.planted")]


def test_no_file_is_over_500_lines():
    long = [f"{p.relative_to(ROOT)}: {n}" for p in our_modules().values()
            if (n := len(p.read_text(encoding="utf-8").splitlines())) > 500]
    assert not long, long
