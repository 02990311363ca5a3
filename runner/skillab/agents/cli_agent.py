"""``CliAgent``: the base for adapters that drive a real, headless agent CLI in the arm's workspace.

A subclass names its CLI (binary, npm package, where it discovers project skills, which key and
endpoint variables it reads) and supplies three steps: the files its private configuration
directory holds, its argv, and the parser of its JSON event stream. The base does the rest for
every CLI alike: it stages the skill where the CLI discovers skills for the with-skill arm only,
launches the CLI, parses its events into a trajectory, usage and an error, and records the CLI's
version in the identity (a new CLI release is a new agent; a version it cannot read is recorded
as ``unknown``, never guessed).

The CLI runs inside the sandbox like every other command: it sees its workspace, its own
installation (read-only) and the read-only system, never the skill's directory or another arm.
It gets no key: its only way out is the credential proxy (``sandbox.proxy``), which forwards to
the configured endpoint alone and adds the key on the host; inside, the CLI talks to the
proxy's bridge with the arm's token, which only the CLI's own process holds.

``launch`` is the one step that decides how the CLI is started (argv, environment, working
directory, the base URL it talks to, what it may see) and returns a ``Launch``; ``execute``
runs one. Another way of starting CLIs overrides these two and nothing else.
"""

from __future__ import annotations

import os
import secrets
import shutil
import tempfile
from abc import ABC, abstractmethod
from collections.abc import Mapping
from contextlib import suppress
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from ..core.usage import Usage
from ..errors import MissingDependencyError, MissingKeyError, ProviderAuthError
from ..grading.trajectory import ToolCall, Trajectory
from ..providers.pricing import cost_usd
from ..sandbox.backend import Backend, before_the_suite
from ..sandbox.environment import scrubbed_env
from ..sandbox.metering import SpendMeter
from ..sandbox.nofollow import remove_inside
from ..sandbox.process import CommandResult, run_command
from ..sandbox.programs import install_paths, resolved_binary, token_holder
from ..sandbox.sealed import sealed_binds, seals_tokens
from ..sandbox.view import ProxyRoute, View
from ..sandbox.workspace import HOME_NAME, TMP_NAME, run_in, safe_join
from ..secrets import redact
from ..skill.loader import SKILL_FILE
from .base import Agent, AgentResult, ArmRequest
from .cli_events import workspace_relative
from .cli_session import CliSummary, Launch, apply_tally
from .skill_view import folder_name, stage_skill, unstage

if TYPE_CHECKING:
    from ..budget.client import Lane
    from ..core.settings import RunConfig
    from ..sandbox.turn_budget import RequestBudget

DEFAULT_TIMEOUT_S = 1800.0
OUTPUT_LIMIT = 64 << 20
AUTH_STATUSES = (401, 403)


class CliAgent(Agent, ABC):
    """An agent CLI run headless, one process per arm."""

    name: str
    cli: ClassVar[str]  # the executable's name on PATH
    package: ClassVar[str]  # the npm package that provides it
    # The version tests, `.ci/run` and the image run (the Dockerfile's ARG holds the same,
    # `tests/test_node_cli.py` checks it): the install hint pins it, because the registry's
    # latest can be older than what skillab was tested with.
    tested_version: ClassVar[str]
    provider: ClassVar[str]  # whose API the CLI talks to (identity only)
    key_env: ClassVar[str]
    base_url_env: ClassVar[str]
    default_endpoint: ClassVar[str]
    skills_dir: ClassVar[str]  # workspace-relative, where the CLI discovers project skills
    # The only API paths (regexes, relative to the endpoint) the proxy forwards; None: all.
    api_paths: ClassVar[tuple[str, ...] | None] = None
    # Tool names by role, for the skill-activation and path observations.
    read_tools: ClassVar[tuple[str, ...]] = ()
    shell_tools: ClassVar[tuple[str, ...]] = ()
    activate_tools: ClassVar[tuple[str, ...]] = ()
    path_keys: ClassVar[tuple[str, ...]] = ("file_path", "path", "absolute_path", "dir_path")
    # The credential proxy reads the model each answer names, for every CLI (the baseline
    # cache is keyed on it).
    reports_served_model = True
    # Environment every invocation of the CLI needs, ``--version`` included.
    base_env: ClassVar[dict[str, str]] = {}

    def __init__(
        self, binary: str,
        *,
        api_key: str,
        model: str | None = None,
        base_url: str | None = None,
        version: str = "unknown",
        default_max_turns: int = 12,
        timeout_s: float = DEFAULT_TIMEOUT_S,
        max_retries: int = 4,
        meter: SpendMeter | None = None,
        shared: Lane | None = None,
    ):
        self.binary = binary
        self.staging_dirs = (self.skills_dir,)
        self.model = model
        self.base_url = base_url
        self.version = version
        self.default_max_turns = default_max_turns
        self.timeout_s = timeout_s
        self.max_retries = max_retries
        self._api_key = api_key
        # What the run's arms spent on model calls, as the credential proxy counted it: shared
        # by every arm, so the proxy refuses past the run's --max-cost-usd.
        self.meter = meter or SpendMeter()
        # The run-wide budget every shard shares (``--budget-url``), asked after the meter.
        self.shared = shared

    def __repr__(self) -> str:  # never show the key
        return f"{type(self).__name__}({self.binary!r}, model={self.model!r}, version={self.version!r})"

    @classmethod
    def install_hint(cls) -> str:
        return f"npm install -g {cls.package}@{cls.tested_version}"

    @classmethod
    def from_config(cls, config: RunConfig) -> CliAgent:
        binary = cls.find_binary()
        environ = config.credentials.environ
        api_key = cls.read_key(environ)
        agent = config.agent
        return cls(
            binary,
            api_key=api_key,
            model=agent.model.name,
            base_url=agent.model.base_url or environ.get(cls.base_url_env) or None,
            version=cli_version(binary, cls.base_env, before_the_suite(config.engine.sandbox).backend),
            default_max_turns=agent.max_turns,
            timeout_s=DEFAULT_TIMEOUT_S if agent.timeout_s is None else agent.timeout_s,
            max_retries=max(0, config.tuning.max_attempts - 1),
            meter=SpendMeter(config.engine.max_cost_usd),
            shared=shared_lane(config, cls.provider),
        )

    @classmethod
    def find_binary(cls) -> str:
        found = shutil.which(cls.cli)
        if found is None:
            raise MissingDependencyError(
                f"the {cls.name} adapter needs the {cls.package} CLI ('{cls.cli}' is not on "
                f"PATH): {cls.install_hint()}"
            )
        return found

    @classmethod
    def read_key(cls, environ: Mapping[str, str]) -> str:
        key = environ.get(cls.key_env, "").strip()
        if not key:
            raise MissingKeyError(
                f"the {cls.name} adapter needs an API key: set {cls.key_env} "
                f"(export {cls.key_env}=...) and run again",
                key_env=cls.key_env, needs=f"the {cls.name} adapter needs an API key",
            )
        return key

    def identity(self) -> dict[str, Any]:
        return {
            "adapter": self.name,
            "provider": self.provider,
            "model": self.model,
            "endpoint": redact(self.base_url) if self.base_url else None,
            "cli": self.package,
            "cli_version": self.version,
            # The CLI lists the skill and loads it when it judges it relevant.
            "skill_loading": "discover",
            "skills_dir": self.skills_dir,
            "max_turns": self.default_max_turns,
        }

    # --- one arm --------------------------------------------------------------------------

    def sandbox_profile(self, sandbox: Backend) -> dict[str, Any]:
        return {
            "agent_process": f"the {self.cli} CLI runs inside the sandbox, with no key",
            "network": f"only the credential proxy, which forwards to {redact(self.upstream())} "
                       "alone and adds the key on the host",
            "metering": ("the proxy serves only the CLI's own process (a per-arm token its tools "
                         "cannot read), " if seals_tokens(sandbox) else
                         "NOT the CLI's alone: unsandboxed, the per-arm token is not sealed and the "
                         "agent's own commands can read it and use the proxy too; the proxy ")
                        + "refuses any model but the run's, counts every answer's "
                        "usage as the arm's tokens and cost, and refuses past --max-cost-usd",
        }

    def upstream(self) -> str:
        return self.base_url or self.default_endpoint

    @abstractmethod
    def credentials(self) -> dict[str, str]:
        """The header(s) the proxy adds on the host: the key, as the API expects it."""

    def run(self, request: ArmRequest) -> AgentResult:
        root = Path(os.path.realpath(request.workspace))
        # Every offered skill (the candidate and, in crowd mode, its siblings) is staged alike.
        offered = request.offered if request.skill else ()
        staged = [stage_skill(skill, root, self.skills_dir) for skill in offered]
        launch = None
        # Imported here: ssl and the HTTP server cost every run several MiB, and only these
        # agents use them (the engine imports this module for the adapters' skill folders).
        from ..sandbox.proxy import CredentialProxy

        budget = self.request_budget(request)
        # Only the CLI holds this arm's token (see ``sandbox.sealed``): its tools reach the
        # bridge too, but are refused without it.
        token = f"skillab-arm-{secrets.token_urlsafe(32)}"
        try:
            with CredentialProxy(self.upstream(), self.credentials(), budget, self.api_paths,
                                 model=self.model, meter=self.meter, price=self.price,
                                 token=token, shared=self.shared) as proxy:
                launch = self.launch(request, root, proxy.route(token_env=self.token_env(root)))
                result = self.execute(launch, request.sandbox)
                tally = proxy.tally
        finally:
            if launch is not None and launch.config_dir is not None:
                with suppress(OSError):  # the CLI may have swapped its home for a link: follow none
                    remove_inside(root, os.path.relpath(launch.config_dir, root))
            for folder in staged:
                unstage(folder, root)
        skill_name = request.skill.name if request.skill else None
        summary = self.parse(result.stdout, root, skill_name, offered=tuple(s.name for s in offered))
        if budget is not None and budget.refused:
            self.at_turn_cap(summary, budget)
        # Tokens and cost are what the proxy counted, never what the CLI printed: anything in
        # the sandbox can print a result event.
        apply_tally(summary, tally)
        if summary.auth_status in AUTH_STATUSES:
            raise ProviderAuthError(
                redact(
                    f"{self.provider} rejected the credentials {self.cli} used "
                    f"(HTTP {summary.auth_status}: {summary.error}); check {self.key_env}"
                )
            )
        return AgentResult(
            final_output=summary.final_text,
            trajectory=Trajectory(user_input=request.case.prompt, turns=summary.turns),
            usage=summary.usage,
            duration_ms=summary.duration_ms or result.duration_ms,
            turns=summary.num_turns or len(summary.turns),
            error=self.error(result, summary),
            skill_activated=summary.skill_activated if request.skill is not None else None,
            skills_loaded=summary.skills_loaded or ([skill_name] if summary.skill_activated and skill_name else []),
            paths_touched=summary.paths_touched,
            stop_reason=summary.stop_reason,
            served_model=summary.served_model,
        )

    def launch(self, request: ArmRequest, root: Path, route: ProxyRoute) -> Launch:
        """The process to start: the CLI's configuration written to a directory under the
        arm's private home, argv, environment, and the proxy's bridge as its endpoint."""
        config_dir = safe_join(root, f"{HOME_NAME}/.skillab-{self.name}")  # not through a planted link
        config_dir.mkdir(mode=0o700, parents=True, exist_ok=True)
        endpoint = route.endpoint
        env = {**self.base_env, **self.configure(config_dir, request, endpoint)}
        return Launch(
            argv=[resolved_binary(self.binary), *self.argv(request, config_dir, endpoint)[1:]],
            cwd=root,
            env=env,
            cli_env=self.endpoint_env(endpoint),
            stdin=self.stdin(request),
            base_url=endpoint,
            config_dir=config_dir,
            read_only=install_paths(self.binary),
            hide=tuple(request.hide),
            network=route,
        )

    def execute(self, launch: Launch, sandbox: Backend) -> CommandResult:
        """Run the CLI as ``launch`` says, under the run's ``sandbox``."""
        home, tmp = launch.cwd / HOME_NAME, launch.cwd / TMP_NAME
        for directory in (home, tmp):
            directory.mkdir(mode=0o700, exist_ok=True)
        view = View(
            workspace=launch.cwd,
            cwd=launch.cwd,
            read_only=launch.read_only,
            read_only_at=(*sealed_binds(self.token_holders(), sandbox), *launch.read_only_at),
            hide=launch.hide,
            network=launch.network,
        )
        return run_command(
            launch.argv,
            cwd=launch.cwd,
            env={**scrubbed_env(home, tmp, launch.env), **launch.cli_env},
            timeout_s=self.timeout_s,
            stdin=launch.stdin,
            output_limit=OUTPUT_LIMIT,
            view=view,
            backend=sandbox,
        )

    def token_env(self, root: Path) -> str:
        """Where the bridge hands the CLI its token: a variable the CLI keeps from the commands
        it runs, or (a path) a file the CLI reads once and removes."""
        return self.key_env

    def token_holders(self) -> tuple[Path, ...]:
        """The executables whose processes hold the arm's token (the CLI's, and any it starts
        with its environment): each is made execute-only in the sandbox."""
        return (token_holder(self.binary),)

    def price(self, usage: Usage) -> float | None:
        """The cost of ``usage`` at the run's model (the proxy refuses any other)."""
        return cost_usd(self.model, usage) if self.model else None

    def request_budget(self, request: ArmRequest) -> RequestBudget | None:
        """The cap the credential proxy puts on this arm's model requests, for a CLI that has no
        turn cap of its own; None when the CLI enforces ``max_turns`` itself."""
        return None

    def at_turn_cap(self, summary: CliSummary, budget: RequestBudget) -> None:
        """The proxy refused a request past the cap: the session ends there, as a capped one
        ends, and is graded on what it did (the refused request's error is not the arm's)."""
        summary.error = None
        summary.auth_status = None
        summary.finished = True
        summary.stop_reason = "max_turns"
        summary.num_turns = budget.used

    def endpoint_env(self, base_url: str | None) -> dict[str, str]:
        """The variable that points the CLI at ``base_url``, for CLIs that read one."""
        return {self.base_url_env: base_url} if base_url else {}

    def stdin(self, request: ArmRequest) -> str | None:
        return request.case.prompt

    def error(self, result: CommandResult, summary: CliSummary) -> str | None:
        if result.timed_out:
            return f"{self.cli} timed out after {result.duration_ms / 1000:.0f}s"
        if result.spawn_error is not None:
            return f"{self.cli} could not start: {result.spawn_error}"
        if result.exit_code is not None and result.exit_code < 0:
            # Killed (by its own tools, say): whatever its stdout says last, it did not finish.
            return f"{self.cli} was {result.describe()}"
        if summary.error:
            return redact(f"{self.cli} reported an error: {summary.error}")
        if not summary.finished:
            tail = (result.stderr or result.stdout).strip()[-500:]
            return redact(f"{self.cli} ended without a result ({result.describe()}): {tail}")
        return None

    # --- what each CLI supplies -------------------------------------------------------------

    @abstractmethod
    def configure(self, config_dir: Path, request: ArmRequest, endpoint: str) -> dict[str, str]:
        """Write the CLI's configuration under ``config_dir``; return the environment it needs."""

    @abstractmethod
    def argv(self, request: ArmRequest, config_dir: Path, endpoint: str) -> list[str]:
        ...

    @abstractmethod
    def parse(
        self, stdout: str, workspace: Path, skill_name: str | None, *, offered: tuple[str, ...] = ()
    ) -> CliSummary:
        ...

    # --- shared observations ----------------------------------------------------------------

    def observe(
        self, summary: CliSummary, call: ToolCall, workspace: Path, skill_name: str | None
    ) -> None:
        """Record the paths a tool call read, and whether it loaded the skill."""
        args = call.args if isinstance(call.args, dict) else {}
        paths = [args[k] for k in self.path_keys if isinstance(args.get(k), str)]
        if call.name in self.read_tools:
            summary.paths_touched += [workspace_relative(p, workspace) for p in paths]
        if skill_name is None or summary.skill_activated:
            return
        staged = f"{self.skills_dir}/{folder_name(skill_name)}/{SKILL_FILE}"
        if call.name in self.activate_tools:
            summary.skill_activated = str(args.get("name", "")) in (skill_name, folder_name(skill_name))
        elif call.name in self.shell_tools:
            command = " ".join(str(v) for v in args.values() if isinstance(v, str))
            summary.skill_activated = staged in command
        elif call.name in self.read_tools:
            summary.skill_activated = any(workspace_relative(p, workspace) == staged for p in paths)


def shared_lane(config: RunConfig, provider: str) -> Lane | None:
    """The run-wide budget's lane for ``provider`` when ``--budget-url`` names a service."""
    if not config.tuning.budget_url:
        return None
    from ..budget.client import lane_for

    return lane_for(config.tuning.budget_url, config.credentials.environ, provider)


def cli_version(binary: str, env: Mapping[str, str] | None = None, sandbox: Backend | None = None) -> str:
    """``<cli> --version`` under ``sandbox`` (None: ``default_backend``): its first token that
    starts with a digit, without a closing full stop (``GitHub Copilot CLI 1.0.102.``), else
    ``unknown``."""
    scratch = Path(tempfile.mkdtemp(prefix="skillab-version-"))
    try:
        result = run_in(
            scratch,
            [resolved_binary(binary), "--version"],
            timeout_s=60,
            extra_env=env,
            read_only=install_paths(binary),
            backend=sandbox,
        )
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    if not result.completed or result.exit_code != 0:
        return "unknown"
    for token in result.stdout.split():
        if token[:1].isdigit():
            return token.rstrip(".")
    return "unknown"
