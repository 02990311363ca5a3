"""Install the Claude Code CLI's native binary into the image, checked against pinned digests.

The CLI is published on npm as a small launcher plus one package per platform that holds a
self-contained binary; only that binary is needed, so neither Node.js nor npm enters the image.
The tarball's sha512 must equal the one pinned here for the version (npm's own `dist.integrity`),
so a registry or mirror that serves anything else fails the build.

    python3 install-claude-code.py VERSION   (REGISTRY: $NPM_REGISTRY, default registry.npmjs.org)
"""

from __future__ import annotations

import io
import platform
import sys
import tarfile
from pathlib import Path

from npm_tarball import ARCH, fetch, link

# version -> npm platform package -> dist.integrity (`npm view PKG@VERSION dist.integrity`)
PINNED = {
    "2.1.330": {
        "linux-x64": "sha512-9Gn+V7DtJ8M1nztP9CeDVl9g3RtrepI7rOFTyPRRnZe8D6zebIHKmC7OvBauucuAP0X0k85SDN/LPVZyjsGezQ==",
        "linux-arm64": "sha512-V4yanAY5EA5UpwwRPtjSfqDbNqAlUJeVn3NYZw2AgmRHjdpSsLtHAzbxRXfkAnbjwTXzE0uedjQxUY02ARPcsA==",
    },
}
PREFIX = Path("/usr/local/lib/claude-code")


def main(version: str) -> int:
    target = ARCH.get(platform.machine().lower())
    integrity = PINNED.get(version, {}).get(target or "")
    if integrity is None:
        sys.exit(f"no pinned digest for Claude Code {version} on {platform.machine()}: add it to PINNED")
    data = fetch(f"@anthropic-ai/claude-code-{target}", version, integrity, timeout_s=300)
    with tarfile.open(fileobj=io.BytesIO(data)) as archive:
        member = archive.getmember("package/claude")
        source = archive.extractfile(member)
        assert source is not None
        PREFIX.mkdir(parents=True, exist_ok=True)
        binary = PREFIX / "claude"
        binary.write_bytes(source.read())
    link("claude", binary)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
