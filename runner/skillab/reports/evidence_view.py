"""The evidence ledger's line (``--evidence-ledger``) as every report shows it: one sentence
over the typed block (``core.evidence.EvidenceBlock.sentence``), written once here."""

from __future__ import annotations

from collections.abc import Sequence

from ..core.runlog import RunLog
from . import escape as md


def terminal_lines(log: RunLog) -> list[str]:
    block = log.settings.evidence
    return [] if block is None else [f"  ledger       {block.sentence()}"]


def markdown_section(named: Sequence[tuple[str, RunLog]]) -> str:
    lines = []
    for name, log in named:
        block = log.settings.evidence
        if block is None:
            continue
        prefix = f"{md.inline(name, 80)}: " if len(named) > 1 else ""
        lines.append(f"- {prefix}{md.inline(block.sentence(), 700)}")
    return ("**Evidence across runs** (ledger)\n\n" + "\n".join(lines)) if lines else ""


def html_lines(log: RunLog) -> list[str]:
    from html import escape  # its entity table is only worth loading for an HTML report

    block = log.settings.evidence
    return [] if block is None else [f"<p><b>evidence across runs</b> {escape(block.sentence(), quote=True)}</p>"]
