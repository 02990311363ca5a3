"""Install Codex, Gemini CLI and GitHub Copilot CLI into the image from npm tarballs checked against
pinned digests.

Laid out as ``npm install --global`` lays them out (``/usr/local/lib/node_modules``, links in
``/usr/local/bin``), without npm: Debian's npm brings hundreds of packages the image has no use
for. No CLI has a dependency beyond these tarballs: Codex is a Node launcher plus one package per
platform holding its native binary; Gemini CLI is one bundled script (Node 20+); Copilot CLI's
platform package is one self-contained executable (its Node launcher only picks that package, so
the link names the executable itself).
Each tarball's sha512 must equal the one pinned here (npm's own ``dist.integrity``), so a
registry or mirror that serves anything else fails the build.

    python3 install-agent-clis.py CODEX_VERSION GEMINI_CLI_VERSION COPILOT_VERSION   (REGISTRY: $NPM_REGISTRY)
"""

from __future__ import annotations

import io
import platform
import sys
import tarfile
from pathlib import Path

from npm_tarball import ARCH, fetch, link

# (package, version) -> dist.integrity (`npm view PKG@VERSION dist.integrity`)
PINNED = {
    ("@openai/codex", "0.169.0"): "sha512-KhzYlkKPxoNssR8CEm45IjqnFWn7UtlF4CiD3tOJPea51xBs7MaHy0UQG9GSbCqk6Lrjn5QdJDV0QD1/FgWlGw==",
    ("@openai/codex", "0.169.0-linux-x64"): "sha512-o05NyAOCDygSPRo1yinzxvkRSdmsZyBD9E7mbpmjRanSfM8lypqWtQgEo4XfNkwhuCR2aFu8mlGOsQGFXVbVww==",
    ("@openai/codex", "0.169.0-linux-arm64"): "sha512-NZ/DaQUpcQmxmqee7Z9uC1rzw3GhSbooawcaTe1LN5Yk+WlinUKGdTXJgClRT/9ogQEEM9TWxYzvxPfj5G/xFg==",
    ("@google/gemini-cli", "0.61.0"): "sha512-dbQ9A0qBtFJNi6XBkHvfZ6Azpn6PNgH/P8h2MZ67RLlX8hSAVjup39CRWqdRxZv7YXIuhrFaytr8y0jKnkoxnQ==",
    ("@github/copilot-linux-x64", "1.0.102"): "sha512-eGHPbsP0p2QgfVZCjtbGBFZPBOJQ0DN7xIbBRAo7oG8b1zfLirQIdfI4h8Iy68Dv2cKJGJZg2/EO7W7KpIMJOw==",
    ("@github/copilot-linux-arm64", "1.0.102"): "sha512-5rO0B2/AduCekrE+aUzipySKZxZY2b/tVRZ8Suy8ymPFNC0Q7HQiQ8DZhxj+3RhHR8rU2Z8KOJVAbtMlROX6+A==",
}
MODULES = Path("/usr/local/lib/node_modules")


def unpack(package: str, version: str, into: Path) -> None:
    """Fetch ``package@version`` against its pinned digest and unpack it into ``into``."""
    integrity = PINNED.get((package, version))
    if integrity is None:
        sys.exit(f"no pinned digest for {package}@{version}: add it to PINNED")
    data = fetch(package, version, integrity)
    into.mkdir(parents=True, exist_ok=True)
    with tarfile.open(fileobj=io.BytesIO(data)) as archive:
        for member in archive.getmembers():
            if not member.name.startswith("package/") or ".." in Path(member.name).parts:
                continue
            member.name = member.name[len("package/"):]
            archive.extract(member, into, filter="tar")


def main(codex_version: str, gemini_version: str, copilot_version: str) -> int:
    target = ARCH.get(platform.machine().lower())
    if target is None:
        sys.exit(f"no Codex build for {platform.machine()}")
    unpack("@openai/codex", codex_version, MODULES / "@openai" / "codex")
    # Where the launcher's require.resolve finds its platform package, as npm installs it.
    unpack("@openai/codex", f"{codex_version}-{target}", MODULES / "@openai" / f"codex-{target}")
    link("codex", MODULES / "@openai" / "codex" / "bin" / "codex.js")
    unpack("@google/gemini-cli", gemini_version, MODULES / "@google" / "gemini-cli")
    link("gemini", MODULES / "@google" / "gemini-cli" / "bundle" / "gemini.js")
    unpack(f"@github/copilot-{target}", copilot_version, MODULES / "@github" / f"copilot-{target}")
    link("copilot", MODULES / "@github" / f"copilot-{target}" / "copilot")
    return 0


if __name__ == "__main__":
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    sys.exit(main(sys.argv[1], sys.argv[2], sys.argv[3]))
