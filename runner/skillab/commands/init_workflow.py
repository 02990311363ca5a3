"""What ``skillab init`` writes at the repository root: the pull-request workflow, the ignore
entries for what a run leaves behind, and the eval.yaml JSON Schema editors read."""

from __future__ import annotations

from importlib.resources import files
from pathlib import Path

# A copy of the Action inside the repository (before a release exists, or to pin it).
VENDORED_ACTION = ".github/actions/skillab"
PLACEHOLDER_REF = "OWNER/skillab@v1"
# Where the JSON Schema goes, committed with the repository so any editor resolves it.
SCHEMA_PATH = ".github/skillab/eval-yaml.schema.json"
IGNORED = ("results.json", "results.checkpoint.jsonl", "results.arms.jsonl", ".skillab/", "skillab-results/")

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
    timeout-minutes: 30
    steps:
      - uses: actions/checkout@v4
      # The without-skill baselines and the trend history survive between runs: unchanged cases
      # are not paid for twice.
      - uses: actions/cache/restore@v4
        with:
          path: |
            .skillab/cache
            .skillab/history.jsonl
          key: skillab-${{{{ github.head_ref }}}}-${{{{ github.run_id }}}}
          restore-keys: |
            skillab-${{{{ github.head_ref }}}}-
            skillab-${{{{ github.base_ref }}}}-
{uses_note}      - uses: {uses}
        with:
          path: {path}
          model: claude-sonnet-5-5
          anthropic-api-key: ${{{{ secrets.ANTHROPIC_API_KEY }}}}
          openai-api-key: ${{{{ secrets.OPENAI_API_KEY }}}}   # the judge defaults to another family
          fail-on-verdict: fail,error
          cache-dir: .skillab/cache
          # Signs the cached baselines: the cache sits in the PR's checkout, where a PR could
          # otherwise commit a forged one. Without it, baselines are not reused between jobs.
          cache-key: ${{{{ secrets.SKILLAB_CACHE_KEY }}}}
          max-cost-usd: "5"   # a PR cannot spend more than this per run
      - uses: actions/cache/save@v4
        if: always()
        with:
          path: |
            .skillab/cache
            .skillab/history.jsonl
          key: skillab-${{{{ github.head_ref }}}}-${{{{ github.run_id }}}}
      - uses: actions/upload-artifact@v4
        if: always()
        with:
          name: skillab-results
          path: skillab-results/
"""

PLACEHOLDER_NOTE = """\
      # OWNER/skillab: the GitHub repository you take skillab from (for example acme/skillab),
      # at a release tag (@v1) or a commit SHA. Before a release, vendor it instead: copy the
      # skillab repository to .github/actions/skillab and write `uses: ./.github/actions/skillab`
      # (skillab init --action-ref writes either for you; docs/action.md in skillab: "Which uses: line").
"""
VENDORED_NOTE = """\
      # The Action vendored in this repository (a copy of the skillab repository).
"""


def action_ref(given: str | None, root: Path) -> str:
    """``--action-ref``; else the vendored copy when the repository has one; else the placeholder."""
    if given:
        return given
    if (root / VENDORED_ACTION / "action.yml").is_file():
        return f"./{VENDORED_ACTION}"
    return PLACEHOLDER_REF


def workflow(uses: str, path: str) -> str:
    note = PLACEHOLDER_NOTE if uses == PLACEHOLDER_REF else VENDORED_NOTE if uses.startswith("./") else ""
    return WORKFLOW.format(uses=uses, uses_note=note, path=path)


def schema_text() -> str:
    """The eval.yaml JSON Schema that ships with skillab (the one ``validate`` checks against)."""
    return (files("skillab.formats.eval_yaml") / "schemas" / "eval-yaml.schema.json").read_text(encoding="utf-8")


def missing_ignores(gitignore: Path) -> list[str]:
    """The ignore entries a run's leftovers need that ``gitignore`` lacks."""
    have = set(gitignore.read_text(encoding="utf-8").split("\n")) if gitignore.is_file() else set()
    return [entry for entry in IGNORED if entry not in have and entry.rstrip("/") not in have]


def append_ignores(gitignore: Path, entries: list[str]) -> None:
    text = gitignore.read_text(encoding="utf-8") if gitignore.is_file() else ""
    lead = "" if not text or text.endswith("\n") else "\n"
    gitignore.write_text(text + lead + "# skillab: what a run leaves behind\n" + "\n".join(entries) + "\n",
                         encoding="utf-8")
