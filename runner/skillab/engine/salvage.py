"""What a run keeps when it fails after its arms ran.

The statistics, a block of the report, the trigger trials, the history or the ledger failing
must not cost the arms already paid for: the run's document is written as a partial run naming
the failure (``RunSettings.failure``), summarized if the records can be, else holding them bare.
"""

from __future__ import annotations

from dataclasses import replace

from ..core.records import CaseRecord
from ..core.runlog import RunLog, RunSettings
from ..errors import SkillabError
from ..scoring.summary import summarize


def failed_after_arms(exc: BaseException) -> str:
    """What failed once the arms had run, in one line (``RunSettings.failure``)."""
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
    what = text if isinstance(exc, SkillabError) else f"{type(exc).__name__}: {text}" if text else type(exc).__name__
    return f"failed after its arms ran: {what}"


def bare_log(settings: RunSettings, records: list[CaseRecord]) -> RunLog:
    """``records`` under ``settings``, summarized if they can be, else with the summary of no
    records: the document still holds every one of them."""
    try:
        return summarize(settings, records)
    except Exception:
        return replace(summarize(settings, []), records=records)
