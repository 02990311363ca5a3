"""``skillab run``'s flags resolved into each component's settings and the gates, once, by the
options table (``session.landing``)."""

from __future__ import annotations

import argparse
from collections.abc import Iterable

from ..core.option_row import Option
from ..core.options import OPTIONS
from ..core.settings import Credentials, RunConfig
from ..errors import UsageError
from ..session.gates import Gates
from ..session.landing import Landed, land

GETTING_STARTED = (
    "skillab run needs a model to evaluate the skill with. Either:\n"
    "  skillab run PATH --model claude-sonnet-5-5      (set ANTHROPIC_API_KEY; or an OpenAI model "
    "with OPENAI_API_KEY)\n"
    "  skillab run PATH --adapter mock                 (offline: scripted answers, honest grading)\n"
    "The model can also come from the SKILLAB_MODEL environment variable."
)


def configs_from_args(args: argparse.Namespace, options: Iterable[Option] = OPTIONS) -> list[RunConfig]:
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
        configs.append(config_from_args(args, adapter=adapter, model=model or None, options=options))
    return configs


def config_from_args(
    args: argparse.Namespace, *, adapter: str | None = None, model: str | None = None,
    options: Iterable[Option] = OPTIONS,
) -> RunConfig:
    if args.pass_n is not None and args.pass_n < args.pass_k:
        raise UsageError(f"--pass-n {args.pass_n} is below --pass-k {args.pass_k}: pass@k needs at "
                         "least k attempts per arm")
    if adapter is None:
        adapter = args.adapter[0] if args.adapter else ("agent" if args.model else None)
        model = args.model
    if adapter is None or (adapter != "mock" and not model):
        raise UsageError(GETTING_STARTED)
    return landed_from_args(args, options).for_agent(adapter, model, credentials=Credentials.resolve(),
                                                      config_source=getattr(args, "config_source", None))


def gates_from_args(args: argparse.Namespace) -> Gates:
    return landed_from_args(args).gates


def landed_from_args(args: argparse.Namespace, options: Iterable[Option] = OPTIONS) -> Landed:
    """Every parsed flag put where its row lands (``session.landing``)."""
    options = tuple(options)
    values = {option.name: getattr(args, option.attr) for option in options if hasattr(args, option.attr)}
    if values.get("shard"):
        from ..engine.shard import Shard

        values["shard"] = Shard.parse(values["shard"])
    return land(values, options)
