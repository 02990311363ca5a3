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
    """The trigger set files in ``directories`` (and their ``evals/``), each listed once.

    A file (or an ``evals`` folder) that is a link resolving outside its directory is refused:
    its queries would be read from anywhere on the host and posted to the model.
    """
    found: dict[Path, None] = {}
    for directory in directories:
        home = directory.resolve()
        for sub in TRIGGER_DIRS:
            base = directory / sub if sub else directory
            present = [base / n for n in JSON_FILES if (base / n).is_file()]
            if len(present) > 1:
                raise SuiteError([SuiteIssue(base, f"holds both {present[0].name} and "
                                             f"{present[1].name} — keep only one trigger set")])
            present += [base / n for n in YAML_FILES if (base / n).is_file()]
            for path in present:
                resolved = path.resolve()
                if not resolved.is_relative_to(home):
                    raise SuiteError([SuiteIssue(path, f"is a link out of {directory} — a trigger set "
                                                 "must be a file of the skill or suite")])
                found.setdefault(resolved, None)
    return list(found)
