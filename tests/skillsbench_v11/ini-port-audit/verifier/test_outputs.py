import json
import os
from pathlib import Path

WORKSPACE = Path(os.environ.get("BENCHFLOW_WORKSPACE", "/root"))


def test_privileged_ports_in_audit_order():
    report = json.loads((WORKSPACE / "ports.json").read_text())
    assert report == {"privileged": ["mail:25", "dns:53", "web:443"]}
