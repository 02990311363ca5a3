"""The Action's inputs: ONE table that ``action.yml``, the README and the tests are held to.

GitHub hands each input to a container action as ``INPUT_<NAME>``: the name upper-cased with
spaces turned into underscores and hyphens kept (``judge-model`` → ``INPUT_JUDGE-MODEL``). This
module is the only place that reads them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal

from ..engine.shard import Shard
from ..errors import UsageError
from ..sandbox.backend import is_sandbox_name, sandbox_names

Mode = Literal["auto", "changed", "all", "merge"]
MODES: tuple[Mode, ...] = ("auto", "changed", "all", "merge")
GATE_VERDICTS = ("fail", "mixed", "error")


@dataclass(frozen=True)
class InputSpec:
    """One input as ``action.yml`` declares it. ``yml_default`` is what action.yml writes when it
    differs from the value the entrypoint falls back to (an expression GitHub evaluates)."""

    name: str
    default: str
    description: str
    secret: bool = False
    yml_default: str | None = None
    # A blank value the workflow sets on purpose means "off" instead of "the default".
    keep_blank: bool = False

    @property
    def env_name(self) -> str:
        return "INPUT_" + self.name.replace(" ", "_").upper()

    @property
    def action_default(self) -> str:
        return self.default if self.yml_default is None else self.yml_default


INPUTS: tuple[InputSpec, ...] = (
    InputSpec("path", ".", "Where to look for suites, relative to the repository root: skill "
              "directories (SKILL.md beside a suite file such as eval.yaml) and seed-format suites "
              "(task_suite.yaml, ruby-skill-bench evals, SkillsBench packages) in their own layouts."),
    InputSpec("mode", "auto", "Which suites to run: `changed` (the suites a pull request touches), "
              "`all`, or `auto` (changed on pull_request events, all otherwise). `merge`: run "
              "nothing, join the shards' results documents found under `path` into one report."),
    InputSpec("shard", "", "`I/N`: run only shard I of N of each suite's (case, run) units, for a "
              "job matrix; a `mode: merge` job joins the shards. No comment or gate per shard."),
    InputSpec("adapter", "", "How the agent is invoked: `mock`, `llm`, `agent`, `claude-code`, "
              "`codex` or `gemini-cli` (as `skillab run --adapter`); several, comma-separated "
              "(`claude-code,codex,gemini-cli`), run every suite under each agent and the comment "
              "shows the portability table, one row per agent. Empty: `agent` when a model is set. "
              "The agent CLIs need the image that carries them: `uses: OWNER/skillab/claude-code@v1`."),
    InputSpec("model", "", "Agent model (as `skillab run --model`): one for every agent, or one "
              "per agent of `adapter`, comma-separated in the same order; falls back to the "
              "SKILLAB_MODEL environment variable."),
    InputSpec("judge-model", "", "Judge model for expectations (or SKILLAB_JUDGE_MODEL); defaults "
              "to a model of another family than the agent's."),
    InputSpec("judge-same-family", "false", "Allow a judge of the agent's family (`true`/`false`); "
              "the report discloses it."),
    InputSpec("provider", "", "`anthropic` or `openai`; inferred from the model name when empty."),
    InputSpec("base-url", "", "OpenAI-compatible base URL (Ollama, vLLM, LiteLLM and friends)."),
    InputSpec("runs", "1", "Independent repeats per case, mean-aggregated."),
    InputSpec("concurrency", "4", "Arms in flight at once."),
    InputSpec("fail-on-verdict", "fail,error", "Comma-separated verdicts (fail, mixed, error) "
              "that fail the check when any suite ends with one of them. Empty: never.",
              keep_blank=True),
    InputSpec("min-delta-pts", "", "Fail the check when a suite's pass-rate delta (points) is "
              "below this, or could not be measured. Empty: off."),
    InputSpec("gate-on", "point", "What min-delta-pts compares: `point` (the delta) or "
              "`lower-bound` (the lower end of its 95% interval)."),
    InputSpec("target-lift-pts", "10", "The lift (points) the report's power statement sizes the "
              "suite for."),
    InputSpec("min-trigger-recall", "", "Fail the check when a suite's trigger recall (share of "
              "should-trigger queries on which the agent loaded the skill) is below this rate "
              "(0 to 1). Empty: off."),
    InputSpec("max-false-trigger-rate", "", "Fail the check when a suite's false-trigger rate "
              "(share of should-not-trigger queries on which the agent loaded the skill) is above "
              "this rate (0 to 1). Empty: off."),
    InputSpec("siblings", "auto", "Trigger trials offer these skills beside the one under test: "
              "`auto` (the other skills in the skill's parent directory), a directory relative to "
              "the repository root, or `none`."),
    InputSpec("comment", "true", "Post or update the pull request comment (`true`/`false`)."),
    InputSpec("github-token", "", "Token for the pull request comment and the files API.",
              secret=True, yml_default="${{ github.token }}"),
    InputSpec("anthropic-api-key", "", "Anthropic API key (or set ANTHROPIC_API_KEY in env).",
              secret=True),
    InputSpec("openai-api-key", "", "OpenAI (or compatible) API key (or set OPENAI_API_KEY in env).",
              secret=True),
    InputSpec("gemini-api-key", "", "Gemini API key, for `gemini-cli` and Gemini models (or set "
              "GEMINI_API_KEY in env).", secret=True),
    InputSpec("cache-dir", "", "Where the without-skill baseline cache lives, relative to the "
              "workspace (e.g. `.skillab/cache`), so `actions/cache` can keep it between jobs. "
              "Empty: a directory inside the container, lost when the job ends."),
    InputSpec("cache-key", "", "Secret the baseline cache's entries are signed with (e.g. "
              "`${{ secrets.SKILLAB_CACHE_KEY }}`): an entry counts only when a job holding it wrote "
              "the entry, so a pull request cannot commit a forged baseline into `cache-dir`. Empty: "
              "a key made for this job, so entries from earlier jobs are re-run.", secret=True),
    InputSpec("max-cost-usd", "", "Stop cleanly once the run has spent this many US dollars on "
              "model calls (as `skillab run --max-cost-usd`): bounds what any pull request can "
              "burn. Empty: no cap."),
    InputSpec("sandbox", "", "Isolation backend for every command a suite runs (as `skillab run "
              "--sandbox`): `bwrap`, `image` or `none` (unsandboxed, and every report says so). "
              "Empty: bwrap, and a real-agent run fails closed when it cannot work."),
    InputSpec("ablate", "false", "`true`: also run `skillab ablate` on each evaluated skill: which "
              "SKILL.md sections and bundled files carry its lift (load-bearing, dead weight, "
              "harmful); the comment annotates the sections the pull request changed. Costs about "
              "(1 + sections / 2) runs of the suite; bounded by `max-cost-usd`."),
    InputSpec("route", "", "A folder of skills, relative to the repository root (`skills`): also "
              "run `skillab route` for each evaluated skill among them, under each agent, and add "
              "the routing diff to the comment: which queries now go to the skill, what it steals "
              "from the others (exact tests, FDR at 5%); on a pull request the base commit's skill "
              "stands in the catalogue condition. Empty: off."),
    InputSpec("max-stolen", "", "Fail the check when a skill steals more than this many of the "
              "catalogue's queries beyond noise (with `route`). Empty: no gate."),
    InputSpec("min-route-accuracy", "", "Fail the check when a skill's own queries go to it less "
              "often than this rate (0-1) with the catalogue listed (with `route`). Empty: no gate."),
    InputSpec("placebo", "false", "`true`: add an arm with each skill's placebo (the same name, a "
              "description of the same length, neutral text of the same length, staged the same way; "
              "as `skillab run --placebo`): the comment gives the content lift (skill vs placebo) beside "
              "the presence lift (placebo vs none). Costs one arm per case and run more."),
    InputSpec("evidence-ledger", "", "The evidence ledger, relative to the workspace (e.g. "
              "`.skillab/evidence.jsonl`, kept with `actions/cache`): every run, re-run and shard of "
              "the same skill content, agent, model and suite adds its pairs, and the comment shows the "
              "accumulated anytime-valid evidence (as `skillab run --evidence-ledger`). Lines are signed "
              "with `cache-key`: without it, only this job's lines count. Empty: no ledger."),
    InputSpec("max-skill-tokens", "", "Fail the check when a skill's listing entry plus body costs "
              "more than this many tokens in context for the run's agent (as `skillab run "
              "--max-skill-tokens`). Empty: no gate."),
    InputSpec("fail-on-broken", "true", "`true`: fail the check when the run against the original "
              "skill names cases the edit broke beyond noise (as `skillab run --fail-on-broken`), so "
              "the check agrees with the comment's headline. `false`: the comment still names them."),
)
INPUT_NAMES: tuple[str, ...] = tuple(spec.name for spec in INPUTS)


@dataclass(frozen=True)
class ActionInputs:
    """The inputs, parsed and checked. Secrets stay out of ``repr`` so they never reach a log."""

    path: str
    mode: Mode
    adapter: str | None
    model: str | None
    judge_model: str | None
    provider: str | None
    base_url: str | None
    runs: int
    concurrency: int
    fail_on_verdict: tuple[str, ...]
    min_delta_pts: float | None
    comment: bool
    shard: Shard | None = None
    gate_on: str = "point"
    target_lift_pts: float = 10.0
    judge_same_family: bool = False
    cache_dir: str | None = None
    max_cost_usd: float | None = None
    min_trigger_recall: float | None = None
    max_false_trigger_rate: float | None = None
    siblings: str = "auto"
    sandbox: str | None = None
    ablate: bool = False
    max_skill_tokens: int | None = None
    fail_on_broken: bool = True
    route: str | None = None
    max_stolen: int | None = None
    min_route_accuracy: float | None = None
    evidence_ledger: str | None = None
    placebo: bool = False
    github_token: str | None = field(default=None, repr=False)
    anthropic_api_key: str | None = field(default=None, repr=False)
    openai_api_key: str | None = field(default=None, repr=False)
    gemini_api_key: str | None = field(default=None, repr=False)
    cache_key: str | None = field(default=None, repr=False)

    def provider_keys(self) -> ProviderKeys:
        """The keys given as inputs, named as the provider registry names their variables."""
        keys = ProviderKeys()
        if self.anthropic_api_key:
            keys["ANTHROPIC_API_KEY"] = self.anthropic_api_key
        if self.openai_api_key:
            keys["OPENAI_API_KEY"] = self.openai_api_key
        if self.gemini_api_key:
            keys["GEMINI_API_KEY"] = self.gemini_api_key
        if self.cache_key:  # signs the baseline cache (``engine.cache``), never a provider's
            keys["SKILLAB_CACHE_KEY"] = self.cache_key
        return keys


class ProviderKeys(dict):
    """Provider API keys by environment-variable name, for the provider config only.

    The keys never enter ``os.environ``, so no subprocess inherits them; ``repr`` masks them
    so a logged configuration cannot leak one.
    """

    def __repr__(self) -> str:
        return "ProviderKeys(" + ", ".join(f"{name}=***" for name in self) + ")"

    __str__ = __repr__


def raw_inputs(env: Mapping[str, str]) -> dict[str, str]:
    """Every input of the table as a string: its ``INPUT_*`` value, or its default when unset
    (GitHub sets an input the workflow leaves out to its action.yml default) or blank."""
    values = {}
    for spec in INPUTS:
        value = env.get(spec.env_name)
        if value is None:
            values[spec.name] = spec.default
        else:
            value = value.strip()
            values[spec.name] = value if value or spec.keep_blank else spec.default
    return values


def read_inputs(env: Mapping[str, str]) -> ActionInputs:
    """Parse the table's inputs from ``env``; a bad value raises UsageError naming the input."""
    raw = raw_inputs(env)
    mode = next((m for m in MODES if m == raw["mode"].lower()), None)
    if mode is None:
        raise UsageError(f"input 'mode' must be one of {', '.join(MODES)}, got {raw['mode']!r}")
    return ActionInputs(
        path=raw["path"],
        mode=mode,
        adapter=raw["adapter"] or None,
        model=raw["model"] or None,
        judge_model=raw["judge-model"] or None,
        provider=raw["provider"] or None,
        base_url=raw["base-url"] or None,
        runs=_positive_int(raw, "runs"),
        concurrency=_positive_int(raw, "concurrency"),
        fail_on_verdict=_verdicts(raw["fail-on-verdict"]),
        min_delta_pts=_optional_float(raw, "min-delta-pts"),
        min_trigger_recall=_optional_rate(raw, "min-trigger-recall"),
        max_false_trigger_rate=_optional_rate(raw, "max-false-trigger-rate"),
        siblings=raw["siblings"] or "auto",
        comment=_boolean(raw, "comment"),
        shard=Shard.parse(raw["shard"], source="input 'shard'") if raw["shard"] else None,
        gate_on=_gate_on(raw["gate-on"]),
        target_lift_pts=_optional_float(raw, "target-lift-pts") or 10.0,
        judge_same_family=_boolean(raw, "judge-same-family"),
        cache_dir=raw["cache-dir"] or None,
        max_cost_usd=_cost(raw, "max-cost-usd"),
        sandbox=_sandbox(raw["sandbox"]),
        ablate=_boolean(raw, "ablate"),
        max_skill_tokens=_positive_int(raw, "max-skill-tokens") if raw["max-skill-tokens"] else None,
        fail_on_broken=_boolean(raw, "fail-on-broken"),
        route=raw["route"] or None,
        max_stolen=_non_negative_int(raw, "max-stolen") if raw["max-stolen"] else None,
        min_route_accuracy=_optional_rate(raw, "min-route-accuracy"),
        evidence_ledger=raw["evidence-ledger"] or None,
        placebo=_boolean(raw, "placebo"),
        github_token=raw["github-token"] or None,
        anthropic_api_key=raw["anthropic-api-key"] or None,
        openai_api_key=raw["openai-api-key"] or None,
        gemini_api_key=raw["gemini-api-key"] or None,
        cache_key=raw["cache-key"] or None,
    )


def _positive_int(raw: dict[str, str], name: str) -> int:
    try:
        value = int(raw[name])
    except ValueError:
        value = 0
    if value < 1:
        raise UsageError(f"input '{name}' must be a whole number of at least 1, got {raw[name]!r}")
    return value


def _non_negative_int(raw: dict[str, str], name: str) -> int:
    try:
        value = int(raw[name])
    except ValueError:
        value = -1
    if value < 0:
        raise UsageError(f"input '{name}' must be a whole number of at least 0, got {raw[name]!r}")
    return value


def _optional_float(raw: dict[str, str], name: str) -> float | None:
    if not raw[name]:
        return None
    try:
        return float(raw[name])
    except ValueError:
        raise UsageError(f"input '{name}' must be a number of points (e.g. 5), got {raw[name]!r}") from None


def _optional_rate(raw: dict[str, str], name: str) -> float | None:
    if not raw[name]:
        return None
    try:
        value = float(raw[name])
    except ValueError:
        value = -1.0
    if not 0 <= value <= 1:
        raise UsageError(f"input '{name}' must be a rate between 0 and 1 (e.g. 0.8), got {raw[name]!r}")
    return value


def _cost(raw: dict[str, str], name: str) -> float | None:
    value = _optional_float(raw, name)
    if value is not None and not value > 0:
        raise UsageError(f"input '{name}' must be a positive number of US dollars, got {raw[name]!r}")
    return value


def _sandbox(text: str) -> str | None:
    value = text.strip().lower()
    if value and not is_sandbox_name(value):
        raise UsageError(f"input 'sandbox' must be one of {', '.join(sandbox_names())} or empty, "
                         f"got {text!r}")
    return value or None


def _gate_on(text: str) -> str:
    value = (text or "point").strip().lower()
    if value not in ("point", "lower-bound"):
        raise UsageError(f"input 'gate-on' must be point or lower-bound, got {text!r}")
    return value


def _boolean(raw: dict[str, str], name: str) -> bool:
    value = raw[name].lower()
    if value in ("true", "yes", "1", "on"):
        return True
    if value in ("false", "no", "0", "off"):
        return False
    raise UsageError(f"input '{name}' must be true or false, got {raw[name]!r}")


def _verdicts(text: str) -> tuple[str, ...]:
    picked = tuple(v.strip().lower() for v in text.replace(" ", ",").split(",") if v.strip())
    unknown = [v for v in picked if v not in GATE_VERDICTS]
    if unknown:
        raise UsageError(
            f"input 'fail-on-verdict' takes {', '.join(GATE_VERDICTS)} (comma-separated), "
            f"got {', '.join(repr(v) for v in unknown)}"
        )
    return picked
