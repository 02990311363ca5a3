"""The ``skillab`` command line: ``validate``, ``run`` and ``action``."""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from . import __version__
from .commands.choices import (
    adapter_list,
    add_sampling_arguments,
    finite_float,
    lift_pts,
    non_negative_float,
    non_negative_int,
    positive_float,
    positive_int,
    probability,
    provider_name,
    reporter_choice,
    sandbox_name,
    share,
    unit_interval,
)
from .commands.parser_extras import (
    SuggestingParser,
    add_cache_parser,
    add_init_arguments,
    add_route_arguments,
    add_selection_arguments,
    apply_run_config,
    config_help,
    describe_action,
    finish_run_config,
)
from .core.defaults import DEFAULT_CACHE_TTL_DAYS, DEFAULT_HISTORY_PATH, DEFAULT_MAX_TURNS
from .errors import EXIT_INTERRUPTED, SkillabError

# 128 + SIGPIPE, as a shell reports a command whose reader closed the pipe.
EXIT_BROKEN_PIPE = 141

VERDICTS = ("pass", "fail", "mixed", "error")
# Each subcommand's implementation; `action` reads its inputs from the environment instead.
COMMANDS = {
    "validate": ".commands.validate:cmd_validate",
    "run": ".commands.run:cmd_run",
    "report": ".commands.report:cmd_report",
    "regrade": ".commands.regrade:cmd_regrade",
    "diff": ".commands.diff:cmd_diff",
    "init": ".commands.init:cmd_init",
    "calibrate-judge": ".commands.calibrate:cmd_calibrate_judge",
    "merge": ".commands.merge:cmd_merge",
    "export": ".commands.harbor:cmd_export",
    "import": ".commands.harbor:cmd_import",
    "ablate": ".commands.ablate:cmd_ablate",
    "cache": ".commands.cache:cmd_cache",
    "route": ".commands.route:cmd_route",
}


RUN_EPILOG = """\
examples:
  skillab run examples/changelog-entry --adapter mock      offline, scripted answers
  skillab run skills/my-skill --model claude-sonnet-4-5 --dry-run
  skillab run skills/my-skill --model claude-sonnet-4-5 --runs 3 --html report.html
  skillab run skills/my-skill --model gpt-4o --max-cost-usd 2 --fail-on-verdict fail
  skillab run skills/my-skill --model claude-sonnet-4-5 --resume results.json

exit codes:
  0    the run finished and no gate failed
  1    a gate failed: --fail-on-verdict, --min-delta-pts, the verdict is error (nothing could
       be measured; --allow-error-verdict accepts it), or --max-cost-usd stopped the run
  2    usage or input error: bad flag, number, suite, skill, mock responses or output path;
       reported before any case runs
  130  interrupted (Ctrl-C): the cases that finished are kept, and every report says
       "interrupted: N of M cases" instead of a verdict
  141  the reader of the output closed the pipe (skillab validate . | head)

terms:
  outcome        per case: flip_to_pass (fails without the skill, passes with it), pass_kept,
                 fail_kept, flip_to_fail (passes without, fails with), error (not measured)
  verdict        per run: pass, fail, mixed or error, from the outcomes
  efficiency     with-skill vs without-skill change in duration, turns, tokens and tool calls
  both-correct   the same, over only the cases both arms passed
  trigger-only   a case with no grader (only should_trigger): posed in trigger trials, not A/B
  contaminated   a without-skill arm that read the skill anyway: its baseline is not clean
"""

TOP_EPILOG = """\
commands in a day's work:
  skillab init skills/my-skill          scaffold eval.yaml, mock responses and a PR workflow
  skillab validate skills/my-skill      check the suite
  skillab run skills/my-skill --adapter mock
  skillab run skills/my-skill --model claude-sonnet-4-5 --watch    rerun on each edit
  skillab run skills/my-skill --model claude-sonnet-4-5 --failed   rerun what failed
  skillab report results.json --html report.html
  skillab diff before.json after.json   what changed case by case, and is it noise

`skillab COMMAND --help` for each command's options, examples and exit codes.
"""


ROUTE_EPILOG = """\
examples:
  skillab route examples/routing/release-notes --catalogue examples/routing/catalogue --adapter mock
  skillab route skills/release-notes --catalogue skills --model claude-sonnet-4-5 --runs 3
  skillab route skills/release-notes --catalogue skills --against main --max-stolen 0 --model claude-sonnet-4-5

Every labelled query (the candidate's trigger sets, each catalogue skill's own should-trigger
queries) is posed with the catalogue alone (beside the original under --against) and with the
candidate added: queries x runs x 2 trials per agent, whatever the catalogue's size.

exit codes:
  0    done, no gate failed            1    --max-stolen or --min-route-accuracy failed
  2    usage or input error            130  interrupted (the trials that finished are reported)
"""


class _Formatter(argparse.RawDescriptionHelpFormatter):
    def __init__(self, prog: str) -> None:
        super().__init__(prog, max_help_position=32, width=100)


class _Unbuilt:
    """Stands in for the parser of a command that is not being run: nothing of it is built (the
    run parser alone adds about 70 arguments)."""

    def add_argument(self, *args: Any, **kwargs: Any) -> None:
        return None

    def add_argument_group(self, *args: Any, **kwargs: Any) -> _Unbuilt:
        return self

    def set_defaults(self, **kwargs: Any) -> None:
        return None


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The whole command line; given the ``command`` about to run, only what parsing it needs:
    its own parser (the listing of every command is for ``--help`` and a bad command)."""
    parser = SuggestingParser(
        prog="skillab",
        description="Does this agent skill make the agent better, and by how much?",
        epilog=TOP_EPILOG,
        formatter_class=_Formatter,
    )
    parser.add_argument("--version", action="version", version=f"skillab {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND", parser_class=SuggestingParser)

    def add_parser(name: str, **kwargs: Any) -> Any:
        return sub.add_parser(name, **kwargs) if command is None or command == name else _Unbuilt()

    p_validate = add_parser(
        "validate", help="check skill dirs or suite files; exit 2 if invalid", formatter_class=_Formatter,
        description="Parse each suite strictly and load its skill. Nothing is run.",
        epilog="exit codes:\n  0  every suite is valid\n  2  a suite or skill is invalid (each problem "
               "is printed with file, line, case and field)")
    p_validate.add_argument("paths", nargs="+", type=Path, metavar="PATH",
                            help="skill directories (SKILL.md + eval.yaml) or suite files")
    p_validate.add_argument("--format", dest="suite_format", metavar="NAME",
                            help="suite format when the file name does not tell")

    p_run = add_parser(
        "run", help="A/B-evaluate one or more skills", formatter_class=_Formatter,
        epilog=RUN_EPILOG + "\n" + config_help() if command in (None, "run") else RUN_EPILOG,
        description="Run every case of each suite with and without the skill, grade both arms,\n"
                    "and report the lift with its evidence.")
    add_run_arguments(p_run)
    if command == "run":
        apply_run_config(p_run)

    p_ablate = add_parser(
        "ablate", help="which sections and bundled files of a skill carry its lift", formatter_class=_Formatter,
        description="Run the suite under the full skill and under each variant with one part left out (a\n"
                    "SKILL.md section, or a bundled file no grader calls); each part is load-bearing,\n"
                    "dead weight or harmful, by the lift's own paired test, Holm-corrected over the parts.",
        epilog="examples:\n  skillab ablate examples/changelog-entry --adapter mock\n"
               "  skillab ablate skills/my-skill --model claude-sonnet-4-5 --runs 3 --max-cost-usd 5 --dry-run\n\n"
               "exit codes:\n  0  measured (or planned, with --dry-run)\n  2  usage or input error, before "
               "any case runs\n  130  interrupted")
    add_run_arguments(p_ablate)
    p_ablate.add_argument("--heading-level", type=positive_int, default=2, metavar="N",
                          help="the markdown heading level that cuts SKILL.md into sections (default %(default)s: ##)")
    # Each variant stops by curtailment unless told otherwise (--stop-early none; commands.ablate).
    p_ablate.set_defaults(output=Path("ablation.json"), stop_early="curtail")
    if command == "ablate":
        apply_run_config(p_ablate)

    p_report = add_parser(
        "report", help="re-render the reports of a results document", formatter_class=_Formatter,
        description="Print the terminal table of RESULTS and write any of the other reports "
                    "from it. Nothing is run.",
        epilog="examples:\n  skillab report results.json\n  skillab report results.json --html "
               "report.html --markdown report.md\n\nexit codes:\n  0  rendered\n  2  RESULTS "
               "is missing or not a skillab results document, or an output path is unusable")
    p_report.add_argument("results", type=Path, metavar="RESULTS", help="a results.json written by skillab run")
    add_report_arguments(p_report)
    p_report.add_argument("-v", "--verbose", action="store_true",
                          help="after the table, both arms' reasons, longer output tails and answers")

    p_regrade = add_parser(
        "regrade", help="judge a finished run's arms again, without running any agent", formatter_class=_Formatter,
        description="Judge the stored arms of RESULTS again (their transcripts and answers) with the run's\n"
                    "judge, or another: after a judge outage the errored verdicts are asked again; another\n"
                    "judge is asked every verdict. No agent runs. Writes the results document and reports.",
        epilog="examples:\n  skillab regrade results.json\n  skillab regrade results.json --judge-model gpt-4.1 "
               "--output regraded.json\n\nexit codes:\n  0  regraded\n  1  the verdict is still error "
               "(the judge is still down: regrade again)\n  2  RESULTS is not a results document, its suite "
               "or skill changed since the run, or a bad flag")
    p_regrade.add_argument("results", type=Path, metavar="RESULTS", help="a results.json written by skillab run")
    p_regrade.add_argument("--judge-model", default=os.environ.get("SKILLAB_JUDGE_MODEL") or None, metavar="MODEL",
                           help="judge with this model (default: the judge that graded the run)")
    p_regrade.add_argument("--judge-same-family", action="store_true",
                           help="let a model of the agent's family judge")
    p_regrade.add_argument("--provider", type=provider_name, metavar="NAME",
                           help="the judge's provider (default: inferred from the model name)")
    p_regrade.add_argument("--base-url", metavar="URL", help="the judge's OpenAI-compatible endpoint or a proxy")
    p_regrade.add_argument("--output", type=Path, metavar="PATH",
                           help="the regraded results document (default: RESULTS, replaced)")
    p_regrade.add_argument("--allow-error-verdict", action="store_true",
                           help="exit 0 even when the verdict is still error")
    add_report_arguments(p_regrade)

    p_diff = add_parser(
        "diff", help="compare two results documents case by case", formatter_class=_Formatter,
        description="Compare run A (before) with run B (after): each case that changed, the pass "
                    "rates, and whether the change is more than noise (sign-flip test on the "
                    "per-case changes).",
        epilog="examples:\n  skillab diff main.json pr.json\n\nexit codes:\n  0  compared\n"
               "  1  --fail-on-regression and B is significantly worse than A\n"
               "  2  a file is missing or not a skillab results document")
    p_diff.add_argument("before", type=Path, metavar="A", help="the earlier (or baseline) results.json")
    p_diff.add_argument("after", type=Path, metavar="B", help="the later (or candidate) results.json")
    p_diff.add_argument("--arm", choices=("with_skill", "without_skill"), default="with_skill",
                        help="which arm to compare across the two runs (default %(default)s)")
    p_diff.add_argument("--alpha", type=probability, default=0.05, metavar="P",
                        help="significance level of the noise test (default %(default)s)")
    p_diff.add_argument("--fail-on-regression", action="store_true",
                        help="exit 1 when B is significantly worse than A")
    p_diff.add_argument("--json", action="store_true", help="print the comparison as JSON")

    add_init_arguments(add_parser("init", help="scaffold a skill's eval suite, mock responses and PR workflow",
                                  formatter_class=_Formatter))

    p_cal = add_parser(
        "calibrate-judge", help="grade the hand-labelled calibration set; report kappa, "
                                "sensitivity and specificity per arm", formatter_class=_Formatter,
        epilog="examples:\n  skillab calibrate-judge\n  skillab calibrate-judge --judge-model gpt-4.1\n\n"
               "exit codes:\n  0  graded\n  2  the set cannot be read, or a bad flag")
    p_cal.add_argument("--set", dest="calibration_set", type=Path, metavar="PATH",
                       help="a calibration set (default: the one shipped with skillab)")
    p_cal.add_argument("--judge-model", default=os.environ.get("SKILLAB_JUDGE_MODEL") or None,
                       metavar="MODEL", help="grade with this model (default: the mock judge)")
    p_cal.add_argument("--provider", type=provider_name, metavar="NAME",
                       help="model provider, as for run (default: inferred from the model name)")
    p_cal.add_argument("--base-url", metavar="URL", help="OpenAI-compatible endpoint or a proxy")
    p_cal.add_argument("--json", action="store_true", help="print the scores as JSON")

    p_merge = add_parser("merge", help="join the results documents of run --shard I/N")
    p_merge.add_argument("documents", nargs="+", type=Path, metavar="DOC")
    add_results_options(p_merge)
    p_merge.add_argument("--history", type=Path, metavar="PATH",
                         help=f"run history for the trend (default {DEFAULT_HISTORY_PATH})")
    p_merge.add_argument("--no-history", action="store_true", help="neither read nor append the history")
    p_merge.add_argument("--evidence-ledger", type=Path, metavar="PATH",
                         help="add the merged run's pairs to the evidence ledger at PATH (as run does; the "
                              "shards' pairs count once) and report the accumulated evidence")

    p_export = add_parser("export", help="write each case and arm of a suite as a Harbor task")
    p_export.add_argument("--harbor", type=Path, required=True, metavar="DIR")
    p_export.add_argument("paths", nargs="+", type=Path, metavar="PATH")
    p_export.add_argument("--format", dest="suite_format")
    p_import = add_parser("import", help="read a Harbor job's trials into a results document")
    p_import.add_argument("--harbor", type=Path, required=True, metavar="JOB_DIR")
    p_import.add_argument("--tasks", type=Path, metavar="DIR", help="the export directory, when the job moved")
    p_import.add_argument("--reward-threshold", type=unit_interval, default=1.0, metavar="R",
                          help="verifier reward (0-1) at which an arm passes (default 1.0)")
    add_results_options(p_import)

    p_route = add_parser("route", help="the routing diff: the candidate among a catalogue of skills, per agent",
                         formatter_class=_Formatter,
                         description="What adding or editing a skill does to the agent's choices across a "
                                     "catalogue of skills: what it steals and loses, with error control.",
                         epilog=ROUTE_EPILOG)
    add_route_arguments(p_route)

    add_cache_parser(add_parser("cache", help="list or clear the without-skill baseline cache",
                                formatter_class=_Formatter), _Formatter)

    describe_action(add_parser("action", help="the GitHub Action entrypoint (reads INPUT_* variables)",
                               formatter_class=_Formatter))
    return parser


def add_run_arguments(p_run: argparse.ArgumentParser) -> None:
    p_run.add_argument("paths", nargs="+", type=Path, metavar="PATH",
                       help="suites (a skill directory with SKILL.md and eval.yaml, or a suite "
                           "file), or folders: every suite below them")
    agent = p_run.add_argument_group("agent and models")
    agent.add_argument("--adapter", type=adapter_list, metavar="A[,B...]",
                       help="how the agent is invoked: mock (scripted answers, no model), llm (one "
                            "call, no tools), agent (skillab's tool loop), claude-code, codex, "
                            "gemini-cli (the agent CLIs); several, comma-separated, run the suites "
                            "under each agent and add the portability table; default agent when "
                            "--model is given")
    agent.add_argument("--model", default=os.environ.get("SKILLAB_MODEL") or None,
                       help="agent model (default: $SKILLAB_MODEL)")
    agent.add_argument("--judge-model", default=os.environ.get("SKILLAB_JUDGE_MODEL") or None,
                       metavar="MODEL", help="model that grades expectations (default: $SKILLAB_JUDGE_MODEL, "
                                             "else a small model of another family than the agent's: "
                                             "gpt-4.1-mini for a claude-* agent, claude-haiku-4-5 for "
                                             "any other; the agent model itself with --judge-same-family; "
                                             "the mock judge with --adapter mock)")
    agent.add_argument("--judge-same-family", action="store_true",
                       help="let a model of the agent's family judge (by default the judge is of "
                            "another family); the report discloses it")
    agent.add_argument("--judge-consistency", type=share, default=0.10, metavar="SHARE",
                       help="judge verdicts are asked again until the agreement's interval decides "
                            "(10 to 60 re-asks, or SHARE of the verdicts if more); the lift is withheld "
                            "when the judge agrees with itself below 80%% (0 turns it off; "
                            "default %(default)s)")
    agent.add_argument("--provider", type=provider_name, metavar="NAME",
                       help="model provider: anthropic, openai, openai-responses, gemini, mock, or an installed "
                            "plugin's (default: inferred from the model name)")
    agent.add_argument("--base-url", metavar="URL",
                       help="OpenAI-compatible endpoint (Ollama, vLLM, LiteLLM) or a proxy")
    add_sampling_arguments(agent)
    agent.add_argument("--skill-loading", choices=("inline", "discover"), default="inline",
                       help="agent adapter: skill body in the system prompt (inline) or listed and "
                            "read by the agent with its tools (discover); default %(default)s")
    agent.add_argument("--max-turns", type=positive_int, default=DEFAULT_MAX_TURNS, metavar="N",
                       help="tool-loop cap for cases without max_turns (default %(default)s)")
    agent.add_argument("--mock-responses", type=Path, metavar="FILE",
                       help="mock adapter script: case name -> with/without answers (default: the "
                            "skill's mock-responses.yaml); a key that names no case is an error")
    agent.add_argument("--mock-latency-ms", type=non_negative_int, default=0, metavar="MS",
                       help="mock adapter sleeps this long per arm, for benchmarks (default %(default)s)")

    plan = p_run.add_argument_group("what to run")
    plan.add_argument("--runs", type=positive_int, default=1, metavar="N",
                      help="i.i.d. repeats per case, MEAN-aggregated (default %(default)s)")
    plan.add_argument("--pass-k", type=positive_int, default=1, metavar="K",
                      help="up to K attempts per arm; the arm passes if any does (default %(default)s)")
    plan.add_argument("--pass-n", type=positive_int, default=None, metavar="N",
                      help="attempts per arm for pass@k, at least K (default K); more attempts "
                           "make the unbiased pass@k estimate less noisy")
    plan.add_argument("--against", metavar="REF_OR_DIR",
                      help="add an arm with the original skill (git ref or directory): candidate vs original")
    plan.add_argument("--placebo", action="store_true",
                      help="add an arm with the skill's placebo (same name, same lengths, neutral text, staged "
                           "the same way): content lift (skill vs placebo) beside presence lift (placebo vs none)")
    plan.add_argument("--format", dest="suite_format", metavar="NAME",
                      help="suite format when it cannot be told from the file names")
    plan.add_argument("--case", action="append", default=[], metavar="NAME",
                      help="run only this case (repeatable)")
    plan.add_argument("--tag", action="append", default=[], metavar="TAG",
                      help="run only cases with this tag (repeatable)")
    add_selection_arguments(plan)
    plan.add_argument("--reward-threshold", type=unit_interval, default=1.0, metavar="R",
                      help="verifier reward (0-1) at which a SkillsBench/Harbor arm passes "
                           "(default %(default)s)")
    plan.add_argument("--siblings", type=Path, metavar="DIR",
                      help="trigger trials: offer the other skills in DIR beside the candidate "
                           "(crowd mode)")
    plan.add_argument("--concurrency", type=positive_int, default=4, metavar="N",
                      help="arms in flight at once (default %(default)s)")
    plan.add_argument("--sandbox", type=sandbox_name, metavar="{bwrap,image,none,PLUGIN}",
                      default=os.environ.get("SKILLAB_SANDBOX") or None,
                      help="isolation backend for every command a suite runs (default: "
                           "$SKILLAB_SANDBOX, else bwrap; 'none' runs them unsandboxed; an installed "
                           "plugin's by its entry point name)")
    plan.add_argument("--dry-run", action="store_true",
                      help="preflight: check everything the run would (suites, keys of the agent and "
                           "the judge, paths), print the plan (each model, provider and key; every "
                           "call, trigger trials and judge re-asks included; cache hits; estimated "
                           "cost) and exit 0, or exit 2 where the run would")
    plan.add_argument("--max-cost-usd", type=positive_float, metavar="USD",
                      help="stop starting arms once the measured spend reaches USD; the partial "
                           "results are kept and the run exits 1 (default: no cap)")
    plan.add_argument("--stop-early", choices=("curtail", "group-sequential", "none"), metavar="DESIGN",
                      help="run cases in a seeded random order and stop once the rest can no longer "
                           "change the lift sentence (curtail: exact; group-sequential: O'Brien-Fleming "
                           "looks at 1/4, 1/2, 3/4 and the end; none: every case, run's default; ablate "
                           "curtails each variant unless none)")
    plan.add_argument("--stop-seed", type=int, metavar="N",
                      help="the seed of --stop-early's case order (default: drawn, and recorded)")
    plan.add_argument("--shard", metavar="I/N",
                      help="run only shard I of N of the (case, run) units; gates wait for skillab merge. "
                           "auto: I and N from a Kubernetes Indexed Job, a SLURM array or SKILLAB_SHARD_INDEX/COUNT")
    plan.add_argument("--resume", type=Path, metavar="RESULTS",
                      help="keep the finished arms of this results.json and run only the missing "
                           "and errored ones")

    out = p_run.add_argument_group("output")
    out.add_argument("--output", type=Path, default=Path("results.json"), metavar="PATH",
                     help="the results document (default %(default)s)")
    out.add_argument("--json", action="store_true",
                     help="print the results document on stdout instead of the table")
    out.add_argument("--compact-results", action="store_true",
                     help="write the results document unindented, each arm's transcript and final "
                          "output moved to <output stem>.arms.jsonl beside it (for large runs)")
    add_report_arguments(out)
    out.add_argument("--trajectories", type=Path, metavar="DIR",
                     help="write one transcript per arm under DIR")
    out.add_argument("--keep-workspaces", action="store_true",
                     help="keep each arm's workspace directory (their parent is printed)")
    out.add_argument("-v", "--verbose", action="store_true",
                     help="after the table, both arms' reasons, longer output tails and answers")
    out.add_argument("--quiet", action="store_true", help="no progress on stderr")

    gates = p_run.add_argument_group("gates (exit 1)")
    gates.add_argument("--fail-on-verdict", action="append", choices=VERDICTS, default=[], metavar="V",
                       help="exit 1 when the verdict is V (repeatable; choices: %(choices)s). "
                            "error always fails unless --allow-error-verdict")
    gates.add_argument("--allow-error-verdict", action="store_true",
                       help="exit 0 even when nothing could be measured (verdict error)")
    gates.add_argument("--min-delta-pts", type=finite_float, metavar="PTS",
                       help="exit 1 when the pass-rate delta is below PTS points, or was not measured")
    gates.add_argument("--gate-on", choices=("point", "lower-bound"), default="point",
                       help="what --min-delta-pts compares: the point estimate, or the lower bound "
                            "of its 95%% interval (default %(default)s)")
    gates.add_argument("--target-lift-pts", type=lift_pts, default=10.0, metavar="P",
                       help="the lift the power statement sizes the suite for (default %(default)s)")
    gates.add_argument("--min-trigger-recall", type=share, metavar="R",
                       help="exit 1 when a suite's trigger recall is below R (0..1)")
    gates.add_argument("--max-false-trigger-rate", type=share, metavar="R",
                       help="exit 1 when a suite's false-trigger rate is above R (0..1)")
    gates.add_argument("--max-skill-tokens", type=positive_int, metavar="N",
                       help="exit 1 when the skill's listing entry plus body costs more than N tokens "
                            "in context for the run's agent (estimated at 4 characters a token)")
    gates.add_argument("--fail-on-broken", action="store_true",
                       help="exit 1 when the --against run names cases the edit broke beyond noise")

    cache = p_run.add_argument_group("baseline cache and history")
    cache.add_argument("--no-cache", action="store_true",
                       help="run every without-skill arm (the cache is on by default)")
    cache.add_argument("--cache-dir", type=Path, metavar="DIR",
                       help="where baselines are cached (default: $XDG_CACHE_HOME/skillab, else "
                            "~/.cache/skillab); must be writable")
    cache.add_argument("--cache-ttl-days", type=non_negative_float, default=DEFAULT_CACHE_TTL_DAYS, metavar="D",
                       help="cached baselines older than D days are rerun (default %(default)s)")
    cache.add_argument("--history", type=Path, metavar="PATH",
                       help=f"run history for the trend (default {DEFAULT_HISTORY_PATH})")
    cache.add_argument("--no-history", action="store_true", help="neither read nor append the history")
    cache.add_argument("--evidence-ledger", type=Path, metavar="PATH",
                       help="add this run's pairs to the signed evidence ledger at PATH (e.g. "
                            ".skillab/evidence.jsonl) and report the evidence every run of the same skill "
                            "content, agent, model and suite accumulated: anytime-valid, so re-running "
                            "until green keeps \"helps\" at 5%%")


def add_results_options(parser: argparse.ArgumentParser) -> None:
    """Output and gates of a command that builds a results document without running (merge, import)."""
    parser.add_argument("--output", type=Path, default=Path("results.json"), metavar="PATH")
    parser.add_argument("--json", action="store_true", help="print the results document")
    add_report_arguments(parser)
    parser.add_argument("--fail-on-verdict", action="append", choices=VERDICTS, default=[], metavar="V")
    parser.add_argument("--allow-error-verdict", action="store_true")
    parser.add_argument("--min-delta-pts", type=finite_float, metavar="PTS")
    parser.add_argument("--gate-on", choices=("point", "lower-bound"), default="point")
    # The merged document keeps its trigger trials, so their gates apply to it too.
    parser.add_argument("--min-trigger-recall", type=share, metavar="R")
    parser.add_argument("--max-false-trigger-rate", type=share, metavar="R")


def add_report_arguments(group) -> None:
    group.add_argument("--junit", type=Path, metavar="PATH", help="also write JUnit XML")
    group.add_argument("--markdown", type=Path, metavar="PATH", help="also write the markdown report")
    group.add_argument("--html", type=Path, metavar="PATH",
                       help="also write the HTML report: one self-contained file, both arms side by side")
    group.add_argument("--reporter", type=reporter_choice, action="append", default=[], metavar="NAME[=PATH]",
                       help="also write the report NAME (junit, markdown, html, or an installed plugin's) "
                            "to PATH; repeatable")


def main(argv: Sequence[str] | None = None) -> int:
    from .sandbox.guard import guard_process

    guard_process()
    from_command_line = argv is None
    argv = sys.argv[1:] if argv is None else list(argv)
    try:
        parser = build_parser(argv[0] if argv and (argv[0] in COMMANDS or argv[0] == "action") else None)
        args = parser.parse_args(argv)
        finish_run_config(args)
    except SystemExit as exc:  # argparse exits 2 on bad flags, 0 on --help
        return int(exc.code or 0)
    except SkillabError as exc:  # a bad config file
        print(f"skillab: {exc}", file=sys.stderr)
        return exc.exit_code
    if from_command_line and (args.command in ("run", "ablate", "route") or args.command not in COMMANDS):
        from .sandbox.disk_budget import enter_private_mounts

        # While skillab is one thread: each arm's workspace is then a tmpfs of its disk budget.
        # Only as a program of its own: a library caller's namespaces are its own business.
        enter_private_mounts()
    try:
        if args.command in COMMANDS:
            module, _, function = COMMANDS[args.command].partition(":")
            # Imported on use, so `skillab validate` never loads the engine's dependencies.
            return getattr(importlib.import_module(module, __package__), function)(args)
        from .github.entrypoint import main as action_main

        return action_main()
    except SkillabError as exc:
        print(f"skillab: {exc}", file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt:
        print("skillab: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except BrokenPipeError:
        # The reader went away (`skillab validate . | head`): not an error of skillab's to trace.
        # stdout is pointed at /dev/null so the interpreter's final flush cannot fail again.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return EXIT_BROKEN_PIPE


if __name__ == "__main__":
    sys.exit(main())
