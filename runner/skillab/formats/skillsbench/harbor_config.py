"""A SkillsBench / Harbor task's settings: ``task.toml`` (Harbor's ``TaskConfig``) or ``task.md``
frontmatter, read as Harbor reads them.

Harbor's model ignores keys it does not know, so a key outside the list below is a warning that
names it, never a refusal. ``version`` is the old name of ``schema_version`` and any value is
accepted. BenchFlow's schema 1.3 (SkillsBench v1.1 ``task.md``) renamed ``environment`` to
``sandbox``; either spelling is read, the same way. Harbor gives a task network unless it says
otherwise (``network_mode`` defaults to ``public``; the deprecated ``allow_internet`` defaults to
true); skillab runs every arm offline, so a task that declares it needs the network is recorded
as unsupported, and one that says nothing runs offline with a warning.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from ...suite.loading import IssueList
from ...yaml_source import YamlPath

DEFAULT_AGENT_TIMEOUT_S = 600.0
DEFAULT_VERIFIER_TIMEOUT_S = 600.0

# Harbor 0.25 TaskConfig, plus SkillsBench's task.md sections (oracle).
TOP_KEYS = ("version", "schema_version", "task", "metadata", "verifier", "agent", "environment", "sandbox",
            "solution", "source", "reward", "multi_step_reward_strategy", "steps", "artifacts", "oracle")
# ``allowlist`` is read as ``allowed_hosts`` (a host list): either one declares network.
_NETWORK = ("network_mode", "allowed_hosts", "allowlist")
_ENVIRONMENT_KEYS = (
    "build_timeout_sec", "docker_image", "image", "os", "cpus", "memory_mb", "storage_mb", "gpus",
    "gpu_types", "tpu", "mcp_servers", "env", "skills_dir", "healthcheck", "workdir", "allow_internet",
    "memory", "storage", "setup_commands", "bugswarm_image_tag", *_NETWORK,
)
SECTION_KEYS: dict[str, tuple[str, ...] | None] = {
    "metadata": None,  # free-form
    "task": ("name", "version", "description", "authors", "keywords"),
    "verifier": ("timeout_sec", "env", "user", "environment_mode", "environment", "sandbox_mode", "sandbox",
                 "collect", "type", "hardening", "judge", "memory", *_NETWORK),
    "agent": ("timeout_sec", "user", *_NETWORK),
    "environment": _ENVIRONMENT_KEYS,
    "sandbox": _ENVIRONMENT_KEYS,
    "oracle": ("env", "timeout_sec"),
    "solution": ("env", "timeout_sec"),
}
NETWORK_MODES = ("no-network", "public", "allowlist")


@dataclass
class Settings:
    description: str | None = None
    tags: tuple[str, ...] = ()
    agent_timeout_s: float = DEFAULT_AGENT_TIMEOUT_S
    verifier_timeout_s: float = DEFAULT_VERIFIER_TIMEOUT_S
    verifier_env: dict[str, str] = field(default_factory=dict)
    # [environment].env: the container's environment, which the verifier runs in too.
    environment_env: dict[str, str] = field(default_factory=dict)
    workdir: str | None = None
    # A prebuilt image the task runs in (environment.docker_image).
    image: str | None = None
    # The resources the task asks for (sandbox.cpus, sandbox.memory_mb), when it says.
    cpus: int | None = None
    memory_mb: int | None = None
    unsupported: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


def read_settings(value: Any, issues: IssueList) -> Settings:
    settings = Settings()
    if not isinstance(value, dict):
        issues.add("the frontmatter must be a mapping (schema_version, metadata, verifier, ...)")
        return settings
    _unknown(value, TOP_KEYS, (), "the task", issues, settings)
    _version(value, settings, issues)
    for name, keys in SECTION_KEYS.items():
        section = value.get(name)
        if section is None:
            continue
        if not isinstance(section, dict):
            issues.add("must be a mapping", (name,), field=name)
        elif keys is not None:
            _unknown(section, keys, (name,), f"'{name}'", issues, settings)
    _read_metadata(value, settings)
    agent, verifier = _section(value, "agent"), _section(value, "verifier")
    settings.agent_timeout_s = _timeout(agent, ("agent",), DEFAULT_AGENT_TIMEOUT_S, issues)
    settings.verifier_timeout_s = _timeout(verifier, ("verifier",), DEFAULT_VERIFIER_TIMEOUT_S, issues)
    settings.verifier_env = _env(verifier, ("verifier",), issues)
    name = environment_key(value)
    environment = _section(value, name)
    if name == "sandbox" and "environment" in value:
        settings.warnings.append(f"{issues.path}: the task has both 'sandbox' and Harbor's older 'environment'; "
                                 "skillab reads 'sandbox', as BenchFlow does — remove 'environment'")
    settings.environment_env = _env(environment, (name,), issues)
    workdir = environment.get("workdir")
    if workdir is not None and (not isinstance(workdir, str) or not workdir.startswith("/")):
        issues.add(f"must be an absolute path, got {workdir!r}", (name, "workdir"), field=f"{name}.workdir")
    elif workdir:
        settings.workdir = workdir
    _resources(environment, name, issues, settings)
    settings.unsupported += _environment_needs(environment, name, issues, settings)
    settings.unsupported += _network_needs(value, issues, settings)
    if value.get("steps"):
        settings.unsupported.append("is a multi-step task (steps), which skillab runs as one prompt only")
    return settings


def environment_key(value: dict[str, Any]) -> str:
    """Where the task keeps its machine: ``sandbox`` (BenchFlow schema 1.3) or ``environment``."""
    return "sandbox" if isinstance(value.get("sandbox"), dict) else "environment"


def _section(value: dict[str, Any], name: str) -> dict[str, Any]:
    section = value.get(name)
    return section if isinstance(section, dict) else {}


def _unknown(value: dict, allowed: tuple[str, ...], at: YamlPath, what: str, issues: IssueList,
             settings: Settings) -> None:
    for key in value:
        if key not in allowed:
            line = issues.doc.line_at((*at, key)) if issues.doc else None
            settings.warnings.append(
                f"{issues.path}:{(line or 0) + issues.line_offset}: {what} has the key {key!r}, which Harbor and "
                "skillab do not use — ignored")


def _version(value: dict[str, Any], settings: Settings, issues: IssueList) -> None:
    raw = value.get("schema_version", value.get("version"))
    if raw is None:
        return
    if isinstance(raw, bool) or not isinstance(raw, (str, int, float)):
        key = "schema_version" if "schema_version" in value else "version"
        issues.add(f"must be a version string such as \"1.0\", got {raw!r}", (key,), field=key)


PARENT_TASK_TAG = "parent-task:"


def _read_metadata(value: dict[str, Any], settings: Settings) -> None:
    for source in (value.get("task"), value.get("metadata")):
        if not isinstance(source, dict):
            continue
        description = source.get("description")
        if isinstance(description, str) and description.strip() and settings.description is None:
            settings.description = description.strip()
        for key in ("tags", "keywords"):
            tags = source.get(key)
            if isinstance(tags, list) and all(isinstance(t, str) for t in tags):
                settings.tags = tuple(dict.fromkeys([*settings.tags, *tags]))
        parent = source.get("parent_task")
        if isinstance(parent, str) and parent.strip():
            # A variant of another task: named on the case (and selectable with --tag), so a run of
            # the variants reads as one family.
            settings.tags = tuple(dict.fromkeys([*settings.tags, f"{PARENT_TASK_TAG}{parent.strip()}"]))


def _timeout(section: dict[str, Any], at: YamlPath, default: float, issues: IssueList) -> float:
    raw = section.get("timeout_sec", default)
    if raw is None:
        return default
    if isinstance(raw, bool) or not isinstance(raw, (int, float)) or not math.isfinite(raw) or raw <= 0:
        issues.add(f"must be a positive number of seconds, got {raw!r}", (*at, "timeout_sec"),
                   field=f"{at[0]}.timeout_sec")
        return default
    return float(raw)


def _env(section: dict[str, Any], at: YamlPath, issues: IssueList) -> dict[str, str]:
    raw = section.get("env", {})
    if not isinstance(raw, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in raw.items()):
        issues.add("must be a mapping of variable names to string values", (*at, "env"), field=f"{at[0]}.env")
        return {}
    return dict(raw)


def _resources(environment: dict[str, Any], name: str, issues: IssueList, settings: Settings) -> None:
    """``cpus`` and ``memory_mb``: checked, kept, and compared with what each sandboxed command
    gets, so a task that asks for more memory than that says how to give it."""
    for key in ("cpus", "memory_mb"):
        raw = environment.get(key)
        if raw is None:
            continue
        if isinstance(raw, bool) or not isinstance(raw, int) or raw <= 0:
            issues.add(f"must be a positive whole number, got {raw!r}", (name, key), field=f"{name}.{key}")
            continue
        setattr(settings, key, raw)
    from ...sandbox.limits import MEMORY_MB_ENV, memory_bytes

    if settings.memory_mb and settings.memory_mb << 20 > memory_bytes():
        settings.warnings.append(
            f"{issues.path}: the task asks for {name}.memory_mb = {settings.memory_mb}, more than the "
            f"{memory_bytes() >> 20} MiB each sandboxed command gets; set {MEMORY_MB_ENV}={settings.memory_mb} to give it")


def _environment_needs(environment: dict[str, Any], name: str, issues: IssueList, settings: Settings) -> list[str]:
    """Why the declared environment is beyond a workspace (empty when it is not)."""
    needs = []
    image = environment.get("docker_image") or environment.get("image")
    if image:
        settings.image = str(image)
        needs.append(f"needs the prebuilt image {image!r} ({name}.docker_image)")
    gpus = environment.get("gpus", 0)
    if gpus is not None and (isinstance(gpus, bool) or not isinstance(gpus, int) or gpus < 0):
        issues.add(f"must be a whole number of GPUs, got {gpus!r}", (name, "gpus"), field=f"{name}.gpus")
    elif (gpus or 0) > 0 or environment.get("gpu_types") or environment.get("tpu"):
        needs.append(f"needs a GPU or TPU ({name}.gpus)")
    if environment.get("mcp_servers"):
        needs.append(f"needs MCP servers ({name}.mcp_servers)")
    if environment.get("setup_commands"):
        needs.append(f"runs {name}.setup_commands, which skillab does not run")
    system = environment.get("os")
    if system is not None and str(system).lower() != "linux":
        needs.append(f"targets the operating system {system!r}")
    return needs


def _network_needs(value: dict[str, Any], issues: IssueList, settings: Settings) -> list[str]:
    """Harbor's network policy: what the task declares for the agent's phase."""
    name = environment_key(value)
    environment, agent = _section(value, name), _section(value, "agent")
    internet = environment.get("allow_internet")
    if internet is not None and not isinstance(internet, bool):
        issues.add(f"must be true or false, got {internet!r}", (name, "allow_internet"),
                   field=f"{name}.allow_internet")
        return []
    declared = None
    for section, at in ((agent, "agent"), (environment, name)):
        mode = section.get("network_mode")
        if mode is None:
            continue
        if mode not in NETWORK_MODES:
            issues.add(f"must be one of {', '.join(NETWORK_MODES)}, got {mode!r}", (at, "network_mode"),
                       field=f"{at}.network_mode")
            return []
        declared = declared or (mode, f"{at}.network_mode")
    hosts = next((f"{name}.{key}" for key in ("allowed_hosts", "allowlist") if environment.get(key)), None)
    if declared is None and hosts is not None:
        declared = ("allowlist", hosts)
    if declared is None and internet is not None:
        if internet:
            return [f"declares {name}.allow_internet: true, and skillab runs arms without network (set "
                    "network_mode: no-network when the task does not need the network)"]
        return []
    if declared is None:
        settings.warnings.append(
            f"{issues.path}: the task does not set a network policy; Harbor gives it the network by default, "
            "skillab runs it offline (set network_mode: no-network under 'sandbox:' in a task.md, or "
            "[environment] network_mode = \"no-network\" in a task.toml, to say it needs none)")
        return []
    mode, where = declared
    if mode == "no-network":
        return []
    return [f"declares {where} = {mode!r}, and skillab runs arms without network (set it to \"no-network\" "
            "when the task does not need the network)"]
