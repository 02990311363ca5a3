"""Where a skill keeps its trigger set files (``suite.trigger`` reads them): found without
importing the reader, so `skillab validate` of a suite with none pays only for looking."""

from __future__ import annotations

from pathlib import Path

from ..errors import SuiteError, SuiteIssue

JSON_FILES = ("trigger-evals.json", "trigger_evals.json")
YAML_FILES = ("triggers.yaml",)
# Where a skill keeps its trigger sets, relative to the skill (or suite) directory.
TRIGGER_DIRS = ("", "evals")


def trigger_files(*directories: Path) -> list[Path]:
    """The trigger set files in ``directories`` (and their ``evals/``), each listed once."""
    found: dict[Path, None] = {}
    for directory in directories:
        for sub in TRIGGER_DIRS:
            base = directory / sub if sub else directory
            present = [base / n for n in JSON_FILES if (base / n).is_file()]
            if len(present) > 1:
                raise SuiteError([SuiteIssue(base, f"holds both {present[0].name} and "
                                             f"{present[1].name} — keep only one trigger set")])
            present += [base / n for n in YAML_FILES if (base / n).is_file()]
            for path in present:
                found.setdefault(path.resolve(), None)
    return list(found)
