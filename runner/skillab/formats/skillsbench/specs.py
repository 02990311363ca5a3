"""The verifier's spec: a SkillsBench task's tests and how to run them."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from ...suite.model import SeedFiles


@dataclass(frozen=True)
class VerifierGrader:
    """A SkillsBench verifier: ``tests`` staged after the agent, ``entry`` run with bash, and
    the reward it writes read back (the arm passes at ``reward_threshold``).

    Absolute paths in the staged text files are rewritten: each of ``workspace_paths`` (``/root``,
    the image's WORKDIR) becomes the arm's workspace, ``/tests`` the staged tests and
    ``/logs/verifier`` the directory the reward is read from; BenchFlow's ``/verifier`` is the
    staged tests too, and the ``BENCHFLOW_*`` variables v1.1 verifiers read name the same places.
    """

    # Whether grading asks the judge model, and whether it reads the files the agent changed.
    judged: ClassVar[bool] = False
    reads_work: ClassVar[bool] = False

    tests: SeedFiles
    entry: str = "test.sh"
    timeout_s: float = 600.0
    env: tuple[tuple[str, str], ...] = ()
    workspace_paths: tuple[str, ...] = ("/root",)
    # The reward an arm must reach to pass (Harbor's rewards are fractional); set per run.
    reward_threshold: float = 1.0
    # Python distributions the verifier installs unless BENCHFLOW_SKIP_VERIFIER_DEPS=1: when
    # the sandbox's python3 has them all, the variable is set; otherwise the arm says which lack.
    guarded_packages: tuple[str, ...] = ()
    # The verifier reads BENCHFLOW_SKIP_VERIFIER_DEPS: set it once the packages are there (the
    # install it skips cannot run offline).
    reads_skip_deps: bool = False
