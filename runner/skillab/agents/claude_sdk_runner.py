"""The ``claude-agent-sdk`` adapter's callable, run by ``python_runner`` inside the sandbox.

Standard library and the user's ``claude-agent-sdk`` only (skillab is not importable there). The
user's options (``--adapter claude-agent-sdk:MODULE:FUNCTION``, a function returning a
``ClaudeAgentOptions``) bring the system prompt, tools, subagents and MCP servers; skillab then
sets what decides the measurement: project settings only (never the user's own skills), the
arm's workspace as cwd, strict MCP config, the model and turn cap, the bundled CLI (run inside
the same sandbox), the proxy as the endpoint with the arm's token, telemetry off.
"""

import asyncio
import importlib
import json
import os
import shlex

QUIET = {"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1", "DISABLE_AUTOUPDATER": "1",
         "DISABLE_TELEMETRY": "1", "DISABLE_ERROR_REPORTING": "1"}
# Longer than any arm: the helper's file is read once, so the CLI must never ask again.
KEY_HELPER_TTL_MS = 10 * 24 * 3600 * 1000


def options_for(task):
    from claude_agent_sdk import ClaudeAgentOptions

    target = task.get("options")
    if target:
        module, _, attr = target.partition(":")
        factory = importlib.import_module(module)
        for part in attr.split("."):
            factory = getattr(factory, part)
        options = factory()
    else:
        options = ClaudeAgentOptions(permission_mode="acceptEdits",
                                     allowed_tools=["Bash", "Read", "Write", "Edit", "Glob", "Grep"])
    options.cwd = task["workspace"]
    options.setting_sources = ["project"]
    options.strict_mcp_config = True
    options.model = task["model"]
    options.max_turns = task["max_turns"]
    options.skills = "all" if task["skills_dir"] else None
    # The CLI passes its whole environment to its Bash commands, so the arm's token is not in it:
    # its key helper reads a file once, before any tool can run, and removes it.
    options.settings = json.dumps({**user_settings(options.settings), "apiKeyHelper": key_helper(task.pop("api_key"))})
    options.env = {**(options.env or {}), **QUIET, "ANTHROPIC_BASE_URL": task["base_url"],
                   "CLAUDE_CODE_API_KEY_HELPER_TTL_MS": str(KEY_HELPER_TTL_MS),
                   "ANTHROPIC_SMALL_FAST_MODEL": task["model"], "ANTHROPIC_DEFAULT_HAIKU_MODEL": task["model"]}
    return options


def key_helper(token):
    """A command printing ``token`` once: written to a new private file beside this runner (in
    the arm's private home), which the command removes."""
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "key")
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    with os.fdopen(fd, "w") as handle:
        handle.write(token)
    return f"cat {shlex.quote(path)}; rm -f {shlex.quote(path)}"


def user_settings(settings):
    """The user's own ``settings`` (a JSON string or a file), as a dict to add the helper to."""
    if not settings:
        return {}
    text = settings
    if not settings.lstrip().startswith("{"):
        with open(settings, encoding="utf-8") as handle:
            text = handle.read()
    loaded = json.loads(text)
    return loaded if isinstance(loaded, dict) else {}


async def session(task):
    from claude_agent_sdk import AssistantMessage, ResultMessage, SystemMessage, ToolUseBlock, UserMessage, query

    out = {"answer": "", "events": [], "skills_loaded": [], "offered": None, "error": None}
    pending = {}
    async for message in query(prompt=task["prompt"], options=options_for(task)):
        if isinstance(message, SystemMessage) and message.subtype == "init":
            out["offered"] = [str(s) for s in message.data.get("skills") or []]
        elif isinstance(message, AssistantMessage):
            for block in message.content:
                if isinstance(block, ToolUseBlock):
                    event = {"tool": block.name, "args": block.input, "output": ""}
                    pending[block.id] = event
                    out["events"].append(event)
                    if block.name == "Skill":
                        out["skills_loaded"].append(str(block.input.get("skill", "")))
        elif isinstance(message, UserMessage) and isinstance(message.content, list):
            for block in message.content:
                tool_id = getattr(block, "tool_use_id", None)
                if tool_id in pending:
                    content = block.content
                    pending[tool_id]["output"] = content if isinstance(content, str) else json.dumps(content)[:4000]
        elif isinstance(message, ResultMessage):
            out["answer"] = message.result or ""
            if message.is_error:
                out["error"] = f"{message.subtype}: {message.result or ''}"[:500]
    return out


async def context_usage(task):
    """No model turn: the session's own count of its context (``get_context_usage()``), and the
    skills it listed."""
    from claude_agent_sdk import ClaudeSDKClient

    async with ClaudeSDKClient(options_for(task)) as client:
        usage = await client.get_context_usage()
    skills = usage.get("skills") or {}
    entries = [{"name": str(e.get("name")), "source": str(e.get("source")), "tokens": e.get("tokens")}
               for e in skills.get("skillFrontmatter") or [] if isinstance(e, dict)]
    counted = {"skills_tokens": skills.get("tokens"), "total_tokens": usage.get("totalTokens"),
               "model": usage.get("model"), "skills": entries}
    return {"answer": json.dumps(counted), "events": [],
            "offered": [e["name"] for e in entries if e["source"] == "projectSettings"]}


def run(task):
    if task.get("purpose") == "context":
        return asyncio.run(context_usage(task))
    out = asyncio.run(session(task))
    if out["error"]:
        raise RuntimeError(out["error"])
    return out
