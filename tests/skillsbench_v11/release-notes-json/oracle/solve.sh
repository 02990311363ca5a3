#!/bin/bash
set -euo pipefail
WORKSPACE="${BENCHFLOW_WORKSPACE:-/workspace}"
python3 - "$WORKSPACE" <<'PY'
import json, sys
root = sys.argv[1]
breaking = [line.split(":", 1)[1].strip() for line in open(f"{root}/CHANGES.txt") if line.split(":", 1)[0].endswith("!")]
json.dump({"version": "3.0.0", "breaking": breaking}, open(f"{root}/release.json", "w"))
PY
