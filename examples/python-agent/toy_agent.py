"""A small agent built on the OpenAI SDK, measured by skillab as it is:

    PYTHONPATH=examples/python-agent skillab run examples/changelog-entry \
        --adapter python:toy_agent:run --model gpt-4.1-mini

skillab calls ``run(task)`` once per arm, inside its sandbox. ``task["base_url"]`` and
``task["api_key"]`` reach the model through skillab's credential proxy (the real key never enters
this process); ``task["skills_dir"]`` holds the skills offered to this arm (None for the arm
without the skill). The agent lists them in its system prompt and reads a SKILL.md when it
judges it relevant: skillab sees the read in the returned events.
"""

import json
import os
import subprocess

from openai import OpenAI

TOOLS = [
    {"type": "function", "function": {"name": "read_file", "description": "Read a file of the workspace.",
                                      "parameters": {"type": "object", "properties": {"path": {"type": "string"}},
                                                     "required": ["path"]}}},
    {"type": "function", "function": {"name": "write_file", "description": "Write a file of the workspace.",
                                      "parameters": {"type": "object", "properties": {
                                          "path": {"type": "string"}, "content": {"type": "string"}},
                                          "required": ["path", "content"]}}},
    {"type": "function", "function": {"name": "run_shell", "description": "Run a shell command in the workspace.",
                                      "parameters": {"type": "object", "properties": {"command": {"type": "string"}},
                                                     "required": ["command"]}}},
]


def listing(skills_dir):
    if not skills_dir:
        return ""
    lines = []
    for name in sorted(os.listdir(skills_dir)):
        path = os.path.join(skills_dir, name, "SKILL.md")
        if os.path.isfile(path):
            head = open(path, encoding="utf-8").read().split("---")
            description = next((line.split(":", 1)[1].strip() for line in (head[1] if len(head) > 2 else "").splitlines()
                                if line.startswith("description:")), "")
            lines.append(f"- {name}: {description} (read {path} to use it)")
    return "Skills you may use:\n" + "\n".join(lines) if lines else ""


def call(name, args):
    if name == "read_file":
        with open(args["path"], encoding="utf-8") as handle:
            return handle.read()
    if name == "write_file":
        os.makedirs(os.path.dirname(args["path"]) or ".", exist_ok=True)
        with open(args["path"], "w", encoding="utf-8") as handle:
            handle.write(args["content"])
        return "ok"
    done = subprocess.run(args["command"], shell=True, capture_output=True, text=True, timeout=60)
    return f"exit code: {done.returncode}\n{done.stdout}{done.stderr}"


def run(task):
    client = OpenAI(base_url=task["base_url"], api_key=task["api_key"], max_retries=0)
    messages = [{"role": "system", "content": "You are a careful coding agent. " + listing(task["skills_dir"])},
                {"role": "user", "content": task["prompt"]}]
    events = []
    for _ in range(task["max_turns"]):
        reply = client.chat.completions.create(model=task["model"], messages=messages, tools=TOOLS)
        message = reply.choices[0].message
        if not message.tool_calls:
            return {"answer": message.content or "", "events": events}
        messages.append(message.model_dump(exclude_none=True))
        for tool_call in message.tool_calls:
            args = json.loads(tool_call.function.arguments or "{}")
            try:
                output = call(tool_call.function.name, args)
            except Exception as exc:  # a tool's failure is the model's to see
                output = f"error: {exc}"
            events.append({"tool": tool_call.function.name, "args": args, "output": output[:2000]})
            messages.append({"role": "tool", "tool_call_id": tool_call.id, "content": output})
    return {"answer": "", "events": events}
