"""The original arm on a pull request: the skill as it was at the PR's base commit.

The base commit is the one the event names (``pull_request.base.sha``), never whatever the
workspace holds, so a checkout cannot change what the candidate is compared with.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..core.settings import RunConfig
from ..errors import SkillabError
from .discovery import SuiteLocation
from .event import Event

_COMMIT_SHA = re.compile(r"[0-9a-f]{40}")


@dataclass(frozen=True)
class OriginalChoice:
    """The ref to run the original arm from (None: two arms), and what to tell the reader."""

    ref: str | None
    note: str | None = None  # for the report
    warning: str | None = None  # for the log as well
    notice: str | None = None  # for the log only


def base_sha(event: Event) -> str | None:
    """The pull request's base commit, on pull request events."""
    if not event.is_pull_request:
        return None
    pr = event.payload.get("pull_request") or {}
    sha = (pr.get("base") or {}).get("sha") if isinstance(pr, dict) else None
    return sha if isinstance(sha, str) and _COMMIT_SHA.fullmatch(sha) else None


def choose_original(location: SuiteLocation, config: RunConfig, event: Event) -> OriginalChoice:
    """The base commit when the pull request edits an existing skill, else no original.

    A new skill has no original, and a skill the pull request leaves as it was would only be
    compared with itself; both run two arms, the first with a note saying so.
    """
    from ..engine import prepare_suite
    from ..engine.against import GitRepo, OriginalMissing, open_original

    base = base_sha(event)
    if base is None:
        return OriginalChoice(None)
    try:
        candidate = prepare_suite(location.directory, config.engine).skill
    except Exception:  # noqa: BLE001 - the run itself reports what is wrong with the suite
        return OriginalChoice(None)
    if GitRepo.containing(candidate.root) is None:
        return OriginalChoice(None, notice=(
            f"{location.rel_dir}: the checkout is not a git repository, so the skill is not "
            "compared with its version at the base commit"))
    try:
        with open_original(base, candidate.root) as original:
            unchanged = original.skill.content_hash() == candidate.content_hash()
    except OriginalMissing:
        return OriginalChoice(None, note=(
            f"{location.rel_dir}: a new skill, with no original at the base commit {base[:12]} "
            "to compare with; the candidate ran against no skill only."))
    except SkillabError as exc:
        note = (f"{location.rel_dir}: the original skill at the base commit {base[:12]} could not "
                f"be read ({exc}); the candidate ran against no skill only.")
        return OriginalChoice(None, note=note, warning=note)
    return OriginalChoice(None if unchanged else base)
