"""What the credential proxy adds to each relayed model request, on loopback.

The fake model server (tests/fakes) answers Anthropic Messages, streamed (SSE) and plain JSON,
with no latency of its own. Each request is sent N times straight to it over TCP, and N times
through a ``CredentialProxy`` on its Unix socket as a CLI's bridge would; the medians and the
difference ("added") are printed per form. The request body is a conversation of ``--body-kb``
KiB (the proxy parses it to check the model), the answer ``--answer-kb`` KiB of text (the fake
streams it as its SSE events: message_start, two text deltas, message_delta with the usage...;
the proxy reads each answer's usage as it passes). With the proxy metering (pinned model, priced
usage, per-arm token) and relaying only (``relay``: no model, price or token set; on the code
before metering, ``--relay-only`` is all there is).

    python benchmarks/proxy.py [--requests 200] [--body-kb 100] [--answer-kb 8] [--relay-only]
"""

from __future__ import annotations

import argparse
import http.client
import inspect
import json
import socket
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "runner"))

from skillab.providers.pricing import cost_usd  # noqa: E402
from skillab.sandbox.proxy import CredentialProxy  # noqa: E402
from tests.fakes.model_server import FakeModelServer, text  # noqa: E402

MODEL = "claude-haiku-4-5"
KEY = "sk-ant-bench-" + "p" * 24
TOKEN = "skillab-arm-bench"


class UnixConnection(http.client.HTTPConnection):
    """HTTP over the proxy's Unix socket, as the bridge forwards a CLI's connection."""

    def __init__(self, path: str):
        super().__init__("127.0.0.1", timeout=30)
        self._path = path

    def connect(self) -> None:
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.settimeout(30)
        self.sock.connect(self._path)


def one(connection: http.client.HTTPConnection, body: bytes, headers: dict[str, str]) -> float:
    started = time.perf_counter()
    connection.request("POST", "/v1/messages", body=body, headers=headers)
    response = connection.getresponse()
    data = response.read()
    elapsed = time.perf_counter() - started
    connection.close()
    assert response.status == 200, (response.status, data[:200])
    return elapsed


def rounds(opens: dict, body: bytes, requests: int) -> dict[str, list[float]]:
    """``requests`` rounds; each sends the request once by every route, in a rotating order, so
    load from the machine's other work falls on every route alike."""
    headers = {"Content-Type": "application/json", "x-api-key": TOKEN}
    names = list(opens)
    for name in names:  # warm-up
        one(opens[name](), body, headers)
    times: dict[str, list[float]] = {name: [] for name in names}
    for number in range(requests):
        for name in names[number % len(names):] + names[:number % len(names)]:
            times[name].append(one(opens[name](), body, headers))
    return times


def proxy_for(url: str, metering: bool) -> CredentialProxy:
    paths = (r"/v1/messages(/count_tokens)?",)
    if not metering:
        return CredentialProxy(url, {"x-api-key": KEY}, paths=paths)
    if "model" not in inspect.signature(CredentialProxy).parameters:
        raise SystemExit("this proxy has no metering: run with --relay-only")
    return CredentialProxy(url, {"x-api-key": KEY}, paths=paths, model=MODEL, token=TOKEN,
                           price=lambda usage: cost_usd(MODEL, usage))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--requests", type=int, default=200)
    parser.add_argument("--body-kb", type=int, default=100)
    parser.add_argument("--answer-kb", type=int, default=8)
    parser.add_argument("--relay-only", action="store_true", help="only the proxy without metering")
    args = parser.parse_args()
    words = " ".join(f"w{i}" for i in range(args.answer_kb * 1024 // 6))
    turns = [{"role": "user" if i % 2 == 0 else "assistant", "content": "x" * 1000}
             for i in range(max(1, args.body_kb))]
    with FakeModelServer(lambda request: text(words)) as server:
        host, port = server.url.split("//")[1].split(":")
        rows = []
        proxies = {"relay": proxy_for(server.url, False).start()}
        if not args.relay_only:
            proxies["metering"] = proxy_for(server.url, True).start()
        opens = {"direct": lambda: http.client.HTTPConnection(host, int(port), timeout=30)}
        for name, proxy in proxies.items():
            opens[name] = lambda path=str(proxy.socket_path): UnixConnection(path)
        try:
            for stream in (True, False):
                body = json.dumps({"model": MODEL, "max_tokens": 1024, "stream": stream,
                                   "messages": turns + [{"role": "user", "content": "go"}]}).encode()
                times = rounds(opens, body, args.requests)
                row = {"form": "SSE" if stream else "JSON", "direct_ms": statistics.median(times["direct"]) * 1e3}
                for name in proxies:
                    added = [t - d for t, d in zip(times[name], times["direct"])]
                    row[f"{name}_ms"] = statistics.median(times[name]) * 1e3
                    row[f"{name}_added_ms"] = statistics.median(added) * 1e3
                rows.append(row)
        finally:
            for proxy in proxies.values():
                proxy.close()
        if "metering" in proxies:
            assert proxies["metering"].tally.answered == 2 * (args.requests + 1)
    print(f"{args.requests} requests per series; body {args.body_kb} KiB; answer {args.answer_kb} KiB")
    for row in rows:
        cells = [f"{name}={value:.3f}" if isinstance(value, float) else f"{name}={value}"
                 for name, value in row.items()]
        print("  " + "  ".join(cells))


if __name__ == "__main__":
    main()
