"""The dependency rule (docs/architecture.md): the import-linter contracts in pyproject.toml
hold with no import excused, they fail on an upward import, no module is over 400 lines, and
neither skillab's packages nor its modules import each other in a cycle."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

import skillab

from . import import_graph

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = Path(skillab.__file__).parent
CONFIG = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["importlinter"]
CONTRACTS = {c["id"]: c for c in CONFIG["contracts"]}
LINT_IMPORTS = Path(sys.executable).with_name("lint-imports")

# The rule is on function complexity (ruff's C901, pyproject.toml); a module is split along a
# concept, never to fit a count. This cap only reports a module grown far past any concept.
MAX_LINES = 600
# Today's modules over MAX_LINES, each being split by another refactor; delete an entry when
# its module is under the limit (the test says so).
TOO_LONG: set[str] = set()
# Imports that close a cycle between two packages of one layer, each removed by another
# refactor; delete an entry when it lands (the test says when one no longer exists).
CYCLE_IMPORTS: tuple[str, ...] = ()


def lint_imports(*args: str, cwd: Path = ROOT, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([str(LINT_IMPORTS), "--no-cache", "--no-logo", *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=120)


def test_the_contracts_hold():
    result = lint_imports()
    assert result.returncode == 0, result.stdout + result.stderr
    assert "0 broken" in result.stdout


def top_level_modules() -> set[str]:
    return {p.stem if p.is_file() else p.name for p in PACKAGE.iterdir()
            if (p.suffix == ".py" and p.stem != "__init__") or (p / "__init__.py").is_file()}


def test_core_is_forbidden_every_other_module_of_skillab():
    listed = {m.removeprefix("skillab.") for m in CONTRACTS["core"]["forbidden_modules"]}
    others = top_level_modules() - {"core"}
    assert others - listed == set(), "add these to the core contract's forbidden_modules"
    assert listed - others == set(), "these are gone: delete them from forbidden_modules"


def test_every_module_of_skillab_has_a_layer():
    layered = {m.strip().strip("()") for layer in CONTRACTS["layers"]["layers"] for m in re.split(r"[:|]", layer)}
    assert top_level_modules() - layered == set(), "place these in a layer of the layers contract"


# A package shaped like skillab's layers, one module per layer member, to lint with the real
# contracts: clean, then with an upward import in each.
UPWARD = {
    "layers": ("agents/upward.py", "import toy.engine\n"),
    "core": ("core/upward.py", "from toy import errors\n"),
    "engine-no-reports": ("engine/reporter.py", "import toy.reports\n"),
}


def toy_config(tmp_path: Path) -> Path:
    lines = ['[tool.importlinter]', 'root_package = "toy"']
    for contract in CONFIG["contracts"]:
        lines += ["[[tool.importlinter.contracts]]"]
        for key, value in contract.items():
            if key == "ignore_imports":
                continue
            value = [v.replace("skillab.", "toy.") for v in value] if isinstance(value, list) else value
            value = ["toy"] if key == "containers" else value
            lines.append(f"{key} = {_toml(value)}")
    path = tmp_path / "toy.toml"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def _toml(value) -> str:
    if isinstance(value, list):
        return "[" + ", ".join(_toml(v) for v in value) + "]"
    return '"' + str(value).replace('"', '\\"') + '"'


def toy_package(tmp_path: Path) -> Path:
    root = tmp_path / "toy"
    root.mkdir()
    (root / "__init__.py").write_text("")
    members = {m.strip() for layer in CONTRACTS["layers"]["layers"] for m in re.split(r"[:|]", layer)}
    for member in members:
        if member.startswith("("):
            continue
        (root / member).mkdir()
        (root / member / "__init__.py").write_text("")
    return root


def test_the_contracts_fail_on_an_upward_import(tmp_path):
    config = toy_config(tmp_path)
    root = toy_package(tmp_path)
    env = {**os.environ, "PYTHONPATH": str(tmp_path)}
    clean = lint_imports("--config", str(config), cwd=tmp_path, env=env)
    assert clean.returncode == 0, clean.stdout + clean.stderr
    for rel, text in UPWARD.values():
        (root / rel).write_text(text)
    broken = lint_imports("--config", str(config), cwd=tmp_path, env=env)
    assert broken.returncode == 1, broken.stdout + broken.stderr
    assert f"{len(CONFIG['contracts']) - len(UPWARD)} kept, {len(UPWARD)} broken" in broken.stdout
    assert "toy.agents.upward -> toy.engine" in broken.stdout
    assert "toy.core.upward -> toy.errors" in broken.stdout
    assert "toy.engine.reporter -> toy.reports" in broken.stdout


def test_no_module_is_far_over_400_lines():
    lengths = {p.relative_to(PACKAGE).as_posix(): len(p.read_text(encoding="utf-8").splitlines())
               for p in PACKAGE.rglob("*.py")}
    too_long = {rel for rel, n in lengths.items() if n > MAX_LINES}
    assert too_long - TOO_LONG == set(), f"modules over {MAX_LINES} lines: split them"
    assert TOO_LONG - too_long == set(), "now under the limit: delete from TOO_LONG"


def test_no_contract_ignores_an_import():
    assert [c["id"] for c in CONFIG["contracts"] if c.get("ignore_imports")] == [], (
        "move the module instead of excusing its import")


def test_no_import_cycle_between_modules():
    graph = import_graph.build()
    cycles = import_graph.module_cycles(graph)
    assert cycles == [], "modules that import each other, directly or not: " + " | ".join(
        import_graph.describe_cycle(graph, c) for c in cycles)


def test_the_module_cycle_count_sees_function_level_and_type_only_imports(tmp_path, monkeypatch):
    root = tmp_path / "toycycle"
    root.mkdir()
    (root / "__init__.py").write_text("")
    (root / "a.py").write_text("from . import b\n")
    (root / "b.py").write_text("def f():\n    from . import c\n")
    (root / "c.py").write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from . import a\n")
    (root / "d.py").write_text("from . import a\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    graph = import_graph.build(package_name="toycycle")
    cycle = ["toycycle.a", "toycycle.b", "toycycle.c"]
    assert import_graph.module_cycles(graph) == [cycle]
    assert "toycycle.b -> toycycle.c (line 2)" in import_graph.describe_cycle(graph, cycle)
    (root / "c.py").write_text("")
    assert import_graph.module_cycles(import_graph.build(package_name="toycycle")) == []


def test_no_import_cycle_between_packages():
    ignored = CYCLE_IMPORTS
    for expression in ignored:
        assert import_graph.remove(import_graph.build(), expression), (
            f"{expression!r} no longer exists: delete its entry")
    edges = import_graph.package_edges(import_graph.build(ignored))
    assert import_graph.cycles(edges) == [], "packages that import each other, directly or not: " + (
        ", ".join(f"{a} -> {b}" for a, b in import_graph.cycles(edges)))


@pytest.mark.parametrize("expression, module, imported, matches", [
    ("skillab.agents.* -> skillab.engine.config", "skillab.agents.mock", "skillab.engine.config", True),
    ("skillab.agents.* -> skillab.engine.config", "skillab.agents.x.y", "skillab.engine.config", False),
    ("skillab.skill.** -> skillab.suite", "skillab.skill.x.y", "skillab.suite", True),
])
def test_ignore_expressions_match_as_import_linter_reads_them(expression, module, imported, matches):
    importer, target = (re.compile(import_graph.pattern(side.strip())) for side in expression.split("->"))
    assert bool(importer.fullmatch(module) and target.fullmatch(imported)) is matches
