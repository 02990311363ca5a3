"""``--against REF_OR_DIR``: the original skill from a directory or from a real git repository."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from skillab.cli import main
from skillab.engine.against import OriginalMissing, _git_env, open_original, original_exists
from skillab.errors import SkillError, UsageError

from ..skillgen import answers, grep_case, make_skill

V1 = "Version one: always answer with the word SKILLED."
V2 = "Version two: answer plainly."


def git(cwd: Path, *args: str) -> str:
    env = {"PATH": os.environ["PATH"], "HOME": str(cwd), "GIT_CONFIG_NOSYSTEM": "1",
           "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com",
           "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.com"}
    done = subprocess.run(["git", *args], cwd=cwd, env=env, capture_output=True, text=True, check=True)
    return done.stdout.strip()


def commit_all(repo: Path, message: str) -> str:
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", message)
    return git(repo, "rev-parse", "HEAD")


def two_version_repo(root: Path, cases=None, responses=None) -> tuple[Path, str, str]:
    """A repository whose skills/demo-skill has two commits: V1 (with a template), then V2."""
    repo = root / "repo"
    repo.mkdir(parents=True)
    git(repo, "init", "-q", "-b", "main")
    skill = make_skill(repo / "skills", cases or [grep_case("a")], body=V1, responses=responses,
                       files={"templates/old.md": "old template\n", "scripts/grade.sh": "exit 0\n"})
    (repo / "README.md").write_text("skills\n")
    first = commit_all(repo, "skill v1")
    make_skill(repo / "skills", cases or [grep_case("a")], body=V2, responses=responses,
               files={"scripts/grade.sh": "exit 0\n"})
    (skill / "templates" / "old.md").unlink()
    second = commit_all(repo, "skill v2")
    return skill, first, second


def test_a_directory_with_skill_md_is_the_original(tmp_path):
    old = make_skill(tmp_path / "old", [], body=V1)
    new = make_skill(tmp_path / "new", [], body=V2)
    with open_original(str(old), new) as original:
        assert original.source == "directory" and original.commit is None
        assert original.skill.body == V1
        assert original.ref().label == str(old)


def test_a_git_ref_materializes_the_skill_as_that_commit_had_it(tmp_path):
    skill, first, _ = two_version_repo(tmp_path)
    with open_original("HEAD~1", skill) as original:
        root = original.skill.root
        assert original.source == "git" and original.commit == first
        assert original.skill.body == V1
        assert (root / "templates" / "old.md").read_text() == "old template\n"
        assert set(original.skill.bundled) == {"templates/old.md", "scripts/grade.sh"}
        assert original.label == f"HEAD~1 ({first[:12]})"
    assert not root.exists()  # the extracted tree lives only as long as the block
    assert (skill / "SKILL.md").read_text().strip().endswith(V2)  # the work tree is untouched


@pytest.mark.parametrize("ref", ["v1", "old-branch", "FULL_SHA"])
def test_tags_branches_and_full_shas_resolve(tmp_path, ref):
    skill, first, _ = two_version_repo(tmp_path)
    repo = skill.parent.parent
    git(repo, "tag", "v1", first)
    git(repo, "branch", "old-branch", first)
    with open_original(first if ref == "FULL_SHA" else ref, skill) as original:
        assert original.commit == first and original.skill.body == V1
        assert original.label == (first if ref == "FULL_SHA" else f"{ref} ({first[:12]})")


def test_a_skill_at_the_top_of_the_repository_works(tmp_path):
    repo = tmp_path / "top"
    make_skill(tmp_path, [], name="top", body=V1)
    git(repo, "init", "-q", "-b", "main")
    first = commit_all(repo, "v1")
    make_skill(tmp_path, [], name="top", body=V2)
    commit_all(repo, "v2")
    with open_original(first, repo) as original:
        assert original.skill.body == V1


def test_a_skill_the_ref_did_not_have_is_a_new_skill(tmp_path):
    skill, first, _ = two_version_repo(tmp_path)
    repo = skill.parent.parent
    newer = make_skill(repo / "skills", [], name="newer", body=V2)
    commit_all(repo, "add newer")
    with pytest.raises(OriginalMissing, match=r"skills/newer does not exist at .*new skill"):
        with open_original(first, newer):
            pass
    assert original_exists(first, newer) is False
    assert original_exists(first, skill) is True


def test_a_skill_whose_directory_was_renamed_is_compared_with_its_old_directory(tmp_path):
    # A pull request that renames skills/demo-skill to skills/changelog-writer (and edits it)
    # is an edit of an existing skill, not a new one: its original is the old directory.
    skill, first, _ = two_version_repo(tmp_path)
    repo = skill.parent.parent
    git(repo, "mv", "skills/demo-skill", "skills/changelog-writer")
    moved = repo / "skills" / "changelog-writer"
    (moved / "SKILL.md").write_text((moved / "SKILL.md").read_text().replace(
        "name: demo-skill", "name: changelog-writer"))
    commit_all(repo, "rename")
    with open_original(first, moved) as original:
        assert original.commit == first and original.skill.body == V1
        assert original.skill.name == "demo-skill" and original.renamed_from == "skills/demo-skill"
        assert original.ref().renamed_from == "skills/demo-skill"
        assert original.label == f"{first}, at skills/demo-skill"
        assert (original.skill.root / "templates" / "old.md").read_text() == "old template\n"
    # A skill only staged by ``git mv`` (not yet committed) is followed too.
    git(repo, "mv", "skills/changelog-writer", "skills/renamed-again")
    assert original_exists(first, repo / "skills" / "renamed-again") is True


def test_an_unknown_ref_is_a_usage_error_that_says_what_to_do(tmp_path):
    skill, _, _ = two_version_repo(tmp_path)
    with pytest.raises(UsageError) as caught:
        with open_original("no-such-branch", skill):
            pass
    message = str(caught.value)
    assert "'no-such-branch'" in message and "fetching it from origin failed" in message
    assert "git fetch origin REF" in message


def test_an_option_shaped_ref_is_refused_before_git_sees_it(tmp_path):
    skill, _, _ = two_version_repo(tmp_path)
    with pytest.raises(UsageError, match="not a directory or a git ref"):
        with open_original("--output=/tmp/x", skill):
            pass


def test_outside_a_repository_a_non_directory_is_explained(tmp_path):
    skill = make_skill(tmp_path / "plain", [], body=V2)
    with pytest.raises(UsageError, match="not in a git repository"):
        with open_original("main", skill):
            pass
    (tmp_path / "empty").mkdir()
    with pytest.raises(UsageError, match="directory without SKILL.md"):
        with open_original(str(tmp_path / "empty"), skill):
            pass


def test_a_broken_original_skill_md_is_a_skill_error(tmp_path):
    old = tmp_path / "old"
    old.mkdir()
    # Malformed YAML reads leniently, as the reference runner reads it; a parser bound does not.
    (old / "SKILL.md").write_text("---\nname: " + "9" * 4400 + "\n---\nbody\n")
    new = make_skill(tmp_path / "new", [], body=V2)
    with pytest.raises(SkillError):
        with open_original(str(old), new):
            pass


def shallow_clone(tmp_path: Path) -> tuple[Path, str, str]:
    """A depth-1 clone of a two-commit origin: the first commit is not in the clone."""
    skill, first, second = two_version_repo(tmp_path / "upstream")
    origin = skill.parent.parent
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", "--depth=1", f"file://{origin}", str(clone))
    assert git(clone, "rev-parse", "--is-shallow-repository") == "true"
    return clone / "skills" / "demo-skill", first, second


def test_a_shallow_checkout_fetches_the_missing_commit_once(tmp_path):
    skill, first, _ = shallow_clone(tmp_path)
    clone = skill.parent.parent
    assert subprocess.run(["git", "cat-file", "-e", first], cwd=clone).returncode != 0
    with open_original(first, skill) as original:
        assert original.commit == first and original.skill.body == V1


def test_a_shallow_checkout_whose_origin_is_gone_gets_a_clear_error(tmp_path):
    skill, first, _ = shallow_clone(tmp_path)
    git(skill.parent.parent, "remote", "set-url", "origin", f"file://{tmp_path}/nowhere")
    with pytest.raises(UsageError, match=rf"--against '{first}': no such directory, and not a commit"):
        with open_original(first, skill):
            pass


def test_git_never_sees_credentials_from_the_environment(monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-api03-" + "S" * 40)
    monkeypatch.setenv("GITHUB_TOKEN", "ghs_" + "T" * 36)
    monkeypatch.setenv("INPUT_GITHUB-TOKEN", "ghs_" + "U" * 36)
    env = _git_env()
    assert not {"ANTHROPIC_API_KEY", "GITHUB_TOKEN", "INPUT_GITHUB-TOKEN"} & set(env)
    assert env["GIT_TERMINAL_PROMPT"] == "0" and "PATH" in env


# -- through the CLI -------------------------------------------------------------------------


def test_skillab_run_against_a_ref_reports_the_commit(tmp_path, capsys):
    responses = {"a": {**answers("SKILLED", "plain"), "original": "plain"}}
    skill, first, _ = two_version_repo(tmp_path, responses=responses)
    out = tmp_path / "r.json"
    code = main(["run", str(skill), "--adapter", "mock", "--against", "HEAD~1", "--quiet",
                 "--no-cache", "--no-history", "--output", str(out)])
    stdout = capsys.readouterr().out
    assert code == 0
    comparison = json.loads(out.read_text())["comparison"]
    assert comparison["original"]["source"] == "git" and comparison["original"]["commit"] == first
    assert comparison["rescued_by_edit"] == ["a"] and comparison["broken_by_edit"] == []
    assert f"candidate vs original (HEAD~1 ({first[:12]}))" in stdout


def test_skillab_run_against_an_unknown_ref_exits_2_without_a_traceback(tmp_path, capsys):
    skill, _, _ = two_version_repo(tmp_path)
    code = main(["run", str(skill), "--adapter", "mock", "--against", "nope", "--quiet",
                 "--no-cache", "--no-history", "--output", str(tmp_path / "r.json")])
    err = capsys.readouterr().err
    assert code == 2
    assert err.startswith("skillab: --against 'nope': no such directory") and "Traceback" not in err
    assert not (tmp_path / "r.json").exists()  # refused before any case ran


def test_links_out_of_the_ref_are_left_out_not_a_traceback(tmp_path, capsys):
    # A skill that once held an absolute link (and one climbing out of the checkout): the
    # original is extracted without them, as the candidate's own links are never staged.
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    skill = make_skill(repo / "skills", [grep_case("a")], body=V1, responses={"a": answers("SKILLED", "no")},
                       files={"notes.md": "kept\n"})
    (skill / "passwd").symlink_to("/etc/passwd")
    (skill / "up").symlink_to("../../../../outside")
    (skill / "inside").symlink_to("notes.md")
    first = commit_all(repo, "v1 with links")
    for link in ("passwd", "up", "inside"):
        (skill / link).unlink()
    make_skill(repo / "skills", [grep_case("a")], body=V2, responses={"a": answers("SKILLED", "no")})
    commit_all(repo, "v2")
    with open_original("HEAD~1", skill) as original:
        root = original.skill.root
        assert original.commit == first and original.skill.body == V1
        assert (root / "notes.md").read_text() == "kept\n"
        assert not (root / "passwd").is_symlink() and not (root / "up").is_symlink()
    out = tmp_path / "r.json"
    code = main(["run", str(skill), "--adapter", "mock", "--against", "HEAD~1", "--no-cache", "--quiet",
                 "--no-history", "--output", str(out)])
    assert code == 0, capsys.readouterr()
    assert json.loads(out.read_text())["comparison"]["original"]["commit"] == first


def test_under_the_mock_the_original_arm_answers_the_base_commits_script(tmp_path, capsys):
    """A PR that edits the mock script to break a case: the original arm reads the script as the
    base commit had it, so the comparison shows the break instead of "no case changed"."""
    skill, first, _ = two_version_repo(tmp_path, cases=[grep_case("a"), grep_case("b")],
                                       responses={"a": answers("SKILLED", "plain"), "b": answers("SKILLED", "plain")})
    (skill / "mock-responses.yaml").write_text(json.dumps({"a": answers("SKILLED", "plain"),
                                                           "b": answers("plain now", "plain")}))
    commit_all(skill.parent.parent, "the edit breaks b")
    out = tmp_path / "r.json"
    code = main(["run", str(skill), "--adapter", "mock", "--against", first, "--quiet",
                 "--no-cache", "--no-history", "--output", str(out)])
    capsys.readouterr()
    assert code in (0, 1)
    doc = json.loads(out.read_text())
    # One run of one case is no evidence that the edit broke it: the flip is shown, within noise.
    assert doc["comparison"]["changed_within_noise"] == ["b"] and doc["comparison"]["broken_by_edit"] == []
    assert not any("means nothing" in w for w in doc["warnings"])


def test_under_the_mock_an_original_without_a_script_says_the_comparison_means_nothing(tmp_path, capsys):
    original = make_skill(tmp_path / "before", [grep_case("a")], body=V1)
    skill = make_skill(tmp_path / "after", [grep_case("a")], body=V2, responses={"a": answers("SKILLED", "plain")})
    out = tmp_path / "r.json"
    main(["run", str(skill), "--adapter", "mock", "--against", str(original), "--quiet",
          "--no-cache", "--no-history", "--output", str(out)])
    capsys.readouterr()
    warnings = json.loads(out.read_text())["warnings"]
    assert any("the comparison with the original means nothing" in w for w in warnings), warnings


def test_fail_on_broken_gates_the_cases_the_edit_broke_beyond_noise(tmp_path, capsys):
    """The comment's headline names a case broken beyond noise; --fail-on-broken makes the
    check say the same (exit 1), and without it the run's other gates decide."""
    skill, first, _ = two_version_repo(tmp_path, cases=[grep_case("a"), grep_case("b")],
                                       responses={"a": answers("SKILLED", "plain"), "b": answers("SKILLED", "plain")})
    (skill / "mock-responses.yaml").write_text(json.dumps({"a": answers("SKILLED", "plain"),
                                                           "b": answers("plain now", "plain")}))
    commit_all(skill.parent.parent, "the edit breaks b")
    args = ["run", str(skill), "--adapter", "mock", "--against", first, "--runs", "5", "--quiet",
            "--no-cache", "--no-history", "--output", str(tmp_path / "r.json")]
    without_gate = main(args)
    assert "the edit broke" not in capsys.readouterr().err
    assert json.loads((tmp_path / "r.json").read_text())["comparison"]["broken_by_edit"] == ["b"]
    assert main([*args, "--fail-on-broken"]) == 1
    err = capsys.readouterr().err
    assert "gate failed: demo-skill: the edit broke 1 case beyond noise (b)" in err
    assert without_gate == 0
