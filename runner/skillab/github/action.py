"""The GitHub Action's run (``entrypoint.main``, ``skillab action``, wraps it in the process).

One step does it all: read the inputs and the event, pick the suites (those the pull request
touches, or all), run each with the engine, write results, JUnit and the markdown report into
the workspace, keep one PR comment up to date, fill the job summary and the step outputs, and
gate the check. Every failure a user can act on ends as an annotation and one line of reason,
never a stack trace.
"""

from __future__ import annotations

import json
import os
import traceback
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from ..core.runlog import RunLog
from ..core.settings import Credentials, RunConfig
from ..errors import EXIT_GATE, EXIT_INTERRUPTED, EXIT_OK, ProviderAuthError, SkillabError, UsageError
from ..secrets import redact
from .agents import choose_agents, results_file, run_delta_pts
from .client import GitHubClient, GitHubError
from .comment import publish_report
from .discovery import (
    ChangedFile,
    Selection,
    SuiteLocation,
    find_suites,
    resolve_inside,
    resolve_root,
    select_all,
    select_changed,
)
from .event import ActionContext
from .inputs import ActionInputs, read_inputs
from .original import choose_original
from .outcome import ActionRun, SuiteOutcome
from .report_upload import uploads_report
from .runtime import ignore_stop_signals
from .suite_failures import SuiteFailures
from .trust import verify_checkout
from .workflow_commands import Log, write_step_files

RESULTS_DIR = "skillab-results"
HISTORY_FILE = Path(".skillab") / "history.jsonl"
if TYPE_CHECKING:  # the session loads once a suite runs
    from ..session.landing import Landed

PR_TARGET_WARNING = (
    "skillab runs on pull_request_target: the suites, skills and graders come from the pull "
    "request and run with this repository's secrets. Run it only behind a maintainer's approval, "
    "with the head checked out by SHA (see the trust model in skillab's docs/action.md)."
)


class Action:
    def __init__(self, env: Mapping[str, str], log: Log):
        self.env = env
        self.log = log
        self.inputs: ActionInputs = read_inputs(env)
        self.ctx = ActionContext.from_env(env)
        self.root = resolve_root(self.ctx.workspace, self.inputs.path)
        self.client = (
            GitHubClient(self.ctx.api_url, self.inputs.github_token)
            if self.inputs.github_token
            else None
        )
        self.out_dir = self.ctx.workspace / RESULTS_DIR
        self.state = ActionRun()

    # -- the whole run -------------------------------------------------------------------------

    def run(self) -> int:
        """Select and run the suites; whatever happens, report, write and gate what there is."""
        state = self.state
        try:
            self.check_checkout()
            if self.inputs.mode == "merge":
                self.merge_shards()
            else:
                self.run_selected()
        except KeyboardInterrupt:
            state.interrupted = True
        except SkillabError as exc:  # annotated once, as the reason the check failed
            state.stopped = exc
            state.failures.append(redact(str(exc), self.env))
        except Exception:  # a bug in skillab: say so, and still write what there is
            state.failures.append("internal error in skillab (see the log)")
            self.log.error(state.failures[-1])
            self.log.line(redact(traceback.format_exc(), self.env))
        if state.interrupted:
            ignore_stop_signals()
            if self.client is not None:
                self.client = self.client.hurried()
        code = self.finish()
        return state.stopped.exit_code if state.stopped is not None and code != EXIT_INTERRUPTED else code

    def run_selected(self) -> None:
        """The suites the inputs select, each run (or a note that none is)."""
        state = self.state
        state.selection = self.select()
        state.notes.extend(state.selection.notes)
        if self.inputs.shard is not None:
            state.notes.append(f"Shard {self.inputs.shard} of the run: its numbers cover this share "
                               "only; the `mode: merge` job reports, comments and gates the whole.")
        if state.selection.suites:
            # Several agents: every suite under the first, then the next (see ``agents``).
            configs = self.configs()
            self.run_suites(configs)
            if self.inputs.ablate and not (state.interrupted or state.failures):
                self.ablate(configs[0])
            if self.inputs.route and not state.interrupted:
                self.route(configs)
        else:
            self.nothing_to_run()

    def check_checkout(self) -> None:
        """Refuse a pull request run whose workspace is not the PR's code (see ``trust``)."""
        if self.ctx.event.name == "pull_request_target":
            self.log.warning(PR_TARGET_WARNING)
        check = verify_checkout(self.ctx.workspace, self.ctx.event)
        if check is not None and check.note:
            self.log.notice(check.note)

    def select(self) -> Selection:
        unsearched: list[str] = []
        suites = find_suites(self.ctx.workspace, self.root, unsearched)
        for warning in unsearched:
            self.log.warning(warning)
            self.state.notes.append(warning[0].upper() + warning[1:] + ".")
        event = self.ctx.event
        mode = self.inputs.mode
        if mode == "auto":
            mode = "changed" if event.is_pull_request else "all"
        if mode == "all":
            return select_all(suites)
        if not event.is_pull_request or event.pull_request is None:
            self.log.notice(f"mode 'changed' needs a pull request event, not {event.name}: "
                            "running every suite")
            return select_all(suites)
        if self.client is None:
            self.log.warning("no github-token: cannot list the pull request's files, so every suite runs")
            return select_all(suites)
        try:
            files = self.client.paginate(
                f"repos/{self.ctx.repository}/pulls/{event.pull_request.number}/files"
            )
            changed = [ChangedFile.from_api(item) for item in files]
        except GitHubError as exc:
            exc = GitHubError(redact(str(exc), self.env))
            self.log.warning(f"cannot list the pull request's files ({exc}): every suite runs")
            return select_all(suites)
        return select_changed(suites, changed, self.ctx.workspace, self.root)

    def configs(self) -> list[RunConfig]:
        """One configuration per agent the ``adapter`` input names, alike but for the agent."""
        inputs = self.inputs
        agents = choose_agents(inputs.adapter, inputs.model or self.env.get("SKILLAB_MODEL") or None)
        landed = self.landed()
        # The key inputs join the environment's keys here only, never ``os.environ``.
        credentials = Credentials.resolve(inputs.provider_keys())
        return [landed.for_agent(a.adapter, a.model, credentials=credentials) for a in agents]

    def landed(self) -> Landed:
        """The inputs that are settings of ``skillab run`` too, put where their rows land, as the
        CLI puts its flags (``session.landing``)."""
        from ..session.landing import land

        inputs, workspace = self.inputs, self.ctx.workspace
        return land({
            "judge-model": inputs.judge_model or self.env.get("SKILLAB_JUDGE_MODEL") or None,
            "judge-same-family": inputs.judge_same_family,
            "provider": inputs.provider,
            "base-url": inputs.base_url,
            "runs": inputs.runs,
            "concurrency": inputs.concurrency,
            "target-lift-pts": inputs.target_lift_pts,
            # Kept in the workspace: a workflow that caches .skillab/ gets the trend across runs.
            "history": workspace / HISTORY_FILE,
            "placebo": inputs.placebo,
            "evidence-ledger": (resolve_inside(workspace, inputs.evidence_ledger, "evidence-ledger")
                                if inputs.evidence_ledger else None),
            "shard": inputs.shard,
            # In the workspace, where ``actions/cache`` can keep it (entries signed: ``cache-key``).
            "cache-dir": resolve_inside(workspace, inputs.cache_dir, "cache-dir") if inputs.cache_dir else None,
            "sandbox": inputs.sandbox,
            "max-cost-usd": inputs.max_cost_usd,
            # The shared budget of a matrix's shards (``--budget-url``), from the job's env.
            "budget-url": self.budget_url(),
            **self.env_settings("budget-wait-s"),
            **self.gate_values(),
        })

    def env_settings(self, *names: str) -> dict[str, object]:
        """The named run options the job's environment sets (each row's ``env``), parsed as
        their flags are."""
        import argparse

        from ..core.options import BY_NAME

        values: dict[str, object] = {}
        for name in names:
            option = BY_NAME[name]
            text = self.env.get(option.env or "") or None
            if text is None:
                continue
            try:
                values[name] = option.parse(text) if option.parse else text
            except argparse.ArgumentTypeError as exc:
                raise UsageError(f"{option.env}: {exc}") from None
        return values

    def budget_url(self) -> str | None:
        url = self.env.get("SKILLAB_BUDGET_URL") or None
        if url is None:
            return None
        from ..budget.client import check_url

        return check_url(url)

    def gate_values(self) -> dict[str, object]:
        inputs = self.inputs
        return {
            # A blank input turns the verdict gates off; ``error`` is among them only when named.
            "fail-on-verdict": inputs.fail_on_verdict or ("none",),
            "allow-error-verdict": True,
            "min-delta-pts": inputs.min_delta_pts,
            "gate-on": inputs.gate_on,
            "min-trigger-recall": inputs.min_trigger_recall,
            "max-false-trigger-rate": inputs.max_false_trigger_rate,
            "max-skill-tokens": inputs.max_skill_tokens,
            "max-leaks": inputs.max_leaks,
            "max-held-out-gap": inputs.max_held_out_gap,
            "fail-on-broken": inputs.fail_on_broken,
        }

    # -- running suites ------------------------------------------------------------------------

    def run_suites(self, configs: Sequence[RunConfig]) -> None:
        """Every selected suite under each agent in turn, in one session: one spend cap, one stop."""
        from ..session import Session, SuiteRun
        from .job_log import job_log

        locations = {location.directory: location for location in self.state.selection.suites}
        several = len(configs) > 1
        no_key: set[str] = set()  # agents without a key: their other suites are not tried
        runs = (SuiteRun(directory, config) for config in configs for directory in locations
                if config.agent.adapter not in no_key)  # lazy: no_key grows as the session runs

        log = job_log(self.log, self.env, self.ctx.workspace, configs)
        session = Session([log], on_document=lambda run, suite_log: self.ran(suite_log),
                          on_error=lambda run, exc: self.suite_failed(exc, no_key),
                          around=lambda run: self.suite_group(locations[run.target],
                                                             run.config.agent.adapter if several else None),
                          configure=lambda run, suite: self.suite_settings(locations[run.target], suite))
        result = session.run(runs)
        if result.stopped:
            # The spend cap is a gate, not a cancellation: the check fails, the results stand.
            self.state.failures.append(f"stopped early: {result.stopped}")
        # A suite that failed once its arms had run: its document keeps them, the check fails.
        self.state.failures.extend(redact(failure, self.env) for failure in result.failures)
        self.state.interrupted = self.state.interrupted or result.interrupted

    def ablate(self, config: RunConfig) -> None:
        """The ``ablate`` input: each evaluated suite's parts, under the first agent, within
        what the spend cap has left."""
        from ..reports.progress import LineReporter
        from ..session.session import spent_usd
        from .ablation import ablate_locations

        cap = config.engine.max_cost_usd
        if cap is not None:
            left = cap - spent_usd(self.state.logs)
            if left <= 0:
                self.state.notes.append("Ablation not run: the spend cap was reached by the evaluation.")
                return
            config = replace(config, engine=replace(config.engine, max_cost_usd=left))
        locations = {loc.directory: loc for loc in self.state.selection.suites}
        log = LineReporter(lambda text: self.log.line("  " + redact(text, self.env)))
        with self.log.group("skillab: ablation"):
            found = ablate_locations(
                list(locations), config, reporters=[log],
                original_for=lambda d: choose_original(locations[d], config, self.ctx.event).ref,
                say=lambda text: self.log.line("  " + redact(text, self.env)))
        self.state.ablations.extend(found.documents)
        self.state.notes.extend(redact(n, self.env) for n in found.notes)

    def route(self, configs: list[RunConfig]) -> None:
        """The ``route`` input: each evaluated skill among the catalogue folder, under every agent;
        on a pull request the base commit's skill stands in the catalogue condition."""
        from ..agents.registry import create_adapter
        from ..engine.route import RouteRequest, route_document
        from ..reports.routing import render_text
        from ..sandbox.backend import choose_sandbox
        from ..session import suite_config

        catalogue = resolve_root(self.ctx.workspace, self.inputs.route or ".")
        sandbox = choose_sandbox(configs[0].engine.sandbox).backend
        with self.log.group("skillab: routing"):
            for location in dict.fromkeys(loc.directory for loc in self.state.selection.suites):
                suite = next(loc for loc in self.state.selection.suites if loc.directory == location)
                # The mock agent reads each skill's own script, as its suite run did.
                agents = [(c, create_adapter(c)) for c in (suite_config(c, location) for c in configs)]
                request = RouteRequest(
                    skill_dir=location, catalogue=(catalogue,), runs=self.inputs.runs,
                    concurrency=self.inputs.concurrency,
                    against=choose_original(suite, configs[0], self.ctx.event).ref)
                try:
                    doc = route_document(request, agents, sandbox)
                except SkillabError as exc:
                    self.state.notes.append(redact(f"Routing of {suite.rel_dir} not run: {exc}", self.env))
                    continue
                self.state.routes.append(doc)
                self.log.line(redact(render_text(doc), self.env))

    def suite_settings(self, location: SuiteLocation, config: RunConfig) -> RunConfig:
        engine = replace(config.engine, against=self.against_for(location, config),
                         siblings_dir=self.siblings_for(location))
        return replace(config, engine=engine)

    @contextmanager
    def suite_group(self, location: SuiteLocation, agent: str | None) -> Iterator[None]:
        """Each suite's run in its own log group, its outcome started before it runs."""
        outcome = SuiteOutcome(location, agent=agent)
        self.state.outcomes.append(outcome)
        with self.log.group(f"skillab: {outcome.label}"):
            yield

    def ran(self, log: RunLog) -> None:
        outcome = self.state.outcomes[-1]
        self.save(outcome, log)
        self.failures().log_errored_arms(outcome)

    def suite_failed(self, exc: Exception, no_key: set[str]) -> bool:
        """One suite could not run: annotate why; go on with the others unless no key is set
        (with several agents, only that agent's runs stop)."""
        outcome = self.state.outcomes[-1]
        go_on, note = self.failures().record(outcome, exc)
        if isinstance(exc, ProviderAuthError) and outcome.agent:
            no_key.add(outcome.agent)
            go_on = True
        if note is not None:
            self.state.notes.append(note)
        return go_on

    def failures(self) -> SuiteFailures:
        return SuiteFailures(self.log, self.env, self.ctx.event, self.repo_path)

    def siblings_for(self, location: SuiteLocation) -> Path | None:
        """The skills offered beside this one in trigger trials (input ``siblings``)."""
        choice = self.inputs.siblings.strip()
        if choice.lower() in ("", "none", "off"):
            return None
        if choice.lower() == "auto":
            parent = location.directory.parent
            others = [p for p in parent.iterdir() if p != location.directory and (p / "SKILL.md").is_file()]
            return parent if others else None
        chosen = (self.ctx.workspace / choice).resolve()
        if not chosen.is_relative_to(self.ctx.workspace.resolve()):
            raise UsageError(f"input 'siblings' must stay inside the repository, got {choice!r}")
        return chosen

    def merge_shards(self) -> None:
        """``mode: merge``: one document per suite from the shard jobs' documents under ``path``.
        Anything merge cannot join honestly raises, naming the file, before any report."""
        from .merge_mode import merge_outcomes

        ledger = self.inputs.evidence_ledger
        merged, failed = merge_outcomes(
            self.root, self.ctx.workspace, self.out_dir, self.ctx.workspace / HISTORY_FILE,
            resolve_inside(self.ctx.workspace, ledger, "evidence-ledger") if ledger else None,
            Credentials.resolve(self.inputs.provider_keys()).environ)
        for log, outcome in merged:
            self.state.outcomes.append(outcome)
            self.save(outcome, log)
        # Suites the shard jobs could not run: an error row each, never left out of the report.
        self.state.outcomes.extend(failed)

    def against_for(self, location: SuiteLocation, config: RunConfig) -> str | None:
        choice = choose_original(location, config, self.ctx.event)
        if choice.notice:
            self.log.notice(choice.notice)
        if choice.warning:
            self.log.warning(redact(choice.warning, self.env))
        if choice.note:
            self.state.notes.append(redact(choice.note, self.env))
        return choice.ref

    def save(self, outcome: SuiteOutcome, log: RunLog) -> None:
        """Write the suite's results, then read them back: the report uses what is on disk."""
        from ..log.results import load_documents, write_document

        path = results_file(self.out_dir, outcome.location.rel_dir, outcome.agent)
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            write_document(log.to_json(), path)
            outcome.log = RunLog.from_json(load_documents(path)[0])
            outcome.results_file = path
        except (OSError, ValueError, KeyError, IndexError) as exc:
            outcome.failure = f"{outcome.label}: results could not be written or read back ({exc})"
            self.log.error(outcome.failure)

    def nothing_to_run(self) -> None:
        if self.inputs.mode == "all" or not self.ctx.event.is_pull_request:
            where = self.inputs.path
            self.state.failures.append(f"no skill suite (SKILL.md with a suite file) under '{where}'")
            self.state.notes.append(f"No skill suite found under {where}.")
        else:
            self.state.notes.append("This pull request touches no skill suite: nothing to evaluate.")

    # -- reporting and gating ------------------------------------------------------------------

    def finish(self) -> int:
        from ..reports.markdown import overall_verdict, render_markdown

        state = self.state
        self.gate()
        logs = state.logs
        # A suite that could not run is a row of its own, so its verdict is seen beside the rest.
        failed = state.failure_rows
        # The reader of the comment learns why the check failed without opening the log.
        verdicts = [f"Check failed: {reason}" for reason in state.failures]
        if state.interrupted:
            verdicts.insert(0, "Interrupted: these are partial results.")
        from .ablation import ablation_markdown, report_with_appendix

        # What follows the report (ablations, routing diffs) is fitted with it into one comment.
        appendix = [ablation_markdown(state.ablations)] if state.ablations else []
        if state.routes:
            from ..reports.routing import render_markdown as routing_markdown

            appendix += [redact(routing_markdown(doc), self.env) for doc in state.routes]
        report = report_with_appendix(
            lambda budget: render_markdown(logs, failed=failed, run_url=self.ctx.run_url, notes=state.notes,
                                           checks=verdicts, max_chars=budget,
                                           html_artifact=uploads_report(self.env, self.ctx.workspace, RESULTS_DIR)),
            "\n".join(appendix))
        paths = self.write_files(logs, report)
        summary_extra = self.comment(report)
        verdict = overall_verdict(logs, failed) or ("error" if state.failures else "none")
        delta = run_delta_pts(logs)
        write_step_files(
            self.log, self.ctx.summary_path, report + "".join(f"\n> {n}\n" for n in summary_extra),
            self.ctx.output_path, {
                "verdict": verdict,
                "delta-pts": "" if delta is None else f"{delta:g}",
                "suites": json.dumps(list(dict.fromkeys(o.location.rel_dir for o in state.outcomes))),
                "results-path": paths.get("results", ""),
                "report-path": paths.get("report", ""),
                "html-path": paths.get("html", ""),
            })
        if state.interrupted:
            self.log.error("skillab: interrupted — partial results kept")
            return EXIT_INTERRUPTED
        if state.failures:
            more = f" (and {len(state.failures) - 1} more)" if len(state.failures) > 1 else ""
            # A run stopped before its suites (bad input, wrong checkout) says only why.
            prefix = "" if state.stopped is not None else "skillab: check failed: "
            self.log.error(f"{prefix}{state.failures[0]}{more}")
            for reason in state.failures[1:]:
                self.log.line(f"  also: {reason}")
            return EXIT_GATE
        self.log.line(f"skillab: {verdict}" + ("" if delta is None else f", delta {delta:+g} pts"))
        return EXIT_OK

    def gate(self) -> None:
        from ..session.landing import land

        state = self.state
        inputs = self.inputs
        # A suite that measured nothing fails the check.
        gates = replace(land(self.gate_values()).gates, require_measured=True)
        for outcome in state.outcomes:
            if outcome.failure:
                state.failures.append(outcome.failure)
                continue
            log = outcome.log
            # A shard holds part of a suite: the merge job gates the whole.
            if log is None or self.inputs.shard is not None:
                continue
            state.failures.extend(reason + (f" (agent {outcome.agent})" if outcome.agent else "")
                                  for reason in gates.failures(log, outcome.label))
            for note in gates.notes(log):
                self.log.notice(note)
        ran = [o for o in state.outcomes if o.skipped is None]
        if ran and not state.logs and not state.failures:
            state.failures.append("no suite produced results")
        from ..session.gates import route_gate_failures

        for doc in state.routes:
            state.failures.extend(f"routing of {doc.candidate}: {line}" for line in route_gate_failures(
                doc, max_stolen=inputs.max_stolen, min_accuracy=inputs.min_route_accuracy))

    def write_files(self, logs: list[RunLog], report: str) -> dict[str, str]:
        """report.md, and with results results.json (every suite), junit.xml and the
        self-contained report.html, as workspace-relative paths."""
        from ..session.outputs import Outputs, write_outputs

        failed = self.state.failed_suites(self.inputs.shard)  # a shard job's, for the merge job
        names = {"report": "report.md"} | ({"results": "results.json"} if logs or failed else {}) | (
            {"junit": "junit.xml", "html": "report.html"} if logs else {})
        files = {key: self.out_dir / name for key, name in names.items()}
        try:
            self.out_dir.mkdir(parents=True, exist_ok=True)
            write_outputs(logs, Outputs(files.get("results"), files.get("junit"), files["report"],
                                             files.get("html")), markdown=report, failed=failed)
        except OSError as exc:
            self.state.failures.append(f"cannot write results into {RESULTS_DIR}/ ({exc.strerror}) "
                                       f"as uid {os.geteuid()}")
            self.log.error(self.state.failures[-1])
            return {}
        return {key: self.repo_path(path) for key, path in files.items() if key != "junit"}

    def comment(self, report: str) -> list[str]:
        """Create or update the PR comment; returns notes for the job summary when it cannot."""
        pr = self.ctx.event.pull_request
        # One comment per pull request: a shard leaves it to the merge job.
        if self.inputs.shard is not None:
            return []
        if not (self.inputs.comment and self.ctx.event.is_pull_request and pr is not None):
            return []
        # A PR that touches no suite gets no new comment; an earlier report is still replaced.
        touched = bool(self.state.outcomes or self.state.failures)
        return publish_report(self.client, self.ctx.repository, pr.number, report, self.log,
                              key=self.inputs.path, create=touched, env=self.env)

    def repo_path(self, path: Path) -> str:
        """``path`` relative to the workspace (what annotations and later steps can use)."""
        try:
            return Path(path).resolve().relative_to(self.ctx.workspace).as_posix()
        except ValueError:
            return str(path)

