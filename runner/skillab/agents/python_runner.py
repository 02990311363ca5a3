"""Runs a user's agent callable for one arm, inside the sandbox (``--adapter python:MODULE:CALLABLE``).

Standard library only: it runs under the caller's own Python, which has the user's agent
framework installed and not skillab. The adapter copies this file into the arm's private home
and starts it as ``python3 python_runner.py MODULE CALLABLE`` with the task as JSON on stdin.

It prints JSON lines on stdout: first ``{"type": "offered", "skills": [...]}``, what it found
staged in the skills directory before the agent ran (the proof the skill was offered), then
``{"type": "result", ...}`` with what the callable returned, or ``{"type": "error", ...}``.
"""

import importlib
import json
import os
import site
import sys
import traceback


def offered(skills_dir):
    if not skills_dir or not os.path.isdir(skills_dir):
        return []
    return sorted(name for name in os.listdir(skills_dir)
                  if os.path.isfile(os.path.join(skills_dir, name, "SKILL.md")))


def emit(line):
    sys.stdout.write(json.dumps(line) + "\n")
    sys.stdout.flush()


def main(module_name, attr):
    # The caller's packages (its agent framework), .pth files and all.
    for directory in filter(None, os.environ.pop("SKILLAB_AGENT_SITES", "").split(":")):
        site.addsitedir(directory)
    task = json.loads(sys.stdin.read())
    # The arm's token: handed to the callable, kept from the commands its tools start.
    task["api_key"] = os.environ.pop(task.pop("token_env"), "")
    emit({"type": "offered", "skills": offered(task.get("skills_dir"))})
    try:
        target = importlib.import_module(module_name)
        for part in attr.split("."):
            target = getattr(target, part)
        answer = target(task)
    except BaseException as exc:  # the agent's own failure, reported as the arm's error
        tail = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))[-2000:]
        emit({"type": "error", "error": f"{type(exc).__name__}: {exc}", "traceback": tail})
        return 0
    if isinstance(answer, str):
        answer = {"answer": answer}
    if not isinstance(answer, dict):
        emit({"type": "error", "error": f"the callable returned {type(answer).__name__}, not a dict or str"})
        return 0
    if answer.get("error"):  # the runtime's own failure (the model API's HTTP status, say)
        emit({"type": "error", "error": str(answer["error"]), "status": answer.get("status")})
        return 0
    result = {"type": "result", "answer": str(answer.get("answer", "")),
              "events": answer.get("events") or [], "skills_loaded": answer.get("skills_loaded") or []}
    if answer.get("offered") is not None:  # the runtime's own word on what it offered
        result["offered"] = answer["offered"]
    if answer.get("stop_reason"):
        result["stop_reason"] = str(answer["stop_reason"])
    emit(result)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2]))
