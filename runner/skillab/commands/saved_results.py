"""A results file a previous run saved, with the arms its checkpoint journal kept: what
``report``, ``diff``, ``--failed`` and ``--resume`` read."""

from __future__ import annotations

from pathlib import Path

from ..core.runlog import RunLog
from ..errors import UsageError
from .console import say


def load_results(path: Path) -> list[dict]:
    """The suite documents of a results file, with the arms its checkpoint journal kept (a run
    killed outright may have left only the journal); a usage error when it is not one."""
    from ..log.checkpoint import journal_path, read_journal
    from ..log.results import load_documents

    journal = journal_path(path)
    skipped: list[int] = []
    try:
        documents = load_documents(path) if path.exists() or not journal.is_file() else []
        if not journal.is_file():
            return documents
        from ..engine.resume import with_journal  # the arms of a run killed outright

        documents = with_journal(documents, read_journal(journal, skipped.append))
    except FileNotFoundError:
        raise UsageError(f"{path}: no such results document") from None
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
        raise UsageError(f"{path}: not a skillab results document ({exc})") from None
    if skipped:
        lines = ", ".join(map(str, skipped[:5])) + (" ..." if len(skipped) > 5 else "")
        say(f"{journal}: skipped {len(skipped)} line(s) that are not journal entries (line {lines}); "
            "their arms run again")
    return documents


def finished_logs(path: Path, documents: list[dict]) -> list[RunLog]:
    """The runs of a results file's finished documents; a usage error naming the field that
    does not fit when one is not a results document."""
    try:
        return [RunLog.from_json(doc) for doc in documents]
    except (ValueError, KeyError, TypeError) as exc:
        raise UsageError(f"{path}: not a skillab results document ({exc})") from None
