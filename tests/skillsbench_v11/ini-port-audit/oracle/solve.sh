#!/bin/bash
set -e
WORKSPACE="${BENCHFLOW_WORKSPACE:-/root}"
python3 - "$WORKSPACE" <<'PY'
import configparser, glob, json, sys
root = sys.argv[1]
found = []
for path in glob.glob(f"{root}/services/*.ini"):
    config = configparser.ConfigParser()
    config.read(path)
    port = config.getint("listen", "port")
    if port < 1024:
        found.append((port, config.get("service", "name")))
json.dump({"privileged": [f"{name}:{port}" for port, name in sorted(found)]}, open(f"{root}/ports.json", "w"))
PY
