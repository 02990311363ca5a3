"""A scripted model on 127.0.0.1 speaking the OpenAI Responses API, to try ``--adapter
openai-agents`` with no key and no network:

    python examples/openai-agents/mock_model.py            # serves http://127.0.0.1:8765/v1

It plays an agent that follows the SDK's skill instructions: when the instructions it receives
list a skill, it calls ``load_skill`` (lazy mode) and reads the skill's ``SKILL.md`` with the
shell tool, then answers with what it read; when they list none, it says it does not know.
Standard library only.
"""

import argparse
import itertools
import json
import re
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

LISTED = re.compile(r"^- (?P<name>[^:\n]+): .* \(file: (?P<path>[^)\n]+)\)$", re.MULTILINE)
ids = itertools.count(1)


def decide(body):
    """The next output item: a function call, or the final message."""
    listed = LISTED.search((body.get("instructions") or "").partition("## Skills")[2])
    outputs = [i for i in body.get("input") or [] if isinstance(i, dict) and i.get("type") == "function_call_output"]
    tools = {t.get("name") for t in body.get("tools") or []}
    if listed is None:
        return message("I do not know; nothing I was given says.")
    if not outputs and "load_skill" in tools:
        return call("load_skill", {"skill_name": listed["name"]})
    if len(outputs) == ("load_skill" in tools):
        return call("exec_command", {"cmd": f"cat {listed['path']}/SKILL.md"})
    read = str(outputs[-1].get("output", "")).partition("Output:\n")[2]
    return message("From the skill: " + " ".join(read.split())[:2000])


def call(name, arguments):
    n = next(ids)
    return {"type": "function_call", "id": f"fc_{n}", "call_id": f"call_{n}", "name": name,
            "arguments": json.dumps(arguments), "status": "completed"}


def message(text):
    return {"type": "message", "id": f"msg_{next(ids)}", "status": "completed", "role": "assistant",
            "content": [{"type": "output_text", "text": text, "annotations": []}]}


class Handler(BaseHTTPRequestHandler):
    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers.get("content-length") or 0)) or b"{}")
        if self.path.rstrip("/") != "/v1/responses":
            return self.reply(404, {"error": {"message": f"no route {self.path}", "type": "not_found"}})
        size = len(json.dumps(body)) // 4
        self.reply(200, {"id": f"resp_{next(ids)}", "object": "response", "created_at": 0, "status": "completed",
                         "model": body.get("model", "mock"), "output": [decide(body)], "parallel_tool_calls": True,
                         "tool_choice": "auto", "tools": [],
                         "usage": {"input_tokens": size, "input_tokens_details": {"cached_tokens": 0},
                                   "output_tokens": 20, "output_tokens_details": {"reasoning_tokens": 0},
                                   "total_tokens": size + 20}})

    def reply(self, status, payload):
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args):
        pass


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=8765, help="0 picks a free port (default 8765)")
    server = ThreadingHTTPServer(("127.0.0.1", parser.parse_args().port), Handler)
    print(f"--base-url http://127.0.0.1:{server.server_port}/v1", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    main()
