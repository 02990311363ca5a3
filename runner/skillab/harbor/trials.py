"""``skillab import --harbor JOB_DIR``: a Harbor job's trials as a skillab results document.

Each trial directory of the job holds Harbor's ``result.json`` (its ``TrialResult`` model). A
trial of a task exported by ``export.py`` is one arm of one case; the i-th trial of each arm is
run i. An arm passes when the verifier's reward reaches ``reward_threshold`` (1.0 by default, as
``--reward-threshold`` for SkillsBench), and is errored when the trial raised or never reached
the verifier. The records then go through the same summary as a skillab run, so
the aggregate, verdict and statistics are computed exactly as they would be here.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from .. import __version__
from ..core.records import ArmRecord, CaseRecord, HarborTrial
from ..core.run_info import AdapterInfo, IsolationInfo, ModelsInfo, SuiteInfo
from ..core.runlog import RunLog, RunSettings
from ..core.usage import Usage
from ..core.wire import from_wire
from ..errors import UsageError
from ..scoring import classify_outcome
from ..scoring.summary import summarize
from .export import ARMS, MANIFEST, task_name


def read_trial(path: Path) -> dict[str, Any]:
    """One trial's result, validated by Harbor's own model when Harbor is installed."""
    text = path.read_text(encoding="utf-8")
    try:
        from harbor.models.trial.result import TrialResult
    except ImportError:
        TrialResult = None
    if TrialResult is not None:
        return json.loads(TrialResult.model_validate_json(text).model_dump_json())
    data = json.loads(text)
    if not isinstance(data, dict) or not all(isinstance(data.get(k), str) for k in ("task_name", "trial_name")):
        raise ValueError("not a Harbor TrialResult (no task_name/trial_name)")
    return data


def _read_trials(job_dir: Path) -> tuple[list[dict[str, Any]], list[str]]:
    """Every trial directory of the job. One whose ``result.json`` is missing (unfinished, or
    killed) or unreadable still counts, as an errored trial of the task its ``config.json``
    names; one that names no task is left out, with a note."""
    trials, notes = [], []
    for trial_dir in sorted(p for p in job_dir.iterdir() if p.is_dir()):
        result, config = trial_dir / "result.json", trial_dir / "config.json"
        if not result.is_file() and not config.is_file():
            continue
        if result.is_file():
            try:
                trials.append(read_trial(result))
                continue
            except (OSError, UnicodeDecodeError, ValueError) as exc:
                why = f"its result.json is unreadable ({type(exc).__name__}: {(str(exc).splitlines() or [''])[0][:200]})"
        else:
            why = "it has no result.json (the trial never finished)"
        task = _configured_task(config)
        name = Path(task["path"]).name if "path" in task else task.get("name")
        if not name:
            notes.append(f"trial {trial_dir.name}: {why}, and its config.json names no task; left out")
            continue
        trials.append({"task_name": name, "trial_name": trial_dir.name, "config": {"task": task},
                       "exception_info": {"exception_type": "UnreadableTrial", "exception_message": why}})
    return trials, notes


def _configured_task(config: Path) -> dict[str, str]:
    """The task a trial ran (``path`` or ``name``), from its ``config.json`` (Harbor's ``TrialConfig``)."""
    try:
        task = json.loads(config.read_text(encoding="utf-8")).get("task")
    except (OSError, UnicodeDecodeError, ValueError, AttributeError):
        return {}
    task = task if isinstance(task, dict) else {}
    return {key: task[key] for key in ("path", "name") if isinstance(task.get(key), str) and task[key]}


def import_job(job_dir: Path, tasks_dir: Path | None = None, *, reward_threshold: float = 1.0) -> RunLog:
    trials, notes = _read_trials(job_dir) if job_dir.is_dir() else ([], [])
    if not trials:
        raise UsageError(f"{job_dir}: no trial results (<trial>/result.json); is it a Harbor job directory?")
    manifest = _manifest(trials, tasks_dir, job_dir)
    trials, foreign = _this_export(trials, manifest)
    notes += [f"{count} trial(s) ran tasks of another export ({other}); left out: import them with --tasks {other}"
              for other, count in foreign.items()]
    by_task: dict[str, list[dict[str, Any]]] = {}
    for trial in sorted(trials, key=lambda t: (t.get("started_at") or "", t["trial_name"])):
        by_task.setdefault(trial["task_name"], []).append(trial)
    records = []
    exported = {_task_of(c, arm) for c in manifest["cases"] for arm in ARMS}
    notes += [f"task {name} is not in {MANIFEST}; its {len(found)} trial(s) were left out"
              for name, found in by_task.items() if name not in exported]
    for case in manifest["cases"]:
        arms = {arm: [_arm(t, reward_threshold) for t in by_task.get(_task_of(case, arm), [])]
                for arm in ARMS}
        if not any(arms.values()):
            notes.append(f"case {case['name']} has no Harbor trials")
        for run in range(max((len(a) for a in arms.values()), default=0)):
            with_arm, without_arm = (_nth(arms[arm], run) for arm in ARMS)
            records.append(CaseRecord(
                case_name=case["name"],
                outcome=classify_outcome(with_passed=with_arm.passed, without_passed=without_arm.passed,
                                         errored=with_arm.errored or without_arm.errored),
                with_skill=with_arm, without_skill=without_arm, run_index=run,
                tags=tuple(case.get("tags") or ()),
            ))
    return summarize(_settings(manifest, trials, records, notes), records)


def _task_of(case: dict[str, Any], arm: str) -> str:
    """The task directory the export wrote for one arm of one case, as its manifest lists it."""
    return (case.get("tasks") or {}).get(arm) or task_name(case["name"], arm)


def _this_export(trials: list[dict[str, Any]], manifest: dict[str, Any]) -> tuple[list[dict[str, Any]], dict[Path, int]]:
    """The trials of the manifest's export. A job over several exports (two suites, two versions
    of one) holds trials of tasks with the same names: one whose task directory sits beside
    another manifest is that export's, and is left out rather than counted for a case it did
    not run. A task directory that isn't here (the job ran elsewhere) is taken by its name."""
    manifests: dict[Path, Any] = {}
    kept: list[dict[str, Any]] = []
    foreign: dict[Path, int] = {}
    for trial in trials:
        path = ((trial.get("config") or {}).get("task") or {}).get("path")
        directory = Path(path).parent if path else None
        if directory is not None and directory not in manifests:
            try:
                manifests[directory] = json.loads((directory / MANIFEST).read_text(encoding="utf-8"))
            except (OSError, UnicodeDecodeError, ValueError):
                manifests[directory] = None
        theirs = manifests.get(directory) if directory is not None else None
        if directory is not None and theirs is not None and theirs != manifest:
            foreign[directory] = foreign.get(directory, 0) + 1
        else:
            kept.append(trial)
    return kept, foreign


def _manifest(trials: list[dict[str, Any]], tasks_dir: Path | None, job_dir: Path) -> dict[str, Any]:
    candidates = [tasks_dir] if tasks_dir else []
    for trial in trials:
        path = ((trial.get("config") or {}).get("task") or {}).get("path")
        if path:
            candidates.append(Path(path).parent)
    for directory in candidates:
        if directory is not None and (directory / MANIFEST).is_file():
            try:
                return json.loads((directory / MANIFEST).read_text(encoding="utf-8"))
            except (OSError, UnicodeDecodeError, ValueError) as exc:
                raise UsageError(f"{directory / MANIFEST}: unreadable ({exc}); export the suite again") from exc
    raise UsageError(f"{job_dir}: cannot find {MANIFEST} beside the job's tasks; pass the directory "
                     "`skillab export --harbor` wrote with --tasks DIR")


def _arm(trial: dict[str, Any], threshold: float) -> ArmRecord:
    exception = trial.get("exception_info")
    rewards = (trial.get("verifier_result") or {}).get("rewards")
    agent = trial.get("agent_result") or {}
    usage = Usage(int(agent.get("n_input_tokens") or 0), int(agent.get("n_output_tokens") or 0),
                  int(agent.get("n_cache_tokens") or 0), 0, agent.get("cost_usd"))
    error = None
    if exception:
        error = f"{exception.get('exception_type')}: {exception.get('exception_message')}"
    elif not rewards:
        error = "the trial has no verifier reward"
    reward = float(next(iter(rewards.values()))) if rewards else 0.0
    return ArmRecord(passed=error is None and reward >= threshold, errored=error is not None, error=error,
                     duration_ms=_duration_ms(trial), usage=usage,
                     harbor=HarborTrial(trial["trial_name"], rewards))


def _nth(arms: list[ArmRecord], run: int) -> ArmRecord:
    return arms[run] if run < len(arms) else ArmRecord(
        passed=False, errored=True, task_attempted=False, error="no Harbor trial for this run")


def _duration_ms(trial: dict[str, Any]) -> int:
    started, finished = _time(trial.get("started_at")), _time(trial.get("finished_at"))
    return int((finished - started).total_seconds() * 1000) if started and finished else 0


def _time(value: str | None) -> datetime | None:
    return datetime.fromisoformat(value.replace("Z", "+00:00")) if value else None


def _settings(manifest: dict[str, Any], trials: list[dict[str, Any]], records: list[CaseRecord],
              notes: list[str]) -> RunSettings:
    agent: dict[str, Any] = next((t["agent_info"] for t in trials if t.get("agent_info")), {})
    times = [t for trial in trials for t in (_time(trial.get("started_at")), _time(trial.get("finished_at"))) if t]
    now = datetime.now(UTC)
    return RunSettings(
        tool_version=__version__,
        suite=from_wire(SuiteInfo, manifest["suite"], "manifest.suite"),
        adapter=AdapterInfo("harbor", {"agent": agent.get("name"), "version": agent.get("version")}),
        models=ModelsInfo(agent=(agent.get("model_info") or {}).get("name"), judge=None, judge_prompt_sha256=None),
        isolation=IsolationInfo(network="harbor", detail="ran in Harbor's environments", pid_namespace=None),
        runs=max((r.run_index + 1 for r in records), default=1),
        pass_k=1,
        trigger_only=(),
        cache_enabled=False, cache_hits=0, cache_arms=0,
        judge_usage=None,
        started_at=min(times, default=now), finished_at=max(times, default=now),
        warnings=tuple(f"case {name} was not exported to Harbor: {why}"
                       for name, why in manifest.get("skipped", {}).items()) + tuple(notes),
    )
