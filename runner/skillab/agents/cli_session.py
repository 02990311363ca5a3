"""One headless CLI session's boundary types: how its process starts (``Launch``), what its
events said it did (``CliSummary``), and the proxy's count of its model calls over both."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from ..core.usage import Usage
from ..grading.trajectory import ModelTurn
from ..sandbox.metering import Tally
from ..sandbox.view import ProxyRoute
from .skill_view import folder_name


@dataclass(frozen=True)
class Launch:
    """How one arm's CLI process starts, and what it may see.

    ``env`` is added to the workspace's scrubbed environment; ``cli_env`` (the endpoint) after
    the scrub, because the scrub drops anything named like a credential or
    carrying a credential's value (an endpoint equal to another provider's base URL, say).
    ``config_dir`` holds the CLI's configuration for this arm and is removed after it."""

    argv: list[str]
    cwd: Path
    env: dict[str, str]
    cli_env: dict[str, str] = field(default_factory=dict)
    stdin: str | None = None
    base_url: str | None = None
    config_dir: Path | None = None
    read_only: tuple[Path, ...] = ()
    # Host paths bound read-only at another path inside (host, inside).
    read_only_at: tuple[tuple[Path, str], ...] = ()
    hide: tuple[Path, ...] = ()
    network: ProxyRoute | None = None


@dataclass
class CliSummary:
    """What one headless session did, read from the CLI's events."""

    turns: list[ModelTurn] = field(default_factory=list)
    final_text: str = ""
    usage: Usage = field(default_factory=Usage)
    num_turns: int = 0
    duration_ms: int = 0
    # The CLI reported a finished session (its result or turn-completed event).
    finished: bool = False
    # The CLI's own error report, if any (an API outage, a failed turn).
    error: str | None = None
    auth_status: int | None = None
    skill_activated: bool = False
    # Offered skills the session loaded, in order (CLIs that track more than the candidate).
    skills_loaded: list[str] = field(default_factory=list)
    paths_touched: list[str] = field(default_factory=list)
    # Why the session ended early without failing: ``max_turns`` at the turn cap.
    stop_reason: str | None = None
    # The model id the API's answers named (CLIs whose events carry it).
    served_model: str | None = None


def apply_tally(summary: CliSummary, tally: Tally) -> None:
    """The session's tokens, cost and served model as the credential proxy counted them from
    the answers it relayed; an answer it could not read, or a request it refused, is an error."""
    summary.usage = tally.usage
    summary.served_model = tally.served_model
    if tally.unmetered:
        summary.error = (f"{tally.unmetered} model answer(s) came back in a form whose usage "
                         "the credential proxy could not read: the arm's spend is unknown")
    if tally.refused:
        summary.error = (f"the credential proxy refused {tally.refused} model request(s): "
                         + "; ".join(tally.reasons))


def check_offered(summary: CliSummary, skill_name: str | None, shown: list[str] | None, where: str) -> None:
    """A with-skill arm whose skill is not among those the runtime ``shown`` it had (``where``
    says whose word that is) is invalid, never a baseline: its error says so."""
    if summary.error is not None or skill_name is None:
        return
    if shown is None or not {skill_name, folder_name(skill_name)} & set(shown):
        summary.error = (f"the skill {skill_name} was not offered to the agent ({where}: "
                         f"{', '.join(shown) if shown else 'none'}): the arm is invalid, not a baseline")
