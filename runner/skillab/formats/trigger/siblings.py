"""A sibling skill's own trigger queries (crowd mode), from its eval.yaml and its trigger sets."""

from __future__ import annotations

from pathlib import Path

from ...suite.trigger import TriggerQuery, load_trigger_file, trigger_files


def sibling_queries(skill_dir: Path, sibling_name: str) -> list[TriggerQuery]:
    """A sibling's own should-trigger queries, labelled as meant for it (crowd mode): from its
    ``eval.yaml`` trigger-only cases and its trigger set files."""
    from .. import load_suite

    own: list[TriggerQuery] = []
    native = [skill_dir / n for n in ("eval.yaml", "eval.yml") if (skill_dir / n).is_file()]
    if native:
        suite = load_suite(native[0])
        own += [TriggerQuery(c.name, c.prompt, True, suite.path.name, c.line, sibling_name)
                for c in suite.cases if c.trigger_only and c.should_trigger]
    for path in trigger_files(skill_dir):
        own += [q for q in load_trigger_file(path, owner=sibling_name) if q.should_trigger]
    return [TriggerQuery(f"{sibling_name}/{q.name}", q.query, False, f"{sibling_name}/{q.source}",
                         q.line, sibling_name) for q in own if q.owner == sibling_name]
