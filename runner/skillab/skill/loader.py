"""A skill directory: SKILL.md (frontmatter + body) and the files bundled beside it."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from ..errors import SkillError, SuiteError
from .eval_material import eval_material, is_material
from .frontmatter import MAX_FIELD_CHARS, MAX_FIELD_HARD_CHARS, Frontmatter, read_frontmatter

SKILL_FILE = "SKILL.md"
# Directories beside SKILL.md that are always evaluation material (skill-creator's and Tessl's
# evals/), never part of the skill an agent loads.
EVAL_DIRS = frozenset({"evals", "eval", ".skillab"})
# Files beside SKILL.md that define the evaluation rather than the skill.
SUITE_FILES = frozenset(
    {"eval.yaml", "eval.yml", "task_suite.yaml", "criteria.json", "task.md", "task.toml",
     "instruction.md", "mock-responses.yaml", "evals.json", "trigger-evals.json",
     "trigger_evals.json", "triggers.yaml", "metadata.json"}
)
# Beside SKILL.md, a file named expected-*/expected_* spells out a suite's answers.
_EXPECTED_PREFIXES = ("expected-", "expected_", "expected.")


@dataclass(frozen=True)
class Skill:
    """A loaded skill. ``bundled`` lists files (relative to ``root``) staged into workspaces."""

    root: Path
    name: str
    description: str
    body: str
    bundled: tuple[str, ...] = field(default_factory=tuple)
    # What loading tolerated (malformed frontmatter read leniently, say).
    warnings: tuple[str, ...] = ()
    # A set of skills given together (a SkillsBench task's environment/skills/): the generated
    # SKILL.md that lists them, staged in place of a SKILL.md file; each skill keeps its folder.
    index: str | None = None

    def skill_md_bytes(self) -> bytes:
        return self.index.encode("utf-8") if self.index is not None else _skill_md(self.root).read_bytes()

    @property
    def skill_md(self) -> Path:
        return self.root / SKILL_FILE

    def content_hash(self) -> str:
        """SHA-256 over SKILL.md and every bundled file: what "the same skill" means."""
        if self.index is None:
            return digest_files(self.root, (SKILL_FILE, *self.bundled))
        import hashlib

        digest = hashlib.sha256(self.index.encode() + b"\0")
        digest.update(digest_files(self.root, self.bundled).encode())
        return digest.hexdigest()

    def bundled_hash(self) -> str:
        """SHA-256 over the bundled files alone (graders and fixtures, not the instructions)."""
        return digest_files(self.root, self.bundled)


def digest_files(root: Path, rels: tuple[str, ...]) -> str:
    """SHA-256 over (path, content) pairs in the given order."""
    import hashlib  # on use: loading a skill (as validate does) never hashes it

    digest = hashlib.sha256()
    for rel in rels:
        digest.update(rel.encode() + b"\0")
        digest.update((root / rel).read_bytes() + b"\0")
    return digest.hexdigest()


def load_skill(directory: Path) -> Skill:
    """Load ``directory/SKILL.md``. Unknown frontmatter keys are kept out of the way, not refused."""
    directory = Path(directory)
    if not directory.is_dir():
        raise SkillError(f"{directory}: not a skill directory (it should hold {SKILL_FILE})")
    path = _skill_md(directory)
    if not path.is_file():
        members = sorted(d for d in directory.iterdir() if (d / SKILL_FILE).is_file())
        if len(members) > 1:
            return load_skill_set(directory, [load_skill(d) for d in members])
        raise SkillError(f"{path}: missing — a skill directory needs a {SKILL_FILE}")
    from ..yaml_source import read_suite_text

    try:
        text = read_suite_text(path)
    except SuiteError as exc:
        raise SkillError(str(exc)) from None
    front = read_frontmatter(text, path)
    skipped: list[str] = []
    name = _text_field(front, "name", path, skipped) or directory.resolve().name
    description = _text_field(front, "description", path, skipped)
    return Skill(
        root=directory,
        name=name,
        description=description,
        body=front.body.strip(),
        bundled=tuple(_bundled_files(directory, skipped)),
        warnings=(*front.warnings, *skipped),
    )


SET_INDEX = """\
---
name: {name}
description: {description}
---

# Skills for this task

This task comes with {count} skills, each in its own folder here. Read the SKILL.md of each one
that is relevant before you start, and follow it; open the files it mentions from its folder.

{listing}

{bodies}
"""


def load_skill_set(directory: Path, members: list[Skill]) -> Skill:
    """Several skills given to the with-skill arm together, as Harbor installs a task's skills:
    one folder holding each skill's folder, under a generated SKILL.md that lists them (and, for
    ``inline`` loading, carries every body)."""
    name = plugin_name(directory.parent) if directory.name == "skills" else None
    name = name or (directory.resolve().parent.parent.name if directory.name == "skills" else directory.resolve().name)
    listing = "\n".join(f"- {m.name} ({m.root.name}/SKILL.md): {' '.join(m.description.split())}" for m in members)
    bodies = "\n\n".join(f"## Skill: {m.name}\n\n{m.body}" for m in members)
    description = "Skills for this task: " + ", ".join(m.name for m in members)
    body = SET_INDEX.split("---\n", 2)[2].format(count=len(members), listing=listing, bodies=bodies)
    index = SET_INDEX.format(name=name, description=description, count=len(members), listing=listing, bodies=bodies)
    bundled = tuple(f"{m.root.name}/{rel}" for m in members for rel in (SKILL_FILE, *m.bundled))
    warnings = tuple(w for m in members for w in m.warnings)
    return Skill(root=directory, name=name, description=description, body=body.strip(), bundled=bundled,
                 warnings=warnings, index=index)


PLUGIN_MANIFESTS = (".claude-plugin/plugin.json", "plugin.json")


def plugin_name(folder: Path) -> str | None:
    """The ``name`` of the plugin manifest in ``folder`` (Claude Code's ``.claude-plugin/plugin.json``),
    or None when there is none: a plugin's skills are given under the plugin's name."""
    import json

    for rel in PLUGIN_MANIFESTS:
        path = folder / rel
        if path.is_file() and not path.is_symlink():
            try:
                value = json.loads(path.read_text(encoding="utf-8"))
            except (OSError, ValueError):
                continue
            if isinstance(value, dict) and isinstance(value.get("name"), str) and value["name"].strip():
                return value["name"].strip()
    return None


def _text_field(front: Frontmatter, key: str, path: Path, warnings: list[str]) -> str:
    value = front.meta.get(key)
    if value is None:
        return ""
    where = f"{path}:{front.lines[key]}" if key in front.lines else str(path)
    if isinstance(value, (dict, list)) or hasattr(value, "isoformat"):
        raise SkillError(f"{where}: frontmatter '{key}' must be text, got {type(value).__name__} "
                         f"{str(value)[:40]!r} — quote it")
    text = str(value).strip()
    if len(text) > MAX_FIELD_HARD_CHARS:
        raise SkillError(f"{where}: frontmatter '{key}' is {len(text)} characters; at most {MAX_FIELD_HARD_CHARS}")
    if len(text) > MAX_FIELD_CHARS:
        warnings.append(f"{where}: frontmatter '{key}' is {len(text):,} characters — loaded as the agents load "
                        f"it, though an agent may cut its listing of it")
    return text


def _bundled_files(directory: Path, warnings: list[str] | None = None) -> list[str]:
    """The skill's own files beside SKILL.md, sorted: never SKILL.md itself, and never
    evaluation material (suite files, evals/, expected results, a suite's fixtures). A FIFO,
    socket or device is skipped with a warning: reading one would block or never end."""
    skipped = {".git", "__pycache__", *EVAL_DIRS}
    material = eval_material(directory)
    found = []
    try:
        paths = sorted(directory.rglob("*"))
    except (RecursionError, OSError) as exc:
        # pathlib recurses once per level: a tree thousands deep (or past the length limit of a
        # path) cannot be listed, and no agent could be given it either.
        why = "its directories nest too deep" if isinstance(exc, RecursionError) else exc.strerror
        raise SkillError(f"{directory}: the skill's files cannot be listed ({why}) — "
                         "remove the deep directory from the skill") from None
    for path in paths:
        rel = path.relative_to(directory)
        if rel.parts[0] in skipped or path.is_dir() or "__pycache__" in rel.parts or is_material(rel, material):
            continue
        if len(rel.parts) == 1 and _is_eval_file(rel.name):
            continue
        if path.is_symlink():
            # A bundled link could point anywhere on the host; the sandbox never follows it.
            continue
        if not path.is_file():
            if warnings is not None:
                warnings.append(f"{rel.as_posix()}: not a regular file (a FIFO, socket or device) — skipped")
            continue
        found.append(rel.as_posix())
    return found


def _skill_md(directory: Path) -> Path:
    """``directory/SKILL.md``, refused when it is a link out of the skill's directory: it is read
    on the host and staged into the sandbox, so it could carry any file of the runner."""
    from ..yaml_source import links_out

    path = directory / SKILL_FILE
    if links_out(path):
        raise SkillError(f"{path}: a link out of the skill's directory — SKILL.md must be a file of the skill")
    return path


def is_skill_file(directory: Path, rel: str) -> bool:
    """Whether ``rel`` (relative to the skill's ``directory``) is part of the skill an agent is
    given: SKILL.md or a file staged beside it, not evaluation material."""
    parts = Path(rel).parts
    if not parts or is_material(Path(rel), eval_material(directory)):
        return False
    if len(parts) == 1:
        return parts[0] == SKILL_FILE or not _is_eval_file(parts[0])
    skipped = {".git", "__pycache__", *EVAL_DIRS}
    return parts[0] not in skipped and "__pycache__" not in parts


def _is_eval_file(name: str) -> bool:
    return name == SKILL_FILE or name in SUITE_FILES or name.lower().startswith(_EXPECTED_PREFIXES)
