"""The bridge inside a sandbox: ``127.0.0.1:port`` in its network namespace, forwarded to the
host-side proxy's Unix socket, which is the only thing the namespace reaches.

The same design as ``@anthropic-ai/sandbox-runtime``, which runs ``socat`` there; this is a
stdlib-Python script instead, so no extra package is needed in the sandbox. It starts the agent
CLI as its child, passes stdin and output through, and exits with the child's status.

With a token (``ProxyRoute.token``), the bridge reads it from the first line of its stdin, makes
itself non-dumpable (so no process of the sandbox reads it from its memory or environment) and
starts the CLI with it in ``token_env`` (or, when that is a path, writes it to that new file for
a CLI that reads its key once and removes it); the CLI's own executable is execute-only
(``sealed``), so the CLI is not dumpable either. The rest of stdin is the CLI's.
"""

from __future__ import annotations

import functools
import shutil
from collections.abc import Sequence

from .view import ProxyRoute

TRUSTED_PATH = "/usr/local/bin:/usr/bin:/bin"

# Runs with ``python3 -I -c``: no site, no environment, nothing of skillab imported.
BRIDGE_SOURCE = r'''
import os, signal, socket, subprocess, sys, threading
sock_path, port, token_env, argv = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[5:]
env = None
if token_env != "-":
    import ctypes
    if ctypes.CDLL(None, use_errno=True).prctl(4, 0, 0, 0, 0) != 0:  # PR_SET_DUMPABLE, 0
        sys.exit("skillab bridge: could not make itself non-dumpable")
    line = b""
    while not line.endswith(b"\n"):
        byte = os.read(0, 1)
        if not byte:
            break
        line += byte
    token = line.decode().strip()
    if token_env.startswith("/"):  # a file read once by the CLI's key helper, then removed
        fd = os.open(token_env, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
        os.write(fd, token.encode())
        os.close(fd)
    else:
        env = dict(os.environ, **{token_env: token})
listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
listener.bind(("127.0.0.1", port))
listener.listen(64)
def pump(src, dst):
    try:
        while True:
            data = src.recv(65536)
            if not data:
                break
            dst.sendall(data)
    except OSError:
        pass
    finally:
        try:
            dst.shutdown(socket.SHUT_WR)
        except OSError:
            pass
def serve(client):
    upstream = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        upstream.connect(sock_path)
    except OSError:
        client.close()
        return
    back = threading.Thread(target=pump, args=(upstream, client), daemon=True)
    back.start()
    pump(client, upstream)
    back.join()
    client.close()
    upstream.close()
def accept():
    while True:
        client, _ = listener.accept()
        threading.Thread(target=serve, args=(client,), daemon=True).start()
threading.Thread(target=accept, daemon=True).start()
child = subprocess.Popen(argv, env=env)
signal.signal(signal.SIGTERM, lambda *_: child.kill())
code = child.wait()
sys.exit(code if code >= 0 else 128 - code)
'''


def bridge_argv(route: ProxyRoute, argv: Sequence[str]) -> list[str]:
    """``argv`` started by the bridge, which serves ``route`` on loopback while it runs."""
    return [_python(), "-I", "-c", BRIDGE_SOURCE, str(route.socket), str(route.port),
            route.token_env or "-", "--", *argv]


@functools.cache
def _python() -> str:
    # The system's interpreter: the sandbox mounts the system, never skillab's virtualenv.
    return shutil.which("python3", path=TRUSTED_PATH) or "/usr/bin/python3"
