"""The ``openai-agents`` adapter's callable, run by ``python_runner`` inside the sandbox.

Standard library and the user's ``openai-agents`` only (skillab is not importable there). The
user's function (``--adapter openai-agents:MODULE:FUNCTION``, returning an ``Agent`` or a
``SandboxAgent``) brings the instructions, tools, handoffs and MCP servers; skillab wraps them in
a ``SandboxAgent`` and sets what decides the measurement: the ``Skills`` capability over the
staged skill (eager, or lazy through ``load_skill``) in the with-skill arm and none in the arm
without it; the SDK's local sandbox client rooted at the arm's workspace, whose commands are this
process's children and so run inside skillab's sandbox with it, never inheriting its
environment; the model through the credential proxy with the arm's token; tracing off.

Proof of offer is what the model request carries: the system prompt the SDK renders, handed to
the run's ``on_llm_start`` hook, where the capability lists the skills it offers.
"""

import asyncio
import importlib
import json
import os
import re
import shutil

# Where the runner moves the staged skills before the SDK starts: the capability's source, which
# the SDK copies into the workspace (eager) or on ``load_skill`` (lazy). The adapter's
# ``SOURCE`` names it too.
SOURCE = "skill-source"
# The listing line the Skills capability renders per skill: "- NAME: DESCRIPTION (file: PATH)".
LISTED = re.compile(r"^- (?P<name>[^:\n]+): .* \(file: (?P<path>[^)\n]+)\)$", re.MULTILINE)
# Environment the SDK's shell commands get: enough to run programs, nothing of the runner's.
COMMAND_ENV = ("PATH", "HOME", "TMPDIR", "LANG", "LC_ALL", "TERM", "USER", "SHELL")


def user_agent(target):
    if not target:
        return None
    module, _, attr = target.partition(":")
    factory = importlib.import_module(module)
    for part in attr.split("."):
        factory = getattr(factory, part)
    return factory()


def skills_capability(task, source):
    from agents.sandbox.capabilities import LocalDirLazySkillSource, Skills
    from agents.sandbox.entries import LocalDir

    staged = LocalDir(src=source)
    if task["loading"] == "lazy":
        return Skills(lazy_from=LocalDirLazySkillSource(source=staged), skills_path=task["skills_path"])
    return Skills(from_=staged, skills_path=task["skills_path"])


def sandbox_agent(task, base, source, model):
    """The user's agent, wrapped: its own definition, skillab's capabilities and model."""
    from agents import Agent
    from agents.sandbox import SandboxAgent
    from agents.sandbox.capabilities import Filesystem, Shell, Skills

    own = {}
    capabilities = [Filesystem(), Shell()]
    if isinstance(base, Agent):
        own = {key: getattr(base, key) for key in ("name", "instructions", "tools", "handoffs", "mcp_servers",
                                                   "model_settings", "output_type", "hooks", "tool_use_behavior")}
        if isinstance(base, SandboxAgent):
            # The team's capabilities, but never its own skills: the arm's are skillab's to stage.
            capabilities = [c for c in base.capabilities if not isinstance(c, Skills)]
            own["base_instructions"] = base.base_instructions
    elif base is not None:
        raise TypeError(f"the agent function returned {type(base).__name__}, not an agents.Agent")
    if source is not None:
        capabilities.append(skills_capability(task, source))
    own.setdefault("name", "skillab-agent")
    own.setdefault("instructions", "You are a helpful agent. Work in the current directory; answer the task.")
    return SandboxAgent(**own, capabilities=capabilities, model=model)


def proxied_model(task):
    """The run's model through the credential proxy: every agent of the run uses it (the
    RunConfig's model overrides each agent's, handoffs' included)."""
    from agents.models.openai_responses import OpenAIResponsesModel
    from openai import AsyncOpenAI

    client = AsyncOpenAI(base_url=task["base_url"], api_key=task["api_key"], max_retries=task["max_retries"])
    return OpenAIResponsesModel(task["model"], client)


def stage_source(task):
    """Move the staged skills out of the workspace into the runner's private folder: the SDK
    materializes them itself, where and when its mode says."""
    if not task["skills_dir"]:
        return None
    source = os.path.abspath(os.path.join(task.get("config_dir") or os.path.dirname(os.path.abspath(__file__)), SOURCE))
    shutil.move(task["skills_dir"], source)
    try:  # the staging folder's parent, left empty: the SDK makes it again when it stages
        os.rmdir(os.path.dirname(os.path.normpath(task["skills_dir"])))
    except OSError:
        pass
    return source


def listed(system_prompt):
    """The skills the rendered instructions list under the capability's section."""
    section = (system_prompt or "").partition("## Skills")[2]
    return [m.group("name").strip() for m in LISTED.finditer(section)]


def tool_events(items):
    from agents.items import ToolCallItem, ToolCallOutputItem

    events, by_id = [], {}
    for item in items:
        raw = item.raw_item
        if isinstance(item, ToolCallItem):
            name = getattr(raw, "name", None) or (raw.get("name") if isinstance(raw, dict) else None) or item.type
            arguments = getattr(raw, "arguments", None) or getattr(raw, "input", None) or ""
            try:
                args = json.loads(arguments) if isinstance(arguments, str) and arguments else {}
            except ValueError:
                args = {"input": arguments}
            event = {"tool": str(name), "args": args if isinstance(args, dict) else {"input": args}, "output": ""}
            call_id = getattr(raw, "call_id", None) or (raw.get("call_id") if isinstance(raw, dict) else None)
            by_id[call_id] = event
            events.append(event)
        elif isinstance(item, ToolCallOutputItem):
            call_id = raw.get("call_id") if isinstance(raw, dict) else getattr(raw, "call_id", None)
            if call_id in by_id:
                output = item.output
                by_id[call_id]["output"] = (output if isinstance(output, str) else json.dumps(output, default=str))[:4000]
    return events


async def session(task):
    from agents import ModelSettings, RunConfig, RunHooks, Runner, set_tracing_disabled
    from agents.exceptions import MaxTurnsExceeded
    from agents.sandbox import Manifest, SandboxRunConfig
    from agents.sandbox.sandboxes import UnixLocalSandboxClient
    from agents.sandbox.snapshot import NoopSnapshotSpec
    from openai import APIStatusError

    source = stage_source(task)
    model = proxied_model(task)
    agent = sandbox_agent(task, user_agent(task.get("agent")), source, model)
    # After the team's code ran: whatever it set, no span leaves the machine.
    set_tracing_disabled(True)
    prompts = []

    class Seen(RunHooks):
        async def on_llm_start(self, context, agent, system_prompt, input_items):
            prompts.append(system_prompt or "")

    sandbox = SandboxRunConfig(
        client=UnixLocalSandboxClient(inherit_host_environment=False, host_environment_allowlist=COMMAND_ENV),
        manifest=Manifest(root=os.path.abspath(task["workspace"])),
        snapshot=NoopSnapshotSpec())
    # Nothing stored server-side, as skillab's own Responses client: a reasoning model's items
    # then go back encrypted (a model without reasoning refuses that include).
    settings = ModelSettings(store=False,
                             response_include=["reasoning.encrypted_content"] if task.get("reasoning") else None)
    config = RunConfig(model=model, model_settings=settings, sandbox=sandbox, tracing_disabled=True,
                       trace_include_sensitive_data=False)
    out = {"answer": "", "events": [], "skills_loaded": [], "offered": None, "error": None, "stop_reason": "end_turn"}
    result = None
    try:
        result = await Runner.run(agent, task["prompt"], max_turns=task["max_turns"], run_config=config, hooks=Seen())
        out["answer"] = str(result.final_output or "")
    except MaxTurnsExceeded as exc:
        out["stop_reason"] = "max_turns"
        result = exc.run_data
    except APIStatusError as exc:
        out["error"] = f"the model API answered HTTP {exc.status_code}: {str(exc)[:300]}"
        out["status"] = exc.status_code
    if result is not None:
        out["events"] = tool_events(result.new_items)
        usage = result.context_wrapper.usage
        out["usage"] = {"requests": usage.requests, "input_tokens": usage.input_tokens,
                        "output_tokens": usage.output_tokens}
    out["skills_loaded"] = [str(e["args"].get("skill_name", "")) for e in out["events"] if e["tool"] == "load_skill"]
    if prompts:
        out["offered"] = listed(prompts[0])
    return out


def run(task):
    return asyncio.run(session(task))
