"""Every setting of ``skillab run``, and of the commands that share them, declared once.

Each row gives a setting's name (its long flag without dashes, its config-file key and, when it
is one, its Action input), where it lands (``lands``: the settings or gates field it fills, which
``session.landing`` fills for both front ends, or the code that reads the flag itself), its one
parser with its bounds, its environment variable, whether a config file may set it and the
trust rule that file must pass, its Action input, and the commands that take it. The command
line (``cli.add_option_rows``), the config file (``commands.config_file``), the Action's
inputs (``github.inputs``, hence ``action.yml``) and the reference ``docs/options.md``
(``render_reference``) are all read off this table; tests hold the generated files to it.

Adding a setting is one row here (and, for a reader that is no settings field, the code that
reads it): see docs/options.md.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from . import config_trust
from .choices import (
    adapter_list,
    budget_url,
    finite_float,
    lift_pts,
    non_negative_float,
    non_negative_int,
    positive_float,
    positive_int,
    provider_name,
    reporter_choice,
    sandbox_name,
    share,
    unit_interval,
)
from .defaults import DEFAULT_CACHE_TTL_DAYS, DEFAULT_HISTORY_PATH, DEFAULT_MAX_TURNS
from .option_row import (
    DOCUMENT,
    KEEP,
    REPORTS,
    ROUTED,
    RUN,
    ActionInput,
    Command,
    Option,
    Settle,
)

VERDICTS = ("pass", "fail", "mixed", "error")
# What --fail-on-verdict gates on when not given, as the Action's input does (``fail,error``;
# error has its own opt-out, --allow-error-verdict); ``none`` turns the verdict gates off.
DEFAULT_FAIL_ON = ("fail",)
FAIL_ON_CHOICES = (*VERDICTS, "none")
def _or(default: Any) -> Settle:
    return lambda value, landed: default if value is None else value


def _flag(value: Any, landed: Any) -> bool:
    return bool(value)


def _negated(value: Any, landed: Any) -> bool:
    return not value


def _tupled(value: Any, landed: Any) -> tuple[Any, ...]:
    return tuple(value or ())


def _off_when_none(value: Any, landed: Any) -> Any:
    return None if value == "none" else value


def _history_off(off: Any, landed: Any) -> Any:
    return None if off else landed


def _verdicts(chosen: Any, landed: Any) -> tuple[str, ...]:
    return tuple(sorted(set(chosen or DEFAULT_FAIL_ON) - {"none"}))


def _error_verdict(allowed: Any, landed: Any) -> Any:
    # ``error`` fails the run unless allowed, whatever --fail-on-verdict chose.
    return landed if allowed or landed is KEEP else tuple(sorted({*landed, "error"}))


AGENT, PLAN, OUTPUT, GATES, CACHE = ("agent and models", "what to run", "output", "gates (exit 1)",
                                     "baseline cache and history")

OPTIONS: tuple[Option, ...] = (
    Option("trust-config", "invocation", kind="switch", group="",
           help="accept the config file's settings that widen what the run reaches (base-url, "
                "provider, an unconfining sandbox, keep-workspaces, an import-path adapter, paths "
                "outside the file's tree); without it they exit 2"),
    # --- agent and models
    Option("adapter", "agent.adapter", commands=ROUTED, group=AGENT, parse=adapter_list, metavar="A[,B...]",
           config=True, trust=config_trust.import_path,
           help="how the agent is invoked: mock (scripted answers, no model), llm (one call, no "
                "tools), agent (skillab's tool loop), claude-code, codex, gemini-cli, copilot (the "
                "agent CLIs), claude-agent-sdk[:MODULE:FUNCTION], openai-agents[:MODULE:FUNCTION], "
                "python:MODULE:CALLABLE (agents built with SDKs, docs/agents-sdk.md); several, "
                "comma-separated, run the suites under each agent and add the "
                "portability table; default agent when --model is given",
           input=ActionInput("How the agent is invoked: `mock`, `llm`, `agent`, `claude-code`, "
                             "`codex`, `gemini-cli` or `copilot` (as `skillab run --adapter`); several, "
                             "comma-separated (`claude-code,codex,gemini-cli`), run every suite under "
                             "each agent and the comment shows the portability table, one row per "
                             "agent. Empty: `agent` when a model is set. The agent CLIs need the "
                             "image that carries them: `uses: OWNER/skillab/claude-code@v1`.")),
    Option("model", "agent.model.name", commands=ROUTED, group=AGENT, env="SKILLAB_MODEL", config=True,
           help="agent model (default: $SKILLAB_MODEL)",
           input=ActionInput("Agent model (as `skillab run --model`): one for every agent, or one "
                             "per agent of `adapter`, comma-separated in the same order; falls back "
                             "to the SKILLAB_MODEL environment variable.")),
    Option("judge-model", "judge.model.name", group=AGENT, env="SKILLAB_JUDGE_MODEL", metavar="MODEL",
           config=True,
           help="model that grades expectations (default: $SKILLAB_JUDGE_MODEL, else a small model "
                "of another family than the agent's: gpt-4.1-mini for a claude-* agent, "
                "claude-haiku-4-5 for any other; the agent model itself with --judge-same-family; "
                "the mock judge with --adapter mock)",
           input=ActionInput("Judge model for expectations (or SKILLAB_JUDGE_MODEL); defaults to a "
                             "model of another family than the agent's.")),
    Option("judge-same-family", "judge.same_family", group=AGENT, kind="switch", config=True,
           help="let a model of the agent's family judge (by default the judge is of another "
                "family); the report discloses it",
           input=ActionInput("Allow a judge of the agent's family (`true`/`false`); the report "
                             "discloses it.", default="false")),
    Option("judge-consistency", "judge.consistency", group=AGENT, parse=share, default=0.10,
           metavar="SHARE", config=True,
           help="judge verdicts are asked again until the agreement's interval decides (10 to 60 "
                "re-asks, or SHARE of the verdicts if more); the lift is withheld when the judge "
                "agrees with itself below 80%% (0 turns it off; default %(default)s)"),
    Option("provider", "agent.model.provider", commands=ROUTED, group=AGENT, parse=provider_name,
           metavar="NAME", config=True, trust=config_trust.provider,
           help="model provider: anthropic, openai, openai-responses, gemini, mock, or an installed "
                "plugin's (default: inferred from the model name)",
           input=ActionInput("`anthropic` or `openai`; inferred from the model name when empty.")),
    Option("base-url", "agent.model.base_url", commands=ROUTED, group=AGENT, metavar="URL", config=True,
           trust=config_trust.endpoint,
           help="OpenAI-compatible endpoint (Ollama, vLLM, LiteLLM) or a proxy",
           input=ActionInput("OpenAI-compatible base URL (Ollama, vLLM, LiteLLM and friends).")),
    Option("temperature", "agent.model.temperature", commands=ROUTED, group=AGENT, parse=non_negative_float,
           metavar="T", config=True,
           help="the agent model's sampling temperature (default: the model's own); recorded in the run"),
    Option("seed", "agent.model.seed", commands=ROUTED, group=AGENT, parse=non_negative_int, metavar="N",
           config=True,
           help="the agent model's sampling seed, for servers that take one (OpenAI-compatible); with "
                "--concurrency 1 a local server then answers a rerun the same way; recorded in the run"),
    Option("judge-temperature", "judge.model.temperature", group=AGENT, parse=non_negative_float,
           metavar="T", config=True, help="the judge model's sampling temperature (default 0)"),
    Option("judge-seed", "judge.model.seed", group=AGENT, parse=non_negative_int, metavar="N", config=True,
           help="the judge model's sampling seed (OpenAI-compatible servers)"),
    Option("max-tokens", "agent.max_tokens", commands=ROUTED, group=AGENT, parse=positive_int, metavar="N",
           config=True,
           help="llm and agent adapters: the answer budget per model call (default 4096 for llm, 8192 "
                "for agent, cut to the server's context where it says its size); an answer cut at it "
                "is recorded as truncated and fails"),
    Option("skill-loading", "agent.skill_loading", group=AGENT, choices=("inline", "discover", "lazy"),
           default="inline", config=True,
           help="agent adapter: skill body in the system prompt (inline) or listed and read by the "
                "agent with its tools (discover); default %(default)s. openai-agents: lazy stages the "
                "skill when the model calls load_skill, anything else stages it up front"),
    Option("max-turns", "agent.max_turns", commands=ROUTED, group=AGENT, parse=positive_int,
           default=DEFAULT_MAX_TURNS,
           metavar="N", config=True, help="tool-loop cap for cases without max_turns (default %(default)s)"),
    Option("mock-responses", "agent.mock_responses", commands=ROUTED, group=AGENT, parse=Path,
           metavar="FILE",
           help="mock adapter script: case name -> with/without answers (route: per query; default: "
                "the skill's mock-responses.yaml); a key that names no case is an error"),
    Option("mock-latency-ms", "agent.mock_latency_ms", group=AGENT, parse=non_negative_int, default=0,
           metavar="MS", config=True,
           help="mock adapter sleeps this long per arm, for benchmarks (default %(default)s)"),
    # --- what to run
    Option("runs", "engine.runs", group=PLAN, parse=positive_int, default=1, metavar="N", config=True,
           commands=ROUTED,
           help="i.i.d. repeats per case, MEAN-aggregated (route: trials per query and condition; "
                "default %(default)s)",
           input=ActionInput("Independent repeats per case, mean-aggregated.", default="1")),
    Option("pass-k", "engine.pass_k", group=PLAN, parse=positive_int, default=1, metavar="K", config=True,
           help="up to K attempts per arm; the arm passes if any does (default %(default)s)"),
    Option("pass-n", "engine.pass_n", settle=_or(0), group=PLAN, parse=positive_int, metavar="N", config=True,
           help="attempts per arm for pass@k, at least K (default K); more attempts make the "
                "unbiased pass@k estimate less noisy"),
    Option("against", "engine.against", group=PLAN, metavar="REF_OR_DIR",
           commands=frozenset({"run", "route"}),
           help="add an arm with the original skill (git ref or directory): candidate vs original "
                "(route: the original stands in the catalogue condition)"),
    Option("placebo", "engine.placebo", settle=_flag, group=PLAN, kind="switch", commands=RUN,
           help="add an arm with the skill's placebo (same name, same lengths, neutral text, staged the "
                "same way): content lift (skill vs placebo) beside presence lift (placebo vs none)",
           input=ActionInput("`true`: add an arm with each skill's placebo (the same name, a description of "
                             "the same length, neutral text of the same length, staged the same way; as "
                             "`skillab run --placebo`): the comment gives the content lift (skill vs placebo) "
                             "beside the presence lift (placebo vs none). Costs one arm per case and run more.",
                             default="false")),
    Option("format", "engine.suite_format", group=PLAN, dest="suite_format", metavar="NAME",
           commands=frozenset({"run", "ablate", "validate", "audit", "export"}),
           help="suite format when it cannot be told from the file names"),
    Option("case", "engine.case_names", settle=_tupled, group=PLAN, kind="append", metavar="NAME",
           help="run only this case (repeatable)"),
    Option("tag", "engine.tags", settle=_tupled, group=PLAN, kind="append", metavar="TAG", config=True,
           help="run only cases with this tag (repeatable)"),
    Option("keyword", "selection", group=PLAN, short="-k", long=False, metavar="EXPR", commands=RUN,
           help="run only cases whose name or a tag matches EXPR: words (substrings, or globs with "
                "*?[) joined by and, or, not and parentheses, as pytest -k"),
    Option("collect-only", "selection", group=PLAN, kind="switch", commands=RUN,
           help="list the cases -k, --case, --tag and --failed select, per suite, and exit 0 "
                "without running any (pytest --collect-only)"),
    Option("failed", "selection", group=PLAN, kind="switch", commands=RUN,
           help="rerun only the cases that failed or errored in the last run at --output (pytest "
                "--lf); a suite that run did not hold runs whole"),
    Option("watch", "invocation", group=PLAN, kind="switch", commands=RUN,
           help="run, then run again whenever SKILL.md, the suite or a bundled file changes (the "
                "baseline from the cache: each run pays only the with-skill arms); Ctrl-C stops (exit 130)"),
    Option("watch-max-runs", "invocation", group=PLAN, parse=positive_int, metavar="N", commands=RUN,
           help="with --watch: stop after N runs, with the last run's exit code"),
    Option("reward-threshold", "engine.reward_threshold", group=PLAN, parse=unit_interval, default=1.0,
           commands=frozenset({"run", "ablate", "import"}),
           metavar="R", config=True,
           help="verifier reward (0-1) at which a SkillsBench/Harbor arm passes (default %(default)s)"),
    Option("held-out", "engine.held_out_path", group=PLAN, parse=Path, metavar="PATH", commands=RUN,
           help="a suite file (any format) kept from the skill's author, e.g. outside the pull request: its "
                "cases run as held-out cases beside the suite's own"),
    Option("siblings", "engine.siblings_dir", group=PLAN, parse=Path, metavar="DIR", config=True,
           trust=config_trust.inside, commands=RUN,
           help="trigger trials: offer the other skills in DIR beside the candidate (crowd mode)",
           input=ActionInput("Trigger trials offer these skills beside the one under test: `auto` "
                             "(the other skills in the skill's parent directory), a directory "
                             "relative to the repository root, or `none`.", default="auto")),
    Option("concurrency", "engine.concurrency", group=PLAN, parse=positive_int, default=4, metavar="N",
           commands=ROUTED,
           config=True, help="arms in flight at once (default %(default)s)",
           input=ActionInput("Arms in flight at once.", default="4")),
    Option("sandbox", "engine.sandbox", group=PLAN, parse=sandbox_name, env="SKILLAB_SANDBOX",
           commands=ROUTED,
           metavar="{bwrap,image,none,PLUGIN}", config=True, trust=config_trust.sandbox,
           help="isolation backend for every command a suite runs (default: $SKILLAB_SANDBOX, else "
                "bwrap; 'none' runs them unsandboxed; an installed plugin's by its entry point name)",
           input=ActionInput("Isolation backend for every command a suite runs (as `skillab run "
                             "--sandbox`): `bwrap`, `image` or `none` (unsandboxed, and every report "
                             "says so). Empty: bwrap, and a real-agent run fails closed when it "
                             "cannot work.")),
    Option("dry-run", "invocation", group=PLAN, kind="switch",
           help="preflight: check everything the run would (suites, keys of the agent and the judge, "
                "paths), print the plan (each model, provider and key; every call, trigger trials and "
                "judge re-asks included; cache hits; estimated cost) and exit 0, or exit 2 where the run would"),
    Option("max-cost-usd", "engine.max_cost_usd", group=PLAN, parse=positive_float, metavar="USD",
           config=True,
           help="stop starting arms once the measured spend reaches USD; the partial results are "
                "kept and the run exits 1 (default: no cap)",
           input=ActionInput("Stop cleanly once the run has spent this many US dollars on model "
                             "calls (as `skillab run --max-cost-usd`): bounds what any pull request "
                             "can burn. Empty: no cap.")),
    Option("budget-url", "tuning.budget_url", group=PLAN, parse=budget_url, metavar="URL",
           env="SKILLAB_BUDGET_URL",
           help="the `skillab budget serve` every shard of the run shares (its token in "
                "SKILLAB_BUDGET_TOKEN): every model call asks it first, for one cost cap, rate and "
                "back-off across shards; a shard that cannot reach it runs under its own "
                "--max-cost-usd and says so (not settable from a config file)"),
    Option("budget-wait-s", "tuning.budget_wait_s", group=PLAN, parse=non_negative_float, metavar="S",
           env="SKILLAB_BUDGET_WAIT_S", default=30.0,
           help="with --budget-url: how long a shard keeps trying to reach the budget service "
                "before its first arm (shards may start before the service does), then it runs "
                "under its own --max-cost-usd and says so (default 30)"),
    Option("stop-early", "engine.stop_early", settle=_off_when_none,
           group=PLAN, choices=("curtail", "group-sequential", "none"),
           metavar="DESIGN",
           help="run cases in a seeded random order and stop once the rest can no longer change the "
                "lift sentence (curtail: exact; group-sequential: looks at 1/2, "
                "3/4 and the end; none: every case, run's default; ablate curtails each variant "
                "unless none)"),
    Option("adaptive-runs", "engine.adaptive_runs", group=PLAN, kind="switch", config=True, commands=RUN,
           help="with --runs R >= 3: a case whose arms agreed (all passed or all failed) on each of its "
                "first R//2+1 runs gets no more runs unless they could still change the verdict; the "
                "verdict is the one every run would give (docs/stopping-early.md)"),
    Option("stop-seed", "engine.stop_seed", group=PLAN, parse=int, metavar="N",
           help="the seed of --stop-early's case order (default: drawn, and recorded)"),
    Option("shard", "engine.shard", group=PLAN, metavar="I/N", commands=RUN,
           help="run only shard I of N of the (case, run) units; gates wait for skillab merge. auto: I "
                "and N from a Kubernetes Indexed Job, a SLURM array or SKILLAB_SHARD_INDEX/COUNT"),
    Option("resume", "invocation", group=PLAN, parse=Path, metavar="RESULTS", commands=RUN,
           help="keep the finished arms of this results.json and run only the missing and errored ones"),
    # --- output
    Option("output", "report", group=OUTPUT, parse=Path, default=Path("results.json"), metavar="PATH",
           commands=frozenset({"run", "merge", "import", "ablate"}),
           config=True, trust=config_trust.inside,
           help="the results document (default %(default)s)"),
    Option("json", "report", group=OUTPUT, kind="switch",
           commands=frozenset({"run", "ablate", "route", "merge", "import"}),
           help="print the results (route: routing) document on stdout instead of the table"),
    Option("compact-results", "report", group=OUTPUT, kind="switch", config=True, commands=RUN,
           help="write the results document unindented, each arm's transcript and final output "
                "moved to <output stem>.arms.jsonl beside it (for large runs)"),
    Option("junit", "report", group=OUTPUT, parse=Path, metavar="PATH", config=True, trust=config_trust.inside,
           commands=REPORTS, help="also write JUnit XML"),
    Option("markdown", "report", group=OUTPUT, parse=Path, metavar="PATH", config=True,
           commands=frozenset({"run", "ablate", "route", "merge", "import", "report", "regrade"}),
           trust=config_trust.inside, help="also write the markdown report"),
    Option("html", "report", group=OUTPUT, parse=Path, metavar="PATH", config=True,
           commands=frozenset({"run", "ablate", "route", "merge", "import", "report", "regrade"}),
           trust=config_trust.inside,
           help="also write the HTML report: one self-contained file, both arms side by side (route: "
                "the confusion matrices)"),
    Option("reporter", "report", group=OUTPUT, kind="append", parse=reporter_choice, metavar="NAME[=PATH]",
           commands=REPORTS,
           help="also write the report NAME (junit, markdown, html, or an installed plugin's) to "
                "PATH; repeatable"),
    Option("trajectories", "report", group=OUTPUT, parse=Path, metavar="DIR", config=True, trust=config_trust.inside,
           commands=RUN, help="write one transcript per arm under DIR"),
    Option("keep-workspaces", "engine.keep_workspaces", group=OUTPUT, kind="switch", config=True,
           trust=config_trust.kept, help="keep each arm's workspace directory (their parent is printed)"),
    Option("verbose", "report", group=OUTPUT, kind="switch", short="-v",
           commands=frozenset({"run", "report"}),
           help="after the table, both arms' reasons, longer output tails and answers"),
    Option("quiet", "report", group=OUTPUT, kind="switch", help="no progress on stderr"),
    # --- gates
    Option("fail-on-verdict", "gates.fail_on", settle=_verdicts,
           group=GATES, kind="append", choices=FAIL_ON_CHOICES, metavar="V",
           config=True, commands=DOCUMENT,
           help="exit 1 when the verdict is V (repeatable; choices: %(choices)s; default fail, as "
                "the Action; none: no verdict gate). error always fails unless --allow-error-verdict",
           input=ActionInput("Comma-separated verdicts (fail, mixed, error) that fail the check when "
                             "any suite ends with one of them. Empty: never.", default="fail,error",
                             keep_blank=True)),
    Option("allow-error-verdict", "gates.fail_on", settle=_error_verdict,
           group=GATES, kind="switch", config=True, commands=frozenset({"run", "merge", "import", "regrade"}),
           help="exit 0 even when nothing could be measured (verdict error)"),
    Option("min-delta-pts", "gates.min_delta_pts, engine.min_delta_pts", group=GATES, parse=finite_float, metavar="PTS",
           config=True,
           commands=DOCUMENT,
           help="exit 1 when the pass-rate delta is below PTS points, or was not measured",
           input=ActionInput("Fail the check when a suite's pass-rate delta (points) is below this, "
                             "or could not be measured. Empty: off.")),
    Option("gate-on", "gates.gate_on, engine.gate_on", settle=_or("point"),
           group=GATES, choices=("point", "lower-bound"), default="point", config=True,
           commands=DOCUMENT,
           help="what --min-delta-pts compares: the point estimate, or the lower bound of its 95%% "
                "interval (default %(default)s)",
           input=ActionInput("What min-delta-pts compares: `point` (the delta) or `lower-bound` (the "
                             "lower end of its 95% interval).", default="point")),
    Option("target-lift-pts", "engine.target_lift_pts", group=GATES, parse=lift_pts, default=10.0,
           metavar="P", config=True,
           help="the lift the power statement sizes the suite for (default %(default)s)",
           input=ActionInput("The lift (points) the report's power statement sizes the suite for.",
                             default="10")),
    Option("min-trigger-recall", "gates.min_trigger_recall", group=GATES, parse=share, metavar="R", config=True,
           commands=DOCUMENT,
           help="exit 1 when a suite's trigger recall is below R (0..1)",
           input=ActionInput("Fail the check when a suite's trigger recall (share of should-trigger "
                             "queries on which the agent loaded the skill) is below this rate (0 to "
                             "1). Empty: off.")),
    Option("max-false-trigger-rate", "gates.max_false_trigger_rate", group=GATES, parse=share, metavar="R", config=True,
           commands=DOCUMENT,
           help="exit 1 when a suite's false-trigger rate is above R (0..1)",
           input=ActionInput("Fail the check when a suite's false-trigger rate (share of "
                             "should-not-trigger queries on which the agent loaded the skill) is "
                             "above this rate (0 to 1). Empty: off.")),
    Option("max-skill-tokens", "gates.max_skill_tokens", group=GATES, parse=positive_int, metavar="N", config=True,
           commands=RUN,
           help="exit 1 when the skill's listing entry plus body costs more than N tokens in context "
                "for the run's agent (estimated at 4 characters a token)",
           input=ActionInput("Fail the check when a skill's listing entry plus body costs more than "
                             "this many tokens in context for the run's agent (as `skillab run "
                             "--max-skill-tokens`). Empty: no gate.")),
    Option("fail-on-broken", "gates.fail_on_broken", settle=_flag,
           group=GATES, kind="switch", config=True, commands=RUN,
           help="exit 1 when the --against run names cases the edit broke beyond noise",
           input=ActionInput("`true`: fail the check when the run against the original skill names cases the "
                             "edit broke beyond noise (as `skillab run --fail-on-broken`), so the check agrees "
                             "with the comment's headline. `false`: the comment still names them.",
                             default="true")),
    Option("max-held-out-gap", "gates.max_held_out_gap", group=GATES, parse=non_negative_float, metavar="PTS",
           config=True,
           commands=RUN,
           help="exit 1 when the author cases' lift exceeds the held-out cases' lift by more than PTS points "
                "(cases with held_out: true or the tag held-out)",
           input=ActionInput("Fail the check when the author cases' lift exceeds the held-out cases' lift by "
                             "more than this many points (as `skillab run --max-held-out-gap`). Empty: no gate.")),
    Option("max-leaks", "gates.max_leaks", group=GATES, parse=non_negative_int, metavar="N", config=True,
           commands=frozenset({"run", "audit"}),
           help="exit 1 when the audit finds more than N answer leaks (grader literals, expected values) in "
                "the skill's files (`skillab audit`)",
           input=ActionInput("Fail the check when the audit finds more than this many answer leaks (grader "
                             "literals, expected values) in a skill's files (as `skillab run --max-leaks`). "
                             "Empty: no gate; the findings are reported either way.")),
    # --- baseline cache and history
    Option("no-cache", "engine.cache_enabled", settle=_negated, group=CACHE, kind="switch", config=True,
           help="run every without-skill arm (the cache is on by default)"),
    Option("cache-dir", "engine.cache_dir", group=CACHE, parse=Path, metavar="DIR", config=True,
           commands=frozenset({"run", "ablate", "cache"}),
           trust=config_trust.inside,
           help="where baselines are cached (default: $XDG_CACHE_HOME/skillab, else ~/.cache/skillab); "
                "must be writable",
           input=ActionInput("Where the without-skill baseline cache lives, relative to the "
                             "workspace (e.g. `.skillab/cache`), so `actions/cache` can keep it "
                             "between jobs. Empty: a directory inside the container, lost when the "
                             "job ends.")),
    Option("cache-ttl-days", "engine.cache_ttl_days", group=CACHE, parse=non_negative_float,
           commands=frozenset({"run", "ablate", "cache"}),
           default=DEFAULT_CACHE_TTL_DAYS, metavar="D", config=True,
           help="cached baselines older than D days are rerun (default %(default)s)"),
    Option("history", "engine.history_path", settle=_or(DEFAULT_HISTORY_PATH),
           group=CACHE, parse=Path, metavar="PATH", config=True,
           commands=frozenset({"run", "ablate", "merge", "audit"}),
           trust=config_trust.inside,
           help=f"run history for the trend (audit: read for saturated and always-failing cases; "
                f"default {DEFAULT_HISTORY_PATH})"),
    Option("no-history", "engine.history_path", settle=_history_off, group=CACHE, kind="switch", config=True,
           commands=frozenset({"run", "ablate", "merge", "audit"}),
           help="neither read nor append the history"),
    Option("evidence-ledger", "engine.evidence_ledger", group=CACHE, parse=Path, metavar="PATH",
           commands=frozenset({"run", "merge"}),
           help="add this run's pairs to the signed evidence ledger at PATH (e.g. .skillab/evidence.jsonl) "
                "and report the evidence every run of the same skill content, agent, model and suite "
                "accumulated: anytime-valid, so re-running until green keeps \"helps\" at 5%% (merge: "
                "the merged run's pairs, each shard's counted once)",
           input=ActionInput("The evidence ledger, relative to the workspace (e.g. `.skillab/evidence.jsonl`, "
                             "kept with `actions/cache`): every run, re-run and shard of the same skill content, "
                             "agent, model and suite adds its pairs, and the comment shows the accumulated "
                             "anytime-valid evidence (as `skillab run --evidence-ledger`). Lines are signed with "
                             "`cache-key`: without it, only this job's lines count. Empty: no ledger.")),
)
BY_NAME: dict[str, Option] = {option.name: option for option in OPTIONS}
CONFIG_KEYS: tuple[str, ...] = tuple(option.name for option in OPTIONS if option.config)
GROUPS: tuple[str, ...] = ("", AGENT, PLAN, OUTPUT, GATES, CACHE)


def options_for(command: Command, options: tuple[Option, ...] = OPTIONS) -> tuple[Option, ...]:
    return tuple(option for option in options if command in option.commands)


def not_taken(command: Command, options: tuple[Option, ...] = OPTIONS) -> dict[str, Any]:
    """The attributes of the options ``command`` does not take, at their defaults: code shared
    with ``run`` reads them, but no flag can set them."""
    return {option.attr: option.initial() for option in options if command not in option.commands}


def render_reference() -> str:
    """``docs/options.md``: the table, one row per option, and how to add one."""
    lines = [
        "# Options reference",
        "",
        "<!-- Generated from runner/skillab/core/options.py by `python -m skillab.core.options "
        "> docs/options.md`; tests/core/test_options.py fails when it is stale. -->",
        "",
        "Every setting of `skillab run`, declared once, and of the commands that share them (`ablate`, "
        "`route`, `merge`, `import`, `report`, `regrade`, `audit`, `validate`, `export`, `cache`): each "
        "takes only the options whose commands column names it. A flag wins over the environment, which "
        "wins over the config file (`skillab.toml`, or `[tool.skillab]` in `pyproject.toml`; read by "
        "`run`, `ablate` and `cache`), which wins over the default.",
        "",
        "Config file column: `yes`, a repository's config file may set it; `consent`, it may, but "
        "a value that widens what the run reaches (where your keys go, the sandbox, what stays on "
        "disk, paths outside the file's tree) exits 2 unless the command line gives the flag "
        "itself or `--trust-config`; `-`, it may not.",
        "",
        "| flag | meaning | lands in | value | default | env | config file | Action input | commands |",
        "|---|---|---|---|---|---|---|---|---|",
        *map(_reference_row, OPTIONS),
        "",
        "## Adding an option",
        "",
        "1. Add one `Option(...)` row to `OPTIONS` in `runner/skillab/core/options.py`: its name, "
        "where it lands, its parser (from `core/choices.py`, with its bounds), `config=True` (and a "
        "`trust` rule if a repository's value could widen what the run reaches), "
        "`input=ActionInput(...)` if the Action takes it, and `commands` (`RUN`, `BOTH` or `ROUTED`).",
        "2. Say where it lands. A settings field (`engine.runs`, `agent.model.seed`, `gates.max_leaks`; "
        "several comma-separated; `settle=` when the parsed value is not yet the field's) is filled by "
        "`session/landing.py` for the CLI with no other code; the Action parses its input with the same "
        "row (`github/inputs.py`) and names it in `Action.landed` (`github/action.py`). A reader "
        "(`report`, `selection`, `invocation`) takes the parsed flag itself.",
        "3. Regenerate the reference, and `action.yml` when it is an input:",
        "",
        "```",
        "python -m skillab.core.options > docs/options.md",
        "python -m skillab.github.action_yml > action.yml",
        "```",
        "",
    ]
    return "\n".join(lines)


def _reference_row(option: Option) -> str:
    flag = ", ".join(f"`{f}`" for f in option.flags)
    if option.kind == "switch":
        value = "switch"
    elif option.choices is not None:
        value = ", ".join(option.choices)
    else:
        value = f"`{option.metavar or 'TEXT'}`"
    if option.kind == "append":
        value += " (repeatable)"
    shown = option.default not in (None, [], ()) and option.kind != "switch"
    default = f"`{option.default}`" if shown else ""
    config = ("consent" if option.trust is not None else "yes") if option.config else "-"
    action = f"`{option.name}`" if option.input is not None else "-"
    env = f"`{option.env}`" if option.env else ""
    meaning = option.help % {"default": option.default, "choices": ", ".join(option.choices or ())}
    return (f"| {flag} | {meaning} | `{option.lands}` | {value} | {default} | {env} | {config} | {action} "
            f"| {', '.join(sorted(option.commands))} |")


if __name__ == "__main__":
    print(render_reference(), end="")
