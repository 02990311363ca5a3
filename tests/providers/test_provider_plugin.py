"""A model provider from another package is one file and one entry point: ``skillab run`` reads
its key from the variable the class names (and masks that key everywhere), prices its calls from
the class's own table, and judges with it, against a fake server on 127.0.0.1 speaking the
provider's own wire protocol.

The package is real: a module plus a ``.dist-info`` directory on ``PYTHONPATH``, as ``pip
install`` leaves it (``test_plugins.install_package``, which installs the other kinds' plugin too).
"""

from __future__ import annotations

import json
import textwrap
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from ..core.test_plugins import install_package, skillab

PROVIDER = textwrap.dedent('''
    """The "acme" model provider: its facts on its client class, its own JSON wire protocol."""

    import json
    import urllib.error
    import urllib.request

    from skillab.core.messages import ModelResponse
    from skillab.core.usage import Usage
    from skillab.errors import ProviderAuthError, ProviderError
    from skillab.providers.base import ModelProvider, Price


    class AcmeClient(ModelProvider):
        provider = "acme"
        key_env = "ACME_KEY"
        base_url_env = "ACME_ENDPOINT"
        prices = {"acme-1": Price(input=2.0, output=8.0, cache_read=0.0, cache_write=0.0)}

        def __init__(self, model, *, api_key, base_url=None, timeout_s=300.0, **settings):
            super().__init__(model)
            self._key = api_key
            self._url = (base_url or "https://api.acme.invalid") + "/v1/generate"
            self._timeout_s = timeout_s

        def create(self, messages, *, system, tools=(), max_tokens=4096, temperature=None,
                   seed="", json_schema=None):
            body = json.dumps({"model": self.model, "system": system, "max_tokens": max_tokens,
                               "turns": [m.text or "" for m in messages]}).encode()
            request = urllib.request.Request(self._url, body, {"Content-Type": "application/json",
                                                               "X-Acme-Key": self._key})
            try:
                with urllib.request.urlopen(request, timeout=self._timeout_s) as reply:
                    data = json.load(reply)
            except urllib.error.HTTPError as exc:
                if exc.code == 401:
                    raise ProviderAuthError(f"acme refused the key in {self.key_env}") from None
                raise ProviderError(f"acme: HTTP {exc.code}", status=exc.code) from None
            usage = Usage(input_tokens=data["tokens"]["in"], output_tokens=data["tokens"]["out"])
            usage.cost_usd = self.cost_usd(self.model, usage)
            return ModelResponse(text=data["completion"], usage=usage)


    class BareClient:
        """A client class that keeps its facts to itself: the registry has nothing to read."""

        key_env = "ACME_KEY"

        def __init__(self, model, **settings):
            self.model = model
''')

ENTRY_POINTS = """\
[skillab.models]
acme = skillab_acme:AcmeClient
bare-acme = skillab_acme:BareClient
"""

# Shaped like no known credential and named like none: only the class's ``key_env`` says so.
KEY = "acme-7f3c9b2e5d1a4f8c6b0e"
TOKENS_IN, TOKENS_OUT = 1000, 500
CALL_USD = (TOKENS_IN * 2.0 + TOKENS_OUT * 8.0) / 1_000_000


class AcmeServer(ThreadingHTTPServer):
    """The acme API: ``POST /v1/generate`` with the key in ``X-Acme-Key``. It echoes the key in
    every answer, as a careless provider might, and judges by the FINAL_OUTPUT block."""

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), AcmeHandler)
        self.requests: list[dict] = []

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"


class AcmeHandler(BaseHTTPRequestHandler):
    server: AcmeServer

    def do_POST(self) -> None:  # noqa: N802 (the stdlib's name)
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        self.server.requests.append({"path": self.path, "key": self.headers.get("X-Acme-Key"), **body})
        if self.path != "/v1/generate" or self.headers.get("X-Acme-Key") != KEY:
            self._send(401, {"error": "bad key"})
            return
        user = body["turns"][-1]
        if "BEGIN FINAL_OUTPUT" in user:
            answer = user.split("BEGIN FINAL_OUTPUT", 1)[1]
            passed = "SKILLED" in answer.split("END FINAL_OUTPUT", 1)[0]
            completion = json.dumps({"passed": passed, "reason": f"Judged with key {KEY}."})
        elif "Always answer SKILLED" in body["system"]:
            completion = f"SKILLED hello (served with key {KEY})"
        else:
            completion = f"plain hello (served with key {KEY})"
        self._send(200, {"completion": completion, "tokens": {"in": TOKENS_IN, "out": TOKENS_OUT}})

    def _send(self, status: int, data: dict) -> None:
        payload = json.dumps(data).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def log_message(self, *args) -> None:
        pass


@pytest.fixture
def acme():
    server = AcmeServer()
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server
    server.shutdown()
    server.server_close()


def greeter(root: Path) -> Path:
    skill = root / "greeter"
    skill.mkdir(parents=True)
    (skill / "SKILL.md").write_text("---\nname: greeter\ndescription: Greets people in a known way.\n---\n"
                                    "Always answer SKILLED.\n")
    (skill / "eval.yaml").write_text("cases:\n  - name: hello\n    prompt: Say hello.\n"
                                     "    expectations:\n      - \"The answer says 'SKILLED'.\"\n")
    return skill


def run_acme(tmp_path: Path, monkeypatch, key: str | None, url: str, provider: str = "acme"):
    site = tmp_path / "site"
    install_package(site, "skillab_acme", PROVIDER, ENTRY_POINTS)
    skill = greeter(tmp_path)
    monkeypatch.setenv("ACME_ENDPOINT", url)
    if key is None:
        monkeypatch.delenv("ACME_KEY", raising=False)
    else:
        monkeypatch.setenv("ACME_KEY", key)
    return skillab(["run", str(skill), "--adapter", "llm", "--provider", provider, "--model", "acme-1",
                    "--judge-same-family", "--no-cache", "--no-history", "--output", "results.json"],
                   site, tmp_path)


def test_a_provider_from_another_package_runs_judges_prices_and_masks_its_key(tmp_path, monkeypatch, acme):
    done = run_acme(tmp_path, monkeypatch, KEY, acme.url)
    assert done.returncode == 0, done.stderr
    # Every call reached the provider's own endpoint (ACME_ENDPOINT) with the key from ACME_KEY.
    assert {(r["path"], r["key"], r["model"]) for r in acme.requests} == {("/v1/generate", KEY, "acme-1")}
    doc = json.loads((tmp_path / "results.json").read_text())
    case = doc["cases"][0]
    assert doc["verdict"] == "pass" and case["outcome"] == "flip_to_pass"
    assert doc["models"]["judge"] == "acme-1"
    # Priced from the class's own table: each arm one call; the judge every grade and re-ask.
    for arm in ("with_skill", "without_skill"):
        assert case[arm]["usage"]["cost_usd"] == pytest.approx(CALL_USD)
    graded = sum("BEGIN FINAL_OUTPUT" in r["turns"][-1] for r in acme.requests)
    assert graded >= 2 and len(acme.requests) == graded + 2
    judge = doc["usage"]["judge"]
    assert judge["input_tokens"] == TOKENS_IN * graded and judge["cost_usd"] == pytest.approx(graded * CALL_USD)
    # The server echoed the key into answers and verdicts: nothing written or shown keeps it.
    written = (tmp_path / "results.json").read_text()
    assert "served with key [REDACTED]" in written and "Judged with key [REDACTED]" in written
    assert KEY not in written and KEY not in done.stdout and KEY not in done.stderr


def test_without_its_key_the_provider_stops_the_run_naming_the_variable(tmp_path, monkeypatch, acme):
    done = run_acme(tmp_path, monkeypatch, None, acme.url)
    assert done.returncode == 2
    assert "set ACME_KEY" in done.stderr
    assert acme.requests == []


def test_a_client_class_without_the_base_is_refused_naming_it(tmp_path, monkeypatch, acme):
    done = run_acme(tmp_path, monkeypatch, KEY, acme.url, provider="bare-acme")
    assert done.returncode == 2
    assert "subclass skillab.providers.base.ModelProvider" in done.stderr
    assert acme.requests == []
