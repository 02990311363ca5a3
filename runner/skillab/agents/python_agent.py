"""``--adapter python:MODULE:CALLABLE``: any agent object a team built (Google ADK, Strands, the
OpenAI Agents SDK, Microsoft Agent Framework, Mistral, Inspect, plain SDK calls), measured under
the same sandbox, credential proxy and proof of loading as the agent CLIs.

The five steps every runtime has, as this adapter does them:

1. *Stage*: the with-skill arm gets the skill (and, in crowd trials, the skills offered beside
   it) under ``.agents/skills/<name>/`` in its workspace; the without-skill arm gets no skill
   file at all, and the callable is told ``skills_dir: None``.
2. *Prove it was offered*: before the callable runs, the runner lists what is staged and says so
   first; a with-skill arm whose skill is not in that list is an error, never a baseline.
3. *Detect that it was loaded*: the skills the callable says it loaded, or any of its tool events
   that read a staged ``SKILL.md``.
4. *Collect*: the answer and the tool events the callable returns; tokens and cost are what the
   credential proxy counted, never what the callable says; a raised exception or a model call
   the provider failed is the arm's ``error``.
5. *Isolate*: the callable runs under the caller's ``python3`` (where its framework is
   installed), inside the run's sandbox, with its module's folder read-only; it gets the
   proxy's base URL and the arm's token, never the key.

The callable takes one ``dict`` (``prompt``, ``workspace``, ``skills_dir``, ``skills``,
``base_url``, ``api_key``, ``provider``, ``model``, ``max_turns``, ``purpose``) and returns a
string or a ``dict`` with ``answer``, optional ``events`` (``{"tool", "args", "output"}``) and
optional ``skills_loaded``.
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from ..errors import UsageError
from ..grading.trajectory import ModelTurn, ToolCall
from ..sandbox.python_runtime import caller_python
from ..skill.loader import SKILL_FILE
from .base import ArmRequest
from .cli_agent import DEFAULT_TIMEOUT_S, CliAgent, CliSummary, shared_lane
from .cli_events import json_lines, workspace_relative
from .cli_session import Launch
from .skill_view import folder_name

if TYPE_CHECKING:
    from ..core.settings import RunConfig
    from ..sandbox.metering import SpendMeter
    from ..sandbox.view import ProxyRoute

PREFIX = "python:"
SKILLS_DIR = ".agents/skills"
RUNNER = Path(__file__).with_name("python_runner.py")


def parse_target(name: str) -> tuple[str, str]:
    """``python:MODULE:CALLABLE`` → (MODULE, CALLABLE); ``UsageError`` naming the form."""
    body = name[len(PREFIX):] if name.startswith(PREFIX) else name
    module, _, attr = body.partition(":")
    if not module or not attr or not all(p.isidentifier() for p in (*module.split("."), *attr.split("."))):
        raise UsageError(f"--adapter {name}: expected python:MODULE:CALLABLE (e.g. python:my_agent:run)")
    return module, attr


AGENT_SITE = "/opt/skillab-agent/site"


@dataclass(frozen=True)
class AgentPython:
    """The caller's ``python3`` as the agent runs it in the sandbox: its base interpreter (the
    virtualenv's own directory stays covered, as for every command), and the virtualenv's
    site-packages bound read-only at ``AGENT_SITE``, where the agent's framework lives."""

    interpreter: str
    read_only: tuple[Path, ...]
    site_packages: tuple[Path, ...]
    path_env: dict[str, str]

    @classmethod
    def find(cls) -> AgentPython:
        python = caller_python()
        if python.problem:
            raise UsageError(f"no usable python3 for a Python agent: {python.problem}")
        probe = "import json, site; print(json.dumps(site.getsitepackages()))"
        try:
            done = subprocess.run([python.interpreter, "-c", probe], capture_output=True, text=True, timeout=30,
                                  stdin=subprocess.DEVNULL, env={"PATH": os.environ.get("PATH", "")})
            sites = [Path(p) for p in json.loads(done.stdout.strip().splitlines()[-1]) if Path(p).is_dir()]
        except (OSError, subprocess.TimeoutExpired, ValueError, IndexError):
            raise UsageError(f"{python.interpreter} did not say where its packages are") from None
        return cls(os.path.realpath(python.interpreter), python.read_only, tuple(sites),
                   python.env(os.environ.get("PATH", "/usr/bin:/bin")))

    def binds(self) -> tuple[tuple[Path, str], ...]:
        return tuple((site, f"{AGENT_SITE}/{n}") for n, site in enumerate(self.site_packages))


def module_mount(module: str, search: Path) -> tuple[Path, Path]:
    """Where ``module``'s top-level package (or file) lies, and the folder to put on its path:
    found from ``search`` (the current directory) first, then the caller's Python path."""
    top = module.split(".")[0]
    candidates = [search / top, search / f"{top}.py"]
    found = next((p for p in candidates if p.exists()), None)
    if found is None:
        spec = importlib.util.find_spec(top)
        if spec is None or spec.origin in (None, "built-in", "frozen"):
            raise UsageError(f"--adapter python:{module}: no module {top!r} in {search} or on the Python path")
        origin = Path(spec.origin)
        found = origin.parent if spec.submodule_search_locations else origin
    return found.resolve(), found.resolve().parent


class PythonAgent(CliAgent):
    """A user's agent callable; see the module doc. Subclassed per provider (its key, endpoint
    and API paths), chosen by ``from_config``."""

    name = "python"
    discovers_skills = True
    cli = "python3"
    package = "the caller's python3"
    skills_dir = SKILLS_DIR
    read_tools: ClassVar[tuple[str, ...]] = ("read_file", "Read", "read", "open")

    # Files of skillab's copied beside the runner (a built-in callable's module).
    shipped: ClassVar[tuple[Path, ...]] = ()

    def __init__(self, python: AgentPython, *, target: tuple[str, str], adapter_name: str, **kwargs: Any):
        super().__init__(python.interpreter, **kwargs)
        self.target = target
        self.name = adapter_name
        self.user_module = self.user_target()
        self.mounts = module_mount(self.user_module, Path.cwd()) if self.user_module else None
        self.python = python

    @staticmethod
    def target_of(adapter: str) -> tuple[str, str]:
        """The (module, callable) the runner calls for ``--adapter adapter``."""
        return parse_target(adapter)

    def user_target(self) -> str | None:
        """The user's module the sandbox must see (its folder mounted read-only)."""
        return self.target[0]

    @classmethod
    def from_config(cls, config: RunConfig) -> CliAgent:
        from ..providers.registry import infer_provider
        from ..sandbox.metering import SpendMeter

        agent = config.agent
        if not agent.model.name:
            raise UsageError(f"--adapter {agent.adapter} needs --model: the model the agent's calls may use "
                             "(the credential proxy refuses any other)")
        provider = infer_provider(agent.model.name, explicit=agent.model.provider, base_url=agent.model.base_url)
        # A runtime of one provider (the Claude Agent SDK) is its own class; a Python agent's
        # class follows the model's provider.
        chosen = cls if cls not in (PythonAgent, *_BY_PROVIDER.values()) else _BY_PROVIDER.get(provider)
        if chosen is None or chosen.provider != provider:
            raise UsageError(f"--adapter {agent.adapter}: provider {provider!r} is not one a Python agent can be "
                             f"given through the proxy ({', '.join(_BY_PROVIDER)})")
        environ = config.credentials.environ
        meter: SpendMeter = SpendMeter(config.engine.max_cost_usd)
        return chosen(
            AgentPython.find(),
            target=chosen.target_of(agent.adapter),
            adapter_name=agent.adapter,
            api_key=chosen.read_key(environ),
            model=agent.model.name,
            base_url=agent.model.base_url or environ.get(chosen.base_url_env) or None,
            version=f"python {sys.version_info.major}.{sys.version_info.minor}",
            default_max_turns=agent.max_turns,
            timeout_s=DEFAULT_TIMEOUT_S if agent.timeout_s is None else agent.timeout_s,
            max_retries=max(0, config.tuning.max_attempts - 1),
            meter=meter,
            shared=shared_lane(config, chosen.provider),
        )

    def identity(self) -> dict[str, Any]:
        return {**super().identity(), "callable": ":".join(self.target), "cli": None, "cli_version": None,
                "python": self.version}

    def endpoint_env(self, base_url: str | None) -> dict[str, str]:
        return {}  # handed to the callable in its task

    def configure(self, config_dir: Path, request: ArmRequest, endpoint: str) -> dict[str, str]:
        for source in (RUNNER, *self.shipped):
            shutil.copyfile(source, config_dir / source.name)
        paths = [str(config_dir), *([str(self.mounts[1])] if self.mounts else [])]
        return {"PYTHONPATH": ":".join(paths), "PYTHONNOUSERSITE": "1", "PYTHONDONTWRITEBYTECODE": "1",
                "SKILLAB_AGENT_SITES": ":".join(inside for _, inside in self.python.binds()), **self.python.path_env}

    def argv(self, request: ArmRequest, config_dir: Path, endpoint: str) -> list[str]:
        # -S: the base installation's own site-packages stay off the path; the runner adds the
        # caller's (its virtualenv's) first.
        return [self.binary, "-S", str(config_dir / RUNNER.name), *self.target]

    def launch(self, request: ArmRequest, root: Path, route: ProxyRoute) -> Launch:
        launch = super().launch(request, root, route)
        module = (self.mounts[0],) if self.mounts else ()
        return replace(launch, stdin=self.task(request, route.endpoint),
                       read_only=(*launch.read_only, *self.python.read_only, *module),
                       read_only_at=self.python.binds())

    def stdin(self, request: ArmRequest) -> str | None:
        return None  # the task, with the proxy's endpoint, is written at launch

    def task(self, request: ArmRequest, endpoint: str) -> str:
        """What the callable is handed, as the runner reads it from stdin."""
        staged = request.skill is not None
        return json.dumps({
            "prompt": request.case.prompt,
            "workspace": ".",
            "skills_dir": SKILLS_DIR if staged else None,
            "skills": [s.name for s in request.offered] if staged else [],
            "base_url": endpoint,
            "token_env": self.key_env,
            "provider": self.provider,
            "model": self.model,
            "max_turns": request.max_turns,
            "purpose": request.purpose,
            **self.task_extra(),
        })

    def task_extra(self) -> dict[str, Any]:
        return {}

    def parse(self, stdout: str, workspace: Path, skill_name: str | None, *, offered: tuple[str, ...] = ()) -> CliSummary:
        summary = CliSummary()
        shown: list[str] | None = None
        for event in json_lines(stdout):
            kind = event.get("type")
            if kind == "offered" and shown is None:
                shown = [str(s) for s in event.get("skills") or []]
            elif kind == "error":
                summary.error = str(event.get("error") or "the agent failed")
                summary.finished = True
            elif kind == "result":
                self._result(summary, event, workspace, offered)
                # A runtime that reports what it offered (the Claude SDK's init message) is the
                # stronger proof: what the model was shown, not only what lay on disk.
                if isinstance(event.get("offered"), list):
                    shown = [str(s) for s in event["offered"]]
        if summary.error is None and skill_name is not None and (
                shown is None or not {skill_name, folder_name(skill_name)} & set(shown)):
            summary.error = (f"the skill {skill_name} was not offered to the agent (the runner found "
                             f"{shown or 'nothing'} staged): the arm is invalid, not a baseline")
        summary.skill_activated = skill_name is not None and skill_name in summary.skills_loaded
        return summary

    def _result(self, summary: CliSummary, event: dict[str, Any], workspace: Path, offered: tuple[str, ...]) -> None:
        calls = []
        loaded = [str(n) for n in event.get("skills_loaded") or [] if str(n) in offered]
        staged = {f"{SKILLS_DIR}/{folder_name(n)}/{SKILL_FILE}": n for n in offered}
        for raw in event.get("events") or []:
            if not isinstance(raw, dict):
                continue
            given = raw.get("args")
            args: dict[str, Any] = given if isinstance(given, dict) else {}
            call = ToolCall(str(raw.get("tool", "tool")), args, output=str(raw.get("output", ""))[:4000])
            calls.append(call)
            for value in args.values():
                if isinstance(value, str):
                    rel = workspace_relative(value, workspace)
                    summary.paths_touched.append(rel)
                    if rel in staged and staged[rel] not in loaded:
                        loaded.append(staged[rel])
        summary.final_text = str(event.get("answer", ""))
        summary.turns = [ModelTurn(text=summary.final_text, tool_calls=calls)]
        summary.num_turns = 1
        summary.finished = True
        summary.skills_loaded = list(dict.fromkeys(loaded))


class AnthropicPythonAgent(PythonAgent):
    provider = "anthropic"
    key_env = "ANTHROPIC_API_KEY"
    base_url_env = "ANTHROPIC_BASE_URL"
    default_endpoint = "https://api.anthropic.com"
    api_paths = (r"/v1/messages(/count_tokens)?", r"/v1/models(/[^/]+)?")

    def credentials(self) -> dict[str, str]:
        return {"x-api-key": self._api_key}


class OpenAIPythonAgent(PythonAgent):
    provider = "openai"
    key_env = "OPENAI_API_KEY"
    base_url_env = "OPENAI_BASE_URL"
    default_endpoint = "https://api.openai.com/v1"
    api_paths = (r"(/v1)?/chat/completions", r"(/v1)?/responses", r"(/v1)?/models(/[^/]+)?")

    def credentials(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self._api_key}"}


_BY_PROVIDER: dict[str, type[PythonAgent]] = {"anthropic": AnthropicPythonAgent, "openai": OpenAIPythonAgent}
