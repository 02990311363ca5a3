#!/usr/bin/env bash
set -euo pipefail

WORKSPACE="${BENCHFLOW_WORKSPACE:-/workspace}"
REWARD_TEXT="${BENCHFLOW_REWARD_TEXT:-/logs/verifier/reward.txt}"
REWARD_JSON="${BENCHFLOW_REWARD_JSON:-/logs/verifier/reward.json}"
DETAILS_JSON="${BENCHFLOW_REWARD_DETAILS_JSON:-/logs/verifier/reward-details.json}"
ARTIFACT_DIR="${BENCHFLOW_VERIFIER_ARTIFACT_DIR:-/logs/verifier/artifacts}"

mkdir -p "$(dirname "$REWARD_TEXT")" "$(dirname "$REWARD_JSON")" "$(dirname "$DETAILS_JSON")" "$ARTIFACT_DIR"

python3 - "$WORKSPACE" "$REWARD_TEXT" "$REWARD_JSON" "$DETAILS_JSON" <<'PY'
import json
import sys
from pathlib import Path

workspace, reward_text, reward_json, details_json = map(Path, sys.argv[1:])
expected = {"version": "3.0.0",
            "breaking": ["drop the legacy v1 config loader", "timestamps are now UTC everywhere"]}
checks = {}
try:
    got = json.loads((workspace / "release.json").read_text())
    checks["version"] = got.get("version") == expected["version"]
    checks["breaking"] = got.get("breaking") == expected["breaking"]
except (OSError, ValueError):
    checks = {"version": False, "breaking": False}
reward = sum(checks.values()) / len(checks)
reward_text.write_text(f"{reward}\n")
reward_json.write_text(json.dumps({"reward": reward}))
details_json.write_text(json.dumps(checks))
PY
cp "$WORKSPACE/release.json" "$ARTIFACT_DIR/" 2>/dev/null || true
