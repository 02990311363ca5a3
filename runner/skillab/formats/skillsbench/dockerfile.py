"""A task's ``environment/``: its data files, and what its Dockerfile asks of the machine.

A workspace can honour a few Dockerfile instructions: ``FROM`` a python, ubuntu or debian base
(``--platform`` and ``AS name`` read as Docker reads them), ``WORKDIR``, ``COPY``/``ADD`` of files
from the build context into ``/root`` or the WORKDIR, ``ENV`` (values expanded as Docker expands
them: ``$VAR``, ``${VAR}``, ``${VAR:-default}``, ``${VAR:+alt}``, with variables the Dockerfile
never set taken from the base environment, which for ``PATH`` is the sandbox's own), ``pip
install`` (checked, not run: no network) and ``mkdir``. Anything else means the task needs its
own image: the plan records why, in one line, and an ``ImageRequest`` an image-building sandbox
backend can act on. Skills are never copied from the context: the with-skill arm gets them from
skillab, the baseline never.
"""

from __future__ import annotations

import glob
import json
import os
import posixpath
import re
import shlex
from dataclasses import dataclass, field
from pathlib import Path

from ...errors import SuiteIssue
from ...suite.loading import IssueList, collect_files, seed_files
from ...suite.model import ImageRequest, SeedFiles
from ...suite.paths import escape_problem

ENVIRONMENT, SKILLS = "environment", "skills"
# How a reason the task's own image cures begins (``--sandbox image`` builds that image).
CUSTOM_IMAGE = "needs a custom image: "
HOME = "/root"
_ALLOWED_BASES = frozenset({"python", "ubuntu", "debian"})
_IGNORED_INSTRUCTIONS = frozenset(
    {"LABEL", "EXPOSE", "CMD", "ENTRYPOINT", "ARG", "USER", "SHELL", "HEALTHCHECK", "STOPSIGNAL",
     "VOLUME", "MAINTAINER"}
)
_VARIABLE = re.compile(r"\$(?:\{(?P<braced>[A-Za-z_][A-Za-z0-9_]*)(?::(?P<op>[-+])(?P<word>[^}]*))?\}|(?P<bare>[A-Za-z_][A-Za-z0-9_]*))")
# Variables a base image defines, as the sandbox gives them.
_BASE_ENV_NAMES = ("PATH", "LANG", "HOME")


@dataclass
class EnvironmentPlan:
    """How the task's environment is reproduced in a workspace."""

    seed: SeedFiles | None = None
    commands: tuple[str, ...] = ()
    env: dict[str, str] = field(default_factory=dict)
    # Absolute paths that mean "the workspace": /root and the image's WORKDIR.
    workspace_paths: tuple[str, ...] = (HOME,)
    unsupported: list[str] = field(default_factory=list)
    # Set when the environment needs a container of its own (see ImageRequest).
    image: ImageRequest | None = None


def plan_environment(environment: Path, issues: IssueList) -> EnvironmentPlan:
    plan = EnvironmentPlan()
    problem = escape_problem(environment.parent, environment)
    if problem is not None:
        issues.issues.append(SuiteIssue(environment, problem))
        return plan
    if not environment.is_dir():
        return plan
    for compose in ("docker-compose.yaml", "docker-compose.yml", "compose.yaml"):
        if (environment / compose).is_file():
            plan.unsupported.append(f"defines several containers ({ENVIRONMENT}/{compose})")
    dockerfile = environment / "Dockerfile"
    if plan.unsupported:
        plan.image = ImageRequest(environment, dockerfile if dockerfile.is_file() else None)
    if dockerfile.is_file() and not dockerfile.is_symlink():
        pairs = _DockerfileReader(environment, plan).read(dockerfile.read_text(encoding="utf-8", errors="replace"))
    else:
        files, links = collect_files(environment, root=environment, skip={SKILLS, "Dockerfile", "docker-compose.yaml",
                                                        "docker-compose.yml", "compose.yaml"})
        for link in links:
            issues.issues.append(SuiteIssue(environment / link, "is a symbolic link — environment files must "
                                            "be regular files"))
        pairs = [(environment / rel, rel) for rel in files]
    plan.seed = seed_files(pairs, root=environment) if pairs else None
    return plan


class _DockerfileReader:
    """Reads the few Dockerfile instructions a workspace can honour; anything else is recorded
    in ``plan.unsupported`` with its line."""

    def __init__(self, context: Path, plan: EnvironmentPlan):
        self.context = context
        self.plan = plan
        self.workdir = HOME
        self.pairs: dict[str, Path] = {}
        self.packages: list[str] = []
        self.commands: list[str] = []

    def read(self, text: str) -> list[tuple[Path, str]]:
        images = 0
        for number, instruction, argument in _instructions(text):
            where = f"Dockerfile line {number}"
            try:
                images += self._instruction(instruction, argument, where, images)
            except ValueError as exc:  # unbalanced quotes and the like
                self._refuse(f"{where}: cannot read {instruction} ({exc})")
        if self.packages:
            self.commands.insert(0, package_check(self.packages))
        self.plan.commands = tuple(self.commands)
        return [(source, target) for target, source in sorted(self.pairs.items())]

    def _instruction(self, instruction: str, argument: str, where: str, images: int) -> int:
        """Apply one instruction; returns 1 for a FROM (images are counted), else 0."""
        if instruction == "FROM":
            self._from(argument, where, images + 1)
            return 1
        if instruction == "WORKDIR":
            self._workdir(argument, where)
        elif instruction in ("COPY", "ADD"):
            self._copy(instruction, argument, where)
        elif instruction == "ENV":
            # Each value sees the variables set before it, as Docker evaluates them.
            for name, value in _env_pairs(argument).items():
                self.plan.env[name] = self._expand(value)
        elif instruction == "RUN":
            self._run(argument, where)
        elif instruction not in _IGNORED_INSTRUCTIONS:
            self._refuse(f"{where}: {instruction} is not something a workspace can reproduce")
        return 0

    def _refuse(self, reason: str) -> None:
        self.plan.unsupported.append(CUSTOM_IMAGE + reason)
        self.plan.image = ImageRequest(self.context, self.context / "Dockerfile")

    def _expand(self, text: str) -> str:
        return expand_variables(text, self.plan.env)

    def _from(self, argument: str, where: str, images: int) -> None:
        if images > 1:
            self._refuse(f"{where}: a multi-stage build")
            return
        words = [w for w in argument.split() if not w.startswith("--")]  # --platform=linux/amd64
        image = self._expand(words[0]) if words else ""
        name = image.split("@")[0]
        if ":" in name.rsplit("/", 1)[-1]:
            name = name.rsplit(":", 1)[0]
        if name.rsplit("/", 1)[-1] not in _ALLOWED_BASES:
            self._refuse(f"{where}: builds on {image!r} (skillab gives a python3 environment: python, "
                         "ubuntu and debian bases only)")

    def _workdir(self, argument: str, where: str) -> None:
        path = posixpath.normpath(posixpath.join(self.workdir, self._expand(argument.strip().strip('"'))))
        if path == "/":
            self._refuse(f"{where}: WORKDIR / cannot be mapped to the workspace")
            return
        self.workdir = path
        if path not in self.plan.workspace_paths:
            self.plan.workspace_paths = (*self.plan.workspace_paths, path)

    def _copy(self, instruction: str, argument: str, where: str) -> None:
        args = [self._expand(a) for a in _json_or_shell_words(argument)]
        flags = [a for a in args if a.startswith("--")]
        args = [a for a in args if not a.startswith("--")]
        if any(f.startswith("--from") for f in flags):
            self._refuse(f"{where}: copies from another image")
            return
        if len(args) < 2:
            self._refuse(f"{where}: {instruction} needs a source and a destination")
            return
        *sources, dest = args
        for source in sources:
            if re.match(r"^[a-z]+://", source):
                self._refuse(f"{where}: downloads {source!r} (no network)")
            elif _is_skills(source):
                continue  # skillab hands the skill to the with-skill arm itself
            else:
                self._copy_one(source, dest, many=len(sources) > 1, where=where)

    def _copy_one(self, source: str, dest: str, *, many: bool, where: str) -> None:
        target_dir = posixpath.normpath(posixpath.join(self.workdir, dest))
        rel_dest = self._workspace_rel(target_dir)
        if rel_dest is None:
            self._refuse(f"{where}: copies into {dest!r}, outside the paths skillab maps to the workspace "
                         f"({', '.join(self.plan.workspace_paths)})")
            return
        pattern = source.strip("/")
        if pattern in ("", "."):
            matches = [self.context]
        else:
            matches = sorted(Path(p) for p in glob.glob(os.path.join(glob.escape(str(self.context)), pattern)))
        if not matches:
            self._refuse(f"{where}: copies {source!r}, which is not in {ENVIRONMENT}/")
            return
        # Into the workspace itself, or a path ending in '/': a directory, as Docker treats it.
        into_directory = dest.endswith("/") or many or rel_dest == "."
        skills = self.context / SKILLS
        for match in matches:
            if match == skills or skills in match.parents:
                continue  # a pattern (``*``, ``sk*``) that takes in the skills: never into any arm
            if escape_problem(self.context, match) is not None:
                self._refuse(f"{where}: copies {source!r}, a link or a path outside {ENVIRONMENT}/")
                continue
            if match.is_dir():
                files, _links = collect_files(match, root=self.context, skip={SKILLS} if match == self.context else ())
                for rel in files:
                    self._add(match / rel, posixpath.join(rel_dest, rel))
            elif into_directory:
                self._add(match, posixpath.join(rel_dest, match.name))
            else:
                self._add(match, rel_dest)

    def _add(self, source: Path, target: str) -> None:
        target = posixpath.normpath(target)
        if target not in (".", "") and not target.startswith("../"):
            self.pairs[target] = source

    def _workspace_rel(self, path: str) -> str | None:
        """``path`` (absolute) relative to the workspace, or None outside the mapped paths."""
        for base in sorted(self.plan.workspace_paths, key=len, reverse=True):
            if path == base:
                return "."
            if path.startswith(base.rstrip("/") + "/"):
                return path[len(base.rstrip("/")) + 1:]
        return None

    def _run(self, argument: str, where: str) -> None:
        for command in re.split(r"\s*(?:&&|;)\s*", argument.strip()):
            words = shlex.split(command) if command else []
            if not words:
                continue
            packages = _pip_install(words)
            if packages is not None:
                self.packages += packages
            elif words[0] == "mkdir":
                for path in (w for w in words[1:] if not w.startswith("-")):
                    rel = self._workspace_rel(posixpath.normpath(posixpath.join(self.workdir, path)))
                    if rel is None:
                        self._refuse(f"{where}: creates {path!r} outside the workspace")
                    elif rel != ".":
                        self.commands.append(f"mkdir -p {shlex.quote(rel)}")
            else:
                self._refuse(f"{where}: RUN {command[:80]!r}")


def _instructions(text: str) -> list[tuple[int, str, str]]:
    """(line, INSTRUCTION, argument) for each instruction, continuation lines joined."""
    found: list[tuple[int, str, str]] = []
    pending, start = "", 0
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if not pending and (not line or line.startswith("#")):
            continue
        if not pending:
            start = number
        if line.endswith("\\"):
            pending += line[:-1] + " "
            continue
        pending += line
        keyword, _, argument = pending.partition(" ")
        found.append((start, keyword.upper(), argument.strip()))
        pending = ""
    return found


def _json_or_shell_words(argument: str) -> list[str]:
    if argument.startswith("["):
        try:
            words = json.loads(argument)
            if isinstance(words, list) and all(isinstance(w, str) for w in words):
                return words
        except ValueError:
            pass
    return shlex.split(argument)


def _is_skills(source: str) -> bool:
    """``skills``, ``./skills/``, ``skills/x``: the task's skills, never copied into any arm."""
    path = posixpath.normpath(source.strip())
    return path == SKILLS or path.startswith(f"{SKILLS}/")


def expand_variables(text: str, env: dict[str, str], *, base: bool = False) -> str:
    """``$VAR``, ``${VAR}``, ``${VAR:-word}`` and ``${VAR:+word}`` as Docker expands them in
    ENV, WORKDIR, COPY and FROM; a variable the Dockerfile never set comes from the base
    environment (``PATH`` is the sandbox's), and is empty otherwise. ``\\$`` stays literal.

    Without ``base``, base-environment variables are left for the run to expand (``base=True``
    where the command runs), so a loaded suite does not depend on the machine that loaded it."""

    def value_of(name: str) -> str | None:
        if name in env:
            return env[name]
        if name in _BASE_ENV_NAMES:
            return HOME if name == "HOME" else os.environ.get(name, "/usr/local/bin:/usr/bin:/bin" if name == "PATH" else "")
        return None

    def replace(match: re.Match[str]) -> str:
        if match.start() > 0 and text[match.start() - 1] == "\\":
            return match.group(0)
        name = match.group("braced") or match.group("bare")
        if not base and name not in env and name in _BASE_ENV_NAMES:
            return match.group(0)
        value = value_of(name)
        op = match.group("op")
        if op == "-":
            return value if value else match.group("word")
        if op == "+":
            return match.group("word") if value else ""
        return value or ""

    expanded = _VARIABLE.sub(replace, text)
    return expanded.replace("\\$", "$") if base else expanded


def _env_pairs(argument: str) -> dict[str, str]:
    words = shlex.split(argument)
    if words and "=" not in words[0]:
        return {words[0]: " ".join(words[1:])}
    return dict(w.split("=", 1) for w in words if "=" in w)


def _pip_install(words: list[str]) -> list[str] | None:
    """The packages of a ``pip install`` command, or None when it is not one."""
    if words[:2] in (["pip", "install"], ["pip3", "install"]):
        rest = words[2:]
    elif len(words) >= 4 and words[0] in ("python", "python3") and words[1:4] == ["-m", "pip", "install"]:
        rest = words[4:]
    else:
        return None
    names = []
    for word in rest:
        if word.startswith("-"):
            continue
        match = re.match(r"^[A-Za-z0-9][A-Za-z0-9._-]*", word)
        if match:
            names.append(match.group(0))
    return names


def package_check(packages: list[str] | tuple[str, ...]) -> str:
    """A python3 command that exits non-zero, naming them and itself, when any of ``packages``
    is not installed."""
    script = (
        "import sys, importlib.metadata as m\n"
        "missing = []\n"
        "for name in sys.argv[1:]:\n"
        "    try:\n"
        "        m.version(name)\n"
        "    except m.PackageNotFoundError:\n"
        "        missing.append(name)\n"
        "if missing:\n"
        "    sys.exit('the task needs the Python packages ' + ', '.join(missing) + ', which python3 (' + "
        "sys.executable + ') does not have here; the sandbox has no network, so install them before the run')\n"
    )
    names = " ".join(shlex.quote(p) for p in dict.fromkeys(packages))
    return f"python3 -c {shlex.quote(script)} {names}"
