"""A Python for graders inside the sandbox, without skillab's virtualenv in view.

The pytest grader needs an interpreter and pytest. The interpreter is skillab's own base
installation (mounted read-only where it lies outside the system directories, such as a pyenv or
setup-python tree); pytest and the packages it imports are mounted one by one, read-only, under
``SITE_DIR`` and put on ``PYTHONPATH``. The virtualenv itself, with its ``bin/`` and the rest of
skillab's dependencies, is never mounted.
"""

from __future__ import annotations

import functools
import importlib.util
import json
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from .backend import Backend

SITE_DIR = "/opt/skillab-python"
PYTEST_MODULES = ("pytest", "_pytest", "pluggy", "iniconfig", "packaging", "py",
                  "exceptiongroup", "tomli")


@dataclass(frozen=True)
class PythonView:
    interpreter: str
    read_only: tuple[Path, ...]
    read_only_at: tuple[tuple[Path, str], ...]
    env: dict[str, str]


def python_view(modules: tuple[str, ...] = PYTEST_MODULES) -> PythonView:
    interpreter = os.path.realpath(sys.executable)
    base = Path(os.path.realpath(sys.base_prefix))
    system = in_system(base)
    placed = []
    for name in modules:
        spec = importlib.util.find_spec(name)
        if spec is None or spec.origin in (None, "built-in", "frozen"):
            continue
        origin = Path(spec.origin)
        source = origin.parent if spec.submodule_search_locations else origin
        if not _below(source, base):  # the standard library is mounted with the interpreter
            placed.append((source, f"{SITE_DIR}/{source.name}"))
    return PythonView(
        interpreter=interpreter,
        read_only=() if system else (base,),
        read_only_at=tuple(placed),
        env={"PYTHONPATH": SITE_DIR, "PYTHONNOUSERSITE": "1"},
    )


def in_system(prefix: Path) -> bool:
    """Whether ``prefix`` lies in the system directories every sandbox already shows."""
    return str(prefix).startswith(("/usr/", "/bin/", "/lib")) or str(prefix) == "/usr"


def _below(path: Path, root: Path) -> bool:
    return str(path) == str(root) or str(path).startswith(str(root).rstrip("/") + "/")


# The interpreter graders that need the user's tools run with (pytest, pandas, ...), when
# ``python3`` on the caller's PATH is not the one meant.
GRADER_PYTHON_ENV = "SKILLAB_GRADER_PYTHON"


@dataclass(frozen=True)
class CallerPython:
    """The ``python3`` the caller's PATH (or ``SKILLAB_GRADER_PYTHON``) names, as a sandboxed
    command sees it: its prefixes mounted read-only and its ``bin/`` first on PATH."""

    interpreter: str
    read_only: tuple[Path, ...]
    path_dir: str
    # Why it is not used (not found, would expose a home or checkout), else None.
    problem: str | None = None

    def describe(self) -> str:
        return f"python3 = {self.interpreter}" if not self.problem else f"python3 = the one in {self.problem}"

    def env(self, path: str) -> dict[str, str]:
        """The sandboxed command's PATH with this interpreter's ``bin/`` first."""
        return {"PATH": f"{self.path_dir}:{path}"} if self.path_dir and not self.problem else {}


def caller_python() -> CallerPython:
    """Where ``python3`` resolves on the caller's PATH: a pyenv shim, a venv, conda or
    ``/opt/hostedtoolcache`` all answer with their real interpreter and prefixes (asked of the
    interpreter itself, so a shim is followed). Mounted read-only, never writable."""
    wanted = os.environ.get(GRADER_PYTHON_ENV) or shutil.which("python3") or ""
    return _caller_python(wanted, os.environ.get("PATH", ""))


@functools.lru_cache(maxsize=8)
def _caller_python(wanted: str, _path: str) -> CallerPython:
    if not wanted:
        return CallerPython("", (), "", problem="the sandbox's /usr: no python3 on the caller's PATH")
    from .environment import looks_secret

    env = {k: v for k, v in os.environ.items() if not looks_secret(k)}
    probe = "import json, sys; print(json.dumps([sys.executable, sys.prefix, sys.base_prefix]))"
    try:
        done = subprocess.run([wanted, "-c", probe], capture_output=True, text=True, timeout=20,
                              env=env, stdin=subprocess.DEVNULL)
        executable, prefix, base = json.loads(done.stdout.strip().splitlines()[-1])
    except (OSError, subprocess.TimeoutExpired, ValueError, IndexError):
        return CallerPython(wanted, (), "", problem=f"the sandbox's /usr: {wanted} did not say where it lives")
    mounts: list[Path] = []
    for raw in dict.fromkeys((prefix, base)):
        real = Path(os.path.realpath(raw))
        if in_system(real):
            continue  # in every sandbox's view already
        why = _too_wide(real)
        if why:
            return CallerPython(executable, (), "", problem=f"the sandbox's /usr: {executable}'s prefix {real} {why}")
        mounts.append(real)
    return CallerPython(executable, tuple(mounts), os.path.dirname(executable))


def _too_wide(prefix: Path) -> str | None:
    """Why mounting ``prefix`` would show more than an interpreter: the root, a home directory
    or the checkout skillab runs from (a prefix inside them, such as ``.venv``, is fine)."""
    protected = [Path("/"), Path(os.path.realpath(Path.home())), Path(os.path.realpath(os.getcwd()))]
    for path in protected:
        if prefix == path or path.is_relative_to(prefix):
            return f"would expose {path}"
    return None


def grader_python(backend: Backend) -> CallerPython:
    """The python3 a grader that needs the user's tools runs with under ``backend``: the
    caller's (above) under ``bwrap``; the image's own under ``image``, whose root has its own /usr."""
    from .image import ImageBackend

    if isinstance(backend, ImageBackend):
        return CallerPython("", (), "", problem=backend.describe_root())
    return caller_python()


def grader_python_env(python: CallerPython) -> dict[str, str]:
    """PATH for a sandboxed command with ``python``'s ``bin/`` first (the caller's PATH after it,
    as ``scrubbed_env`` passes it on); empty when there is nothing to add."""
    from .environment import DEFAULT_PATH

    return python.env(os.environ.get("PATH") or DEFAULT_PATH)
