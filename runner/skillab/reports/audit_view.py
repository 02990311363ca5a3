"""The audit's part of every report: one summary line, and in the markdown the findings that
count (above ``low``), each located with its fix."""

from __future__ import annotations

from collections.abc import Sequence

from ..core.audit import AuditBlock
from ..core.runlog import RunLog
from ..core.wording import counted
from . import escape

# Findings listed per suite in the PR comment; the rest are counted and `skillab audit` lists them.
MARKDOWN_FINDINGS = 8


def audit_text(block: AuditBlock | None) -> str | None:
    """``3 findings (1 high, 2 low) · 1 counted as a leak``; None for a run without the block."""
    if block is None:
        return None
    if not block.findings:
        return "no findings (answer leaks, contamination, duplicates, saturated cases)"
    levels = ", ".join(f"{sum(f.severity == s for f in block.findings)} {s}" for s in ("high", "medium", "low")
                       if any(f.severity == s for f in block.findings))
    return f"{counted(len(block.findings), 'finding')} ({levels}) · {counted(block.leaks, 'answer leak')} counted"


def audit_section(logs: Sequence[RunLog], several: bool) -> str:
    lines = []
    for log in logs:
        block = log.settings.audit
        text = audit_text(block)
        if block is None or text is None or not block.findings:
            continue
        prefix = f"{escape.inline(log.settings.suite.skill, 80)}: " if several else ""
        lines.append(f"- {prefix}{escape.inline(text, 200)}")
        shown = [f for f in block.findings if f.severity != "low"]
        for finding in shown[:MARKDOWN_FINDINGS]:
            lines.append(f"  - **{finding.severity}** {finding.kind.replace('_', ' ')} "
                         f"{escape.code_span(finding.located(), 160)} case {escape.code_span(finding.case, 80)}: "
                         f"{escape.inline(finding.detail, 240)} — fix: {escape.inline(finding.fix, 200)}")
        rest = len(block.findings) - min(len(shown), MARKDOWN_FINDINGS)
        if rest:
            lines.append(f"  - {counted(rest, 'more finding')}: "
                         f"{escape.code_span('skillab audit ' + log.settings.suite.path, 200)} lists them")
    return ("**Audit** (before any model call)\n\n" + "\n".join(lines)) if lines else ""
