"""Every reporter reads ``RunLog`` (issue #25): no function in ``skillab.reports`` takes a run as
the results document's dict, counted from the source's annotations."""

from __future__ import annotations

import ast
from pathlib import Path

import skillab.reports

REPORTS = Path(skillab.reports.__file__).parent
# The names a run goes by in a signature.
RUN_NAMES = {"doc", "docs", "document", "documents", "run", "runs", "log", "logs"}
# Modules that still read a dict (the test says when an entry is no longer needed).
NOT_YET_CONVERTED: set[str] = set()


def dict_run_parameters(source: str) -> list[str]:
    """``function(parameter: annotation)`` for each parameter named like a run and annotated
    with a dict (alone or in a list or sequence)."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        arguments = node.args
        for arg in [*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs]:
            annotation = ast.unparse(arg.annotation) if arg.annotation is not None else ""
            if arg.arg in RUN_NAMES and "dict" in annotation:
                found.append(f"{node.name}({arg.arg}: {annotation})")
    return found


def test_no_reporter_takes_a_run_as_a_dict():
    offending = {}
    for path in sorted(REPORTS.glob("*.py")):
        if path.stem in NOT_YET_CONVERTED:
            continue
        found = dict_run_parameters(path.read_text(encoding="utf-8"))
        if found:
            offending[path.stem] = found
    assert offending == {}, offending


def test_the_allow_list_names_only_modules_that_still_need_it():
    """An entry whose module reads ``RunLog`` already (or is gone) is deleted, so the list only shrinks."""
    stale = sorted(name for name in NOT_YET_CONVERTED
                   if not (REPORTS / f"{name}.py").is_file()
                   or not dict_run_parameters((REPORTS / f"{name}.py").read_text(encoding="utf-8")))
    assert stale == [], f"delete from NOT_YET_CONVERTED: {stale}"


def test_the_check_sees_a_dict_run_in_any_shape():
    source = ("def a(doc: dict[str, Any]) -> str: ...\n"
              "def b(documents: Sequence[dict[str, Any]]) -> str: ...\n"
              "def c(*, run: dict | None = None) -> str: ...\n"
              "def d(log: RunLog, block: dict[str, Any]) -> str: ...\n")
    assert dict_run_parameters(source) == ["a(doc: dict[str, Any])", "b(documents: Sequence[dict[str, Any]])",
                                           "c(run: dict | None)"]
