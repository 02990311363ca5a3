"""The original skill for ``--against REF_OR_DIR``: a directory, or the skill as a git ref had it.

A directory holding SKILL.md is loaded as it is. Anything else is read as a git ref of the
repository that holds the candidate skill: the skill directory's tree at that ref is extracted
(``git archive``) into a temporary directory that lives as long as the ``open_original`` block.
A checkout that lacks the ref fetches it once (``git fetch --depth=1 origin REF``): a pull
request's base commit is usually missing from the shallow clone CI makes.
"""

from __future__ import annotations

import io
import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from ..core.summary import OriginalRef
from ..errors import UsageError
from ..skill.loader import SKILL_FILE, Skill, load_skill

if TYPE_CHECKING:
    from ..agents.base import Agent

OriginalSource = Literal["directory", "git"]
GIT_TIMEOUT_S = 120.0


class OriginalMissing(UsageError):
    """The ref exists but the skill directory did not exist there (a new skill)."""


@dataclass(frozen=True)
class OriginalSkill:
    """The skill the candidate is compared with, and where it came from."""

    skill: Skill
    source: OriginalSource
    # What the user passed (a path or a ref), and for git the commit it resolved to.
    spec: str
    commit: str | None = None
    # The skill's directory at the ref when the candidate's was renamed since (git only).
    renamed_from: str | None = None

    @property
    def label(self) -> str:
        if self.source == "git":
            short = (self.commit or "")[:12]
            label = self.spec if self.spec.startswith(short) else f"{self.spec} ({short})"
            return f"{label}, at {self.renamed_from}" if self.renamed_from else label
        return self.spec

    def ref(self) -> OriginalRef:
        """Where the original came from, as the results document records it."""
        return OriginalRef(self.source, self.spec, self.commit, self.label, self.skill.name,
                           self.skill.content_hash(), self.renamed_from)


def against_warnings(adapter: Agent, original: OriginalSkill | None) -> list[str]:
    """What makes the comparison with the original mean less, as the adapter tells it."""
    if original is None:
        return []
    said = adapter.against_warning(original.skill.root, original.label)
    return [said] if said else []


@contextmanager
def open_original(spec: str, candidate_dir: Path) -> Iterator[OriginalSkill]:
    """The original skill for ``spec``; a git ref's files are removed when the block ends.

    Raises ``UsageError`` (``OriginalMissing`` when the skill did not exist at the ref) or
    ``SkillError`` before anything runs.
    """
    directory = Path(spec).expanduser()
    if (directory / SKILL_FILE).is_file():
        yield OriginalSkill(load_skill(directory), "directory", spec)
        return
    repo = GitRepo.containing(Path(candidate_dir))
    if repo is None:
        hint = " (it is a directory without SKILL.md)" if directory.is_dir() else ""
        raise UsageError(
            f"--against {spec!r}: not a skill directory{hint}, and {candidate_dir} is not in a "
            "git repository, so it cannot be read as a git ref"
        )
    commit = repo.resolve_commit(spec)
    prefix = repo.prefix_of(Path(candidate_dir))
    renamed_from = None
    if not repo.has_directory(commit, prefix):
        renamed_from = repo.renamed_from(commit, prefix)
    if renamed_from is not None:
        prefix = renamed_from
    elif not repo.has_directory(commit, prefix):
        raise OriginalMissing(
            f"--against {spec!r}: {prefix or '.'} does not exist at {commit[:12]} "
            "(a new skill has no original to compare with)"
        )
    with tempfile.TemporaryDirectory(prefix="skillab-original-") as scratch:
        root = repo.extract(commit, prefix, Path(scratch))
        yield OriginalSkill(load_skill(root), "git", spec, commit, renamed_from)


def original_exists(spec: str, candidate_dir: Path) -> bool:
    """Whether ``open_original`` would find a skill; other problems still raise ``UsageError``."""
    try:
        with open_original(spec, candidate_dir):
            return True
    except OriginalMissing:
        return False


@dataclass(frozen=True)
class GitRepo:
    """A work tree, driven through the git command line."""

    toplevel: Path

    @classmethod
    def containing(cls, directory: Path) -> GitRepo | None:
        # Found by walking up rather than asked of git, so the repository can be named as a
        # safe.directory: a CI checkout owned by another user is otherwise refused, and its
        # suite's commands are run anyway, so trusting its git config adds no exposure.
        current = directory.resolve()
        for candidate in (current, *current.parents):
            if (candidate / ".git").exists():
                return cls(candidate)
        return None

    def prefix_of(self, directory: Path) -> str:
        """``directory`` relative to the work tree, POSIX, '' for the top level."""
        rel = directory.resolve().relative_to(self.toplevel).as_posix()
        return "" if rel == "." else rel

    def resolve_commit(self, ref: str) -> str:
        if not ref.strip() or ref.startswith("-"):
            raise UsageError(f"--against {ref!r}: not a directory or a git ref")
        found = self._commit(ref)
        if found:
            return found
        fetched = self.git("fetch", "--quiet", "--upload-pack=git-upload-pack", "--depth=1",
                           "origin", ref, check=False)
        found = self._commit(ref) or (self._commit("FETCH_HEAD") if fetched.returncode == 0 else None)
        if found:
            return found
        reason = _last_line(fetched.stderr) or "the ref is unknown"
        raise UsageError(
            f"--against {ref!r}: no such directory, and not a commit of {self.toplevel} "
            f"(fetching it from origin failed: {reason}). Pass a branch, tag or commit the "
            "repository has, or fetch it first (git fetch origin REF)"
        )

    def _commit(self, ref: str) -> str | None:
        result = self.git("rev-parse", "--verify", "--quiet", "--end-of-options", f"{ref}^{{commit}}",
                          check=False)
        return result.stdout.decode().strip() if result.returncode == 0 else None

    def has_directory(self, commit: str, prefix: str) -> bool:
        if not prefix:
            return True
        result = self.git("cat-file", "-t", f"{commit}:{prefix}", check=False)
        return result.returncode == 0 and result.stdout.decode().strip() == "tree"

    def renamed_from(self, commit: str, prefix: str) -> str | None:
        """The skill directory at ``commit`` that git sees renamed to ``prefix`` in the index
        (committed or staged by ``git mv``): the old directory most of its renamed files came
        from, if it held a SKILL.md. SKILL.md alone is often too short, once edited, for git's
        similarity test. The index, not the work tree: comparing files on disk would run the
        repository's clean filters."""
        if not prefix:
            return None
        diff = self.git("diff", "--cached", "--find-renames", "--name-status", "-z", "--no-ext-diff",
                        "--no-textconv", "--diff-filter=R", commit, "--", check=False)
        if diff.returncode != 0:
            return None
        fields = diff.stdout.decode("utf-8", "surrogateescape").split("\0")
        votes: dict[str, int] = {}
        for status, old, new in zip(fields[0::3], fields[1::3], fields[2::3]):
            rel = new[len(prefix) + 1:] if status.startswith("R") and new.startswith(f"{prefix}/") else ""
            if rel and old.endswith(f"/{rel}"):
                old_dir = old[: -len(rel) - 1]
                votes[old_dir] = votes.get(old_dir, 0) + 1
        for old_dir in sorted(votes, key=lambda d: (-votes[d], d)):
            found = self.git("cat-file", "-e", f"{commit}:{old_dir}/{SKILL_FILE}", check=False)
            if found.returncode == 0:
                return old_dir
        return None

    def extract(self, commit: str, prefix: str, into: Path) -> Path:
        """The tree of ``prefix`` at ``commit`` written below ``into``; returns its directory."""
        args = ["archive", "--format=tar", commit]
        if prefix:
            args += ["--", prefix]
        data = self.git(*args).stdout
        import tarfile  # here: only --against needs it, and a run should not pay its import

        def links_stay(member: tarfile.TarInfo, dest: str) -> tarfile.TarInfo | None:
            # The data filter refuses absolute paths, '..' and links that leave the target. A
            # link out is left out rather than ending the run: the skill loader never stages a
            # link, so the original is the same skill without it.
            try:
                return tarfile.data_filter(member, dest)
            except (tarfile.AbsoluteLinkError, tarfile.LinkOutsideDestinationError):
                return None

        try:
            with tarfile.open(fileobj=io.BytesIO(data)) as archive:
                archive.extractall(into, filter=links_stay)
        except (tarfile.TarError, OSError) as exc:
            raise UsageError(f"--against: the skill at {commit[:12]} cannot be extracted ({exc})") from None
        target = into / prefix if prefix else into
        target.mkdir(parents=True, exist_ok=True)
        return target

    def git(self, *args: str, check: bool = True) -> subprocess.CompletedProcess[bytes]:
        binary = git_binary()
        if binary is None:
            raise UsageError("--against with a git ref needs the git command, which is not installed")
        command = [binary, *_SAFE_CONFIG, "-c", f"safe.directory={self.toplevel}",
                   "-C", str(self.toplevel), *args]
        try:
            result = subprocess.run(
                command, capture_output=True, env=_git_env(), timeout=GIT_TIMEOUT_S, check=False,
                stdin=subprocess.DEVNULL,
            )
        except FileNotFoundError:
            raise UsageError("--against with a git ref needs the git command, which is not installed") from None
        except subprocess.TimeoutExpired:
            raise UsageError(f"git {args[0]} took longer than {GIT_TIMEOUT_S:g}s in {self.toplevel}") from None
        if check and result.returncode != 0:
            raise UsageError(f"git {args[0]} failed in {self.toplevel}: {_last_line(result.stderr)}")
        return result


# Host-side git reads a repository whose files a suite may have written. Everything in a
# repository's config that runs a program is overridden on the command line (which wins over
# .git/config): hooks, the fsmonitor, proxy and ssh commands, credential helpers and remote
# helpers other than the plain transports. A remote's uploadpack is a list whose first value
# wins, so ``fetch`` names the program itself with --upload-pack.
_SAFE_CONFIG = tuple(
    arg
    for key, value in (
        ("core.hooksPath", "/dev/null"),
        ("core.fsmonitor", "false"),
        ("core.sshCommand", "ssh"),
        ("core.gitProxy", ""),
        ("core.askPass", ""),
        ("core.pager", "cat"),
        ("credential.helper", ""),
        ("remote.origin.proxy", ""),
        ("uploadpack.packObjectsHook", ""),
        ("protocol.allow", "never"),
        ("protocol.https.allow", "always"),
        ("protocol.http.allow", "always"),
        ("protocol.ssh.allow", "always"),
        ("protocol.git.allow", "always"),
        ("protocol.file.allow", "always"),
        ("diff.external", ""),
        ("tar.tgz.command", "gzip -cn"),
        ("tar.tar.gz.command", "gzip -cn"),
    )
    for arg in ("-c", f"{key}={value}")
)
# Where git is looked for: the system's directories, never the runner's PATH (a virtualenv's
# bin/ comes first there, and anything can be planted in it).
TRUSTED_PATH = "/usr/local/bin:/usr/bin:/bin"


def git_binary() -> str | None:
    """The system's git, as an absolute resolved path."""
    found = shutil.which("git", path=TRUSTED_PATH)
    return os.path.realpath(found) if found else None


def _git_env() -> dict[str, str]:
    """A minimal environment: no credentials, no system or global config, never a prompt."""
    env = {
        name: value
        for name, value in os.environ.items()
        if name in ("LANG", "TZ") or name.startswith("LC_")
    }
    env.update({
        "PATH": TRUSTED_PATH,
        "HOME": "/nonexistent",
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_CONFIG_GLOBAL": "/dev/null",
        "GIT_TERMINAL_PROMPT": "0",
        "GIT_ASKPASS": "/bin/false",
        "SSH_ASKPASS": "/bin/false",
        "GIT_PROTOCOL_FROM_USER": "0",
        "LC_ALL": "C",
    })
    return env


def _last_line(stderr: bytes) -> str:
    lines = [line.strip() for line in stderr.decode(errors="replace").splitlines() if line.strip()]
    return lines[-1] if lines else ""


__all__ = ["OriginalMissing", "OriginalSkill", "open_original", "original_exists"]
