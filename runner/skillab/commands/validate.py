"""``skillab validate PATH...``: parse each suite strictly and load its skill; nothing runs."""

from __future__ import annotations

import argparse
import sys

from ..core.wording import counted
from ..errors import EXIT_OK, EXIT_USAGE, SkillabError, SuiteError
from .targets import suite_targets


def cmd_validate(args: argparse.Namespace) -> int:
    from ..skill import load_skill
    from ..suite import load_suite

    failed = False
    for path in suite_targets(args.paths, args.suite_format):
        try:
            suite = load_suite(path, format=args.suite_format)
            # The skill `run` would load, for a suite file as for its folder: the two never
            # disagree on a path. Imported formats may keep it elsewhere (SkillsBench:
            # environment/skills/).
            skill_warnings = load_skill(suite.skill_dir or suite.path.parent).warnings
            triggers = trigger_set_size(suite)
            check_own_mock_script(path, suite)
        except SuiteError as exc:
            failed = True
            for issue in exc.issues:
                print(f"error: {issue}", file=sys.stderr)
            continue
        except SkillabError as exc:
            failed = True
            print(f"error: {exc}", file=sys.stderr)
            continue
        graded = sum(1 for c in suite.cases if not c.trigger_only)
        sets = f", {triggers} trigger-set queries" if triggers else ""
        print(f"ok: {suite.path} ({counted(graded, 'graded case')}, {len(suite.cases) - graded} trigger-only{sets})")
        from ..suite.shell_syntax import shell_syntax_warnings

        for warning in (*suite.warnings, *skill_warnings, *shell_syntax_warnings(suite)):
            print(f"warning: {warning}", file=sys.stderr)
        print_audit(suite)
        for case in suite.cases:
            if case.unsupported:
                print(f"note: case {case.name} is unsupported and will be recorded as an error: "
                      f"{case.unsupported}")
                if case.image is not None and case.image.dockerfile is not None and not case.unsupported_in_image:
                    print(f"note: case {case.name} runs with --sandbox image (built from {case.image.dockerfile})")
    return EXIT_USAGE if failed else EXIT_OK


def print_audit(suite) -> None:
    """The audit's section: its findings above ``low`` one per line, the rest counted (``skillab
    audit`` lists them all). Nothing here fails validation; ``--max-leaks`` is the gate."""
    from ..skill import load_skill
    from ..suite_audit import audit_suite

    block = audit_suite(suite, load_skill(suite.skill_dir or suite.path.parent))
    shown = [f for f in block.findings if f.severity != "low"]
    for finding in shown:
        print(f"audit: {finding.one_line()}")
    if len(block.findings) > len(shown):
        print(f"audit: {len(block.findings) - len(shown)} low findings — `skillab audit {suite.path}` lists them")


def check_own_mock_script(path, suite) -> None:
    """The skill's own mock-responses.yaml, checked as ``run --adapter mock`` checks it: a case
    renamed in the suite but not in the script would pass here and stop the mock run."""
    from ..skill import load_skill
    from ..suite.mock_script import MOCK_RESPONSES_FILE, check_case_names, scripted_names

    script = (path if path.is_dir() else path.parent) / MOCK_RESPONSES_FILE
    if script.is_file():
        check_case_names(script, scripted_names(suite, load_skill(suite.skill_dir or suite.path.parent)))


def trigger_set_size(suite) -> int:
    """How many queries the suite's trigger set files hold (they are checked on the way)."""
    from ..suite.trigger_sets import trigger_files

    directories = [suite.path.parent] + ([suite.skill_dir] if suite.skill_dir else [])
    files = trigger_files(*directories)
    if not files:
        return 0
    from ..suite.trigger import load_trigger_file

    return sum(len(load_trigger_file(path)) for path in files)
