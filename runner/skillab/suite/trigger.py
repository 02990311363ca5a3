"""Trigger queries: does the agent pick the skill on its own, from its name and description?

A trigger query is a user request and whether the skill should be loaded for it. They come from
three places, merged in this order (files beside the skill before those in ``evals/``):

- the suite's cases labelled ``should_trigger`` (eval.yaml spec rev 2): the trigger-only ones,
  which have no grader, and graded ones, which also run A/B;
- ``trigger-evals.json`` / ``trigger_evals.json`` (Anthropic skill-creator's format: a JSON list
  of ``{"query": ..., "should_trigger": bool}``) beside the skill or the suite, or in ``evals/``;
- ``triggers.yaml`` beside the skill or the suite, or in ``evals/``: the same list in YAML (or
  under a top-level ``triggers:`` key), next to a suite of any format.

An entry may also carry ``name`` (how reports and mock scripts refer to it) and ``skill`` (the
sibling skill the query is meant for, in crowd mode; default the skill under test).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import SuiteError, SuiteIssue
from ..yaml_source import YamlDocument, YamlPath, parse_yaml, read_suite_text
from .loading import IssueList
from .model import Suite
from .trigger_sets import trigger_files

ENTRY_KEYS = ("query", "should_trigger", "name", "skill")
_SLUG = re.compile(r"[^a-z0-9]+")


@dataclass(frozen=True)
class TriggerQuery:
    """One request posed to the agent with the skill listed; ``owner`` None means the skill
    under test, else the sibling skill the query is meant for."""

    name: str
    query: str
    should_trigger: bool
    source: str
    line: int | None = None
    owner: str | None = None


def load_trigger_file(path: Path, *, owner: str | None = None) -> list[TriggerQuery]:
    """The queries of one trigger set file; ``SuiteError`` names file, line, entry and field."""
    text = read_suite_text(path)
    if path.suffix == ".json":
        try:
            json.loads(text)
        except json.JSONDecodeError as exc:
            raise SuiteError([SuiteIssue(path, f"is not valid JSON ({exc.msg})", line=exc.lineno)]) from None
        except RecursionError:
            raise SuiteError([SuiteIssue(path, "is not a trigger set: its JSON nests too deep")]) from None
        except ValueError as exc:  # a number Python will not convert (over 4,300 digits)
            raise SuiteError([SuiteIssue(path, f"is not a trigger set ({exc})")]) from None
    doc = parse_yaml(text, path)
    return parse_trigger_list(doc, path, owner=owner)


def parse_trigger_list(doc: YamlDocument, path: Path, *, owner: str | None = None) -> list[TriggerQuery]:
    issues = IssueList(path, doc)
    at: YamlPath = ()
    entries = doc.value
    if isinstance(entries, dict) and set(entries) == {"triggers"}:
        entries, at = entries["triggers"], ("triggers",)
    if not isinstance(entries, list):
        issues.add("must be a list of {query, should_trigger} entries (or a mapping with only "
                   "'triggers:' holding that list)", at)
        issues.raise_if_any()
    queries = [_entry(raw, (*at, index), index, path, issues, owner) for index, raw in enumerate(entries)]
    issues.raise_if_any()
    return [q for q in queries if q is not None]


def _entry(raw: Any, at: tuple, index: int, path: Path, issues: IssueList, owner: str | None) -> TriggerQuery | None:
    label = f"#{index + 1}"
    if not isinstance(raw, dict):
        issues.add(f"entry {label} must be a mapping with 'query' and 'should_trigger'", at)
        return None
    issues.check_keys(raw, ENTRY_KEYS, at, what=f"entry {label}", case=label)
    query, flag = raw.get("query"), raw.get("should_trigger")
    if not isinstance(query, str) or not query.strip():
        issues.add("must be a non-empty string", (*at, "query"), field="query", case=label)
    if not isinstance(flag, bool):
        issues.add("must be true or false", (*at, "should_trigger"), field="should_trigger", case=label)
    for key in ("name", "skill"):
        if key in raw and (not isinstance(raw[key], str) or not raw[key].strip()):
            issues.add("must be a non-empty string", (*at, key), field=key, case=label)
    if not isinstance(query, str) or not isinstance(flag, bool):
        return None
    name = raw.get("name") if isinstance(raw.get("name"), str) else f"{path.stem}-{index + 1}-{_slug(query)}"
    return TriggerQuery(
        name=str(name).strip(),
        query=query,
        should_trigger=flag,
        source=path.name,
        line=issues.doc.line_at(at) if issues.doc else None,
        owner=raw.get("skill") if isinstance(raw.get("skill"), str) else owner,
    )


def _slug(text: str, words: int = 5) -> str:
    return "-".join(_SLUG.sub(" ", text.lower()).split()[:words]) or "query"


def suite_trigger_queries(suite: Suite, skill_dir: Path, *, skill_name: str) -> list[TriggerQuery]:
    """Every trigger query of a suite: its cases labelled ``should_trigger``, then its trigger
    set files.

    Entries naming the skill itself as ``skill`` count as its own. A query text listed twice
    with opposite labels is an error; listed twice with the same label, it runs once.
    """
    queries = [
        TriggerQuery(c.name, c.prompt, bool(c.should_trigger), suite.path.name, c.line)
        for c in suite.cases
        if c.should_trigger is not None
    ]
    for path in trigger_files(skill_dir, suite.path.parent):
        queries += load_trigger_file(path)
    return _deduplicated([_own(q, skill_name) for q in queries])


def _own(query: TriggerQuery, skill_name: str) -> TriggerQuery:
    if query.owner == skill_name:
        return TriggerQuery(query.name, query.query, query.should_trigger, query.source, query.line)
    return query


def _deduplicated(queries: list[TriggerQuery]) -> list[TriggerQuery]:
    kept: dict[str, TriggerQuery] = {}
    names: set[str] = set()
    issues = []
    for query in queries:
        key = " ".join(query.query.split()).lower()
        first = kept.get(key)
        if first is not None:
            if first.should_trigger != query.should_trigger and first.owner == query.owner:
                issues.append(SuiteIssue(Path(query.source), (
                    f"query {query.query[:60]!r} is labelled should_trigger: {query.should_trigger} "
                    f"here and {first.should_trigger} in {first.source} — one query, one label"),
                    line=query.line, case=query.name))
            continue
        name, n = query.name, 2
        while name in names:
            name, n = f"{query.name}-{n}", n + 1
        names.add(name)
        kept[key] = TriggerQuery(name, query.query, query.should_trigger, query.source, query.line, query.owner)
    if issues:
        raise SuiteError(issues)
    return list(kept.values())


def select_queries(queries: list[TriggerQuery], suite: Suite, names: tuple[str, ...],
                   tags: tuple[str, ...]) -> list[TriggerQuery]:
    """The trigger queries a ``--case``/``--tag`` selection keeps: trigger-only cases as the
    suite selected them; trigger set entries by name (they carry no tags)."""
    if not names and not tags:
        return queries
    cases = {c.name for c in suite.cases}
    file_names = {q.name for q in queries} - {c.name for c in suite.cases if c.trigger_only}
    return [q for q in queries if q.name in cases or (q.name in file_names and q.name in names)]


def with_sibling_queries(own: list[TriggerQuery], theirs: list[TriggerQuery]) -> list[TriggerQuery]:
    """``own`` plus the siblings' queries whose text the skill's own set does not already label."""
    seen = {" ".join(q.query.split()).lower() for q in own}
    merged = list(own)
    for query in theirs:
        key = " ".join(query.query.split()).lower()
        if key not in seen:
            seen.add(key)
            merged.append(query)
    return merged
