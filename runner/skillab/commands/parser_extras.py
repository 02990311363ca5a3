"""Parts of the command line that live beside ``cli.build_parser``: the parser that suggests the
nearest option for a misspelt one, the run options that choose cases by pattern, last failures
or file changes, the ``cache`` command's parser, and the help texts built from other modules."""

from __future__ import annotations

import argparse
import re
from pathlib import Path
from typing import Any


class SuggestingParser(argparse.ArgumentParser):
    """argparse, suggesting the nearest option for a misspelt one (``--adpater``)."""

    def error(self, message: str) -> Any:
        unknown = re.search(r"unrecognized arguments: (.*)", message)
        if unknown:
            import difflib  # a misspelt flag's path only

            # The top parser reports a subcommand's leftovers: look in every built subparser too.
            parsers = [self, *(p for a in self._actions if isinstance(a, argparse._SubParsersAction)
                               for p in a.choices.values())]
            known = [o for p in parsers for action in p._actions for o in action.option_strings
                     if o.startswith("--")]
            for word in unknown.group(1).split():
                close = difflib.get_close_matches(word.split("=", 1)[0], known, n=1, cutoff=0.7)
                if word.startswith("--") and close:
                    message += f" (did you mean {close[0]}?)"
                    break
        super().error(message)


def add_cache_parser(parser: Any, formatter: Any, *, with_config: bool = False) -> None:
    """``skillab cache``'s description and its ``list`` / ``clear`` actions (``parser`` may be
    the stand-in of a command not being run: then nothing is built)."""
    if not isinstance(parser, argparse.ArgumentParser):
        return
    from .cache import add_cache_arguments

    parser.description = "The baselines `skillab run` reuses: see them by skill, or remove them."
    parser.epilog = ("examples:\n  skillab cache list\n  skillab cache clear --skill my-skill\n"
                     "  skillab cache clear --expired\n\nexit codes:\n  0  listed or cleared\n"
                     "  2  a bad flag, or --cache-dir is a file")
    add_cache_arguments(parser, formatter, with_config=with_config)


def config_help() -> str:
    from .config_file import help_text

    return help_text()


def action_epilog() -> str:
    """``skillab action --help``: every input with its variable and default, and the exit codes."""
    from ..github.inputs import INPUTS

    lines = ["inputs (docs/action.md, Inputs):"]
    for spec in INPUTS:
        default = spec.action_default
        lines.append(f"  {spec.name:<24} {spec.env_name}" + (f" (default {default})" if default else ""))
    return "\n".join([*lines, "", "exit codes:", "  0    every suite ran and no gate failed",
                      "  1    a gate failed (fail-on-verdict, min-delta-pts, trigger gates, max-cost-usd)",
                      "  2    an input or a suite is invalid, or a key is missing",
                      "  130  cancelled (the job was stopped): the cases that finished are kept"])


def add_init_arguments(parser: Any) -> None:
    """``skillab init``'s help and options (nothing when the command is not being run)."""
    if not isinstance(parser, argparse.ArgumentParser):
        return
    parser.description = (
        "Write SKILL.md (if absent), eval.yaml and mock-responses.yaml in DIR; at the repository "
        "root, .github/workflows/skillab.yml and the eval.yaml JSON Schema (once, shared by every "
        "skill) and .gitignore entries for what a run leaves. Ready for `skillab validate` and a "
        "mock run. Existing files are never overwritten.")
    parser.epilog = ("examples:\n  skillab init skills/my-skill\n  skillab validate skills/my-skill && "
                     "skillab run skills/my-skill --adapter mock\n\nexit codes:\n  0  written\n"
                     "  2  DIR is a file, or its eval.yaml, mock-responses.yaml or SKILL.md already exists")
    parser.add_argument("directory", type=Path, nargs="?", default=Path("."), metavar="DIR",
                        help="the skill directory (default: the current directory)")
    parser.add_argument("--name", help="the skill's name (default: DIR's name)")
    parser.add_argument("--workflow-root", type=Path, metavar="DIR",
                        help="repository root for .github/workflows (default: the git root above DIR, "
                             "else the current directory, else DIR's parent)")
    parser.add_argument("--action-ref", metavar="REF",
                        help="what the workflow's `uses:` says: OWNER/skillab@TAG_OR_SHA, or "
                             "./PATH for a vendored copy (default: ./.github/actions/skillab when "
                             "that copy exists, else OWNER/skillab@v1 to fill in)")


def describe_action(parser: Any) -> None:
    """``skillab action --help``: where inputs come from, every input, the exit codes."""
    if not isinstance(parser, argparse.ArgumentParser):
        return
    parser.description = ("Run as the GitHub Action: each input comes from its INPUT_<NAME> variable "
                          "(upper case, hyphens kept), as GitHub sets them from the workflow's `with:`. "
                          "Outputs go to $GITHUB_OUTPUT, the report to the PR comment and "
                          "$GITHUB_STEP_SUMMARY.")
    parser.epilog = action_epilog()


def apply_run_config(parser: argparse.ArgumentParser) -> None:
    """The config file's values as ``run``'s defaults (``commands.config_file``)."""
    from .config_file import apply_config, find_config

    apply_config(parser, find_config())


def finish_run_config(args: argparse.Namespace) -> None:
    if getattr(args, "config_file", None) is not None:
        from .config_file import finish

        finish(args)


def add_route_arguments(parser: argparse.ArgumentParser) -> None:
    """``route``'s own arguments; the agent's and the plan's come from their rows
    (``cli.add_option_rows``)."""
    from ..core.choices import non_negative_int, share

    parser.add_argument("skill", type=Path, metavar="SKILL_DIR", help="the candidate skill (SKILL.md and its trigger sets)")
    parser.add_argument("--catalogue", type=Path, action="append", default=[], metavar="DIR",
                        help="a folder of skills (searched for folders holding SKILL.md: plain skill folders, "
                             "plugins' skills/, a marketplace snapshot); repeatable")
    parser.add_argument("--installed", action="store_true",
                        help="add the skills this user has installed for the agent CLIs (~/.claude/skills, "
                             "~/.claude/plugins, ~/.agents/skills, ~/.codex/skills, ~/.gemini/skills)")
    parser.add_argument("--output", type=Path, default=Path("route.json"), metavar="PATH",
                        help="the routing document (default route.json)")
    parser.add_argument("--max-stolen", type=non_negative_int, metavar="N",
                        help="exit 1 when an agent's candidate steals more than N queries beyond noise")
    parser.add_argument("--min-route-accuracy", type=share, metavar="R",
                        help="exit 1 when the candidate's own queries go to it less often than R")
