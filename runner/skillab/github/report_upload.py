"""Whether the job running skillab uploads its HTML report as an artifact.

The PR comment's footer sends reviewers to ``report.html`` "in its artifacts" only when that is
true: the job's workflow (``GITHUB_WORKFLOW_REF``, read from the checkout) has an
``actions/upload-artifact`` step whose ``path`` takes the results directory. A workflow that does
not upload it (the minimal one) gets a footer that names the workflow run alone, whose job
summary carries the same report.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path, PurePosixPath
from typing import Any

import yaml

UPLOAD_ACTION = "actions/upload-artifact@"


def uploads_report(env: Mapping[str, str], workspace: Path, results_dir: str) -> bool:
    workflow = _workflow_file(env, workspace)
    job_id = env.get("GITHUB_JOB", "")
    if workflow is None or not job_id:
        return False
    try:
        document = yaml.safe_load(workflow.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, yaml.YAMLError):
        return False
    job = _get(_get(document, "jobs"), job_id)
    steps = _get(job, "steps")
    for step in steps if isinstance(steps, list) else ():
        if isinstance(step, dict) and str(step.get("uses", "")).startswith(UPLOAD_ACTION):
            paths = str(_get(step.get("with"), "path") or "").splitlines()
            if any(_takes(line, results_dir) for line in paths):
                return True
    return False


def _workflow_file(env: Mapping[str, str], workspace: Path) -> Path | None:
    # "owner/repo/.github/workflows/x.yml@refs/heads/main"
    ref = env.get("GITHUB_WORKFLOW_REF", "").split("@", 1)[0]
    prefix = env.get("GITHUB_REPOSITORY", "") + "/"
    if prefix == "/" or not ref.startswith(prefix):
        return None
    relative = PurePosixPath(ref[len(prefix):])
    if relative.is_absolute() or ".." in relative.parts:
        return None
    return workspace / relative


def _takes(line: str, results_dir: str) -> bool:
    """Whether an upload path (one line of ``with.path``) includes ``results_dir/report.html``."""
    path = line.strip()
    if not path or path.startswith("!"):
        return False
    path = path.removeprefix("./").rstrip("/")
    return path in {".", results_dir, f"{results_dir}/report.html", f"{results_dir}/*", f"{results_dir}/**",
                    f"{results_dir}/*.html"}


def _get(node: Any, key: str) -> Any:
    return node.get(key) if isinstance(node, dict) else None
