#!/bin/bash
set -e
WORKSPACE="${BENCHFLOW_WORKSPACE:-/root}"
python3 - "$WORKSPACE" <<'PY'
import csv, json, sys
from decimal import Decimal
root = sys.argv[1]
net, voided = 0, 0
for row in csv.DictReader(open(f"{root}/ledger.csv")):
    if row["status"] == "void":
        voided += 1
        continue
    cents = int(Decimal(row["amount"]) * 100)
    net += -cents if row["kind"] == "refund" else cents
json.dump({"net_cents": net, "voided": voided}, open(f"{root}/summary.json", "w"))
PY
