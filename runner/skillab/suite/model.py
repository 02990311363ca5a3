"""The suite model: what every suite format is imported into."""

from __future__ import annotations

import re
from dataclasses import Field, dataclass, field
from pathlib import Path
from typing import Any, ClassVar, Protocol


@dataclass(frozen=True)
class ValidatorSpec:
    """A shell-command check run in the arm's workspace after the agent finishes."""

    cmd: str
    expect_exit_code: int = 0
    label: str = ""
    # Seconds before the validator is killed and recorded ungraded (errored).
    timeout_s: float = 120.0
    # Extra environment for this validator only (e.g. AI_OUTPUT_FILE for pytest judges).
    env: tuple[tuple[str, str], ...] = ()

    def __post_init__(self) -> None:
        if not self.label:
            object.__setattr__(self, "label", self.cmd[:80])


@dataclass(frozen=True)
class Setup:
    """The case's environment: files written first, then commands run in order."""

    files: dict[str, str] = field(default_factory=dict)
    commands: tuple[str, ...] = ()
    # The commands check the user's Python (a SkillsBench package check): they run with the
    # python3 graders use (sandbox.python_runtime.grader_python), mounted read-only.
    user_python: bool = False


def setup_path_problem(rel: str) -> str | None:
    """Why ``rel`` cannot name a file inside the workspace (a key of ``Setup.files``), or None
    when it can."""
    parts = re.split(r"[\\/]", rel)
    if not rel.strip():
        return "is empty"
    if "\0" in rel:
        return "contains a NUL byte"
    if rel.startswith(("/", "\\")) or re.match(r"[A-Za-z]:", rel):
        return "is absolute"
    if ".." in parts:
        return "climbs out with '..'"
    if parts[-1] in ("", "."):
        return "names a directory, not a file"
    return None


@dataclass(frozen=True)
class SeedFiles:
    """Files copied byte for byte from disk into a workspace: ``(source, workspace path)`` pairs.

    Seeds what ``Setup.files`` (text only) cannot: data files, binaries, whole directories.
    ``sha256`` covers the contents when the suite was loaded; it scopes the baseline cache.
    """

    files: tuple[tuple[Path, str], ...]
    sha256: str
    # The suite's folder the sources lie in: staging reads each from it down, never through a link
    # (``suite.paths.read_below``).
    root: Path


@dataclass(frozen=True)
class RubricGrader:
    """The judge scores the session against ``rubric`` in [0, 1]; passes at ``pass_threshold``.
    Generic: any format may grade with it (``grading/rubric.py``)."""

    # Whether grading asks the judge model, and whether it reads the files the agent changed.
    judged: ClassVar[bool] = True
    reads_work: ClassVar[bool] = False

    rubric: str
    pass_threshold: float = 0.7


class GraderSpec(Protocol):
    """A grader in ``Case.graders``: a frozen dataclass its format registers a grader for
    (``skillab.formats``). It says whether grading asks the judge model and whether it reads
    the files the agent changed, so the engine need not know the format."""

    # Read-only: a class constant, or a property where the graders it holds decide.
    @property
    def judged(self) -> bool: ...

    @property
    def reads_work(self) -> bool: ...

    # What makes it a dataclass to ``dataclasses.replace`` and ``asdict`` (typeshed's
    # ``DataclassInstance``).
    __dataclass_fields__: ClassVar[dict[str, Field[Any]]]


@dataclass(frozen=True)
class ImageRequest:
    """A case that needs a container image of its own: what an image-building sandbox backend
    needs to build (``dockerfile`` in ``context``) or pull (``image``) it."""

    context: Path
    dockerfile: Path | None = None
    image: str | None = None


@dataclass(frozen=True)
class Case:
    """One A/B case. ``line`` is where it starts in its suite file (1-based), when known."""

    name: str
    prompt: str
    setup: Setup = field(default_factory=Setup)
    expectations: tuple[str, ...] = ()
    validators: tuple[ValidatorSpec, ...] = ()
    tags: tuple[str, ...] = ()
    description: str | None = None
    max_turns: int | None = None
    should_trigger: bool | None = None
    line: int | None = None
    # Graders of imported formats, run after validators and expectations; all must pass.
    graders: tuple[GraderSpec, ...] = ()
    # Copied into every arm's workspace before setup runs.
    seed: SeedFiles | None = None
    # The agent's time budget (task_suite.yaml ``timeout_seconds``): an arm over it fails.
    timeout_s: float | None = None
    # Why skillab cannot run this case faithfully (a custom image, a GPU, network): its arms
    # become errors carrying the reason, and no agent runs.
    unsupported: str | None = None
    # Set when the case needs its own container image; a sandbox backend that can build or pull
    # it may run the case, and ``unsupported`` then no longer applies to it.
    image: ImageRequest | None = None
    # Why the case cannot run even on its own built image (the network, a GPU, several
    # containers); ``--sandbox image`` puts this in place of ``unsupported``.
    unsupported_in_image: str | None = None
    # False keeps the skill's bundled files out of the without-skill arm's workspace
    # altogether, for formats whose graders never call them (SkillsBench).
    skill_files_in_every_arm: bool = True

    @property
    def needs_judge(self) -> bool:
        """Whether grading this case asks the judge model anything."""
        return bool(self.expectations) or any(g.judged for g in self.graders)

    @property
    def trigger_only(self) -> bool:
        """A routing-label case with no grader: skipped by the A/B loop, with disclosure."""
        return self.should_trigger is not None and not (self.expectations or self.validators or self.graders)

    def to_spec_dict(self) -> dict[str, Any]:
        """The normalized shape the spec's parser goldens pin."""
        return {
            "name": self.name,
            "prompt": self.prompt,
            "setup_steps": list(self.setup.commands),
            "setup_files": dict(self.setup.files),
            "expectations": list(self.expectations),
            "script_validators": [
                {"cmd": v.cmd, "expect_exit_code": v.expect_exit_code, "label": v.label}
                for v in self.validators
            ],
            "tags": list(self.tags),
            "description": self.description,
            "max_turns": self.max_turns,
            "should_trigger": self.should_trigger,
        }


@dataclass(frozen=True)
class Suite:
    """A parsed suite: its file, its format, its cases, and the skill it evaluates."""

    path: Path
    format: str
    cases: tuple[Case, ...]
    skill_dir: Path | None = None
    # What the loader tolerated and the reader should know (an extra key, a format quirk).
    warnings: tuple[str, ...] = ()

    def select(self, names: list[str] | None = None, tags: list[str] | None = None) -> Suite:
        """The subset named by ``--case`` and ``--tag`` (both empty: every case)."""
        picked = [
            c
            for c in self.cases
            if (not names or c.name in names) and (not tags or set(tags) & set(c.tags))
        ]
        return Suite(self.path, self.format, tuple(picked), self.skill_dir, self.warnings)
