"""The Action's inputs: ONE table that ``action.yml``, docs/action.md and the tests are held to.

GitHub hands each input to a container action as ``INPUT_<NAME>``: the name upper-cased with
spaces turned into underscores and hyphens kept (``judge-model`` → ``INPUT_JUDGE-MODEL``). This
module is the only place that reads them.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from ..core.choices import non_negative_int, share
from ..core.options import BY_NAME
from ..errors import UsageError

if TYPE_CHECKING:
    from ..engine.shard import Shard

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


def _shared(name: str) -> InputSpec:
    """The input of a setting ``skillab run`` also takes, from its row in ``core.options``."""
    declared = BY_NAME[name].input
    if declared is None:
        raise LookupError(f"core.options: {name} is not an Action input")
    return InputSpec(name, declared.default, declared.description, keep_blank=declared.keep_blank)


INPUTS: tuple[InputSpec, ...] = (
    InputSpec("path", ".", "Where to look for suites, relative to the repository root: skill "
              "directories (SKILL.md beside a suite file such as eval.yaml) and seed-format suites "
              "(task_suite.yaml, ruby-skill-bench evals, SkillsBench packages) in their own layouts."),
    InputSpec("mode", "auto", "Which suites to run: `changed` (the suites a pull request touches), "
              "`all`, or `auto` (changed on pull_request events, all otherwise). `merge`: run "
              "nothing, join the shards' results documents found under `path` into one report."),
    InputSpec("shard", "", "`I/N`: run only shard I of N of each suite's (case, run) units, for a "
              "job matrix; a `mode: merge` job joins the shards. No comment or gate per shard."),
    _shared("adapter"),
    _shared("model"),
    _shared("judge-model"),
    _shared("judge-same-family"),
    _shared("provider"),
    _shared("base-url"),
    _shared("runs"),
    _shared("concurrency"),
    _shared("fail-on-verdict"),
    _shared("min-delta-pts"),
    _shared("gate-on"),
    _shared("target-lift-pts"),
    _shared("min-trigger-recall"),
    _shared("max-false-trigger-rate"),
    _shared("siblings"),
    InputSpec("comment", "true", "Post or update the pull request comment (`true`/`false`)."),
    InputSpec("github-token", "", "Token for the pull request comment and the files API.",
              secret=True, yml_default="${{ github.token }}"),
    InputSpec("anthropic-api-key", "", "Anthropic API key (or set ANTHROPIC_API_KEY in env).",
              secret=True),
    InputSpec("openai-api-key", "", "OpenAI (or compatible) API key (or set OPENAI_API_KEY in env).",
              secret=True),
    InputSpec("gemini-api-key", "", "Gemini API key, for `gemini-cli` and Gemini models (or set "
              "GEMINI_API_KEY in env).", secret=True),
    _shared("cache-dir"),
    InputSpec("cache-key", "", "Secret the baseline cache's entries are signed with (e.g. "
              "`${{ secrets.SKILLAB_CACHE_KEY }}`): an entry counts only when a job holding it wrote "
              "the entry, so a pull request cannot commit a forged baseline into `cache-dir`. Empty: "
              "a key made for this job, so entries from earlier jobs are re-run.", secret=True),
    _shared("max-cost-usd"),
    _shared("sandbox"),
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
    _shared("placebo"),
    _shared("evidence-ledger"),
    _shared("max-skill-tokens"),
    _shared("max-leaks"),
    _shared("max-held-out-gap"),
    _shared("fail-on-broken"),
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
    max_leaks: int | None = None
    max_held_out_gap: float | None = None
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
    from ..engine.shard import Shard  # the table alone (`skillab action --help`) needs no run settings

    raw = raw_inputs(env)
    mode = next((m for m in MODES if m == raw["mode"].lower()), None)
    if mode is None:
        raise UsageError(f"input 'mode' must be one of {', '.join(MODES)}, got {raw['mode']!r}")
    return ActionInputs(
        path=raw["path"],
        mode=mode,
        adapter=_checked(raw, "adapter"),
        model=raw["model"] or None,
        judge_model=raw["judge-model"] or None,
        provider=_checked(raw, "provider"),
        base_url=raw["base-url"] or None,
        runs=_setting(raw, "runs"),
        concurrency=_setting(raw, "concurrency"),
        fail_on_verdict=_verdicts(raw["fail-on-verdict"]),
        min_delta_pts=_setting(raw, "min-delta-pts"),
        min_trigger_recall=_setting(raw, "min-trigger-recall"),
        max_false_trigger_rate=_setting(raw, "max-false-trigger-rate"),
        siblings=raw["siblings"] or "auto",
        comment=_boolean(raw, "comment"),
        shard=Shard.parse(raw["shard"], source="input 'shard'") if raw["shard"] else None,
        gate_on=_setting(raw, "gate-on", fold=True) or "point",
        target_lift_pts=_setting(raw, "target-lift-pts"),
        judge_same_family=_boolean(raw, "judge-same-family"),
        cache_dir=raw["cache-dir"] or None,
        max_cost_usd=_setting(raw, "max-cost-usd"),
        sandbox=_setting(raw, "sandbox", fold=True),
        ablate=_boolean(raw, "ablate"),
        max_skill_tokens=_setting(raw, "max-skill-tokens"),
        max_leaks=_setting(raw, "max-leaks"),
        max_held_out_gap=_setting(raw, "max-held-out-gap"),
        fail_on_broken=_boolean(raw, "fail-on-broken"),
        route=raw["route"] or None,
        max_stolen=_parsed(raw, "max-stolen", non_negative_int),
        min_route_accuracy=_parsed(raw, "min-route-accuracy", share),
        evidence_ledger=raw["evidence-ledger"] or None,
        placebo=_boolean(raw, "placebo"),
        github_token=raw["github-token"] or None,
        anthropic_api_key=raw["anthropic-api-key"] or None,
        openai_api_key=raw["openai-api-key"] or None,
        gemini_api_key=raw["gemini-api-key"] or None,
        cache_key=raw["cache-key"] or None,
    )


def _setting(raw: dict[str, str], name: str, *, fold: bool = False) -> Any:
    """A setting ``skillab run`` also takes, parsed by its row's own parser and bounds
    (``core.options``), so the input and the flag accept and refuse the same values; None
    when blank."""
    option = BY_NAME[name]
    value = _parsed(raw, name, option.parse, fold=fold)
    if value is not None and option.choices is not None and value not in option.choices:
        raise UsageError(f"input '{name}': must be one of {', '.join(option.choices)}, got {raw[name].strip()!r}")
    return value


def _parsed(raw: dict[str, str], name: str, parse: Callable[[str], Any] | None, *, fold: bool = False) -> Any:
    """An input read by ``parse`` (one of ``core.choices``); None when blank; a refused value
    is a UsageError naming the input."""
    text = raw[name].strip().lower() if fold else raw[name].strip()
    if not text:
        return None
    try:
        return parse(text) if parse is not None else text
    except (argparse.ArgumentTypeError, ValueError) as exc:
        message = str(exc)
        raise UsageError(f"input '{name}': {message}" + ("" if "got" in message else f", got {text!r}")) from None


def _checked(raw: dict[str, str], name: str) -> str | None:
    """A setting checked by its row's parser, kept as the text the Action hands on."""
    return raw[name].strip() if _setting(raw, name) is not None else None


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
