"""The baseline audit recognises the skill by its content, whatever path or glob reached it."""

from __future__ import annotations

from skillab.agents.base import AgentResult
from skillab.engine.audit import audit_baseline, fingerprints
from skillab.grading.trajectory import ModelTurn, ToolCall, Trajectory
from skillab.skill.loader import load_skill
from skillab.suite.model import Case, Setup

from ..skillgen import make_skill

BODY = "Always wrap the changelog entry in a fenced block labelled keep-a-changelog.\nShort."


def baseline(command: str, output: str, final: str = "done") -> AgentResult:
    turn = ModelTurn(tool_calls=[ToolCall("run_shell", {"command": command}, output)])
    return AgentResult(final_output=final, trajectory=Trajectory(turns=[turn, ModelTurn(final)]))


def skill(tmp_path):
    return load_skill(make_skill(tmp_path, [], body=BODY,
                                 files={"ref/guide.md": "The guide says: bump the minor version on features.\n"}))


def test_skill_content_read_through_a_glob_is_contamination(tmp_path):
    loaded = skill(tmp_path)
    leaked = baseline("cat ../*/S*.md", "---\nname: x\n---\nAlways  wrap the changelog entry in a "
                                        "fenced block labelled keep-a-changelog.")
    case = Case(name="c", prompt="Write an entry.", skill_files_in_every_arm=False)
    assert audit_baseline(leaked, loaded, case) is True


def test_bundled_file_content_counts_unless_every_arm_had_it(tmp_path):
    loaded = skill(tmp_path)
    leaked = baseline("cat r*/g*", "The guide says: bump the minor version on features.")
    assert audit_baseline(leaked, loaded, Case(name="c", prompt="p", skill_files_in_every_arm=False))
    assert not audit_baseline(leaked, loaded, Case(name="c", prompt="p", skill_files_in_every_arm=True))


def test_a_clean_baseline_and_the_cases_own_text_are_not_flagged(tmp_path):
    loaded = skill(tmp_path)
    case = Case(name="c", prompt="Always wrap the changelog entry in a fenced block labelled "
                                 "keep-a-changelog.", setup=Setup(), skill_files_in_every_arm=False)
    clean = baseline("ls", "notes.txt", final="Always wrap the changelog entry in a fenced block "
                                              "labelled keep-a-changelog.")
    assert not audit_baseline(clean, loaded, case)  # the prompt said it, not the skill
    assert "short." not in fingerprints(loaded, case)  # too short to prove anything
