"""An arm's workspace: a private directory the agent, setup and validators work in.

Layout, under the run's workspace parent::

    <label>-<random>/          private to this arm (0700), so ``ls ..`` shows no other arm
        workspace/             ``root``: cwd of every command
            .home/  .tmp/      HOME and TMPDIR of every command

Every path that comes from a suite, a skill or a model goes through ``safe_join``, which
refuses anything that would land outside the root, including through a symbolic link.
"""

from __future__ import annotations

import os
import re
import shutil
import stat
import tempfile
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path

from ..errors import SandboxError
from .backend import Backend, default_backend
from .disk_budget import mount_budget, unmount_budget
from .environment import Inherited, inherited, scrubbed_env
from .pristine import PRISTINE_DIR, tops
from .process import DEFAULT_OUTPUT_LIMIT, CommandResult, run_command, stopping
from .reaper import Reaper
from .trees import remove_tree, walk
from .view import ProxyRoute, View

ROOT_NAME = "workspace"
HOME_NAME = ".home"
TMP_NAME = ".tmp"
_DRIVE = re.compile(r"^[A-Za-z]:")
_UNSAFE_LABEL = re.compile(r"[^A-Za-z0-9._-]+")
_LABEL_MAX = 60


def safe_join(root: Path, rel: str) -> Path:
    """``root / rel`` after checking that it stays inside ``root``.

    Refuses an empty path, an absolute path, ``..`` anywhere, backslashes and drive letters
    (separators other systems would honour), and a path whose existing symbolic links lead
    outside ``root``. Links that stay inside are fine.
    """
    parts = relative_parts(rel)
    path = Path(root, *parts)
    if not _within(os.path.realpath(path), os.path.realpath(root)):
        raise SandboxError(f"path {rel!r} leads outside the workspace through a symbolic link")
    return path


def relative_parts(rel: str) -> list[str]:
    """The components of a workspace-relative path, refusing any that could leave the workspace."""
    if not isinstance(rel, str) or not rel.strip():
        raise SandboxError("an empty path names no file in the workspace")
    if "\0" in rel:
        raise SandboxError(f"path {rel!r} contains a NUL byte")
    if "\\" in rel or _DRIVE.match(rel):
        raise SandboxError(f"path {rel!r} is not a relative POSIX path; use '/' separators")
    if rel.startswith("/"):
        raise SandboxError(f"path {rel!r} is absolute; paths are relative to the workspace")
    parts = [part for part in rel.split("/") if part not in ("", ".")]
    if ".." in parts:
        raise SandboxError(f"path {rel!r} uses '..'; paths must stay inside the workspace")
    if not parts:
        raise SandboxError(f"path {rel!r} names the workspace itself, not a file in it")
    return parts


def _within(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


class Workspace:
    """One arm's private directory tree, and the commands run in it under ``backend``."""

    def __init__(self, container: Path, backend: Backend):
        self._container = container
        self.backend = backend
        self.root = container / ROOT_NAME
        self.home = self.root / HOME_NAME
        self.tmp = self.root / TMP_NAME
        # Agent entries that a restore (see ``withdraw``) replaced with the originals.
        self.displaced: list[str] = []
        # (pristine copy, workspace-relative top entry) of the skill's bundled files, and the
        # ones bound over the workspace's for the commands run from now on (``pristine``).
        self._pristine: tuple[tuple[Path, str], ...] = ()
        self._pinned: tuple[tuple[Path, str], ...] = ()
        # Whether the container is a tmpfs of the arm's disk budget (``disk_budget``).
        self.budgeted = False
        # The runner's environment as this arm's commands see it, read once (``environment``).
        self.inherited = inherited()

    @classmethod
    def create(cls, parent: Path, label: str, *, backend: Backend | None = None,
               budgeted: bool = False) -> Workspace:
        """A fresh workspace in its own randomly named private directory under ``parent``, whose
        commands run under ``backend`` (the run's; None: ``default_backend``); ``budgeted``: on a
        tmpfs of the arm's disk budget where one can be mounted (``disk_budget``)."""
        if stopping():  # an interrupted run's scratch is being removed: make nothing in it
            raise SandboxError("skillab is stopping: no new workspaces")
        parent = Path(os.path.realpath(parent))
        parent.mkdir(parents=True, exist_ok=True)
        safe_label = _UNSAFE_LABEL.sub("-", label).strip(".-")[:_LABEL_MAX] or "arm"
        workspace = cls(Path(tempfile.mkdtemp(prefix=f"{safe_label}-", dir=parent)), backend or default_backend())
        workspace.budgeted = budgeted and mount_budget(workspace._container)
        for directory in (workspace.root, workspace.home, workspace.tmp):
            directory.mkdir(mode=0o700)
        return workspace

    def write_files(self, files: Mapping[str, str]) -> None:
        """Write each relative path's text; every path is checked before any file is written."""
        self._ensure_root()
        targets = [(safe_join(self.root, rel), content) for rel, content in files.items()]
        for target, content in targets:
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(content, encoding="utf-8")

    def put(self, rel: str, data: bytes) -> Path:
        """Write ``rel`` afresh: whatever is at that path (a file, a link, a directory) goes
        first, so the write never follows a link planted there."""
        parts = relative_parts(rel)
        self._ensure_root()
        parent = safe_join(self.root, "/".join(parts[:-1])) if len(parts) > 1 else self.root
        parent.mkdir(parents=True, exist_ok=True)
        target = parent / parts[-1]
        _remove(target)
        fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o644)
        with open(fd, "wb") as handle:
            handle.write(data)
        return target

    def stage(self, source_root: Path, rels: Iterable[str]) -> None:
        """Copy files from ``source_root`` (a skill directory) in, under the same relative paths.

        A directory is copied file by file. Links must resolve to regular files inside
        ``source_root``; anything else (links out, devices, pipes) is refused.
        """
        source_root = Path(os.path.realpath(source_root))
        self._ensure_root()
        for rel in rels:
            source = safe_join(source_root, rel)
            if source.is_dir():
                for inner in _files_below(source):
                    self._copy_in(source_root, f"{rel.rstrip('/')}/{inner}")
            else:
                self._copy_in(source_root, rel)

    def _copy_in(self, source_root: Path, rel: str) -> None:
        source = safe_join(source_root, rel)
        try:
            mode = os.stat(source).st_mode
        except FileNotFoundError:
            raise SandboxError(f"cannot stage {rel!r}: it does not exist") from None
        if not stat.S_ISREG(mode):
            raise SandboxError(f"cannot stage {rel!r}: not a regular file")
        target = safe_join(self.root, rel)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(source, target)
        os.chmod(target, stat.S_IMODE(mode))

    def keep_pristine(self, rels: Sequence[str]) -> None:
        """Copy the top-level entries holding bundled files, as staging and setup left them, to
        a directory beside the workspace that no command can reach, for ``pin_pristine`` to
        bind over the workspace's (see ``pristine``)."""
        holder = Workspace(self._container / PRISTINE_DIR, self.backend)
        holder._container.mkdir(mode=0o700, exist_ok=True)
        holder.stage(self.root, [top for top in tops(rels) if os.path.lexists(self.root / top)])
        self._pristine = tuple(
            (holder.root / top, top) for top in tops(rels) if os.path.lexists(holder.root / top)
        )

    def pin_pristine(self) -> None:
        """From now on every command here sees the pristine bundled files, read-only, in place
        of whatever the workspace holds at their top-level entries, and no user site."""
        self._pinned = self._pristine

    @contextmanager
    def withdraw(self, rels: Iterable[str]) -> Iterator[None]:
        """Move ``rels`` out of the workspace for the duration of the block, then restore them.

        Paths that do not exist are skipped. Withdrawn entries wait in a private directory
        outside the arm's own, and directories left empty behind them are removed, so nothing
        in or around the workspace hints at them. On the way back the originals win: whatever
        was created at their paths meanwhile (a file, a link, a directory in the way) is
        removed and named in ``displaced``, because a bundled file is often a grader, and a
        replaced grader would grade nothing. Entries beside them are kept.
        """
        self.displaced = []
        rels = list(rels)
        if not rels:
            yield
            return
        withdrawn: list[tuple[list[str], Path]] = []
        stash = Path(tempfile.mkdtemp(prefix=".", dir=self._container.parent))
        try:
            for rel in rels:
                source = safe_join(self.root, rel)
                if not os.path.lexists(source):
                    continue
                kept = stash / str(len(withdrawn))
                shutil.move(source, kept)
                withdrawn.append((relative_parts(rel), kept))
                self._prune_empty(source.parent)
            yield
        finally:
            try:
                self._ensure_root()
                for parts, kept in reversed(withdrawn):
                    self._restore(parts, kept)
            finally:
                _remove(stash)

    def check_links(self) -> list[str]:
        """Relative paths of the symbolic links in the tree that point outside the root."""
        real_root = os.path.realpath(self.root)
        escaping = []
        for directory, dirnames, filenames in walk(self.root):
            for name in (*dirnames, *filenames):
                path = os.path.join(directory, name)
                if os.path.islink(path) and not _within(os.path.realpath(path), real_root):
                    escaping.append(os.path.relpath(path, self.root))
        return sorted(escaping)

    def env(self, extra: Mapping[str, str] | None = None) -> dict[str, str]:
        """The scrubbed environment commands in this workspace get."""
        return scrubbed_env(self.home, self.tmp, extra, self.inherited)

    def run(
        self,
        command: str | Sequence[str],
        *,
        timeout_s: float,
        extra_env: Mapping[str, str] | None = None,
        stdin: str | None = None,
        output_limit: int = DEFAULT_OUTPUT_LIMIT,
        read_only: Sequence[Path] = (),
        read_only_at: Sequence[tuple[Path, str]] = (),
    ) -> CommandResult:
        """Run a suite-authored command (setup, validators, graders) in the workspace, under the
        workspace's backend and with the scrubbed environment; ``read_only`` adds host paths to
        its view."""
        if self._pinned:
            # A .pth file in the user site (HOME is in the workspace) runs at Python's start.
            extra_env = {**(extra_env or {}), "PYTHONNOUSERSITE": "1"}
        return run_in(
            self.root,
            command,
            timeout_s=timeout_s,
            extra_env=extra_env,
            stdin=stdin,
            output_limit=output_limit,
            read_only=read_only,
            read_only_at=read_only_at,
            pinned=self._pinned,
            backend=self.backend,
            base_env=self.inherited,
        )

    def cleanup(self) -> None:
        """Remove the workspace and everything in it (best effort: a leftover is only litter)."""
        try:
            self._unmount()
            _remove(self._container)
        except OSError:
            pass

    def discard(self) -> None:
        """Remove the workspace in the background (see ``reaper``); ``drain_discarded`` waits."""
        try:
            self._unmount()
        except OSError:
            pass  # then its files are removed one by one, and the empty mount point stays
        _REAPER.discard(self._container)

    def _unmount(self) -> None:
        if self.budgeted:
            unmount_budget(self._container)
            self.budgeted = False

    def _ensure_root(self) -> None:
        # A command may have removed the root or swapped it for a link; write into a real one.
        if os.path.islink(self.root) or (os.path.lexists(self.root) and not self.root.is_dir()):
            os.unlink(self.root)
        self.root.mkdir(mode=0o700, exist_ok=True)

    def _restore(self, parts: list[str], kept: Path) -> None:
        directory = self.root
        for name in parts[:-1]:
            directory = directory / name
            if os.path.lexists(directory) and (
                os.path.islink(directory) or not directory.is_dir()
            ):
                self._displace(directory)
            directory.mkdir(exist_ok=True)
        self._place(kept, directory / parts[-1])

    def _place(self, kept: Path, target: Path) -> None:
        if os.path.lexists(target):
            if _is_real_dir(kept) and _is_real_dir(target):
                for name in os.listdir(kept):
                    self._place(kept / name, target / name)
                return
            self._displace(target)
        shutil.move(kept, target)

    def _displace(self, path: Path) -> None:
        self.displaced.append(os.path.relpath(path, self.root))
        _remove(path)

    def _prune_empty(self, directory: Path) -> None:
        while directory != self.root and _is_real_dir(directory) and not os.listdir(directory):
            directory.rmdir()
            directory = directory.parent


def run_in(
    root: Path,
    command: str | Sequence[str],
    *,
    timeout_s: float,
    extra_env: Mapping[str, str] | None = None,
    stdin: str | None = None,
    output_limit: int = DEFAULT_OUTPUT_LIMIT,
    hide: Sequence[Path] = (),
    read_only: Sequence[Path] = (),
    read_only_at: Sequence[tuple[Path, str]] = (),
    network: ProxyRoute | None = None,
    pinned: Sequence[tuple[Path, str]] = (),
    backend: Backend | None = None,
    base_env: Inherited | None = None,
) -> CommandResult:
    """Run a command in a workspace known by its root path (the agent's tools use this), under
    ``backend`` (the run's, from ``ArmRequest.sandbox``; None: ``default_backend``).

    The command's view is this workspace and the read-only system (plus ``read_only``: an agent
    CLI's installation); ``hide`` keeps host directories out even where a bound system directory
    holds them (the skill's, for the without-skill arm). ``network`` is the proxy route of an
    agent CLI; everything else has none. ``pinned`` binds (host path, workspace-relative
    path) read-only over the workspace (a grader's pristine files). ``base_env``: the runner's
    environment as the arm read it once (None: read now).
    """
    home, tmp = root / HOME_NAME, root / TMP_NAME
    for directory in (home, tmp):
        # An earlier command may have deleted them; tools expect HOME and TMPDIR to exist.
        try:
            directory.mkdir(mode=0o700)
        except OSError:
            pass
    real = Path(os.path.realpath(root))
    view = View(
        workspace=real,
        cwd=real,
        read_only=tuple(read_only),
        read_only_at=tuple(read_only_at),
        hide=tuple(hide),
        network=network,
        pinned=tuple((host, str(real / rel)) for host, rel in pinned),
    )
    return run_command(
        command,
        cwd=real,
        env=scrubbed_env(real / HOME_NAME, real / TMP_NAME, extra_env, base_env),
        timeout_s=timeout_s,
        stdin=stdin,
        output_limit=output_limit,
        view=view,
        backend=backend or default_backend(),
    )


def _files_below(directory: Path) -> list[str]:
    """Every non-directory entry below ``directory``, relative to it, without following links."""
    found = []
    for current, dirnames, filenames in walk(directory):
        links = [name for name in dirnames if os.path.islink(os.path.join(current, name))]
        for name in (*filenames, *links):
            found.append(os.path.relpath(os.path.join(current, name), directory))
    return sorted(found)


def _is_real_dir(path: Path) -> bool:
    return not os.path.islink(path) and path.is_dir()


def _remove(path: Path) -> None:
    """Delete a file, link or tree, including read-only and arbitrarily deep directories a
    command left behind (``trees.remove_tree``)."""
    if not os.path.lexists(path):
        return
    if _is_real_dir(path):
        remove_tree(path)
    else:
        os.unlink(path)


_REAPER = Reaper(_remove)


def drain_discarded() -> None:
    """Wait until every discarded workspace is gone."""
    _REAPER.drain()
