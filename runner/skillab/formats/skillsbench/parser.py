"""SkillsBench / Harbor task packages: one task directory imported as one A/B case.

Two layouts::

    task.toml + instruction.md    Harbor's layout (settings: ``harbor_config``)
    task.md                   YAML frontmatter (the same settings) and the instruction: the body's
                              "## prompt" section, else the whole body

    environment/              what the agent's machine holds: a Dockerfile (optional) and data
    environment/skills/<name>/    the task's skills: every one goes to the with-skill arm
    verifier/test.sh | tests/test.sh   run after the agent; writes /logs/verifier/reward.txt

How a package runs without its container (as Harbor runs it, where a workspace can):

- The with-skill arm gets every skill in ``environment/skills/`` (one skill as itself, several as
  a set: see ``skill.loader.load_skill_set``). The without-skill arm's workspace never holds
  their files, wherever the Dockerfile would have copied them.
- Environment data is staged into the workspace (``dockerfile``): ``/root``, the image's WORKDIR
  and ``[environment].workdir`` map to the workspace. ENV values and ``[environment].env`` reach
  the verifier.
- Absolute paths are rewritten: in the instruction, ``/root/x`` (and WORKDIR paths) become
  ``./x``; in the verifier's text files and environment they become the arm's workspace, and
  ``/tests`` and ``/logs/verifier`` the staged verifier's directories.
- The verifier's reward is the arm's score; the arm passes at the run's reward threshold (1.0
  unless ``--reward-threshold`` says otherwise). No reward, or a verifier that could not start
  its tests, makes the arm ``error``.
- What skillab cannot give (its own image, a GPU, declared network, MCP servers, several
  containers, a verifier that installs or downloads) makes the case ``unsupported`` with one
  reason line; ``Case.image`` says what an image-building sandbox backend would need.
"""

from __future__ import annotations

import dataclasses
import re
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ...errors import SuiteError, SuiteIssue
from ...skill.loader import SKILL_FILE
from ...suite.loading import IssueList, collect_files, read_prompt_file, seed_files
from ...suite.model import Case, ImageRequest, SeedFiles, Setup, Suite
from ...yaml_source import (
    MAX_DEPTH,
    MAX_NUMBER_DIGITS,
    YamlDocument,
    YamlPath,
    parse_yaml,
    read_suite_text,
)
from .dockerfile import CUSTOM_IMAGE, ENVIRONMENT, SKILLS, plan_environment
from .harbor_config import read_settings
from .specs import VerifierGrader
from .verifier_deps import read_needs

FORMAT_NAME = "skillsbench"
TASK_TOML, INSTRUCTION = "task.toml", "instruction.md"
VERIFIER_DIRS = ("verifier", "tests")
VERIFIER_ENTRY = "test.sh"
_PROMPT_HEADING = re.compile(r"^##\s+prompt\s*$", re.IGNORECASE)
_HEADING = re.compile(r"^#{1,2}\s")


def load_skillsbench(path: Path) -> Suite:
    """Load the task package that holds ``path`` (its task.md or task.toml)."""
    task_dir = path.parent
    if path.name == TASK_TOML:
        config, issues = _read_toml(path)
        prompt = _instruction_md(task_dir, issues)
    else:
        config, prompt, issues = _read_task_md(path)
    settings = read_settings(config, issues)
    skill_dir = _skill_dir(task_dir, issues)
    verifier = _verifier(task_dir, issues)
    plan = plan_environment(task_dir / ENVIRONMENT, issues)
    issues.raise_if_any()
    assert verifier is not None
    workspace_paths = plan.workspace_paths
    if settings.workdir and settings.workdir not in workspace_paths:
        workspace_paths = (*workspace_paths, settings.workdir)
    image = plan.image
    if settings.image:
        image = ImageRequest(task_dir / ENVIRONMENT, image.dockerfile if image else None, settings.image)
    reasons = [*settings.unsupported, *plan.unsupported, *verifier.network_use]
    # What building the task's own Dockerfile cures: the lines a workspace cannot reproduce.
    in_image = [r for r in reasons if not (r.startswith(CUSTOM_IMAGE) and image and image.dockerfile)]
    prompt_map = [(p, ".") for p in workspace_paths]
    grader = VerifierGrader(
        tests=verifier.files,
        entry=VERIFIER_ENTRY,
        timeout_s=settings.verifier_timeout_s,
        env=tuple(sorted({**plan.env, **settings.environment_env, **settings.verifier_env}.items())),
        workspace_paths=workspace_paths,
        guarded_packages=verifier.guarded_packages,
        reads_skip_deps=verifier.reads_skip_deps,
    )
    case = Case(
        name=task_dir.resolve().name,
        prompt=rewrite_paths(prompt, prompt_map),
        setup=Setup(commands=plan.commands, user_python=bool(plan.commands)),
        description=settings.description,
        tags=settings.tags,
        graders=(grader,),
        seed=plan.seed,
        timeout_s=settings.agent_timeout_s,
        unsupported=one_line(reasons),
        image=image,
        unsupported_in_image=one_line(in_image),
        skill_files_in_every_arm=False,
        line=1,
    )
    return Suite(path=path, format=FORMAT_NAME, cases=(case,), skill_dir=skill_dir,
                 warnings=tuple(settings.warnings))


def one_line(reasons: list[str]) -> str | None:
    """Why a task cannot run, in one line: the first reason, and how many more there are."""
    if not reasons:
        return None
    more = len(reasons) - 1
    if not more:
        return reasons[0]
    rest = "; ".join(reasons[1:])
    if len(rest) > 300:
        # Whole reasons where they fit, never a word cut off mid-way.
        cut = rest[:300].rfind("; ")
        rest = (rest[:cut] if cut > 0 else rest[:299].rsplit(" ", 1)[0]) + "; …"
    return reasons[0] + f" (and {more} more reason{'s' if more > 1 else ''}: {rest})"


# --- reading task.md and task.toml -----------------------------------------------------------


def _read_task_md(path: Path) -> tuple[Any, str, IssueList]:
    text = read_suite_text(path)
    issues = IssueList(path)
    lines = text.splitlines(keepends=True)
    if not lines or lines[0].strip() != "---":
        hint = ""
        if (path.parent / "criteria.json").is_file():
            hint = " (this directory holds a criteria.json: it is a ruby-skill-bench eval — run the directory)"
        issues.add(f"needs YAML frontmatter between '---' lines (schema_version, metadata, verifier, "
                   f"agent, environment, oracle){hint}", line=1)
        issues.raise_if_any()
    end = next((i for i in range(1, len(lines)) if lines[i].strip() == "---"), None)
    if end is None:
        issues.add("the frontmatter opened with '---' on line 1 is never closed", line=1)
        issues.raise_if_any()
    assert end is not None  # raised above
    front = "".join(lines[1:end])
    if not front.strip():
        issues.add("the frontmatter is empty — it needs at least schema_version", line=1)
        issues.raise_if_any()
    try:
        doc = parse_yaml(front, path)
    except SuiteError as exc:  # its lines count from the frontmatter's first line
        raise SuiteError([dataclasses.replace(i, line=i.line + 1 if i.line else None) for i in exc.issues]) from None
    issues.doc, issues.line_offset = doc, 1
    for dup in doc.duplicates:
        issues.add(f"duplicate key {dup.key!r} (first on line {dup.first_line + 1})",
                   (*dup.path, dup.key), line=dup.line + 1, field=str(dup.key))
    body = "".join(lines[end + 1:])
    prompt = prompt_section(body)
    if not prompt.strip():
        issues.add("has no instruction: write it under '## prompt' or as the body", line=end + 2)
    return doc.value, prompt, issues


def prompt_section(body: str) -> str:
    """The text under a ``## prompt`` heading (up to the next heading of level 1 or 2), else
    the whole body; stripped either way."""
    lines = body.splitlines()
    start = next((i for i, line in enumerate(lines) if _PROMPT_HEADING.match(line.strip())), None)
    if start is None:
        return body.strip()
    section = []
    for line in lines[start + 1:]:
        if _HEADING.match(line):
            break
        section.append(line)
    return "\n".join(section).strip()


def _read_toml(path: Path) -> tuple[Any, IssueList]:
    text = read_suite_text(path)
    issues = IssueList(path)
    _toml_bounds(text, path)
    try:
        value = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        match = re.search(r"line (\d+)", str(exc))
        line = int(match.group(1)) if match else None
        raise SuiteError([SuiteIssue(path, f"invalid TOML: {exc}", line=line)]) from None
    except (ValueError, RecursionError) as exc:  # what the bounds above do not foresee
        raise SuiteError([SuiteIssue(path, f"invalid TOML: {str(exc)[:120]}")]) from None
    issues.doc = YamlDocument(value, toml_lines(text))
    return value, issues


_LONG_NUMBER = re.compile(r"=\s*[+-]?\d[\d_]{" + str(MAX_NUMBER_DIGITS) + ",}")


def _toml_bounds(text: str, path: Path) -> None:
    """The suite parser's bounds, before tomllib (which recurses without a limit and raises a
    bare ValueError on a 4,300-digit integer): no number over MAX_NUMBER_DIGITS digits, no
    nesting past MAX_DEPTH."""
    for number, line in enumerate(text.splitlines(), start=1):
        if _LONG_NUMBER.search(line):
            raise SuiteError([SuiteIssue(path, f"invalid TOML: a number of more than {MAX_NUMBER_DIGITS} digits "
                                         "— quote it if it is text", line=number)])
    depth = 0
    for number, line in enumerate(text.splitlines(), start=1):
        # Brackets outside quoted text and comments; a nesting bomb sits on one line or many.
        for char in re.sub(r"\"(?:[^\"\\]|\\.)*\"|'[^']*'|#.*$", "", line):
            if char in "[{":
                depth += 1
                if depth > MAX_DEPTH:
                    raise SuiteError([SuiteIssue(path, f"invalid TOML: nesting is deeper than {MAX_DEPTH} levels",
                                                 line=number)])
            elif char in "]}":
                depth = max(0, depth - 1)


def toml_lines(text: str) -> dict[YamlPath, int]:
    """The line of each table header and of each ``key =`` line, by its path (best effort:
    enough to point an issue at the right line)."""
    lines: dict[YamlPath, int] = {(): 1}
    table: tuple[str, ...] = ()
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        header = re.match(r"^\[\[?\s*([A-Za-z0-9_.\-\" ]+?)\s*\]\]?", line)
        if header:
            table = tuple(part.strip().strip('"') for part in header.group(1).split("."))
            lines.setdefault(table, number)
            continue
        key = re.match(r'^([A-Za-z0-9_\-"]+)\s*=', line)
        if key:
            lines.setdefault((*table, key.group(1).strip('"')), number)
    return lines


def _instruction_md(task_dir: Path, issues: IssueList) -> str:
    missing = f"the {TASK_TOML} layout keeps the prompt in {INSTRUCTION}"
    return read_prompt_file(task_dir / INSTRUCTION, issues, missing=missing).strip()


# --- skill and verifier ----------------------------------------------------------------------


def _skill_dir(task_dir: Path, issues: IssueList) -> Path | None:
    skills = task_dir / ENVIRONMENT / SKILLS
    found = sorted(d for d in skills.iterdir() if (d / SKILL_FILE).is_file()) if skills.is_dir() else []
    if len(found) == 1:
        return found[0]
    if found:
        return skills  # several: the with-skill arm gets them all (skill.loader.load_skill_set)
    message = f"holds no skill — the task's skills go in {ENVIRONMENT}/{SKILLS}/<name>/{SKILL_FILE}"
    # skill.md, Skill.md: a case-insensitive file system reads them, an agent on Linux does not.
    near = sorted(f"{f.parent.name}/{f.name}" for d in (skills.iterdir() if skills.is_dir() else ()) if d.is_dir()
                  for f in d.iterdir() if f.name.lower() == SKILL_FILE.lower() and f.name != SKILL_FILE)
    if near:
        message += (f"; {', '.join(near)} {'is' if len(near) == 1 else 'are'} not named exactly {SKILL_FILE}, "
                    f"which agents look for (rename {'it' if len(near) == 1 else 'them'})")
    issues.issues.append(SuiteIssue(skills, message))
    return None


@dataclass(frozen=True)
class Verifier:
    files: SeedFiles
    # Lines of test.sh that need the network (each makes the case unsupported).
    network_use: tuple[str, ...] = ()
    # What it installs unless BENCHFLOW_SKIP_VERIFIER_DEPS=1 (see verifier_deps), and whether
    # it reads that variable at all.
    guarded_packages: tuple[str, ...] = ()
    reads_skip_deps: bool = False


def _verifier(task_dir: Path, issues: IssueList) -> Verifier | None:
    directory = next((task_dir / d for d in VERIFIER_DIRS if (task_dir / d / VERIFIER_ENTRY).is_file()), None)
    if directory is None:
        issues.issues.append(SuiteIssue(task_dir, f"has no verifier — expected verifier/{VERIFIER_ENTRY} "
                                        f"or tests/{VERIFIER_ENTRY}"))
        return None
    files, links = collect_files(directory, root=task_dir)
    for link in links:
        issues.issues.append(SuiteIssue(directory / link, "is a symbolic link — verifier files must be regular files"))
    entry = directory / VERIFIER_ENTRY
    if entry.is_symlink():
        return None  # reported above with the other links
    needs = read_needs(entry.read_text(encoding="utf-8", errors="replace"))
    network = tuple(f"the verifier needs network ({directory.name}/{VERIFIER_ENTRY} line {number}: {line[:80]!r})"
                    for number, line in needs.network)
    return Verifier(seed_files([(directory / rel, rel) for rel in files], root=task_dir), network[:1], needs.guarded_packages,
                    needs.guarded)


# --- path rewriting --------------------------------------------------------------------------


def rewrite_paths(text: str, mapping: list[tuple[str, str]]) -> str:
    """Replace each absolute path prefix in ``mapping`` where it starts a path in ``text``.

    A prefix matches only as a whole path component (``/root`` in ``/root/x``, ``cd /root`` and
    ``${WORKSPACE:-/root}``, not in ``/rootfs``, ``a/root`` or ``x-/root``); longer prefixes win.
    """
    if not mapping:
        return text
    replacements = dict(mapping)
    alternatives = "|".join(re.escape(p) for p in sorted(replacements, key=len, reverse=True))
    # A dot ends a sentence ("in /root.") unless a name goes on after it ("/root.bak"). A path
    # is also the default of a shell expansion, ``${BENCHFLOW_REWARD_TEXT:-/logs/verifier/...}``.
    pattern = re.compile(rf"(?:(?<=:-)|(?<=:=)|(?<![\w.~/-]))({alternatives})(?![\w-])(?!\.\w)")
    return pattern.sub(lambda m: replacements[m.group(1)], text)
