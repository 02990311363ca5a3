"""skillab's import graph between its top-level packages, and the imports that close a cycle.

``python -m tests.import_graph`` prints each package and what it imports, then every pair of
packages that reach each other with the module imports behind it: where the layers of the
README's "Architecture" section come from. tests/test_architecture.py uses the same functions.
"""

from __future__ import annotations

import re

import grimp


def build(ignored: tuple[str, ...] = ()) -> grimp.ImportGraph:
    """skillab's module graph without the imports matching ``ignored`` (import-linter's
    ``ignore_imports`` expressions); raises ``LookupError`` for an expression matching none."""
    graph = grimp.build_graph("skillab", cache_dir=None)
    for expression in ignored:
        if not remove(graph, expression):
            raise LookupError(f"{expression!r} matches no import")
    return graph


def remove(graph: grimp.ImportGraph, expression: str) -> int:
    """Remove the imports an ``importer -> imported`` expression matches; how many it did."""
    importer, imported = (re.compile(pattern(side.strip())) for side in expression.split("->"))
    pairs = [(m, i) for m in graph.modules if importer.fullmatch(m)
             for i in graph.find_modules_directly_imported_by(m) if imported.fullmatch(i)]
    for m, i in pairs:
        graph.remove_import(importer=m, imported=i)
    return len(pairs)


def pattern(expression: str) -> str:
    """An import-linter module expression as a regex: ``*`` one name, ``**`` one or more."""
    return re.escape(expression).replace(r"\*\*", r"[^.]+(?:\.[^.]+)*").replace(r"\*", r"[^.]+")


def package(module: str) -> str:
    return module.split(".")[1] if "." in module else "(skillab)"


def package_edges(graph: grimp.ImportGraph) -> dict[tuple[str, str], list[tuple[str, str]]]:
    """(importing package, imported package) → the module imports behind it."""
    edges: dict[tuple[str, str], list[tuple[str, str]]] = {}
    for module in sorted(graph.modules):
        for imported in sorted(graph.find_modules_directly_imported_by(module)):
            if package(module) != package(imported):
                edges.setdefault((package(module), package(imported)), []).append((module, imported))
    return edges


def cycles(edges: dict[tuple[str, str], list]) -> list[tuple[str, str]]:
    """Every package edge whose target reaches back to its source."""
    targets: dict[str, set[str]] = {}
    for a, b in edges:
        targets.setdefault(a, set()).add(b)
    return [(a, b) for a, b in sorted(edges) if a in _reachable(targets, b)]


def _reachable(targets: dict[str, set[str]], start: str) -> set[str]:
    seen, todo = {start}, [start]
    while todo:
        for nxt in targets.get(todo.pop(), ()):
            if nxt not in seen:
                seen.add(nxt)
                todo.append(nxt)
    return seen


def main() -> None:
    edges = package_edges(build())
    for name in sorted({a for a, _ in edges} | {b for _, b in edges}):
        print(f"{name:12} -> {', '.join(sorted(b for a, b in edges if a == name))}")
    print("\nin a cycle:")
    for a, b in cycles(edges):
        print(f"  {a} -> {b}: " + "; ".join(f"{m} -> {i}" for m, i in edges[(a, b)]))


if __name__ == "__main__":
    main()
