"""Is the checkout the pull request's code? A report about the wrong commit is worse than none.

On ``pull_request`` a checkout is the PR's head commit, or the test merge GitHub makes of it
(``refs/pull/N/merge``: a commit whose parents are the base and the head). On
``pull_request_target`` a plain ``actions/checkout`` gives the BASE branch, and skillab would
report the base skill's lift as the PR's. So the checked-out commit must be the head, or a merge
with the head as a parent; anything else is refused before a suite runs. The original arm reads
the base commit named by the event itself (``pull_request.base.sha``), so it needs no check.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from ..engine.against import GitRepo
from ..errors import UsageError
from .event import Event

_SHA = re.compile(r"[0-9a-f]{40}")


class CheckoutMismatch(UsageError):
    """The workspace holds some other commit than the pull request's head."""


@dataclass(frozen=True)
class CheckoutCheck:
    """What was checked out: the head itself, a test merge of it, or unknown (no git)."""

    kind: str  # "head", "merge" or "unverified"
    commit: str | None = None

    @property
    def note(self) -> str | None:
        if self.kind == "unverified":
            return ("The workspace is not a git checkout, so skillab could not verify that it "
                    "holds the pull request's head commit.")
        return None


def verify_checkout(workspace: Path, event: Event) -> CheckoutCheck | None:
    """Check the checkout against the event's head commit; None when there is nothing to check.

    Raises ``CheckoutMismatch`` when the commit differs, or when a ``pull_request_target`` run
    cannot be verified at all (that event checks out the base unless told otherwise).
    """
    pr = event.pull_request
    if not event.is_pull_request or pr is None:
        return None
    head = (pr.head_sha or "").lower()
    if not _SHA.fullmatch(head):
        raise CheckoutMismatch(
            f"the {event.name} event names no head commit, so skillab cannot tell whether the "
            "checkout holds the pull request's code; refusing to evaluate it"
        )
    repo = GitRepo.containing(workspace)
    if repo is None:
        if event.name == "pull_request_target":
            raise CheckoutMismatch(_advice(event.name, head, None, "the workspace is not a git checkout"))
        return CheckoutCheck("unverified")
    commit = _rev_parse(repo)
    if commit == head:
        return CheckoutCheck("head", commit)
    if commit is not None and head in _parents(repo, commit):
        return CheckoutCheck("merge", commit)
    raise CheckoutMismatch(_advice(event.name, head, commit, None))


def _rev_parse(repo: GitRepo) -> str | None:
    result = repo.git("rev-parse", "--verify", "--quiet", "HEAD^{commit}", check=False)
    text = result.stdout.decode(errors="replace").strip()
    return text if result.returncode == 0 and _SHA.fullmatch(text) else None


def _parents(repo: GitRepo, commit: str) -> tuple[str, ...]:
    # The raw commit object names its parents even in a shallow clone, where HEAD^2 does not resolve.
    result = repo.git("cat-file", "commit", commit, check=False)
    if result.returncode != 0:
        return ()
    parents = []
    for line in result.stdout.decode(errors="replace").splitlines():
        if not line:
            break  # the headers end at the first blank line
        if line.startswith("parent "):
            parents.append(line.split(" ", 1)[1].strip())
    return tuple(parents)


def _advice(event_name: str, head: str, commit: str | None, reason: str | None) -> str:
    found = reason or (f"the workspace holds {commit[:12]}" if commit else "the workspace has no commit checked out")
    fix = ("check out the head by SHA: `actions/checkout` with `ref: "
           "${{ github.event.pull_request.head.sha }}`, behind an approval (see the trust model in skillab's docs/action.md)"
           if event_name == "pull_request_target"
           else "check out the pull request itself (`actions/checkout` with its default ref)")
    return (f"refusing to evaluate: the pull request's head is {head[:12]} but {found}, so the "
            f"report would describe other code than the pull request's; {fix}")
