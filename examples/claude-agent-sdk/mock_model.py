"""A scripted model on 127.0.0.1 speaking the Anthropic Messages API, to try ``--adapter
claude-agent-sdk`` with no key and no network:

    python examples/claude-agent-sdk/mock_model.py     # serves http://127.0.0.1:8766

It answers the SDK's bundled CLI as the real API does (``POST /v1/messages``, streamed as
server-sent events, and ``/v1/messages/count_tokens``). It plays a model that knows which skill
answers the team's questions (``--skill``, default ``team-facts``): when the CLI lists that skill
to it, it calls the ``Skill`` tool with its name, then answers with what the skill said; when the
CLI does not list it, it says it does not know. It leaves the CLI's own bundled skills alone
(the CLI lists them in every session). Requests that offer no tools (the CLI's side requests,
such as a session title) get a short text. Standard library only.
"""

import argparse
import itertools
import json
import re
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

# How the CLI lists the skills it offers to the model: a reminder, then "- name: description" lines.
LISTING = "The following skills are available for use with the Skill tool:"
LISTED = re.compile(r"^- (?P<name>[a-z0-9][a-z0-9-]*): (?P<description>.*)$", re.MULTILINE)
ids = itertools.count(1)


def text_of(content):
    """The text of a message's content, a content block or a list of them (tool results included)."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(text_of(b) for b in content)
    if isinstance(content, dict):
        return text_of(content.get("text") if content.get("type") == "text" else content.get("content"))
    return ""


def listed(messages):
    """The names of the skills the CLI's listing offers."""
    listing = next((text_of(b) for m in messages if m["role"] == "user" for b in m["content"]
                    if LISTING in text_of(b)), "")
    return {found["name"] for found in LISTED.finditer(listing.partition(LISTING)[2])}


def decide(body, skill):
    """The next content block: a tool_use, or the final text."""
    messages = [m for m in body.get("messages") or [] if isinstance(m.get("content"), (str, list))]
    for m in messages:
        if isinstance(m["content"], str):
            m["content"] = [{"type": "text", "text": m["content"]}]
    if skill not in listed(messages):
        return {"type": "text", "text": "I do not know; nothing I was given says."}
    if not any(m["role"] == "assistant" for m in messages):
        return {"type": "tool_use", "id": f"toolu_{next(ids)}", "name": "Skill", "input": {"skill": skill}}
    last = max(i for i, m in enumerate(messages) if m["role"] == "assistant")
    # What the Skill tool brought in: the skill's body, as text beside the tool's result.
    read = " ".join(line for m in messages[last + 1:] for b in m["content"] if b.get("type") == "text"
                    for line in text_of(b).splitlines() if not line.startswith("Base directory for this skill:"))
    return {"type": "text", "text": "From the skill: " + " ".join(read.split())[:2000]}


def message(body, block):
    """One assistant message holding ``block``, as the API returns it."""
    return {"id": f"msg_{next(ids)}", "type": "message", "role": "assistant", "model": body.get("model", "mock"),
            "content": [block], "stop_reason": "tool_use" if block["type"] == "tool_use" else "end_turn",
            "stop_sequence": None,
            "usage": {"input_tokens": len(json.dumps(body)) // 4, "output_tokens": 20,
                      "cache_read_input_tokens": 0, "cache_creation_input_tokens": 0}}


def events(whole):
    """The server-sent events the API streams ``whole`` as."""
    [block] = whole["content"]
    if block["type"] == "text":
        start, delta = {"type": "text", "text": ""}, {"type": "text_delta", "text": block["text"]}
    else:
        start = {**block, "input": {}}
        delta = {"type": "input_json_delta", "partial_json": json.dumps(block["input"])}
    opening = {**whole, "content": [], "stop_reason": None, "usage": {**whole["usage"], "output_tokens": 1}}
    return [("message_start", {"type": "message_start", "message": opening}),
            ("content_block_start", {"type": "content_block_start", "index": 0, "content_block": start}),
            ("content_block_delta", {"type": "content_block_delta", "index": 0, "delta": delta}),
            ("content_block_stop", {"type": "content_block_stop", "index": 0}),
            ("message_delta", {"type": "message_delta",
                               "delta": {"stop_reason": whole["stop_reason"], "stop_sequence": None},
                               "usage": {"output_tokens": whole["usage"]["output_tokens"]}}),
            ("message_stop", {"type": "message_stop"})]


def error(kind, text):
    return {"type": "error", "error": {"type": kind, "message": text}}


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def do_GET(self):
        self.reply(404, error("not_found_error", f"no route {self.path}"))

    def do_POST(self):
        try:
            body = json.loads(self.rfile.read(int(self.headers.get("content-length") or 0)) or b"{}")
        except ValueError as exc:
            return self.reply(400, error("invalid_request_error", f"the body is not JSON: {exc}"))
        route = self.path.split("?")[0].rstrip("/")
        if route == "/v1/messages/count_tokens":
            return self.reply(200, {"input_tokens": max(1, len(json.dumps(body)) // 4)})
        if route != "/v1/messages":
            return self.reply(404, error("not_found_error", f"no route {route}"))
        whole = message(body, decide(body, self.server.skill) if body.get("tools") else {"type": "text", "text": "ok"})
        if not body.get("stream"):
            return self.reply(200, whole)
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("connection", "close")
        self.end_headers()
        for name, data in events(whole):
            self.wfile.write(f"event: {name}\ndata: {json.dumps(data)}\n\n".encode())
        self.wfile.flush()
        self.close_connection = True

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
    parser.add_argument("--port", type=int, default=8766, help="0 picks a free port (default 8766)")
    parser.add_argument("--skill", default="team-facts", help="the skill that answers (default team-facts)")
    args = parser.parse_args()
    server = ThreadingHTTPServer(("127.0.0.1", args.port), Handler)
    server.skill = args.skill
    print(f"--base-url http://127.0.0.1:{server.server_port}", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    main()
