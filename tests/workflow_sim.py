"""Run an example workflow's jobs here, step by step, as GitHub's runner would.

Each job starts from a fresh checkout at the same path (as ``/github/workspace`` is), its steps
run in order (after a failed step only those with ``if: always()``), and what outlives a job —
artifacts and ``actions/cache`` entries — lives in directories of the simulation. The skillab
step is ``skillab action`` as its own process against the fake GitHub server, with the workflow's
``with:`` and ``env:`` expanded. Without ``secrets`` the one substitution is the mock agent for
the model (inputs naming a secret are left out); with them, the step runs the workflow's model
with the repository's secrets as the workflow names them, and ``env`` points the providers at
fake servers. The checkout holds the workflow file where GitHub finds it, and the step gets
``GITHUB_WORKFLOW_REF`` and ``GITHUB_JOB`` as on GitHub.
"""

from __future__ import annotations

import fnmatch
import re
import shutil
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from .action_harness import REPO, ActionResult, run_action

OURS = "OWNER/skillab@"
_EXPR = re.compile(r"\$\{\{\s*([^}]+?)\s*\}\}")


@dataclass
class JobRun:
    code: int
    workspace: Path
    action: ActionResult | None = None


@dataclass
class WorkflowSim:
    workflow: Path
    pristine: Path
    scratch: Path
    api_url: str
    event_file: str = "pull_request_opened.json"
    event_name: str = "pull_request"
    # The repository's secrets; None runs the mock agent instead of the workflow's model.
    secrets: dict[str, str] | None = None
    # Added to the skillab step's environment (base URLs of fake model servers).
    env: dict[str, str] = field(default_factory=dict)
    run_id: int = 1
    artifacts: dict[str, Path] = field(default_factory=dict)
    caches: list[tuple[str, Path]] = field(default_factory=list)

    @property
    def jobs(self) -> dict[str, Any]:
        return yaml.safe_load(self.workflow.read_text())["jobs"]

    def next_run(self, event_file: str) -> None:
        """A new workflow run: artifacts are per run, the cache is not."""
        self.run_id += 1
        self.event_file = event_file
        self.artifacts = {}

    @property
    def workspace(self) -> Path:
        return self.scratch / "workspace"

    def run_job(self, name: str, matrix: dict[str, Any] | None = None) -> JobRun:
        workspace = self.workspace
        shutil.rmtree(workspace, ignore_errors=True)
        context = {"matrix": matrix or {}, "github": {"sha": "9049f1265b7d61be4a8904a9a27120d2064dab3b",
                                                     "run_id": self.run_id, "run_attempt": 1},
                   "secrets": self.secrets or {}, "inputs": self._dispatch_defaults(), "job": name}
        job = JobRun(0, workspace)
        for step in self.jobs[name]["steps"]:
            if job.code != 0 and "always()" not in str(step.get("if", "")):
                continue
            code = self._step(step, job, context)
            job.code = job.code or code
        return job

    def _step(self, step: dict[str, Any], job: JobRun, context: dict[str, Any]) -> int:
        uses = str(step.get("uses", ""))
        args = {k: self._expand(v, context) for k, v in (step.get("with") or {}).items()}
        ws = job.workspace
        if uses.startswith("actions/checkout@"):
            shutil.copytree(self.pristine, ws, symlinks=True)
            target = ws / ".github" / "workflows" / self.workflow.name
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(self.workflow, target)
        elif uses.startswith("actions/cache/restore@"):
            found = self._cache(args["key"], args.get("restore-keys", ""))
            if found is not None:
                shutil.copytree(found, ws / args["path"], dirs_exist_ok=True)
        elif uses.startswith("actions/cache/save@"):
            stored = self.scratch / "caches" / args["key"]
            if (ws / args["path"]).is_dir() and not stored.exists():
                shutil.copytree(ws / args["path"], stored)
                self.caches.append((args["key"], stored))
        elif uses.startswith("actions/upload-artifact@"):
            self._upload(ws, args["name"], [p for p in args["path"].split("\n") if p.strip()])
        elif uses.startswith("actions/download-artifact@"):
            for name, stored in self.artifacts.items():
                if fnmatch.fnmatch(name, args["pattern"]):
                    shutil.copytree(stored, ws / args["path"] / name)
        elif uses.startswith(OURS):
            if self.secrets is None:
                inputs = {k: v for k, v in args.items() if not str(step["with"][k]).startswith("${{ secrets.")}
                inputs.update(adapter="mock", model="")
            else:
                inputs = args
            env = {k: self._expand(v, context) for k, v in (step.get("env") or {}).items()}
            env.update(self.env, GITHUB_JOB=context["job"],
                       GITHUB_WORKFLOW_REF=f"{REPO}/.github/workflows/{self.workflow.name}@refs/heads/main")
            job.action = run_action(ws, event_name=self.event_name, event_file=self.event_file,
                                    api_url=self.api_url, inputs=inputs, env=env)
            context["steps"] = {step.get("id", "skillab"): {"outputs": job.action.outputs}}
            return job.action.code
        elif "run" in step:
            return subprocess.run(["bash", "-c", self._expand(step["run"], context)], cwd=ws).returncode
        else:
            raise AssertionError(f"the simulation does not know the step {step}")
        return 0

    def _dispatch_defaults(self) -> dict[str, str]:
        """``inputs`` of a workflow_dispatch run started with every default."""
        triggers = yaml.safe_load(self.workflow.read_text()).get(True) or {}  # YAML 1.1 reads `on` as True
        declared = (triggers.get("workflow_dispatch") or {}).get("inputs") or {} if isinstance(triggers, dict) else {}
        return {name: str(spec.get("default", "")) for name, spec in declared.items()}

    def _expand(self, value: Any, context: dict[str, Any]) -> str:
        def lookup(match: re.Match) -> str:
            node: Any = context
            for part in match.group(1).split("."):
                node = node.get(part, "") if isinstance(node, dict) else ""
            return str(node)

        return _EXPR.sub(lookup, str(value))

    def _cache(self, key: str, restore_keys: str) -> Path | None:
        for wanted in [key, *[k.strip() for k in restore_keys.split("\n") if k.strip()]]:
            exact = [p for k, p in self.caches if k == wanted]
            prefixed = [p for k, p in self.caches if k.startswith(wanted)]
            if exact or prefixed:
                return (exact or prefixed)[-1]
        return None

    def _upload(self, ws: Path, name: str, paths: list[str]) -> None:
        """upload-artifact's layout: one path uploads its contents, several keep their paths
        below their least common ancestor (here, the workspace)."""
        target = self.scratch / "artifacts" / f"run{self.run_id}" / name
        sources = [ws / p.strip() for p in paths]
        for source in sources:
            if not source.exists():
                continue
            if len(sources) == 1:
                rel = Path(source.name) if source.is_file() else Path(".")
            else:
                rel = source.relative_to(ws)
            if source.is_dir():
                shutil.copytree(source, target / rel, dirs_exist_ok=True)
            else:
                (target / rel).parent.mkdir(parents=True, exist_ok=True)
                shutil.copy(source, target / rel)
        if target.exists():
            self.artifacts[name] = target
