"""Workspaces: path safety, staging, arm privacy, HOME/TMPDIR, withdraw/restore, cleanup."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from skillab.errors import SandboxError
from skillab.sandbox.workspace import Workspace, safe_join


@pytest.fixture
def workspace(tmp_path):
    ws = Workspace.create(tmp_path / "arms", "case-1 r0/with_skill")
    yield ws
    ws.cleanup()


@pytest.fixture
def outside(tmp_path):
    """A directory beside the workspaces, standing for anything else on the host."""
    path = tmp_path / "outside"
    path.mkdir()
    (path / "secret.txt").write_text("host secret")
    return path


@pytest.mark.parametrize(
    "rel",
    ["", "   ", ".", "./", "/etc/passwd", "//etc/passwd", "../x", "a/../../x", "a/../b",
     "a\\..\\b", "C:/x", "c:x", "a\0b"],
)
def test_safe_join_refuses_paths_that_could_leave_the_root(tmp_path, rel):
    with pytest.raises(SandboxError):
        safe_join(tmp_path, rel)


@pytest.mark.parametrize("rel, expected", [("a/b.txt", "a/b.txt"), ("./a", "a"), ("a//b/", "a/b")])
def test_safe_join_accepts_relative_paths(tmp_path, rel, expected):
    assert safe_join(tmp_path, rel) == tmp_path / expected


def test_safe_join_refuses_links_that_lead_out_but_not_links_that_stay_in(tmp_path, outside):
    root = tmp_path / "root"
    (root / "real").mkdir(parents=True)
    (root / "out").symlink_to(outside)
    (root / "dangling").symlink_to(outside / "not-yet")
    (root / "in").symlink_to(root / "real")
    for rel in ("out", "out/secret.txt", "out/new/file", "dangling"):
        with pytest.raises(SandboxError, match="symbolic link"):
            safe_join(root, rel)
    assert safe_join(root, "in/file") == root / "in" / "file"


def test_create_makes_private_distinct_directories(tmp_path):
    a = Workspace.create(tmp_path, "arm")
    b = Workspace.create(tmp_path, "arm")
    assert a.root != b.root and a.root.parent != b.root.parent
    for ws in (a, b):
        for path in (ws.root.parent, ws.root, ws.home, ws.tmp):
            assert stat.S_IMODE(path.stat().st_mode) == 0o700
        assert ws.home.parent == ws.root and ws.tmp.parent == ws.root


def test_one_arm_cannot_find_the_other_arms_files(tmp_path):
    a = Workspace.create(tmp_path, "case-with")
    b = Workspace.create(tmp_path, "case-without")
    b.write_files({"only-in-b.txt": "b's answer"})
    listing = a.run("ls -a ..; find ..", timeout_s=10)
    assert listing.completed and "workspace" in listing.stdout
    assert "only-in-b" not in listing.stdout
    assert b.root.parent.name not in listing.stdout


def test_home_and_tmpdir_are_inside_the_workspace(workspace):
    result = workspace.run('echo "$HOME"; echo "$TMPDIR"; mktemp; cd ~ && pwd -P', timeout_s=10)
    home, tmpdir, temp_file, home_real = result.stdout.split()
    assert Path(home) == workspace.home and Path(tmpdir) == workspace.tmp
    assert Path(temp_file).parent == workspace.tmp
    assert Path(home_real).is_relative_to(workspace.root)


def test_env_inherits_only_the_allowlist_and_pins_home(workspace, monkeypatch):
    monkeypatch.setenv("LANG", "C.UTF-8")
    monkeypatch.setenv("SKILLAB_RUNNER_SETTING", "runner only")
    env = workspace.env({"HOME": "/root", "TMPDIR": "/tmp", "GIT_AUTHOR_NAME": "Ada", "OAUTH_X": "y"})
    assert env["LANG"] == "C.UTF-8" and "PATH" in env
    assert "SKILLAB_RUNNER_SETTING" not in env and "OAUTH_X" not in env
    assert (env["HOME"], env["TMPDIR"]) == (str(workspace.home), str(workspace.tmp))
    assert env["GIT_AUTHOR_NAME"] == "Ada"


def test_home_and_tmpdir_come_back_after_a_command_removes_them(workspace):
    workspace.run("rm -rf .home .tmp", timeout_s=10)
    assert workspace.run("mktemp", timeout_s=10).exit_code == 0


def test_commands_run_in_the_root(workspace):
    assert Path(workspace.run("pwd -P", timeout_s=10).stdout.strip()) == workspace.root


def test_write_files_creates_parents_and_checks_every_path_first(workspace):
    workspace.write_files({"data/rows.csv": "email\na@b.co\n", "schema.json": "{}"})
    assert (workspace.root / "data" / "rows.csv").read_text() == "email\na@b.co\n"
    with pytest.raises(SandboxError, match=r"'\.\.'"):
        workspace.write_files({"first.txt": "x", "../escape.txt": "y"})
    assert not (workspace.root / "first.txt").exists()
    assert not (workspace.root.parent / "escape.txt").exists()


def test_write_files_refuses_to_write_through_a_link_out(workspace, outside):
    (workspace.root / "out").symlink_to(outside)
    with pytest.raises(SandboxError, match="symbolic link"):
        workspace.write_files({"out/planted.txt": "x"})
    assert not (outside / "planted.txt").exists()


def make_skill(tmp_path: Path) -> Path:
    skill = tmp_path / "skill"
    (skill / "scripts").mkdir(parents=True)
    (skill / "scripts" / "grade.sh").write_text("#!/bin/sh\nexit 0\n")
    (skill / "scripts" / "grade.sh").chmod(0o755)
    (skill / "references").mkdir()
    (skill / "references" / "guide.md").write_text("guide")
    return skill


def test_stage_copies_files_and_modes_under_the_same_paths(workspace, tmp_path):
    skill = make_skill(tmp_path)
    workspace.stage(skill, ["scripts/grade.sh", "references"])
    assert (workspace.root / "references" / "guide.md").read_text() == "guide"
    assert os.access(workspace.root / "scripts" / "grade.sh", os.X_OK)
    assert workspace.run("./scripts/grade.sh", timeout_s=10).exit_code == 0


def test_stage_refuses_a_source_link_that_leads_out_of_the_skill(workspace, tmp_path, outside):
    skill = make_skill(tmp_path)
    (skill / "scripts" / "key.txt").symlink_to(outside / "secret.txt")
    for rels in (["scripts/key.txt"], ["scripts"]):
        with pytest.raises(SandboxError):
            workspace.stage(skill, rels)
    assert not (workspace.root / "scripts" / "key.txt").exists()


def test_stage_refuses_to_write_through_a_workspace_link_out(workspace, tmp_path, outside):
    skill = make_skill(tmp_path)
    (workspace.root / "scripts").symlink_to(outside)
    with pytest.raises(SandboxError, match="symbolic link"):
        workspace.stage(skill, ["scripts/grade.sh"])
    assert not (outside / "grade.sh").exists()


def test_check_links_names_only_links_that_point_outside(workspace, outside):
    (workspace.root / "sub").mkdir()
    (workspace.root / "sub" / "leak").symlink_to(outside / "secret.txt")
    (workspace.root / "up").symlink_to("..")
    (workspace.root / "fine").symlink_to("sub")
    assert workspace.check_links() == ["sub/leak", "up"]


def test_put_replaces_a_planted_link_instead_of_following_it(workspace, outside):
    (workspace.root / "response.txt").symlink_to(outside / "secret.txt")
    workspace.put("response.txt", b"answer")
    assert (outside / "secret.txt").read_text() == "host secret"
    assert not (workspace.root / "response.txt").is_symlink()
    assert (workspace.root / "response.txt").read_text() == "answer"


def test_a_root_swapped_for_a_link_is_not_written_through(workspace, outside):
    # Unsandboxed, a command can swap the root for a link; the writes that follow must not
    # follow it. (Under bwrap the root is a mount point and cannot be removed.)
    os.rename(workspace.root, workspace.root.with_name("gone"))
    os.symlink("../../outside", workspace.root)
    assert workspace.root.is_symlink()
    workspace.put("response.txt", b"answer")
    assert not (outside / "response.txt").exists()
    assert not workspace.root.is_symlink()
    assert (workspace.root / "response.txt").read_bytes() == b"answer"


BUNDLED = ["scripts/grade.sh", "references/guide.md", "never/staged.txt"]


def test_withdraw_hides_files_and_restores_them(workspace, tmp_path):
    workspace.stage(make_skill(tmp_path), BUNDLED[:2])
    with workspace.withdraw(BUNDLED):
        seen = workspace.run("find . -not -path './.*'; ls -a ..; ls -a ../..", timeout_s=10)
        assert "grade.sh" not in seen.stdout and "guide.md" not in seen.stdout
        # Directories emptied by the withdrawal go too.
        assert not (workspace.root / "scripts").exists()
        assert not (workspace.root / "references").exists()
    assert (workspace.root / "references" / "guide.md").read_text() == "guide"
    assert os.access(workspace.root / "scripts" / "grade.sh", os.X_OK)
    assert workspace.displaced == []
    # The waiting room is gone: only the arm's own directory is left in the parent.
    assert os.listdir(workspace.root.parent.parent) == [workspace.root.parent.name]


def test_withdraw_restores_even_when_the_block_fails(workspace, tmp_path):
    workspace.stage(make_skill(tmp_path), BUNDLED[:2])
    with pytest.raises(RuntimeError):
        with workspace.withdraw(BUNDLED):
            raise RuntimeError("agent crashed")
    assert (workspace.root / "scripts" / "grade.sh").exists()


def test_originals_win_over_what_the_agent_put_in_their_place(workspace, tmp_path, outside):
    workspace.stage(make_skill(tmp_path), BUNDLED[:2])
    with workspace.withdraw(BUNDLED):
        workspace.run(
            "mkdir scripts && printf 'exit 0' > scripts/grade.sh && echo mine > scripts/mine.txt"
            f" && ln -s {outside} references",
            timeout_s=10,
        )
    assert (workspace.root / "scripts" / "grade.sh").read_text() == "#!/bin/sh\nexit 0\n"
    assert (workspace.root / "scripts" / "mine.txt").read_text() == "mine\n"
    assert not (workspace.root / "references").is_symlink()
    assert (workspace.root / "references" / "guide.md").read_text() == "guide"
    assert not (outside / "guide.md").exists()
    assert sorted(workspace.displaced) == ["references", "scripts/grade.sh"]


def test_withdraw_refuses_escaping_paths_and_puts_back_what_it_moved(workspace, tmp_path):
    workspace.stage(make_skill(tmp_path), BUNDLED[:2])
    with pytest.raises(SandboxError):
        with workspace.withdraw(["scripts/grade.sh", "../elsewhere"]):
            pass
    assert (workspace.root / "scripts" / "grade.sh").exists()


def test_cleanup_removes_everything_including_read_only_directories(tmp_path):
    ws = Workspace.create(tmp_path, "arm")
    ws.run("mkdir -p locked/deep && touch locked/deep/f && chmod 500 locked/deep locked", timeout_s=10)
    ws.cleanup()
    assert not ws.root.parent.exists()
