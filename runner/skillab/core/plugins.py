"""The one plugin registry: suite formats, agents, model providers, reporters and sandbox
backends by name.

Built-ins are named here as ``"module:attr"`` strings and imported on first use, so the core
imports nothing and an optional part costs nothing until it is chosen. Another package adds one
by declaring a Python entry point in the matching group, for example in its ``pyproject.toml``::

    [project.entry-points."skillab.formats"]
    my-format = "my_package.format:FORMAT"      # a skillab.formats.base.FormatPlugin

Groups: ``skillab.formats`` (``SuiteFormat``), ``skillab.agents`` (an ``agents.base.Agent``
class with ``from_config``), ``skillab.models`` (a ``providers.base.ModelProvider`` class: its
facts are class attributes), ``skillab.reporters``
(a ``Reporter``), ``skillab.sandboxes`` (a ``sandbox.backend.Backend`` class, built without
arguments). The entry point's name is the name users select (``--format``, ``--adapter``,
``--provider``, ``--reporter``, ``--sandbox``). A built-in name wins over a plugin of the same
name.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    from importlib import metadata

Kind = Literal["formats", "agents", "models", "reporters", "sandboxes"]
KINDS: tuple[Kind, ...] = ("formats", "agents", "models", "reporters", "sandboxes")
GROUP_PREFIX = "skillab."

BUILTINS: dict[Kind, dict[str, str]] = {
    # Suite formats (``formats.base.SuiteFormat``), in the order a skill directory is searched.
    "formats": {
        "eval.yaml": "skillab.formats.eval_yaml:FORMAT",
        "task_suite.yaml": "skillab.formats.task_suite:FORMAT",
        "ruby-skill-bench": "skillab.formats.ruby_bench:FORMAT",
        "skillsbench": "skillab.formats.skillsbench:FORMAT",
        "evals.json": "skillab.formats.evals_json:FORMAT",
        "claude-plugin-eval": "skillab.formats.plugin_eval:FORMAT",
        "trigger-evals": "skillab.formats.trigger:FORMAT",
        "tessl": "skillab.formats.tessl:FORMAT",
        "skillgrade": "skillab.formats.skillgrade:FORMAT",
    },
    "agents": {
        "mock": "skillab.agents.mock:MockAdapter",
        "llm": "skillab.agents.llm:LlmAdapter",
        "agent": "skillab.agents.agent:AgentAdapter",
        "claude-code": "skillab.agents.claude_code:ClaudeCodeAdapter",
        "codex": "skillab.agents.codex:CodexAdapter",
        "gemini-cli": "skillab.agents.gemini_cli:GeminiCliAdapter",
        "copilot": "skillab.agents.copilot:CopilotAdapter",
        "claude-agent-sdk": "skillab.agents.claude_agent_sdk:ClaudeAgentSdkAgent",
        "openai-agents": "skillab.agents.openai_agents:OpenAIAgentsAgent",
    },
    "models": {
        "anthropic": "skillab.providers.anthropic:AnthropicClient",
        "openai": "skillab.providers.openai_compat:OpenAICompatClient",
        "openai-responses": "skillab.providers.openai_responses:OpenAIResponsesClient",
        "gemini": "skillab.providers.gemini:GeminiClient",
        "mock": "skillab.providers.mock:MockClient",
    },
    "reporters": {
        "junit": "skillab.reports.reporters:JUNIT",
        "markdown": "skillab.reports.reporters:MARKDOWN",
        "html": "skillab.reports.reporters:HTML",
    },
    # Backends chosen by ``--sandbox NAME`` (``sandbox.backend.Backend``). ``image`` is not here:
    # it is built per suite from the suite's own Dockerfile (``sandbox.image``).
    "sandboxes": {
        "bwrap": "skillab.sandbox.bwrap:BwrapBackend",
        "none": "skillab.sandbox.unsandboxed:Unsandboxed",
    },
}


class UnknownPlugin(LookupError):
    """No built-in and no installed plugin has this name; ``available`` lists those that do."""

    def __init__(self, kind: Kind, name: str, available: tuple[str, ...]) -> None:
        self.kind, self.name, self.available = kind, name, available
        super().__init__(f"unknown {kind.removesuffix('es' if kind == 'sandboxes' else 's')} {name!r} (choose from {', '.join(available) or 'none'})")


class BrokenPlugin(LookupError):
    """An installed plugin's module or object failed to load (a syntax error, an exception at
    import, a missing attribute): another package's fault, said in one line by the CLI."""

    def __init__(self, kind: Kind, name: str, where: str, exc: BaseException) -> None:
        self.kind, self.name = kind, name
        at = ""
        if isinstance(exc, SyntaxError) and exc.filename:
            at = f" ({exc.filename}:{exc.lineno})"
        super().__init__(f"the installed {group(kind)} plugin {name!r} ({where}) failed to load: "
                         f"{type(exc).__name__}: {exc.msg if isinstance(exc, SyntaxError) else exc}{at}")


def group(kind: Kind) -> str:
    return GROUP_PREFIX + kind


def plugins(kind: Kind) -> dict[str, metadata.EntryPoint]:
    """The installed entry points of ``kind`` not shadowed by a built-in, by name."""
    from importlib import metadata  # scanning sys.path: paid only when a plugin may be asked for

    found: dict[str, metadata.EntryPoint] = {}
    for point in metadata.entry_points(group=group(kind)):
        if point.name not in BUILTINS[kind]:
            found.setdefault(point.name, point)
    return dict(sorted(found.items()))


def names(kind: Kind) -> tuple[str, ...]:
    """Every name of ``kind``: the built-ins in their order, then the plugins by name."""
    return (*BUILTINS[kind], *plugins(kind))


def is_builtin(kind: Kind, name: str) -> bool:
    return name in BUILTINS[kind]


# Adapters whose name carries the user's code: ``python:MODULE:CALLABLE`` (any agent object)
# ``claude-agent-sdk:MODULE:FUNCTION`` (the team's SDK options) and
# ``openai-agents:MODULE:FUNCTION`` (the team's Agent definition).
PREFIXED_AGENTS = {
    "python:": "skillab.agents.python_agent:PythonAgent",
    "claude-agent-sdk:": "skillab.agents.claude_agent_sdk:ClaudeAgentSdkAgent",
    "openai-agents:": "skillab.agents.openai_agents:OpenAIAgentsAgent",
}


def _prefixed_agent(name: str) -> str | None:
    return next((target for prefix, target in PREFIXED_AGENTS.items() if name.startswith(prefix)), None)


def is_known(kind: Kind, name: str) -> bool:
    """Whether a built-in or an installed plugin has ``name``; entry points are read only for a
    name no built-in answers."""
    if kind == "agents" and _prefixed_agent(name):
        return True
    return name in BUILTINS[kind] or name in plugins(kind)


def target(kind: Kind, name: str) -> str:
    """Where ``name`` lives, as ``"module:attr"``; ``UnknownPlugin`` when nothing has the name."""
    builtin = _builtin_target(kind, name)
    if builtin is not None:
        return builtin
    point = plugins(kind).get(name)
    if point is None:
        raise UnknownPlugin(kind, name, names(kind))
    return point.value


def load(kind: Kind, name: str) -> Any:
    """The object ``name`` stands for, imported now. An ``ImportError`` of the module itself
    propagates, so the caller can name the package to install."""
    where = target(kind, name)
    module, _, attr = where.partition(":")
    try:
        loaded: Any = importlib.import_module(module.strip())
        for part in attr.strip().split(".") if attr.strip() else ():
            loaded = getattr(loaded, part)
    except Exception as exc:
        if where != _builtin_target(kind, name) and not _missing_module(exc, module.strip()):
            raise BrokenPlugin(kind, name, where, exc) from exc
        raise
    return loaded


def _builtin_target(kind: Kind, name: str) -> str | None:
    return (_prefixed_agent(name) if kind == "agents" else None) or BUILTINS[kind].get(name)


def _missing_module(exc: Exception, module: str) -> bool:
    """The plugin's own module is not installed: the caller names the package to install."""
    return isinstance(exc, ModuleNotFoundError) and exc.name == module
