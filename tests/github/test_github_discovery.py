"""Which suites run: all under the action's path, or those whose skill directory a PR touched."""

from __future__ import annotations

from pathlib import Path

import pytest

from skillab.errors import UsageError
from skillab.github.discovery import (
    PR_FILES_API_CAP,
    ChangedFile,
    find_suites,
    resolve_root,
    select_changed,
)

from ..skillgen import grep_case, make_skill


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    skills = tmp_path / "skills"
    make_skill(skills, [grep_case("a")], name="alpha", files={"scripts/grade.py": "print('ok')\n"})
    make_skill(skills, [grep_case("b")], name="beta")
    make_skill(tmp_path / ".claude" / "skills", [grep_case("c")], name="gamma")
    # A skill without a suite, a suite without a skill, and a vendored tree: none are suites.
    (skills / "no-suite").mkdir()
    (skills / "no-suite" / "SKILL.md").write_text("---\nname: no-suite\n---\nbody\n")
    (skills / "orphan").mkdir()
    (skills / "orphan" / "eval.yaml").write_text("cases: []\n")
    make_skill(tmp_path / "node_modules" / "pkg", [grep_case("d")], name="vendored")
    return tmp_path


def rels(suites) -> list[str]:
    return [s.rel_dir for s in suites]


def test_every_suite_under_the_root_is_found(repo):
    assert rels(find_suites(repo, repo)) == [".claude/skills/gamma", "skills/alpha", "skills/beta"]
    assert rels(find_suites(repo, resolve_root(repo, "skills"))) == ["skills/alpha", "skills/beta"]


def test_a_change_to_a_bundled_grader_selects_that_skill_only(repo):
    suites = find_suites(repo, repo)
    picked = select_changed(suites, [ChangedFile("skills/alpha/scripts/grade.py")], repo, repo)
    assert rels(picked.suites) == ["skills/alpha"]
    assert picked.notes == ()


def test_changes_outside_every_skill_select_nothing(repo):
    suites = find_suites(repo, repo)
    changed = [ChangedFile("README.md"), ChangedFile("skills/alphabet.txt"), ChangedFile("skills/no-suite/SKILL.md")]
    assert select_changed(suites, changed, repo, repo).suites == ()


def test_a_rename_selects_both_ends_and_a_deleted_skill_is_noted(repo):
    suites = find_suites(repo, repo)
    changed = [
        ChangedFile("skills/beta/notes.md", "renamed", previous_filename="skills/alpha/notes.md"),
        ChangedFile("skills/retired/SKILL.md", "removed"),
        ChangedFile("skills/retired/eval.yaml", "removed"),
        ChangedFile("skills/retired/scripts/check.py", "removed"),
    ]
    picked = select_changed(suites, changed, repo, repo)
    assert rels(picked.suites) == ["skills/alpha", "skills/beta"]
    assert picked.notes == ("Skill skills/retired is deleted in this pull request: skipped.",)


def test_a_skill_whose_suite_file_is_deleted_is_noted(repo):
    (repo / "skills" / "beta" / "eval.yaml").unlink()
    suites = find_suites(repo, repo)
    picked = select_changed(suites, [ChangedFile("skills/beta/eval.yaml", "removed")], repo, repo)
    assert picked.suites == ()
    assert picked.notes == ("skills/beta no longer holds a skill with a suite in this pull request: skipped.",)


def test_more_files_than_the_api_lists_runs_everything(repo):
    suites = find_suites(repo, repo)
    changed = [ChangedFile(f"docs/{i}.md") for i in range(PR_FILES_API_CAP)]
    picked = select_changed(suites, changed, repo, repo)
    assert picked.fell_back_to_all and len(picked.suites) == 3


def test_a_path_outside_the_repository_is_refused(repo):
    with pytest.raises(UsageError, match="inside the repository"):
        resolve_root(repo, "../elsewhere")
    with pytest.raises(UsageError, match="not a directory"):
        resolve_root(repo, "missing")


def test_from_api_reads_the_files_endpoint_shape():
    item = {"sha": "bbcd", "filename": "skills/b/SKILL.md", "status": "renamed", "additions": 1,
            "deletions": 0, "changes": 1, "previous_filename": "skills/a/SKILL.md"}
    change = ChangedFile.from_api(item)
    assert change.paths == ("skills/b/SKILL.md", "skills/a/SKILL.md")


EXAMPLES = Path(__file__).resolve().parent.parent.parent / "examples"


@pytest.fixture
def seed_repo(tmp_path: Path) -> Path:
    """The seed-format examples as a repository, plus stray files that only look like suites."""
    import shutil

    for name in ("task-suite", "ruby-skill-bench", "skillsbench-sales-report"):
        shutil.copytree(EXAMPLES / name, tmp_path / name)
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "task.md").write_text("# A to-do list, not a benchmark task\n")
    (tmp_path / "config").mkdir()
    (tmp_path / "config" / "criteria.json").write_text("{}\n")
    return tmp_path


def test_seed_format_suites_are_found_in_their_own_layouts(seed_repo):
    assert rels(find_suites(seed_repo, seed_repo)) == [
        "ruby-skill-bench/evals/skills/service-object/extract-order-total",
        "skillsbench-sales-report",
        "task-suite/task_suites/commit-message",
    ]


@pytest.mark.parametrize("changed, picked", [
    ("task-suite/skills/commit-message/SKILL.md", "task-suite/task_suites/commit-message"),
    ("ruby-skill-bench/skills/service-object/SKILL.md",
     "ruby-skill-bench/evals/skills/service-object/extract-order-total"),
    ("skillsbench-sales-report/environment/skills/finance-report/SKILL.md", "skillsbench-sales-report"),
    ("task-suite/task_suites/commit-message/fixtures/test_commit_json.py",
     "task-suite/task_suites/commit-message"),
])
def test_editing_a_seed_format_skill_runs_the_suite_that_evaluates_it(seed_repo, changed, picked):
    suites = find_suites(seed_repo, seed_repo)
    selection = select_changed(suites, [ChangedFile(changed)], seed_repo, seed_repo)
    assert rels(selection.suites) == [picked]
