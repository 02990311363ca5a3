"""What a run will do before it does it (``--dry-run``): records, arms, model calls, baseline
cache hits, and an estimated cost from the price table.

The cost estimate prefers measurement: when an earlier results document of the same suite,
adapter and model is at hand (the ``--output`` file of the last run, or ``--resume``), each
arm costs what the same case and arm cost then. Otherwise it is a rough guess from prompt and
skill sizes, and the plan says so.
"""

from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import dataclass
from typing import Any

from ..core.runlog import RunLog
from ..core.settings import RunConfig
from ..core.usage import Usage, sum_usage
from ..core.wording import counted
from ..providers.pricing import cost_usd, price_of
from .prepare import Prepared
from .resume import kept_arms
from .runner import Execution
from .shard import plan_shards

# The rough guess, used only without an earlier measured run: every model call is sent the
# prompt, the skill and this much framing, and answers this many tokens.
FRAMING_TOKENS = 600
ANSWER_TOKENS = 400
CHARS_PER_TOKEN = 4
# Adapters that make no model call.
OFFLINE_ADAPTERS = ("mock",)
# The key each agent CLI reads.
CLI_KEYS = {"claude-code": "ANTHROPIC_API_KEY", "codex": "OPENAI_API_KEY", "gemini-cli": "GEMINI_API_KEY"}


@dataclass(frozen=True)
class SuitePlan:
    suite: str
    cases: int
    runs: int
    arms_per_record: int
    arms_to_run: int
    cache_hits: int | None
    agent_calls: tuple[int, int]
    judge_calls: int
    tokens: int
    cost_usd: float | None
    basis: str
    kept: int = 0
    # Agent calls beyond the A/B arms: each trigger trial is one agent session.
    trigger_trials: int = 0
    # The judge's consistency check: verdicts asked again after the arms until the agreement
    # decides; counted at the fewest (a judge that always agrees), up to ``judge_reasks_cap``.
    judge_reasks: int = 0
    judge_reasks_cap: int = 0

    @property
    def records(self) -> int:
        return self.cases * self.runs

    @property
    def total_calls(self) -> int:
        """Every model call the run makes, at one turn per agent session."""
        agent = self.agent_calls[0] + self.trigger_trials if self.agent_calls != (0, 0) else 0
        return agent + self.judge_calls + self.judge_reasks


def plan_suite(prepared: Prepared, config: RunConfig, previous: RunLog | None,
               resume_from: dict[str, Any] | None = None) -> SuitePlan:
    """``previous``: the earlier run of the suite its costs are measured from (None: estimated);
    ``resume_from``: the arms that document finished are kept, not planned."""
    arms_per_record = len(_arm_names(config))
    kept = _kept_arms(prepared, config, resume_from)
    hits = _expected_hits(prepared, config, resume_from)
    arms = len(prepared.graded) * config.engine.runs * arms_per_record - kept - (hits or 0)
    offline = config.agent.adapter in OFFLINE_ADAPTERS
    attempts = config.engine.pass_k
    turns = 1 if config.agent.adapter == "llm" else config.agent.max_turns
    agent_calls = (0, 0) if offline else (arms, arms * attempts * turns)
    judged = sum(_judge_calls(c) for c in prepared.graded) * config.engine.runs
    judge_calls = 0 if offline and not config.judge.model.name else judged * arms_per_record * attempts
    reasks, reasks_cap = _judge_reasks(prepared, config, arms_per_record * attempts) if judge_calls else (0, 0)
    trials = 0 if offline else _trigger_trials(prepared, config)
    measured = _measured(previous, prepared, config)
    if offline:
        tokens, cost, basis = 0, None, "mock adapter: no model is called, nothing is billed"
    elif measured is not None and previous is not None:  # measured only from a previous run
        tokens, cost = _from_measured(measured, prepared, config, hits)
        if kept:
            # Resumed arms are already paid for: scale down to the arms still to run.
            share = arms / max(1, arms + kept)
            tokens, cost = round(tokens * share), (None if cost is None else round(cost * share, 6))
        tokens, cost = _with_judge(previous, measured, tokens, cost, arms)
        basis = f"measured: per case and arm, what the run of {previous.settings.started_at.isoformat()[:16]} used"
    else:
        tokens, cost = _rough(prepared, config, arms, judge_calls)
        basis = (f"rough: {FRAMING_TOKENS} framing + prompt + skill tokens in, {ANSWER_TOKENS} out per "
                 "call, one call per arm (no earlier run of this suite to measure from)")
    if cost is None and not offline:
        basis += f"; no price listed for {config.agent.model.name}: tokens only"
    return SuitePlan(str(prepared.suite.path), len(prepared.graded), config.engine.runs, arms_per_record,
                     arms, hits, agent_calls, judge_calls, tokens, cost, basis, kept, trials, reasks, reasks_cap)


def _trigger_trials(prepared: Prepared, config: RunConfig) -> int:
    """The trigger trials the run poses, counted by the plan the run itself builds."""
    from ..suite.trigger_plan import TriggerPlan

    if not prepared.triggers:
        return 0
    original = prepared.skill if config.engine.against else None
    return len(TriggerPlan(prepared.triggers, prepared.skill, prepared.siblings, original,
                           runs=config.engine.runs).trials())


def _judge_reasks(prepared: Prepared, config: RunConfig, arms_per_case_run: int) -> tuple[int, int]:
    """The consistency check's re-asks, fewest and most, sized as ``engine.consistency`` sizes them."""
    from .consistency import reask_range

    verdicts = sum(len(c.expectations) for c in prepared.graded) * config.engine.runs * arms_per_case_run
    return reask_range(verdicts, config.judge.consistency)


def _judge_calls(case: Any) -> int:
    """The judge calls grading one arm of ``case`` asks for: one per expectation, and each judged
    grader's own (a checklist asks once per item; a rubric or dimension judge once)."""
    return len(case.expectations) + sum(getattr(g, "judge_calls", 1) for g in case.graders if g.judged)


def _kept_arms(prepared: Prepared, config: RunConfig, resume_from: dict[str, Any] | None) -> int:
    if resume_from is None:
        return 0
    shard = config.engine.shard
    units = set(plan_shards(prepared.graded, config.engine.runs, shard, config.agent.max_turns).units) if shard else None
    arms, _ = kept_arms(resume_from, [c.name for c in prepared.graded], config.engine.runs, units,
                        with_original=False, with_placebo=config.engine.placebo)
    return len(arms)


def _expected_hits(prepared: Prepared, config: RunConfig, resume_from: dict[str, Any] | None
                   ) -> int | None:
    """Baselines the cache would serve: looked up exactly as the run would, without running."""
    if not config.engine.cache_enabled:
        return 0
    from ..agents.registry import create_adapter, create_judge
    from ..errors import SkillabError
    from ..sandbox.backend import before_the_suite

    try:
        adapter = create_adapter(config)
        judge = create_judge(config) if any(c.needs_judge for c in prepared.graded) else None
        sandbox = before_the_suite(config.engine.sandbox)
    except SkillabError:
        return None  # e.g. no API key yet: the plan still prints, the hits are unknown
    execution = Execution(prepared, config, adapter, judge, sandbox=sandbox)
    if resume_from is not None:
        execution.resume(resume_from)
    hits = 0
    for _, job in execution._jobs():
        slot = execution._cache_slot(job)
        if slot and execution.cache is not None and execution.cache.get(*slot) is not None:
            hits += 1
    return hits


def _arm_names(config: RunConfig) -> list[str]:
    """The arms each (case, run) runs: the original's with ``--against``, the placebo's with
    ``--placebo``."""
    return (["with_skill", "without_skill"] + (["original"] if config.engine.against else [])
            + (["placebo"] if config.engine.placebo else []))


def _measured(previous: RunLog | None, prepared: Prepared, config: RunConfig
              ) -> dict[tuple[str, str], list[Usage]] | None:
    if previous is None or previous.settings.adapter.name != config.agent.adapter:
        return None
    if previous.settings.models.agent != config.agent.model.name:
        return None
    usage: dict[tuple[str, str], list[Usage]] = defaultdict(list)
    for record in previous.records:
        for arm in ("with_skill", "without_skill", "original", "placebo"):
            data = getattr(record, arm)
            if data is not None and not data.cached and not data.errored:
                usage[(record.case_name, arm)].append(data.usage)
    names = {c.name for c in prepared.graded}
    return usage if any(case in names for case, _ in usage) else None


def _from_measured(measured: dict[tuple[str, str], list[Usage]], prepared: Prepared,
                   config: RunConfig, hits: int | None) -> tuple[int, float | None]:
    arms = _arm_names(config)
    all_seen = [u for uses in measured.values() for u in uses]
    fallback = _mean(all_seen)
    tokens, cost = 0.0, 0.0
    priced = True
    for case in prepared.graded:
        for arm in arms:
            seen = measured.get((case.name, arm))
            mean = _mean(seen) if seen else fallback
            share: float = config.engine.runs
            if arm == "without_skill" and hits:
                share -= hits / len(prepared.graded)
            tokens += mean.total_tokens * share
            arm_cost = mean.cost_usd if mean.cost_usd is not None else (
                cost_usd(config.agent.model.name, mean) if config.agent.model.name else None)
            if arm_cost is None:
                priced = False
            else:
                cost += arm_cost * share
    return int(round(tokens)), (round(cost, 6) if priced else None)


def _with_judge(previous: RunLog, measured: dict[tuple[str, str], list[Usage]],
                tokens: int, cost: float | None, arms: int) -> tuple[int, float | None]:
    """Add the judge's share: what it cost per graded arm last time, times the arms to run."""
    judge = previous.settings.judge_usage or Usage()
    graded = sum(len(uses) for uses in measured.values())
    if not graded or not judge.total_tokens:
        return tokens, cost
    tokens += round(judge.total_tokens / graded * arms)
    if cost is not None and judge.cost_usd is not None:
        cost = round(cost + judge.cost_usd / graded * arms, 6)
    return tokens, cost


def _mean(uses: list[Usage]) -> Usage:
    n = max(1, len(uses))
    total = sum_usage(uses)
    return Usage(
        round(total.input_tokens / n), round(total.output_tokens / n),
        round(total.cache_read_tokens / n), round(total.cache_write_tokens / n),
        None if total.cost_usd is None else total.cost_usd / n,
    )


def _rough(prepared: Prepared, config: RunConfig, arms: int, judge_calls: int
           ) -> tuple[int, float | None]:
    skill_tokens = math.ceil(len(prepared.skill.body) / CHARS_PER_TOKEN)
    prompt_tokens = sum(math.ceil(len(c.prompt) / CHARS_PER_TOKEN) for c in prepared.graded)
    per_case_prompt = prompt_tokens / max(1, len(prepared.graded))
    # Every arm but the without-skill one carries a skill (the original, the placebo: as long).
    per_record = len(_arm_names(config))
    arms_with_skill = arms / per_record * (per_record - 1)
    calls = arms + judge_calls
    inputs = calls * (FRAMING_TOKENS + per_case_prompt) + arms_with_skill * skill_tokens
    usage = Usage(int(inputs), calls * ANSWER_TOKENS)
    model = config.agent.model.name
    judge_model = config.judge.model.name or model
    cost = cost_usd(model, usage) if model and judge_model == model else None
    if model and judge_model and judge_model != model and price_of(model) and price_of(judge_model):
        agent = Usage(int(arms * (FRAMING_TOKENS + per_case_prompt) + arms_with_skill * skill_tokens),
                      arms * ANSWER_TOKENS)
        judge = Usage(int(judge_calls * (FRAMING_TOKENS + per_case_prompt)), judge_calls * ANSWER_TOKENS)
        cost = (cost_usd(model, agent) or 0) + (cost_usd(judge_model, judge) or 0)
    return usage.total_tokens, cost


def render_plan(plans: list[SuitePlan], config: RunConfig, roles: list[str] | None = None) -> str:
    """``roles``: the lines naming each model, its provider and its key (``models_and_keys``)."""
    lines = [f"skillab dry run · adapter {config.agent.adapter}"
             + (f" · model {config.agent.model.name}" if config.agent.model.name else "")]
    lines += roles or []
    for p in plans:
        calls = ("none" if p.agent_calls == (0, 0) else
                 f"{p.agent_calls[0]:,}" if p.agent_calls[0] == p.agent_calls[1]
                 else f"{p.agent_calls[0]:,} to {p.agent_calls[1]:,}")
        hits = ("unknown: the adapter cannot be set up yet (is its API key set?)" if p.cache_hits is None
                else f"{p.cache_hits:,} baselines expected from the cache")
        cost = "n/a" if p.cost_usd is None else f"${p.cost_usd:.4f}"
        if p.trigger_trials:
            calls += f" + {counted(p.trigger_trials, 'trigger trial')}"
        judge = f"{p.judge_calls:,}" + (f" + {counted(p.judge_reasks, 'consistency re-ask')} (up to "
                                         f"{p.judge_reasks_cap:,} while the agreement does not decide)"
                                         if p.judge_reasks else "")
        lines += [
            "",
            f"  suite          {p.suite}",
            f"  plan           {p.cases} cases × {p.arms_per_record} arms × {p.runs} runs "
            f"= {p.cases * p.arms_per_record * p.runs:,} arms",
            f"  cache hits     {hits}",
            *([f"  resumed        {p.kept:,} finished arms kept from --resume"] if p.kept else []),
            f"  arms to run    {p.arms_to_run:,}",
            f"  agent calls    {calls}",
            f"  judge calls    {judge}",
            f"  model calls    {p.total_calls:,}" + ("" if p.agent_calls[0] == p.agent_calls[1] else " at least"),
            f"  est. tokens    {p.tokens:,}",
            f"  est. cost      {cost}",
            f"  estimate       {p.basis}",
        ]
    costs = [p.cost_usd for p in plans if p.cost_usd is not None]
    if len(plans) > 1 and len(costs) == len(plans):
        lines += ["", f"  total est. cost ${sum(costs):.4f}"]
    lines += ["", "nothing was run (--dry-run)."]
    return "\n".join(lines)


def _copilot_key(config: RunConfig) -> str | None:
    """The key Copilot CLI's adapter reads: its provider's, which follows the model."""
    agent = config.agent
    if agent.adapter != "copilot" or not agent.model.name:
        return None
    from ..agents.copilot import BY_PROVIDER
    from ..providers.registry import infer_provider

    chosen = BY_PROVIDER.get(infer_provider(agent.model.name, explicit=agent.model.provider,
                                            base_url=agent.model.base_url))
    return chosen.key_env if chosen is not None else None


def models_and_keys(config: RunConfig, needs_judge: bool) -> list[str]:
    """The plan's lines naming each model, the provider serving it and the key it reads; the
    caller has built the adapter and the judge already, so each named key is there."""
    from ..providers.registry import agent_settings, judge_settings

    agent = config.agent
    if agent.adapter in OFFLINE_ADAPTERS:
        lines = [f"  agent          {agent.adapter} adapter: scripted answers, no model, no key"]
    elif agent.adapter in ("llm", "agent"):
        lines = [f"  agent          {_served(agent_settings(agent.model, config.provider_tuning), config)}"]
    else:
        key = CLI_KEYS.get(agent.adapter) or _copilot_key(config)
        said = "" if key is None else f" · key {key} ({'set' if config.credentials.environ.get(key) else 'unset'})"
        lines = [f"  agent          {agent.adapter} CLI · model {agent.model.name or 'its own default'}{said}"]
    if not needs_judge:
        return [*lines, "  judge          none: no case has an expectation to grade"]
    if agent.adapter in OFFLINE_ADAPTERS and not config.judge.model.name:
        return [*lines, "  judge          mock judge: grades the scripted answers, no model, no key"]
    settings = judge_settings(agent.model, config.judge, config.provider_tuning)
    why = "" if config.judge.model.name else " (the default: a model of another family than the agent's)"
    return [*lines, f"  judge          {_served(settings, config)}{why}"]


def _served(settings: Any, config: RunConfig) -> str:
    from ..providers.registry import resolve_base_url

    environ = config.credentials.environ
    endpoint = resolve_base_url(settings, environ)
    where = f" at {endpoint}" if endpoint else ""
    key = settings.key_env
    if key is None:
        said = "no key needed"
    elif (environ.get(key) or "").strip():
        said = f"key {key} (set)"
    else:
        said = f"key {key} unset: keyless endpoint"
    return f"{settings.model} via {settings.provider}{where} · {said}"
