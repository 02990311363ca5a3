"""Which cases a run takes, beyond ``--case`` and ``--tag``: ``-k EXPR`` (pytest's keyword
expression over case names and tags) and ``--failed`` (the cases that failed or errored in the
last run at ``--output``, as pytest's ``--lf``). The choice is per suite: several suites never
share one list of names."""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from ..errors import UsageError

if TYPE_CHECKING:
    from ..core.runlog import RunLog

FAILED_OUTCOMES = ("flip_to_fail", "fail_kept", "error")
_TOKEN = re.compile(r"\s*(\(|\)|[^\s()]+)")
Matcher = Callable[[str, Sequence[str]], bool]


@dataclass(frozen=True)
class Selection:
    """The case names each suite runs (a suite absent from ``names`` runs as it would anyway),
    and the suites left with nothing to run."""

    names: dict[Path, tuple[str, ...]]
    skipped: dict[Path, str]


def keyword_matcher(expression: str) -> Matcher:
    """``-k``: words joined by ``and``, ``or``, ``not`` and parentheses. A word matches a case
    whose name or one of whose tags contains it (case-insensitive), or, with ``*?[``, matches
    it as a glob."""
    tokens = _TOKEN.findall(expression)
    if not tokens:
        raise UsageError("-k needs an expression: words joined by and, or, not and parentheses")
    return _KeywordParser(expression, tokens).parse()


class _KeywordParser:
    """Recursive descent over the tokens: ``or`` binds loosest, then ``and``, then ``not``."""

    def __init__(self, expression: str, tokens: list[str]):
        self.expression = expression
        self.tokens = tokens
        self.position = 0

    def parse(self) -> Matcher:
        matcher = self.either()
        if self.position != len(self.tokens):
            raise UsageError(f"-k {self.expression!r}: unexpected '{self.tokens[self.position]}'")
        return matcher

    def peek(self) -> str | None:
        return self.tokens[self.position] if self.position < len(self.tokens) else None

    def take(self) -> str:
        if self.position >= len(self.tokens):
            raise UsageError(f"-k {self.expression!r}: the expression ends too early")
        self.position += 1
        return self.tokens[self.position - 1]

    def either(self) -> Matcher:
        left = self.both()
        while self.peek() == "or":
            self.take()
            left = (lambda a, b: lambda n, t: a(n, t) or b(n, t))(left, self.both())
        return left

    def both(self) -> Matcher:
        left = self.negated()
        while self.peek() == "and":
            self.take()
            left = (lambda a, b: lambda n, t: a(n, t) and b(n, t))(left, self.negated())
        return left

    def negated(self) -> Matcher:
        if self.peek() == "not":
            self.take()
            inner = self.negated()
            return lambda n, t: not inner(n, t)
        return self.atom()

    def atom(self) -> Matcher:
        token = self.take()
        if token == "(":
            inner = self.either()
            if self.take() != ")":
                raise UsageError(f"-k {self.expression!r}: a '(' is not closed")
            return inner
        if token in (")", "and", "or"):
            raise UsageError(f"-k {self.expression!r}: '{token}' where a word was expected")
        return _word(token)


def _word(word: str) -> Matcher:
    needle = word.lower()
    if any(c in word for c in "*?["):
        return lambda name, tags: any(fnmatch.fnmatchcase(s.lower(), needle) for s in (name, *tags))
    return lambda name, tags: any(needle in s.lower() for s in (name, *tags))


def select_cases(targets: Sequence[Path], suite_format: str | None, *, keyword: str | None,
                 failed_from: Path | None, named: Sequence[str]) -> Selection | None:
    """The per-suite selection ``-k`` and ``--failed`` make, or None when neither is given.
    ``named``: ``--case`` names, which narrow it further."""
    if keyword is None and failed_from is None:
        return None
    from ..suite import load_suite

    matcher = keyword_matcher(keyword) if keyword is not None else None
    failures = _last_failures(failed_from) if failed_from is not None else None
    names: dict[Path, tuple[str, ...]] = {}
    skipped: dict[Path, str] = {}
    for target in targets:
        suite = load_suite(Path(target), format=suite_format)
        chosen = [c for c in suite.cases if matcher is None or matcher(c.name, tuple(c.tags))]
        why = f"no case matches -k {keyword!r}"
        if failures is not None:
            last = failures.get(Path(suite.path).resolve())
            if last is not None:
                chosen = [c for c in chosen if c.name in last]
                why = f"no case failed in the last run ({failed_from})" if not last else why
        if named:
            chosen = [c for c in chosen if c.name in named]
        if chosen:
            names[Path(target)] = tuple(c.name for c in chosen)
        else:
            skipped[Path(target)] = why
    return Selection(names, skipped)


def _last_failures(path: Path) -> dict[Path, set[str]]:
    """Each suite's failed or errored cases in the results document at ``path`` (a suite it
    does not hold runs whole); no document at all is a usage error."""
    if not Path(path).exists():
        # Running everything instead would spend a whole run on a request for the failures.
        raise UsageError(f"--failed: no earlier run at {path} to take the failures from; run without "
                         "--failed first (or give that run's --output)")
    from .saved_results import load_results

    found: dict[Path, set[str]] = {}
    for doc in load_results(Path(path)):
        failed = {c["case_name"] for c in doc.get("cases", []) if c.get("outcome") in FAILED_OUTCOMES}
        found.setdefault(Path(doc["suite"]["path"]).resolve(), set()).update(failed)
    return found


def earlier_logs(path: Path) -> dict[Path, RunLog]:
    """The last run's log of each suite at ``path``, read before ``--failed`` overwrites it."""
    from ..core.runlog import RunLog
    from .saved_results import load_results

    logs: dict[Path, RunLog] = {}
    for doc in load_results(Path(path)):
        try:
            log = RunLog.from_json(doc)
        except (KeyError, TypeError, ValueError) as exc:
            raise UsageError(f"--failed: {path} is not a results document skillab can read back ({exc})") from None
        logs.setdefault(Path(log.settings.suite.path).resolve(), log)
    return logs


def keep_the_rest(log: RunLog, earlier: dict[Path, RunLog]) -> RunLog:
    """A ``--failed`` rerun's log joined with the last run's other cases, so the document at
    ``--output`` stays whole (and the next ``--failed`` reads every case's latest outcome). The
    rerun cases take their place in suite order; a warning says which run each part is from."""
    from dataclasses import replace

    from ..scoring.summary import summarize

    last = earlier.get(Path(log.settings.suite.path).resolve())
    rerun = {record.case_name for record in log.records}
    if last is None or not rerun:
        return log
    fresh = {name: [r for r in log.records if r.case_name == name] for name in rerun}
    records = []
    for record in last.records:
        if record.case_name not in rerun:
            records.append(record)
        elif record.case_name in fresh:
            records.extend(fresh.pop(record.case_name))
    records += [r for rs in fresh.values() for r in rs]
    kept = len({r.case_name for r in records}) - len(rerun)
    note = (f"--failed: {len(rerun)} case(s) rerun now; {kept} kept from the run that started "
            f"{last.settings.started_at.isoformat(timespec='seconds')}")
    settings = replace(log.settings, planned_cases=None, started_at=last.settings.started_at,
                       warnings=(*log.settings.warnings, note))
    return summarize(settings, records)
