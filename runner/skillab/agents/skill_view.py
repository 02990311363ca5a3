"""How an agent is shown a skill: its body in the system prompt, or a listing it may act on.

``inline`` puts the SKILL.md body in the system prompt. ``discover`` does what agent runtimes
do: the system prompt lists the skill (name, description, where its SKILL.md lies in the
workspace) and the agent decides whether to open it. Only arms that load a skill (with-skill,
original) ever get a section or a staged copy; the without-skill arm's prompt has neither.
"""

from __future__ import annotations

import os
import posixpath
import re
import shutil
from pathlib import Path
from typing import Literal

from ..sandbox.nofollow import remove_inside
from ..sandbox.workspace import safe_join
from ..skill.loader import SKILL_FILE, Skill

SkillLoading = Literal["inline", "discover"]
SKILL_LOADINGS: tuple[SkillLoading, ...] = ("inline", "discover")
# Where the agent adapter stages a skill for discovery (Claude Code uses .claude/skills).
DISCOVER_DIR = ".skills"

_UNSAFE_NAME = re.compile(r"[^A-Za-z0-9._-]+")

INLINE_TEMPLATE = """\

# Skill: {name}
You have a skill for this kind of task. Follow its instructions.
<skill name="{name}">
{body}
</skill>
"""

DISCOVER_TEMPLATE = """\

# Available skills
Skills are folders of instructions and supporting files. When a skill is relevant to the task,
read its SKILL.md with read_file before you start, then follow it; open the files it mentions
(relative to its folder) when you need them. Skip skills that are not relevant.
{listing}
"""


def staged_name(skill: Skill) -> str:
    """The skill's directory name when staged: its name, made safe for a path."""
    return folder_name(skill.name)


def folder_name(name: str) -> str:
    return _UNSAFE_NAME.sub("-", name).strip(".-") or "skill"


def skill_md_path(skill: Skill, base: str = DISCOVER_DIR) -> str:
    """Where the staged SKILL.md lies, relative to the workspace."""
    return f"{base}/{staged_name(skill)}/{SKILL_FILE}"


def inline_section(skill: Skill) -> str:
    return INLINE_TEMPLATE.format(name=skill.name, body=skill.body)


def discover_section(*skills: Skill) -> str:
    """The listing of ``skills``: one line each, name, description and where SKILL.md lies."""
    return DISCOVER_TEMPLATE.format(listing="\n".join(listing_line(s) for s in skills))


def listing_line(skill: Skill) -> str:
    description = " ".join(skill.description.split()) or "(no description)"
    return f"- {skill.name}: {description} (instructions: {skill_md_path(skill)})"


def skill_section(skill: Skill | None, loading: SkillLoading, siblings: tuple[Skill, ...] = ()) -> str:
    """The system-prompt section for ``skill`` (and, discovered, its siblings, all sorted by
    name); empty for the without-skill arm."""
    if skill is None:
        return ""
    if loading == "inline":
        return inline_section(skill)
    return discover_section(*sorted((skill, *siblings), key=lambda s: s.name))


def stage_skill(skill: Skill, workspace: Path, base: str = DISCOVER_DIR) -> Path:
    """Copy SKILL.md and the bundled files to ``workspace/base/<name>/``; returns that folder."""
    target = safe_join(workspace, f"{base}/{staged_name(skill)}")
    target.mkdir(parents=True, exist_ok=True)
    safe_join(target.parent, f"{target.name}/{SKILL_FILE}").write_bytes(skill.skill_md_bytes())
    for rel in skill.bundled:
        destination = safe_join(target.parent, f"{target.name}/{rel}")
        destination.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(safe_join(skill.root, rel), destination)
    return target


def unstage(folder: Path, workspace: Path) -> None:
    """Remove a staged skill folder and the staging directories it leaves empty. The agent may
    have swapped a directory on the way for a link to a host path: nothing is followed."""
    remove_inside(workspace, Path(os.path.relpath(folder, workspace)).as_posix(), prune=True)


def normalize(rel: str) -> str:
    """A workspace-relative path in canonical form (``./a//b`` → ``a/b``) for comparisons."""
    return posixpath.normpath(rel.strip()).lstrip("/") if rel.strip() else "."
