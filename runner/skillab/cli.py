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
from .commands.parser_extras import (
    SuggestingParser,
    add_cache_parser,
    add_init_arguments,
    add_route_arguments,
    apply_run_config,
    config_help,
    describe_action,
    finish_run_config,
)
from .core import plugins
from .core.choices import (
    positive_int,
    probability,
    provider_name,
)
from .core.option_row import Command, Option
from .core.options import GROUPS, OPTIONS, not_taken, options_for
from .errors import EXIT_INTERRUPTED, EXIT_USAGE, SkillabError

# 128 + SIGPIPE, as a shell reports a command whose reader closed the pipe.
EXIT_BROKEN_PIPE = 141

# Each subcommand's implementation; `action` reads its inputs from the environment instead.
COMMANDS = {
    "validate": ".commands.validate:cmd_validate",
    "audit": ".commands.audit:cmd_audit",
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
    "serve-local": ".commands.serve_local:cmd_serve_local",
    "budget": ".commands.budget:cmd_budget",
}


RUN_EPILOG = """\
examples:
  skillab run examples/changelog-entry --adapter mock      offline, scripted answers
  skillab run skills/my-skill --model claude-sonnet-5-5 --dry-run
  skillab run skills/my-skill --model claude-sonnet-5-5 --runs 3 --html report.html
  skillab run skills/my-skill --model gpt-4o --max-cost-usd 2 --fail-on-verdict fail
  skillab run skills/my-skill --model claude-sonnet-5-5 --resume results.json

exit codes:
  0    the run finished and no gate failed
  1    a gate failed: the verdict is fail (--fail-on-verdict: default fail, as the Action;
       none turns it off), --min-delta-pts, the verdict is error (nothing could be measured;
       --allow-error-verdict accepts it), or --max-cost-usd stopped the run
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
  skillab run skills/my-skill --model claude-sonnet-5-5 --watch    rerun on each edit
  skillab run skills/my-skill --model claude-sonnet-5-5 --failed   rerun what failed
  skillab report results.json --html report.html
  skillab diff before.json after.json   what changed case by case, and is it noise

`skillab COMMAND --help` for each command's options, examples and exit codes.
"""


ROUTE_EPILOG = """\
examples:
  skillab route examples/routing/release-notes --catalogue examples/routing/catalogue --adapter mock
  skillab route skills/release-notes --catalogue skills --model claude-sonnet-5-5 --runs 3
  skillab route skills/release-notes --catalogue skills --against main --max-stolen 0 --model claude-sonnet-5-5

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
    add_option_rows(p_validate, "validate")

    p_audit = add_parser(
        "audit", help="find answer leaks, contaminated prompts, saturated and duplicate cases; no model call",
        formatter_class=_Formatter,
        description="Check each suite against its skill's files and the run history before anything is\n"
                    "spent: answers the skill gives away, prompts copied from its examples or naming it,\n"
                    "near-duplicate cases, cases every arm always passes or always fails.",
        epilog="examples:\n  skillab audit skills/my-skill\n  skillab audit skills/ --max-leaks 0\n\n"
               "exit codes:\n  0  audited (findings are printed, not failed on)\n  1  --max-leaks N and a suite "
               "has more answer leaks\n  2  a suite or skill is invalid")
    p_audit.add_argument("paths", nargs="+", type=Path, metavar="PATH",
                         help="skill directories or suite files, or folders: every suite below them")
    p_audit.add_argument("--json", action="store_true", help="print the findings as JSON")
    add_option_rows(p_audit, "audit")

    p_run = add_parser(
        "run", help="A/B-evaluate one or more skills", formatter_class=_Formatter,
        epilog=RUN_EPILOG + "\n" + config_help() if command in (None, "run") else RUN_EPILOG,
        description="Run every case of each suite with and without the skill, grade both arms,\n"
                    "and report the lift with its evidence.")
    add_run_arguments(p_run, "run")
    if command == "run":
        apply_run_config(p_run)

    p_ablate = add_parser(
        "ablate", help="which sections and bundled files of a skill carry its lift", formatter_class=_Formatter,
        description="Run the suite under the full skill and under each variant with one part left out (a\n"
                    "SKILL.md section, or a bundled file no grader calls); each part is load-bearing,\n"
                    "dead weight or harmful, by the lift's own paired test, Holm-corrected over the parts.",
        epilog="examples:\n  skillab ablate examples/changelog-entry --adapter mock\n"
               "  skillab ablate skills/my-skill --model claude-sonnet-5-5 --runs 3 --max-cost-usd 5 --dry-run\n\n"
               "exit codes:\n  0  measured (or planned, with --dry-run)\n  2  usage or input error, before "
               "any case runs\n  130  interrupted")
    add_run_arguments(p_ablate, "ablate")
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
    add_option_rows(p_report, "report")

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
    add_option_rows(p_regrade, "regrade")

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
    add_option_rows(p_merge, "merge")

    p_export = add_parser("export", help="write each case and arm of a suite as a Harbor task")
    p_export.add_argument("--harbor", type=Path, required=True, metavar="DIR")
    p_export.add_argument("paths", nargs="+", type=Path, metavar="PATH")
    add_option_rows(p_export, "export")
    p_import = add_parser("import", help="read a Harbor job's trials into a results document")
    p_import.add_argument("--harbor", type=Path, required=True, metavar="JOB_DIR")
    p_import.add_argument("--tasks", type=Path, metavar="DIR", help="the export directory, when the job moved")
    add_option_rows(p_import, "import")

    p_route = add_parser("route", help="the routing diff: the candidate among a catalogue of skills, per agent",
                         formatter_class=_Formatter,
                         description="What adding or editing a skill does to the agent's choices across a "
                                     "catalogue of skills: what it steals and loses, with error control.",
                         epilog=ROUTE_EPILOG)
    add_route_arguments(p_route)
    add_option_rows(p_route, "route")

    add_cache_parser(add_parser("cache", help="list or clear the without-skill baseline cache",
                                formatter_class=_Formatter), _Formatter, with_config=command == "cache")

    p_serve = add_parser("serve-local", help="serve a small real model on 127.0.0.1 for skillab run (no key, "
                                             "offline once installed)", formatter_class=_Formatter)
    if isinstance(p_serve, argparse.ArgumentParser):
        from .commands.serve_local import add_serve_local_arguments

        add_serve_local_arguments(p_serve)

    p_budget = add_parser("budget", help="serve one cost cap, rate and back-off for every shard of a run",
                          formatter_class=_Formatter)
    if isinstance(p_budget, argparse.ArgumentParser):
        from .commands.budget import add_budget_arguments

        add_budget_arguments(p_budget)

    describe_action(add_parser("action", help="the GitHub Action entrypoint (reads INPUT_* variables)",
                               formatter_class=_Formatter))
    return parser


def add_run_arguments(p_run: argparse.ArgumentParser, command: Command,
                      options: tuple[Option, ...] = OPTIONS) -> None:
    p_run.add_argument("paths", nargs="+", type=Path, metavar="PATH",
                       help="suites (a skill directory with SKILL.md and eval.yaml, or a suite "
                           "file), or folders: every suite below them")
    add_option_rows(p_run, command, options)


def add_option_rows(parser: argparse.ArgumentParser, command: Command, options: tuple[Option, ...] = OPTIONS) -> None:
    """Every option from its one row (``core.options``); a command takes only the rows naming it.
    For the commands that run agents the attributes of the rest sit at their defaults, for the
    code they share."""
    groups = {name: parser.add_argument_group(name) if name else parser for name in GROUPS}
    for option in options_for(command, options):
        groups[option.group].add_argument(*option.flags, **option.argparse_kwargs())
    if command in ("run", "ablate", "route"):
        parser.set_defaults(**not_taken(command, options))


def main(argv: Sequence[str] | None = None) -> int:
    from .sandbox.guard import guard_process

    if argv is None:  # a program of its own: a library caller's environment is its own business
        from .key_handoff import isolate_keys

        isolate_keys()
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
    except plugins.BrokenPlugin as exc:
        print(f"skillab: {exc}", file=sys.stderr)
        return EXIT_USAGE
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
