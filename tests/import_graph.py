"""skillab's import graph between its top-level packages, and the imports that close a cycle.

``python -m tests.import_graph`` prints each package and what it imports, then every pair of
packages that reach each other with the module imports behind it, then every set of modules
that import each other (function-level imports included): where the layers of the
docs/architecture.md come from. tests/test_architecture.py uses the same functions.
"""

from __future__ import annotations

import re

import grimp


def build(ignored: tuple[str, ...] = (), package_name: str = "skillab") -> grimp.ImportGraph:
    """``package_name``'s module graph (function-level imports included) without the imports
    matching ``ignored`` (import-linter's ``ignore_imports`` expressions); raises
    ``LookupError`` for an expression matching none."""
    graph = grimp.build_graph(package_name, cache_dir=None)
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


def module_cycles(graph: grimp.ImportGraph) -> list[list[str]]:
    """Every set of modules that import each other, directly or not (the strongly connected
    components of more than one module, by Tarjan's algorithm), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for root in sorted(graph.modules):
        if root in index:
            continue
        # Iterative: a recursive walk could pass Python's recursion limit on a deep import chain.
        work = [(root, iter(sorted(graph.find_modules_directly_imported_by(root))))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            module, targets = work[-1]
            target = next(targets, None)
            if target is not None:
                if target not in index:
                    index[target] = low[target] = len(index)
                    stack.append(target)
                    on_stack.add(target)
                    work.append((target, iter(sorted(graph.find_modules_directly_imported_by(target)))))
                elif target in on_stack:
                    low[module] = min(low[module], index[target])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[module])
            if low[module] == index[module]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == module:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return sorted(found)


def describe_cycle(graph: grimp.ImportGraph, component: list[str]) -> str:
    """One cycle's imports, with the lines they are on."""
    members = set(component)

    def lines(m: str, i: str) -> str:
        return ", ".join(str(d["line_number"]) for d in graph.get_import_details(importer=m, imported=i))

    return "; ".join(f"{m} -> {i} (line {lines(m, i)})"
                     for m in component for i in sorted(graph.find_modules_directly_imported_by(m) & members))


def main() -> None:
    edges = package_edges(build())
    for name in sorted({a for a, _ in edges} | {b for _, b in edges}):
        print(f"{name:12} -> {', '.join(sorted(b for a, b in edges if a == name))}")
    print("\nin a cycle:")
    for a, b in cycles(edges):
        print(f"  {a} -> {b}: " + "; ".join(f"{m} -> {i}" for m, i in edges[(a, b)]))
    graph = build()
    print("\nmodules in a cycle:")
    for component in module_cycles(graph):
        print(f"  {describe_cycle(graph, component)}")


if __name__ == "__main__":
    main()
