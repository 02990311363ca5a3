"""Where each test module belongs: ``tests/`` mirrors the package layout.

A test of ``skillab/<package>/...`` lives in ``tests/<package>/``; a test of a top-level module
(``cli.py``, ``secrets.py``...) or of the whole package (the architecture) stays in ``tests/``.
Helpers (``skillgen.py``, ``fakes/``...), the conformance goldens and the real-model tier stay
where they are.

    python -m tests.layout            # the mapping, and the choices that were not obvious
    python -m tests.layout --apply    # move the files and fix what the move breaks

The package a test is about comes from its name first (``test_sandbox_attacks`` is about
``sandbox``; ``test_pass_at_k`` about ``scoring/pass_at_k.py``; ``test_action_*`` about the
Action, ``github``), then from what it imports of skillab. ``OVERRIDES`` settles the rest.

``--apply`` runs ``git mv`` for each move, writes an ``__init__.py`` per new directory, and
rewrites what a move one level down breaks: relative imports (``from .fakes`` becomes
``from ..fakes``, and an import of another test module follows it to its new place), paths
built from ``Path(__file__)`` (one more ``.parent``), and every ``tests/test_x.py`` path and
``tests.test_x`` module name in the repository's text files (README, pyproject, ``.ci``,
benchmarks, comments). ``tests/conftest.py`` stays at the root, where pytest hands its fixtures
to every directory below. ``tests/test_architecture.py`` keeps the layout once applied.
"""

from __future__ import annotations

import argparse
import ast
import re
import shutil
import subprocess
import sys
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import cast

TESTS = Path(__file__).resolve().parent
ROOT = TESTS.parent
PACKAGE = ROOT / "runner" / "skillab"
# Test modules whose name and imports point elsewhere than what they test, or nowhere.
OVERRIDES: dict[str, str | None] = {
    # The whole package: its layering, cycles and sizes; its start-up; end to end through the CLI.
    "test_architecture": None,
    "test_startup_imports": None,
    "test_real_agents_e2e": None,
    "test_layout": None,  # tests/ itself
    "test_polish": None,  # small things across the CLI's output
    "test_readme_worked_example": None,  # docs/architecture.md's worked example, run as written
    "test_reporter_signatures": "reports",  # every reporter's entry point takes RunLog
    "test_statistics": "scoring",  # the lift's test, interval and sentences (scoring/statistics)
    "test_routing": "scoring",  # the routing diff's stratified test and FDR (scoring/routing)
    "test_provider_plugin": "providers",  # a provider from another package
    # Named for a module several packages hold, or for none; the package is the one tested.
    "test_base_url_provider": "providers",
    "test_cache_served_model": "engine",  # the baseline cache
    "test_model_judge": "grading",  # the judge's model client
    "test_cli_agents": "agents",  # agents/cli_agent.py, not cli.py
    "test_cli_metering_attacks": "sandbox",  # the credential proxy's metering
    "test_three_arm": "engine",  # --against
    "test_triggers": "engine",  # trigger trials
    "test_pass_k": "engine",  # attempts per arm
    "test_dry_run_preflight": "engine",  # the plan
    "test_live_cost": "reports",  # the progress lines
    "test_public_suites": "formats",
    "test_full_disk": "session",  # the checkpoint journal
    "test_examples_parse": "formats",
    "test_graders": "formats",  # the imported formats' graders
    "test_judge_consistency": "engine",  # engine/consistency.py
    "test_exit_code_table": "commands",
}
# Name prefixes that say the package outright.
PREFIXES = {"action": "github", "html": "reports", "markdown": "reports", "junit": "reports"}
# Packages a test imports for its types, whatever it tests: they count only when nothing else does.
BACKGROUND = {"core"}
# Files in tests/ that may reference a test module by path or name, rewritten by --apply.
TEXT_SUFFIXES = {".py", ".md", ".toml", ".yml", ".yaml", ".cfg", ".ini", ".txt", ".sh", ""}


@dataclass(frozen=True)
class Placement:
    path: Path  # where the test module is now
    package: str | None  # the skillab package it tests; None: the package as a whole
    why: str
    # Why another choice was possible (empty when the choice was plain).
    doubt: str = ""

    @property
    def target(self) -> Path:
        return TESTS / self.package / self.path.name if self.package else TESTS / self.path.name


def packages() -> list[str]:
    return sorted(p.name for p in PACKAGE.iterdir() if (p / "__init__.py").is_file())


def top_modules() -> set[str]:
    return {p.stem for p in PACKAGE.glob("*.py")} - {"__init__"}


def modules_by_name() -> dict[str, set[str]]:
    """Every module and subpackage name inside a package, with the packages that hold one."""
    found: dict[str, set[str]] = {}
    for package in packages():
        for path in (PACKAGE / package).iterdir():
            name = path.stem if path.suffix == ".py" else path.name if (path / "__init__.py").is_file() else None
            if name and name != "__init__":
                found.setdefault(name, set()).add(package)
    return found


def imported_packages(path: Path) -> Counter[str]:
    """How many import statements of ``path`` reach each skillab package (function-level too)."""
    counts: Counter[str] = Counter()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        names: list[str] = []
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names = [node.module] if node.module != "skillab" else [f"skillab.{a.name}" for a in node.names]
        elif isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        for name in names:
            parts = name.split(".")
            if parts[0] == "skillab" and len(parts) > 1:
                counts[parts[1]] += 1
    return counts


def place(path: Path) -> Placement:
    """The package ``path`` tests, and why (see the module docstring)."""
    stem = path.stem.removeprefix("test_")
    if path.stem in OVERRIDES:
        return Placement(path, OVERRIDES[path.stem], "chosen in OVERRIDES")
    known = packages()
    imports = imported_packages(path)
    by_imports = _majority(imports, set(known))
    parts = stem.split("_")
    prefixes = ["_".join(parts[:n]) for n in range(len(parts), 0, -1)]  # longest first
    for prefix in prefixes:
        if prefix in known:
            return _named(path, prefix, f"named for the package {prefix}", by_imports)
        if prefix in PREFIXES:
            return _named(path, PREFIXES[prefix], f"test_{prefix}_*: {PREFIXES[prefix]}", by_imports)
        if prefix in top_modules():
            return Placement(path, None, f"named for the top-level module {prefix}.py")
    holders = modules_by_name()
    for prefix in prefixes:
        candidates = holders.get(prefix)
        if not candidates:
            continue
        if len(candidates) == 1:
            (package,) = candidates
            return _named(path, package, f"named for {package}/{prefix}", by_imports)
        ranked = sorted(candidates, key=lambda p: (-imports[p], p))
        doubt = "" if imports[ranked[0]] > imports[ranked[1]] else \
            f"{prefix} is a module of {', '.join(sorted(candidates))}; the imports do not tell them apart"
        return Placement(path, ranked[0], f"named for {ranked[0]}/{prefix} (imported most)", doubt)
    if by_imports is None:
        if any(name in top_modules() for name in imports):
            return Placement(path, None, f"imports only top-level modules ({', '.join(sorted(imports))})")
        return Placement(path, None, "imports nothing of skillab", "nothing says which package it tests")
    top = imports.most_common(2)
    doubt = "" if len(top) < 2 or top[0][1] >= 2 * top[1][1] else \
        f"imports {', '.join(f'{p} x{n}' for p, n in top)}: close"
    return Placement(path, by_imports, f"imports {by_imports} most ({imports[by_imports]})", doubt)


def _majority(imports: Counter[str], known: set[str]) -> str | None:
    foreground = Counter({p: n for p, n in imports.items() if p in known and p not in BACKGROUND})
    pool = foreground or Counter({p: n for p, n in imports.items() if p in known})
    if not pool:
        return None
    return sorted(pool.items(), key=lambda item: (-item[1], item[0]))[0][0]


def _named(path: Path, package: str, why: str, by_imports: str | None) -> Placement:
    doubt = f"its imports point to {by_imports}" if by_imports not in (None, package) else ""
    return Placement(path, package, why, doubt)


def test_modules() -> list[Path]:
    """Every test module of the mirrored layout: ``tests/test_*.py`` and ``tests/<package>/test_*.py``."""
    found = sorted(TESTS.glob("test_*.py"))
    for package in packages():
        found += sorted((TESTS / package).glob("test_*.py"))
    return found


def placements() -> list[Placement]:
    return [place(path) for path in test_modules()]


def pending() -> list[Placement]:
    """The test modules not where they belong."""
    return [p for p in placements() if p.target != p.path]


# -- applying the moves ---------------------------------------------------------------------


def module_name(path: Path) -> str:
    return ".".join(path.relative_to(ROOT).with_suffix("").parts)


def apply(moves: list[Placement]) -> list[str]:
    """Move each test module and fix what the move breaks; what needs a look by hand."""
    renamed = {module_name(m.path): module_name(m.target) for m in moves}
    notes: list[str] = []
    for move in moves:
        directory = move.target.parent
        if not directory.is_dir():
            directory.mkdir()
            (directory / "__init__.py").write_text(f'"""Tests of skillab.{move.package}."""\n')
            _git("add", str(directory / "__init__.py"))
        _git("mv", str(move.path), str(move.target))
    moved = {m.target for m in moves}
    for path in sorted(TESTS.rglob("*.py")):
        if ".node" in path.parts:
            continue
        old_name = next((k for k, v in renamed.items() if v == module_name(path)), module_name(path))
        text = path.read_text(encoding="utf-8")
        new = _relative_imports(text, old_name, module_name(path), renamed)
        if path in moved:
            new, unhandled = _file_paths(new)
            notes += [f"{path.relative_to(ROOT)}:{line}: __file__ used in a way not rewritten" for line in unhandled]
        if new != text:
            path.write_text(new, encoding="utf-8")
    _references(renamed)
    notes += _sort_imports([m.target for m in moves])
    return notes


def _sort_imports(paths: list[Path]) -> list[str]:
    """Sort the import blocks the rewrite changed (``from ..agents.test_x`` sorts elsewhere than
    ``from .test_x`` did), with the ruff that ``.ci/run`` checks them with."""
    ruff = shutil.which("ruff")
    if ruff is None:
        return ["ruff is not on PATH: run `ruff check --fix --select I tests` to sort the moved imports"]
    subprocess.run([ruff, "check", "--fix", "--quiet", "--select", "I", *map(str, paths)], cwd=ROOT, check=False)
    return []


def _git(*args: str) -> None:
    subprocess.run(["git", *args], cwd=ROOT, check=True, capture_output=True)


def _relative_imports(text: str, old: str, new: str, renamed: dict[str, str]) -> str:
    """``text`` of module ``old`` (now ``new``) with each relative import aimed at its target's
    new place, written relative to ``new``."""
    edits: list[tuple[int, str, str]] = []
    for node in ast.walk(ast.parse(text)):
        if not isinstance(node, ast.ImportFrom) or node.level == 0:
            continue
        target = _absolute(old, node.level, node.module)
        target = renamed.get(target, target)
        written = _relative(new, target)
        before = "." * node.level + (node.module or "")
        if written != before:
            edits.append((node.lineno, before, written))
    lines = text.splitlines(keepends=True)
    for lineno, before, written in edits:
        line = lines[lineno - 1]
        lines[lineno - 1] = re.sub(rf"\bfrom\s+{re.escape(before)}(?=\s+import\b)", f"from {written}", line, count=1)
    return "".join(lines)


def _absolute(module: str, level: int, name: str | None) -> str:
    base = module.split(".")[:-level]
    return ".".join(base + ([name] if name else []))


def _relative(module: str, target: str) -> str:
    here, there = module.split(".")[:-1], target.split(".")
    common = 0
    while common < min(len(here), len(there)) and here[common] == there[common]:
        common += 1
    return "." * (len(here) - common + 1) + ".".join(there[common:])


def _file_paths(text: str) -> tuple[str, list[int]]:
    """``text`` with each path built from ``Path(__file__)`` one directory higher, as a module
    moved one level down needs; the lines of any other use of ``__file__``."""
    tree = ast.parse(text)
    parents = {child: node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}

    def up(node: ast.AST) -> tuple[ast.AST | None, ast.AST | None]:
        above = parents.get(node)
        return above, parents.get(above) if above is not None else None

    lines = text.splitlines(keepends=True)
    edits: list[tuple[ast.expr, str]] = []  # (the expression replaced, its replacement)
    unhandled: list[int] = []
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Name) and node.id == "__file__"):
            continue
        call = parents.get(node)
        if not (isinstance(call, ast.Call) and _is_path(call.func) and call.args == [node]):
            unhandled.append(node.lineno)
            continue
        base: ast.AST = call
        above, outer = up(base)
        # Path(__file__).resolve() / .absolute(): still the file, one call further out.
        while isinstance(above, ast.Attribute) and above.attr in ("resolve", "absolute") and isinstance(outer, ast.Call):
            base = outer
            above, outer = up(base)
        if isinstance(above, ast.Attribute) and above.attr == "parent":
            edits.append((above, f"{ast.get_source_segment(text, above)}.parent"))
        elif isinstance(above, ast.Attribute) and above.attr == "parents" and isinstance(outer, ast.Subscript) \
                and isinstance(outer.slice, ast.Constant) and isinstance(outer.slice.value, int):
            edits.append((outer.slice, str(cast(int, outer.slice.value) + 1)))
        elif isinstance(above, ast.Attribute) and above.attr == "with_name" and isinstance(outer, ast.Call):
            segment = f"{ast.get_source_segment(text, base)}.parent.parent / {ast.get_source_segment(text, outer.args[0])}"
            # In parentheses only where the expression goes on (``.read_text()``, ``/ "x"``).
            if isinstance(parents.get(outer), ast.Attribute | ast.Subscript | ast.BinOp):
                segment = f"({segment})"
            edits.append((outer, segment))
        else:
            unhandled.append(node.lineno)
    # Last first, so the earlier offsets (UTF-8 bytes, as ast gives them) still hold.
    for expr, new in sorted(edits, key=lambda edit: (edit[0].lineno, edit[0].col_offset), reverse=True):
        if expr.end_lineno != expr.lineno or expr.end_col_offset is None:
            unhandled.append(expr.lineno)
            continue
        raw = lines[expr.lineno - 1].encode("utf-8")
        lines[expr.lineno - 1] = (raw[:expr.col_offset] + new.encode("utf-8") + raw[expr.end_col_offset:]).decode("utf-8")
    return "".join(lines), sorted(set(unhandled))


def _is_path(func: ast.expr) -> bool:
    return (isinstance(func, ast.Name) and func.id == "Path") or (isinstance(func, ast.Attribute) and func.attr == "Path")


def _references(renamed: dict[str, str]) -> None:
    """Every ``tests/test_x.py`` path and ``tests.test_x`` name in the tracked text files."""
    listed = subprocess.run(["git", "ls-files"], cwd=ROOT, check=True, capture_output=True, text=True).stdout
    pattern = re.compile(r"\btests[./](test_\w+)(\.py)?\b")
    by_stem = {old.rsplit(".", 1)[1]: new for old, new in renamed.items()}
    for rel in listed.splitlines():
        path = ROOT / rel
        if path.suffix not in TEXT_SUFFIXES or not path.is_file() or path.is_symlink():
            continue
        try:
            text = path.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            continue

        def moved(match: re.Match[str]) -> str:
            new = by_stem.get(match.group(1))
            if new is None:
                return match.group(0)
            separator = match.group(0)[len("tests")]
            return new.replace(".", separator) + (match.group(2) or "")

        new_text = pattern.sub(moved, text)
        if new_text != text:
            path.write_text(new_text, encoding="utf-8")


# -- the command ----------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.layout", description=__doc__.split("\n\n")[0])
    parser.add_argument("--apply", action="store_true", help="move the files (git mv) and fix what the move breaks")
    args = parser.parse_args(argv)
    found = placements()
    width = max(len(p.path.name) for p in found)
    for p in found:
        where = f"tests/{p.package}/" if p.package else "tests/"
        mark = "  (stays)" if p.target == p.path else ""
        print(f"{p.path.name:<{width}}  ->  {where:<18}{p.why}{mark}")
    doubtful = [p for p in found if p.doubt]
    if doubtful:
        print(f"\n{len(doubtful)} not obvious (the choice above, and why another was possible):")
        for p in doubtful:
            print(f"  {p.path.name}: {p.package or 'tests/'} -- {p.doubt}")
    moves = [p for p in found if p.target != p.path]
    print(f"\n{len(moves)} to move, {len(found) - len(moves)} in place")
    if args.apply and moves:
        for note in apply(moves):
            print(f"check by hand: {note}")
        print(f"moved {len(moves)}; run the test suite")
    return 0


if __name__ == "__main__":
    sys.exit(main())
