"""What Claude Code's skill listing shows the model, measured by asking the CLI itself.

Claude Code lists skills in a ``<system-reminder>`` of the first user message ("The following
skills are available for use with the Skill tool:"), one ``- name: description`` line each. The
listing has a budget: 1 % of the model's context window at 4 characters a token (8,000
characters for a 200k-token model; ``SLASH_COMMAND_TOOL_CHAR_BUDGET`` overrides it), and each
description is cut at 1,536 characters. Over budget, the CLI's bundled skills keep their
descriptions and the others keep theirs in order of past use while room remains; the rest are
listed by name only, so the model cannot route to them by description.

Rather than re-implement that rule (it changes between releases), ``probe_listing`` runs the
adapter once, exactly as a trial runs (same sandbox, same staging, same proxy), with its model
endpoint replaced by a capture endpoint on 127.0.0.1 that records the first model request and
refuses it, and reads the listing out of that request. No key and no network beyond the
loopback are involved.
"""

from __future__ import annotations

import copy
import json
import shutil
import tempfile
import threading
from collections.abc import Sequence
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from ..sandbox.backend import Backend
from ..sandbox.workspace import Workspace
from ..skill.loader import Skill
from ..suite.model import Case
from .base import ArmRequest

LISTING_HEAD = "The following skills are available for use with the Skill tool:"
ELLIPSIS = "\u2026"


class _Capture:
    """A loopback endpoint that keeps the first /v1/messages body and answers 400."""

    def __init__(self) -> None:
        self.bodies: list[Any] = []
        capture = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b""
                if self.path.split("?")[0] == "/v1/messages":
                    try:
                        capture.bodies.append(json.loads(raw or b"null"))
                    except ValueError:
                        pass
                body = json.dumps({"type": "error", "error": {
                    "type": "invalid_request_error", "message": "skillab listing probe"}}).encode()
                self.send_response(400)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            do_GET = do_POST

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_port}"

    def __enter__(self) -> _Capture:
        self.thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.server.shutdown()
        self.server.server_close()


def probe_listing(adapter: Any, skills: Sequence[Skill], sandbox: Backend) -> dict[str, Any]:
    """The listing ``adapter`` (a ``ClaudeCodeAdapter``) sends with ``skills`` installed, its
    CLI run under the run's ``sandbox``."""
    probe = copy.copy(adapter)
    probe._api_key = "skillab-listing-probe"
    probe.max_retries = 0
    scratch = Path(tempfile.mkdtemp(prefix="skillab-listing-"))
    try:
        with _Capture() as capture:
            probe.base_url = capture.url
            workspace = Workspace.create(scratch, "listing-probe", backend=sandbox)
            probe.run(ArmRequest(
                case=Case(name="listing-probe", prompt="hello"), arm="with_skill", skill=skills[0],
                siblings=tuple(skills[1:]), workspace=workspace.root, max_turns=1, purpose="trigger",
                sandbox=sandbox,
            ))
        listing = next((t for body in capture.bodies for t in _texts(body) if LISTING_HEAD in t), None)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    if listing is None:
        return {"agent": "claude-code", "method": "probe",
                "error": "the CLI sent no skill listing to the capture endpoint"}
    return read_listing(listing, [s.name for s in skills], {s.name: _description(s) for s in skills})


def _texts(body: Any) -> list[str]:
    found = []
    for message in (body or {}).get("messages", []) if isinstance(body, dict) else []:
        content = message.get("content")
        if isinstance(content, str):
            found.append(content)
        elif isinstance(content, list):
            found += [b.get("text", "") for b in content if isinstance(b, dict) and b.get("type") == "text"]
    return found


def _description(skill: Skill) -> str:
    return " ".join(skill.description.split())


def read_listing(text: str, names: Sequence[str], descriptions: dict[str, str]) -> dict[str, Any]:
    """Which of ``names`` the listing text shows in full, cut short, by name only, or not at all."""
    block = text.split(LISTING_HEAD, 1)[1].split("</system-reminder>", 1)[0].strip("\n")
    entries: dict[str, str | None] = {}
    for line in block.splitlines():
        if not line.startswith("- "):
            continue
        name, sep, description = line[2:].partition(": ")
        entries[name.strip()] = description if sep else None
    dropped = [n for n in names if n in entries and entries[n] is None]
    cut = [n for n in names if (entries.get(n) or "").endswith(ELLIPSIS)
           and not descriptions.get(n, "").endswith(ELLIPSIS)]
    absent = [n for n in names if n not in entries]
    return {
        "agent": "claude-code",
        "method": "probe",
        "skills": len(entries),
        "ours": len(names),
        "chars": len(block),
        "budget_chars": None,
        "overflow": bool(dropped or absent) or any(e is None for e in entries.values()),
        "descriptions_dropped": dropped,
        "descriptions_cut": cut,
        "absent": absent,
        # The CLI's own skills that lost their description too (they share the budget).
        "others_dropped": [n for n, d in entries.items() if d is None and n not in names],
    }
