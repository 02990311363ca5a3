# skillab's GitHub Action image with the agent CLIs: Claude Code, Codex and Gemini CLI
# (claude-code/action.yml builds it).
# The Dockerfile with WITH_CLAUDE_CODE=true: tests/test_action_image.py keeps the two identical
# but for that line and this header.
#
#
# Pinned: the base by digest (BASE_IMAGE; refresh it with the digest `docker pull` prints), the
# Python dependencies by requirements/action.txt, the Claude Code binary by its npm sha512,
# Codex and Gemini CLI by their npm versions.
# No USER: the composite action runs it as the runner's uid (docker/run-action.sh); run as root,
# `skillab action` drops to the uid that owns the workspace (runner/skillab/github/runtime.py).
ARG BASE_IMAGE=python:3.11-slim-trixie@sha256:9534e5a8e315485d4061ed659af0fd78a284c015f9b73661b41d6bab25604534
FROM ${BASE_IMAGE}

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PIP_NO_CACHE_DIR=1

# git: on a pull request the action compares each edited skill with its version at the base
# commit, read with `git archive`, and checks the checkout is the pull request's head.
# tini: PID 1 that passes the runner's SIGINT/SIGTERM on and reaps orphaned processes.
RUN apt-get update \
    && apt-get install -y --no-install-recommends git tini bubblewrap \
    && rm -rf /var/lib/apt/lists/*

# Dependencies first, in a layer of their own: editing skillab's code does not reinstall them.
COPY requirements/action.txt /tmp/skillab-requirements.txt
RUN pip install --no-cache-dir --no-deps -r /tmp/skillab-requirements.txt \
    && rm /tmp/skillab-requirements.txt

# Optional: the Claude Code CLI for `adapter: claude-code`, its native binary only (no Node.js).
# Declared here, not at the top, so both variants share every layer above.
ARG WITH_CLAUDE_CODE=true
ARG CLAUDE_CODE_VERSION=2.1.330
COPY docker/npm_tarball.py docker/install-claude-code.py /tmp/
RUN if [ "$WITH_CLAUDE_CODE" = "true" ]; then python /tmp/install-claude-code.py "$CLAUDE_CODE_VERSION"; fi \
    && rm /tmp/install-claude-code.py /tmp/npm_tarball.py

# The same variant carries Codex, Gemini CLI and Copilot CLI for `adapter: codex`, `gemini-cli` and
# `copilot`, at the
# versions .ci/run tests: Node.js from Debian (no npm), each CLI's npm tarball by its sha512.
ARG CODEX_VERSION=0.169.0
ARG GEMINI_CLI_VERSION=0.61.0
ARG COPILOT_VERSION=1.0.102
COPY docker/npm_tarball.py docker/install-agent-clis.py /tmp/
RUN if [ "$WITH_CLAUDE_CODE" = "true" ]; then \
      apt-get update && apt-get install -y --no-install-recommends nodejs \
      && rm -rf /var/lib/apt/lists/* \
      && python /tmp/install-agent-clis.py "$CODEX_VERSION" "$GEMINI_CLI_VERSION" "$COPILOT_VERSION"; fi \
    && rm /tmp/install-agent-clis.py /tmp/npm_tarball.py

# A regular (not editable) install, so the sources can go once it is done.
COPY pyproject.toml README.md /tmp/skillab-src/
COPY runner /tmp/skillab-src/runner
RUN pip install --no-cache-dir --no-deps /tmp/skillab-src && pip check \
    && rm -rf /tmp/skillab-src && skillab --version

ENTRYPOINT ["/usr/bin/tini", "--", "skillab", "action"]
