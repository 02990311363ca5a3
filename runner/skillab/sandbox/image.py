"""The ``image`` backend: a task that brings a Dockerfile runs on that image's root filesystem.

The image is built once per content digest (the Dockerfile and its build context) with
``buildah bud --storage-driver vfs``, which needs no daemon, and its root filesystem is exposed
with ``buildah mount``. The Dockerfile is the suite's code, so its build gets no more than an arm:
each ``RUN`` step is a runc container (``--isolation oci``: its own pid, mount, ipc and uts
namespaces, pivot_root, so no chroot to climb out of and nothing of the host's files in view) in
its own user namespace, whose capabilities reach no object of the host, with no network; buildah
itself runs in fresh network, pid, ipc and uts namespaces, so ``ADD <url>`` reaches nothing either.
Only the operator grants the build a network (``SKILLAB_IMAGE_BUILD_NETWORK=host``), never the
suite. A step's root is uid 0 in that namespace, as an arm's is in bwrap's (vfs leaves a layer's
top directory owned by the host's root, so a shifted root could not write ``/``); every other uid
maps to a range no host account uses. Every command of the suite (setup, the agent's
tools, the verifier) then runs under bubblewrap exactly as with ``bwrap``, except that the
read-only root is the image's instead of the host's system directories. The arm's workspace is
still the only writable path, so the verifier sees what the agent left, in the same environment.

The build never pulls on its own (``--pull=never``): each base image the Dockerfile names is
looked for in the store first, pulled with ``buildah pull`` when it is missing (a GitHub runner
reaches Docker Hub), and where no registry answers, the error says how to provide it: load an
archive or tag a local image as the name ``FROM`` asks for (``SKILLAB_IMAGE_PULL=never`` skips
the pull).

The skill never enters the image: its ``skills/`` directory is replaced by an empty one in the
build context, so a ``COPY skills ...`` builds but copies nothing, and only the with-skill arm
gets the skill, through its adapter, in its workspace.
"""

from __future__ import annotations

import hashlib
import ipaddress
import os
import re
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from ..errors import UsageError
from .backend import Choice
from .bwrap import TRUSTED_PATH, BwrapBackend

BUILD_TIMEOUT_S = 1800.0
# Where images are stored (default: under the cache home), e.g. a directory CI keeps between runs.
STORE_ENV = "SKILLAB_IMAGE_STORE"
PULL_ENV = "SKILLAB_IMAGE_PULL"
PULL_TIMEOUT_S = 900.0
BUILD_NETWORK_ENV = "SKILLAB_IMAGE_BUILD_NETWORK"
BUILD_NETWORKS = ("none", "host")
# Where a build's uids and gids 1..65535 live on the host: far above any real account's.
BUILD_ID_BASE = 2_000_000_000
BUILD_ID_COUNT = 65536
IMAGE_PREFIX = "localhost/skillab-task"
SKILLS_DIR = "skills"


@dataclass(frozen=True)
class BuiltImage:
    tag: str
    digest: str
    # Whether this run built it (False: an earlier run's image with the same digest).
    built: bool


class ImageBackend(BwrapBackend):
    """bwrap on an image's root filesystem (mounted read-only at ``/``)."""

    name = "image"

    def __init__(self, rootfs: Path, image: BuiltImage):
        super().__init__()
        self.rootfs = rootfs
        self.image = image

    def system_view(self) -> list[str]:
        # Each top-level entry on its own, over bwrap's tmpfs root: mount points for the
        # workspace (and anything else bound) can then be made wherever it lives.
        args: list[str] = []
        for entry in sorted(os.listdir(self.rootfs)):
            if entry in ("proc", "dev", "tmp"):
                continue
            source = self.rootfs / entry
            if source.is_symlink():
                args += ["--symlink", os.readlink(source), f"/{entry}"]
            else:
                args += ["--ro-bind", str(source), f"/{entry}"]
        return args

    def system_sources(self) -> list[str]:
        return [str(self.rootfs / entry) for entry in os.listdir(self.rootfs)]

    def describe_root(self) -> str:
        return f"the read-only root filesystem of image {self.image.tag} (built with buildah)"


def storage_root() -> Path:
    if os.environ.get(STORE_ENV):
        return Path(os.environ[STORE_ENV])
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "skillab" / "images"


def context_digest(environment: Path) -> str:
    """SHA-256 over every file of the build context but the skill, names and contents."""
    digest = hashlib.sha256()
    for current, dirnames, filenames in os.walk(environment):
        dirnames.sort()
        rel_dir = os.path.relpath(current, environment)
        if rel_dir == SKILLS_DIR or rel_dir.startswith(SKILLS_DIR + os.sep):
            continue
        for name in sorted(filenames):
            path = Path(current, name)
            digest.update(os.path.join(rel_dir, name).encode() + b"\0")
            digest.update(path.read_bytes() if not path.is_symlink() else os.readlink(path).encode())
            digest.update(b"\0")
    return digest.hexdigest()


@contextmanager
def image_sandbox(environment: Path) -> Iterator[Choice]:
    """Build (or reuse) the image of ``environment/Dockerfile`` and mount it: the backend of the
    suite's commands, until the block ends."""
    buildah = shutil.which("buildah", path=TRUSTED_PATH)
    if buildah is None:
        raise UsageError("--sandbox image needs buildah (apt-get install buildah)")
    if not (environment / "Dockerfile").is_file():
        raise UsageError(f"--sandbox image: {environment} has no Dockerfile")
    image = build_image(buildah, environment)
    container = _buildah(buildah, "from", "--pull=never", image.tag).strip()
    try:
        rootfs = Path(_buildah(buildah, "mount", container).strip())
        backend = ImageBackend(rootfs, image)
        problem = backend.problem()
        if problem is not None:
            raise UsageError(f"--sandbox image: bwrap does not work here: {problem}")
        yield Choice(backend)
    finally:
        _buildah(buildah, "rm", container, check=False)


def build_image(buildah: str, environment: Path) -> BuiltImage:
    digest = context_digest(environment)
    tag = f"{IMAGE_PREFIX}:{digest[:16]}"
    if _buildah(buildah, "images", "-q", tag, check=False).strip():
        return BuiltImage(tag, digest, built=False)
    for base in base_images((environment / "Dockerfile").read_text(encoding="utf-8", errors="replace")):
        provide_base(buildah, base)
    with tempfile.TemporaryDirectory(prefix="skillab-context-") as scratch:
        context = Path(scratch) / "context"
        shutil.copytree(environment, context, symlinks=True,
                        ignore=lambda d, names: [SKILLS_DIR] if Path(d) == environment else [])
        (context / SKILLS_DIR).mkdir()
        _buildah(buildah, "bud", *build_isolation_args(), "--pull=never", "--layers=false",
                 "-t", tag, "-f", str(context / "Dockerfile"), str(context),
                 timeout=BUILD_TIMEOUT_S, confine=build_network() == "none")
    return BuiltImage(tag, digest, built=True)


def build_network() -> str:
    network = os.environ.get(BUILD_NETWORK_ENV, "none") or "none"
    if network not in BUILD_NETWORKS:
        raise UsageError(f"{BUILD_NETWORK_ENV}={network!r}: expected one of {', '.join(BUILD_NETWORKS)}")
    return network


def build_isolation_args() -> list[str]:
    """How ``buildah bud`` runs each ``RUN`` step: a runc container in its own user namespace."""
    runc = shutil.which("runc", path=TRUSTED_PATH)
    if runc is None:
        raise UsageError("--sandbox image needs runc to build images (apt-get install runc)")
    args = ["--isolation", "oci", "--runtime", runc, "--network", build_network()]
    for flag in ("--userns-uid-map", "--userns-gid-map"):
        args += [flag, "0:0:1", flag, f"1:{BUILD_ID_BASE + 1}:{BUILD_ID_COUNT - 1}"]
    return args


def confined(command: list[str]) -> list[str]:
    """``command`` in fresh network, pid, ipc and uts namespaces (``unshare``, as root)."""
    unshare = shutil.which("unshare", path=TRUSTED_PATH)
    if unshare is None:
        raise UsageError("--sandbox image needs unshare (util-linux) to build images")
    return [unshare, "--net", "--pid", "--ipc", "--uts", "--fork", "--kill-child", "--mount-proc", *command]


def base_images(dockerfile: str) -> list[str]:
    """The images the Dockerfile's ``FROM`` lines build on: not ``scratch``, not an earlier
    stage (``AS name``), not one that names a build argument (buildah resolves those itself)."""
    bases: list[str] = []
    stages: set[str] = set()
    text = re.sub(r"\\\n", " ", dockerfile)
    for line in text.splitlines():
        words = line.split()
        if not words or words[0].upper() != "FROM":
            continue
        args = [w for w in words[1:] if not w.startswith("--")]
        if not args:
            continue
        image = args[0]
        if len(args) >= 3 and args[1].upper() == "AS":
            stages.add(args[2].lower())
        if image.lower() == "scratch" or image.lower() in stages or "$" in image:
            continue
        bases.append(image)
    return list(dict.fromkeys(bases))


def provide_base(buildah: str, image: str) -> None:
    """Make ``image`` present in the store: already there, or pulled; else say how to provide it."""
    if _succeeds(buildah, "inspect", "--type", "image", image):
        return
    store = storage_root()
    how = (f"provide it: on a machine with a registry, `buildah --root {store}/storage --runroot {store}/run "
           f"--storage-driver vfs pull {image}`; offline, load a saved copy into the same store "
           f"(`... pull docker-archive:/path/image.tar`, or `oci-archive:`), or tag a local image as "
           f"localhost/{image.split('/')[-1]} (`... tag IMAGE localhost/{image.split('/')[-1]}`)")
    if on_the_host(image):
        raise UsageError(f"--sandbox image: the base image {image} is not in skillab's image store ({store}) and "
                         "names a registry on the host's loopback or link-local addresses, which a build never "
                         f"reaches: {how}")
    if os.environ.get(PULL_ENV, "").lower() == "never":
        raise UsageError(f"--sandbox image: the base image {image} is not in skillab's image store ({store}) and "
                         f"{PULL_ENV}=never: {how}")
    try:
        _buildah(buildah, "pull", "--quiet", docker_reference(image), timeout=PULL_TIMEOUT_S)
    except UsageError as exc:
        raise UsageError(f"--sandbox image: the base image {image} is not in skillab's image store ({store}) "
                         f"and could not be pulled ({exc}); {how}") from None
    if not _succeeds(buildah, "inspect", "--type", "image", image):  # a short name resolves as Docker's
        _buildah(buildah, "tag", docker_reference(image), image)


def on_the_host(image: str) -> bool:
    """Whether ``image`` names a registry at ``localhost`` or a loopback, link-local or
    unspecified address: a Dockerfile's ``FROM`` must not make skillab call the host's own
    services or a cloud's metadata address."""
    first, _, rest = image.partition("/")
    if not rest or not ("." in first or ":" in first or first.lower() == "localhost"):
        return False
    host = first[1:].partition("]")[0] if first.startswith("[") else first.partition(":")[0]
    if host.lower() == "localhost":
        return True
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return False
    return address.is_loopback or address.is_link_local or address.is_unspecified


def docker_reference(image: str) -> str:
    """``image`` as Docker reads it, fully qualified: ``ubuntu:24.04`` is
    ``docker.io/library/ubuntu:24.04``, ``org/x`` is ``docker.io/org/x``; a name whose first part
    is a host (a dot, a port, ``localhost``) is left as it is. No short-name search list is asked."""
    first, _, rest = image.partition("/")
    if rest and ("." in first or ":" in first or first == "localhost"):
        return image
    return f"docker.io/{image}" if rest else f"docker.io/library/{image}"


def _succeeds(buildah: str, *args: str) -> bool:
    try:
        _buildah(buildah, *args)
    except UsageError:
        return False
    return True


def _buildah(buildah: str, *args: str, check: bool = True, timeout: float = 300.0, confine: bool = False) -> str:
    root = storage_root()
    command = [buildah, "--root", str(root / "storage"), "--runroot", str(root / "run"),
               "--storage-driver", "vfs", *args]
    if confine:
        command = confined(command)
    env = {"PATH": TRUSTED_PATH, "HOME": str(root), "BUILDAH_ISOLATION": "oci"}
    try:
        done = subprocess.run(command, capture_output=True, env=env, timeout=timeout,
                              stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        raise UsageError(f"buildah {args[0]} took longer than {timeout:g}s") from None
    if check and done.returncode != 0:
        tail = done.stderr.decode("utf-8", "replace").strip().splitlines()[-5:]
        raise UsageError(f"buildah {args[0]} failed: " + " / ".join(tail))
    return done.stdout.decode("utf-8", "replace")
