"""``skillab init [DIR]``: a starting eval suite for a skill, scripted mock answers that show
the loop working offline, and the pull-request workflow. Never overwrites a file."""

from __future__ import annotations

import argparse
import re
import shlex
import subprocess
from pathlib import Path

from ..errors import EXIT_OK, UsageError
from .console import say
from .init_workflow import (
    PLACEHOLDER_REF,
    SCHEMA_PATH,
    action_ref,
    append_ignores,
    missing_ignores,
    schema_text,
    workflow,
)

SKILL_MD = """\
---
name: {name}
description: Describe when the agent should use this skill, in one sentence.
---
Write the instructions the agent should follow here. For this starter suite: answer with a
heading "## Summary" followed by exactly three bullet points.
"""

EVAL_YAML = """\
# yaml-language-server: $schema={schema}
# A/B suite for {name} (eval.yaml, spec schema rev 2). Each case runs twice: with the skill and
# without it. A validator is a shell command run in the arm's workspace (the answer is in
# response.txt); an expectation is judged by a model (the mock judge with --adapter mock).
#   skillab validate {rel}
#   skillab run {rel} --adapter mock        (scripted answers from mock-responses.yaml)
#   skillab run {rel} --model claude-sonnet-5-5 --dry-run

cases:
  - name: summary-format
    description: The skill's output convention, checked by a shell command.
    prompt: |
      Summarise this change for a release note: the export command gained a --since option.
    validators:
      - label: has a Summary heading
        cmd: grep -q '^## Summary' response.txt
      - label: exactly three bullets
        cmd: test "$(grep -c '^- ' response.txt)" -eq 3

  - name: summary-content
    description: What the answer says, judged against plain-language expectations.
    prompt: |
      Summarise this change for a release note: daily digests now use the user's time zone.
    expectations:
      - "The answer mentions the 'time zone'."

  - name: routing-near-miss
    description: "Trigger-only (should the agent reach for this skill at all?): not run A/B."
    prompt: Write a haiku about autumn.
    should_trigger: false
"""

MOCK_RESPONSES = """\
# Scripted answers for `skillab run {rel} --adapter mock`. They show the loop working offline;
# the lift they produce is scripted, not measured. Keys must name cases in eval.yaml.
summary-format:
  with: |
    ## Summary
    - The export command has a new --since option.
    - It limits the export to records after a date.
    - Existing exports are unchanged.
  without: "The export command now supports a --since flag."
summary-content:
  with: |
    ## Summary
    - Daily digests are sent in each user's time zone.
    - Previously they were sent in UTC.
    - No action is needed.
  without: "Digests were fixed."
"""

def cmd_init(args: argparse.Namespace) -> int:
    directory: Path = args.directory
    if directory.exists() and not directory.is_dir():
        raise UsageError(f"{directory}: is a file; give the skill's directory")
    name = args.name or _slug(directory.resolve().name)
    root = args.workflow_root or _git_root(directory) or _outside_git_root(directory)
    uses = action_ref(args.action_ref, root)
    workflow_file = root / ".github" / "workflows" / "skillab.yml"
    schema = root / SCHEMA_PATH
    files = {
        directory / "eval.yaml": EVAL_YAML.format(name=name, rel=directory, schema=_relative_to(schema, directory)),
        directory / "mock-responses.yaml": MOCK_RESPONSES.format(rel=directory),
    }
    if not (directory / "SKILL.md").exists():
        files = {directory / "SKILL.md": SKILL_MD.format(name=name), **files}
    taken = [str(p) for p in files if p.exists()]
    if taken:
        raise UsageError(f"{', '.join(taken)}: already exists; skillab init never overwrites "
                         "(move it aside or pick another DIR)")
    # Shared by every skill of the repository: written once, kept after that.
    if not workflow_file.exists():
        files[workflow_file] = workflow(uses, _suites_path(directory, root))
    if not schema.exists():
        files[schema] = schema_text()
    for path, text in files.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        say(f"wrote {path}")
    if workflow_file not in files:
        say(f"kept {workflow_file}: {_coverage(workflow_file, directory, root)}")
    ignores = missing_ignores(root / ".gitignore")
    if ignores:
        append_ignores(root / ".gitignore", ignores)
        say(f"added {', '.join(ignores)} to {root / '.gitignore'}")
    if workflow_file in files and uses == PLACEHOLDER_REF:
        say(f"{workflow_file}: replace OWNER in `uses: {PLACEHOLDER_REF}` with the GitHub repository "
            "you take skillab from, or run init with --action-ref (docs/action.md: \"Which uses: line\")")
    quoted = shlex.quote(str(directory))
    say(f"next: skillab validate {quoted} && skillab run {quoted} --adapter mock")
    return EXIT_OK


def _outside_git_root(directory: Path) -> Path:
    """Outside git: the current directory when the skill is below it, else the skill's parent,
    never the skill folder itself (a .github/ there is not where GitHub looks)."""
    here = Path.cwd()
    try:
        directory.resolve().relative_to(here.resolve())
    except ValueError:
        return directory.parent
    return Path(".") if directory.resolve() != here.resolve() else directory.parent


def _suites_path(directory: Path, root: Path) -> str:
    """The Action's ``path``: the folder holding the skill, so the next skill beside it is found too."""
    return _relative(directory.parent if _relative(directory, root) != "." else directory, root)


def _coverage(workflow_file: Path, directory: Path, root: Path) -> str:
    """Whether the existing workflow's ``path`` reaches this skill."""
    import yaml

    try:
        steps = yaml.safe_load(workflow_file.read_text(encoding="utf-8"))["jobs"]
        paths = [str((step.get("with") or {}).get("path", ".")) for job in steps.values()
                 for step in job.get("steps", []) if "skillab" in str(step.get("uses", ""))]
    except (OSError, ValueError, TypeError, KeyError, AttributeError, yaml.YAMLError):
        return "it could not be read, so check that its `path:` reaches this skill"
    skill = _relative(directory, root)
    if any(p in (".", "") or skill == p or skill.startswith(p.rstrip("/") + "/") for p in paths):
        return "its `path:` already reaches this skill"
    return (f"its `path:` ({', '.join(paths) or 'none'}) does not reach {skill}: set it to a folder "
            "that holds both skills")


def _relative_to(target: Path, start: Path) -> str:
    import os

    return Path(os.path.relpath(target.resolve(), start.resolve())).as_posix()


def _slug(text: str) -> str:
    slug = re.sub(r"[^a-z0-9-]+", "-", text.lower()).strip("-")
    return slug or "my-skill"


def _git_root(directory: Path) -> Path | None:
    probe = directory if directory.is_dir() else directory.parent
    while not probe.exists():
        probe = probe.parent
    try:
        out = subprocess.run(["git", "-C", str(probe), "rev-parse", "--show-toplevel"],
                             capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return Path(out.stdout.strip()) if out.returncode == 0 and out.stdout.strip() else None


def _relative(directory: Path, root: Path) -> str:
    try:
        return directory.resolve().relative_to(root.resolve()).as_posix() or "."
    except ValueError:
        return "."
