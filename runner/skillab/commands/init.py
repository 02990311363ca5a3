"""``skillab init [DIR]``: a starting eval suite for a skill, scripted mock answers that show
the loop working offline, and the pull-request workflow. Never overwrites a file."""

from __future__ import annotations

import argparse
import re
import shlex
import subprocess
from pathlib import Path

from ..errors import EXIT_OK, UsageError
from .run import say

SKILL_MD = """\
---
name: {name}
description: Describe when the agent should use this skill, in one sentence.
---
Write the instructions the agent should follow here. For this starter suite: answer with a
heading "## Summary" followed by exactly three bullet points.
"""

EVAL_YAML = """\
# A/B suite for {name} (eval.yaml, spec schema rev 2). Each case runs twice: with the skill and
# without it. A validator is a shell command run in the arm's workspace (the answer is in
# response.txt); an expectation is judged by a model (the mock judge with --adapter mock).
#   skillab validate {rel}
#   skillab run {rel} --adapter mock        (scripted answers from mock-responses.yaml)
#   skillab run {rel} --model claude-sonnet-4-5 --dry-run

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

WORKFLOW = """\
# skillab on pull requests: runs the suites a PR touches with and without the skill, keeps one
# comment on the PR up to date, and fails the check on a fail/error verdict.
name: skillab

on:
  pull_request:

permissions:
  contents: read
  pull-requests: write   # the PR comment

concurrency:
  group: skillab-${{{{ github.event.pull_request.number }}}}
  cancel-in-progress: true

jobs:
  skillab:
    runs-on: ubuntu-latest
    steps:
      - uses: actions/checkout@v4
      - uses: OWNER/skillab@v1
        with:
          path: {path}
          model: claude-sonnet-4-5
          anthropic-api-key: ${{{{ secrets.ANTHROPIC_API_KEY }}}}
          openai-api-key: ${{{{ secrets.OPENAI_API_KEY }}}}   # the judge defaults to another family
          fail-on-verdict: fail,error
          # To reuse baselines between runs (see skillab-pr.yml): `cache-dir: .skillab/cache`
          # kept by actions/cache, and `cache-key: ${{{{ secrets.SKILLAB_CACHE_KEY }}}}`, which
          # signs the entries so a pull request cannot commit a forged baseline.
      - uses: actions/upload-artifact@v4
        if: always()
        with:
          name: skillab-results
          path: skillab-results/
"""


def cmd_init(args: argparse.Namespace) -> int:
    directory: Path = args.directory
    if directory.exists() and not directory.is_dir():
        raise UsageError(f"{directory}: is a file; give the skill's directory")
    name = args.name or _slug(directory.resolve().name)
    root = args.workflow_root or _git_root(directory) or directory
    rel_skill = _relative(directory, root)
    files = {
        directory / "eval.yaml": EVAL_YAML.format(name=name, rel=directory),
        directory / "mock-responses.yaml": MOCK_RESPONSES.format(rel=directory),
        root / ".github" / "workflows" / "skillab.yml": WORKFLOW.format(path=rel_skill),
    }
    if not (directory / "SKILL.md").exists():
        files = {directory / "SKILL.md": SKILL_MD.format(name=name), **files}
    taken = [str(p) for p in files if p.exists()]
    if taken:
        raise UsageError(f"{', '.join(taken)}: already exists; skillab init never overwrites "
                         "(move it aside or pick another DIR)")
    for path, text in files.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        say(f"wrote {path}")
    quoted = shlex.quote(str(directory))
    say(f"next: skillab validate {quoted} && skillab run {quoted} --adapter mock")
    return EXIT_OK


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
