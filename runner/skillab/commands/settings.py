"""``skillab run``'s flags resolved into each component's settings, once."""

from __future__ import annotations

import argparse

from ..core.defaults import DEFAULT_HISTORY_PATH
from ..core.settings import (
    AgentSettings,
    Credentials,
    EngineSettings,
    JudgeSettings,
    ModelRole,
    ProviderTuning,
    RunConfig,
)
from ..errors import UsageError

GETTING_STARTED = (
    "skillab run needs a model to evaluate the skill with. Either:\n"
    "  skillab run PATH --model claude-sonnet-4-5      (set ANTHROPIC_API_KEY; or an OpenAI model "
    "with OPENAI_API_KEY)\n"
    "  skillab run PATH --adapter mock                 (offline: scripted answers, honest grading)\n"
    "The model can also come from the SKILLAB_MODEL environment variable."
)


def configs_from_args(args: argparse.Namespace) -> list[RunConfig]:
    """One configuration per adapter of ``--adapter A,B,...``; ``--model`` gives one model for
    all of them or one per adapter, in the same order."""
    adapters = args.adapter or ("agent",)
    models = [m.strip() for m in (args.model or "").split(",")] if args.model else []
    if len(adapters) > 1 and len(models) not in (0, 1, len(adapters)):
        raise UsageError(
            f"--adapter names {len(adapters)} agents but --model names {len(models)} models: "
            "give one model for all, or one per agent in the same order"
        )
    configs = []
    for index, adapter in enumerate(adapters):
        model = models[index] if len(models) == len(adapters) else (models[0] if models else None)
        configs.append(config_from_args(args, adapter=adapter, model=model or None))
    return configs


def config_from_args(
    args: argparse.Namespace, *, adapter: str | None = None, model: str | None = None
) -> RunConfig:
    if args.pass_n is not None and args.pass_n < args.pass_k:
        raise UsageError(f"--pass-n {args.pass_n} is below --pass-k {args.pass_k}: pass@k needs at "
                         "least k attempts per arm")
    if adapter is None:
        adapter = args.adapter[0] if args.adapter else ("agent" if args.model else None)
        model = args.model
    if adapter is None or (adapter != "mock" and not model):
        raise UsageError(GETTING_STARTED)
    from ..engine.shard import Shard

    engine = EngineSettings(
        runs=args.runs,
        pass_k=args.pass_k,
        pass_n=args.pass_n or 0,
        concurrency=args.concurrency,
        cache_enabled=not args.no_cache,
        cache_dir=args.cache_dir,
        cache_ttl_days=args.cache_ttl_days,
        case_names=tuple(args.case),
        tags=tuple(args.tag),
        keep_workspaces=args.keep_workspaces,
        against=args.against,
        suite_format=args.suite_format,
        history_path=None if args.no_history else (args.history or DEFAULT_HISTORY_PATH),
        evidence_ledger=getattr(args, "evidence_ledger", None),
        placebo=bool(getattr(args, "placebo", False)),
        siblings_dir=args.siblings,
        held_out_path=getattr(args, "held_out", None),
        shard=Shard.parse(args.shard) if args.shard else None,
        max_cost_usd=args.max_cost_usd,
        reward_threshold=args.reward_threshold,
        sandbox=args.sandbox,
        target_lift_pts=args.target_lift_pts,
        stop_early=None if getattr(args, "stop_early", None) == "none" else getattr(args, "stop_early", None),
        stop_seed=getattr(args, "stop_seed", None),
        adaptive_runs=bool(getattr(args, "adaptive_runs", False)),
        min_delta_pts=getattr(args, "min_delta_pts", None),
        gate_on=getattr(args, "gate_on", "point") or "point",
    )
    agent = AgentSettings(
        adapter=adapter,
        model=ModelRole(model, args.provider, args.base_url,
                        temperature=getattr(args, "temperature", None), seed=getattr(args, "seed", None)),
        max_tokens=getattr(args, "max_tokens", None),
        skill_loading=args.skill_loading,
        max_turns=args.max_turns,
        mock_responses=args.mock_responses,
        mock_latency_ms=args.mock_latency_ms,
    )
    judge_role = ModelRole(args.judge_model, temperature=getattr(args, "judge_temperature", None),
                           seed=getattr(args, "judge_seed", None))
    judge = JudgeSettings(model=judge_role, same_family=args.judge_same_family,
                          consistency=args.judge_consistency)
    tuning = ProviderTuning(budget_url=getattr(args, "budget_url", None))
    return RunConfig(engine=engine, agent=agent, judge=judge, tuning=tuning, credentials=Credentials.resolve(),
                     config_source=getattr(args, "config_source", None))

