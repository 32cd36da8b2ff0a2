"""The floor plan holds: every module sits in a declared layer, no import cycle anywhere, and
functions fit on a screen. `lint-imports` (in `make lint`) checks the direction of imports; these
check what a layers contract cannot: that nothing was left out of it."""

from __future__ import annotations

import ast
import configparser
from pathlib import Path

import grimp

ROOT = Path(__file__).resolve().parent.parent
MAX_FUNCTION_LINES = 60
DATA_MODULES = ("backend/orrery/demo/",)
"""Modules that hold tables, not logic (also any `*_data.py`): long literals are allowed there."""


def _layers() -> list[str]:
    config = configparser.ConfigParser()
    config.read(ROOT / ".importlinter")
    lines = config["importlinter:contract:layers"]["layers"].split("\n")
    return [name.strip() for line in lines for name in line.replace("|", ":").split(":") if name.strip()]


def _graph() -> grimp.ImportGraph:
    return grimp.build_graph("orrery", cache_dir=None)


def test_every_module_belongs_to_a_layer() -> None:
    layers = _layers()
    assert len(layers) == len(set(layers)), "a module is named in two layers"
    graph = _graph()
    outside = sorted(
        m
        for m in graph.modules
        if m not in ("orrery",) and not any(m == name or m.startswith(name + ".") for name in layers)
    )
    assert outside == [], f"add these to a layer in .importlinter: {outside}"


def test_the_contract_declares_no_more_than_three_exceptions() -> None:
    config = configparser.ConfigParser()
    config.read(ROOT / ".importlinter")
    ignored = config["importlinter:contract:layers"].get("ignore_imports", "")
    assert len([line for line in ignored.split("\n") if line.strip()]) <= 3


def _cycles(graph: grimp.ImportGraph) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan, iterative)."""
    adjacency = {m: sorted(graph.find_modules_directly_imported_by(m)) for m in sorted(graph.modules)}
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for root in adjacency:
        if root in index:
            continue
        work = [(root, iter(adjacency[root]))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(adjacency[child])))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
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
    return found


def test_no_import_cycles() -> None:
    assert _cycles(_graph()) == []


def _long_functions() -> list[str]:
    long: list[str] = []
    for path in sorted(ROOT.glob("backend/**/*.py")):
        relative = path.relative_to(ROOT).as_posix()
        if relative.startswith(DATA_MODULES) or path.name.endswith("_data.py"):
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                first = min([node.lineno, *(d.lineno for d in node.decorator_list)])
                lines = (node.end_lineno or node.lineno) - first + 1
                if lines > MAX_FUNCTION_LINES:
                    long.append(f"{relative}:{node.name} ({lines} lines)")
    return long


def test_functions_fit_on_a_screen() -> None:
    assert _long_functions() == []


def test_the_cycle_finder_finds_a_cycle() -> None:
    """The check above would pass vacuously if `_cycles` never reported anything."""

    class Graph:
        modules = {"a", "b", "c"}

        def find_modules_directly_imported_by(self, module: str) -> set[str]:
            return {"a": {"b"}, "b": {"a"}, "c": {"a"}}[module]

    assert _cycles(Graph()) == [["a", "b"]]  # type: ignore[arg-type]
