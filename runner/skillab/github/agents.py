"""The agents an Action run evaluates with: the ``adapter`` input names one, or several
comma-separated (as ``skillab run --adapter a,b,c``).

With several, every selected suite runs under each agent in turn, each run gets its own results
document (``skillab-results/<suite>/<agent>/results.json``), and the one PR comment carries the
portability table, one row per agent and suite. Nothing is pooled across agents: their
baselines differ, so each run is gated on its own.
"""

from __future__ import annotations

import shutil
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from ..core.runlog import RunLog
from ..errors import UsageError

NO_MODEL = (
    "the action needs a model to evaluate skills with: set the `model` input (and "
    "`anthropic-api-key`, `openai-api-key` or `gemini-api-key`), or `adapter: mock` for an "
    "offline dry run"
)
# The agent CLIs an adapter drives, and which image variant carries them.
CLI_OF = {"claude-code": "claude", "codex": "codex", "gemini-cli": "gemini", "copilot": "copilot"}
NO_CLI = (
    "adapter '{adapter}' needs the '{cli}' CLI, which this image does not have: use the variant "
    "that carries the agent CLIs, `uses: OWNER/skillab/claude-code@v1` (same inputs)"
)


@dataclass(frozen=True)
class AgentChoice:
    """One agent of the run: the adapter's name and the model it drives."""

    adapter: str
    model: str | None


def choose_agents(adapter_input: str | None, model_input: str | None) -> list[AgentChoice]:
    """The agents the ``adapter`` and ``model`` inputs name. ``model`` is one model for every
    agent or one per agent in the same order; without ``adapter``, a model means ``agent``."""
    from ..core import plugins

    names = [n.strip() for n in (adapter_input or "").split(",") if n.strip()]
    models = [m.strip() for m in (model_input or "").split(",")] if model_input else []
    if not names:
        names = ["agent"] if models else []
    unknown = [n for n in names if not plugins.is_known("agents", n)]
    if unknown or len(set(names)) != len(names):
        raise UsageError(f"input 'adapter' takes one or more of {', '.join(plugins.names('agents'))}, "
                         f"comma-separated, each once; got {adapter_input!r}")
    if len(models) > 1 and len(models) != len(names):
        raise UsageError(f"input 'adapter' names {len(names)} agent(s) but input 'model' names "
                         f"{len(models)} models: give one model for all, or one per agent in the "
                         "same order")
    if not names:
        raise UsageError(NO_MODEL)
    chosen = []
    for index, name in enumerate(names):
        model = (models[index] if len(models) == len(names) else models[0]) if models else None
        if name != "mock" and not model:
            raise UsageError(NO_MODEL)
        chosen.append(AgentChoice(name, model or None))
    for choice in chosen:
        cli = CLI_OF.get(choice.adapter)
        if cli is not None and shutil.which(cli) is None:
            raise UsageError(NO_CLI.format(adapter=choice.adapter, cli=cli))
    return chosen


def results_file(out_dir: Path, rel_dir: str, agent: str | None) -> Path:
    """Where one suite's document goes: ``<suite>/results.json``, or, when several agents run,
    ``<suite>/<agent>/results.json``."""
    # Imported here: the results document's module loads the engine's types, which the Action
    # needs only once a suite has run.
    from ..log.results import safe_file_name

    suite = out_dir / safe_file_name(rel_dir.replace("/", "__"), fallback="root")
    return (suite / safe_file_name(agent, fallback="agent") if agent else suite) / "results.json"



def run_delta_pts(logs: Sequence[RunLog]) -> float | None:
    """The ``delta-pts`` output: the lift pooled over every suite, or None when several agents
    ran (each has its own baseline; the portability table gives each agent's lift)."""
    from ..reports.markdown import pooled_delta_pts
    from ..reports.portability import is_portability_run

    return None if is_portability_run(logs) else pooled_delta_pts(logs)
