"""``skillab regrade RESULTS``: judge a finished run's arms again (after a judge outage, or with
another judge) from what its document keeps; no agent runs. Writes the new results document and
the usual reports."""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING

from ..core.runlog import RunLog
from ..core.settings import AgentSettings, Credentials, JudgeSettings, ModelRole, RunConfig
from ..errors import EXIT_GATE, EXIT_OK, OutputError, SkillabError, UsageError
from ..reports.terminal import render_table
from .console import say
from .report_files import check_destinations, write_reports
from .saved_results import finished_logs, load_results

if TYPE_CHECKING:
    from ..grading.judge import ExpectationJudge
    from ..skill.loader import Skill

MOCK_JUDGE = "mock-judge"


def cmd_regrade(args: argparse.Namespace) -> int:
    from ..engine.regrade import regrade_log
    from ..log.results import document_set, write_document
    from ..skill.placebo import make_placebo

    output: Path = args.output or args.results
    args.output = output
    check_destinations(args)
    documents = load_results(args.results)
    if any("verdict" not in doc for doc in documents):
        raise UsageError(f"{args.results}: only the checkpoint journal of an unfinished run is there; "
                         f"`skillab run ... --resume {args.results}` finishes it first")
    logs: list[RunLog] = []
    for log in finished_logs(args.results, documents):
        prompts, skill = _suite_of(args.results, log)
        judge = _judge(args, log)
        with tempfile.TemporaryDirectory(prefix="skillab-placebo-") as scratch:
            # The placebo is made from the skill alone: the run's, rebuilt to blind the judge.
            skills = [skill] + ([make_placebo(skill, Path(scratch))]
                                if any(r.placebo is not None for r in log.records) else [])
            regraded = regrade_log(log, judge, prompts, skills)
        say(f"{log.settings.suite.skill}: {regraded.tally.sentence(judge.model)}")
        logs.append(regraded.log)
    docs = [log.to_json() for log in logs]
    try:
        write_document(docs[0] if len(docs) == 1 else document_set(docs), output)
    except OSError as exc:
        raise OutputError(f"cannot write {output} ({exc.strerror or exc})") from None
    print("\n\n".join(render_table(log) for log in logs))
    say(f"wrote {output} (results document)")
    write_reports(args, logs, results_path=output)
    # As for run: a verdict that is still error is a failed gate unless the user opts out.
    errored = [log for log in logs if log.verdict == "error"]
    if errored and not args.allow_error_verdict:
        say(f"gate failed: the verdict is still error in {len(errored)} suite(s)")
        return EXIT_GATE
    return EXIT_OK


def _suite_of(results: Path, log: RunLog) -> tuple[dict[str, str], Skill]:
    """The case prompts and the skill of the suite ``log`` ran; a usage error when the suite or
    the skill on disk is not the one that ran (the prompts or the blinding would differ)."""
    from ..engine.meta import suite_hash
    from ..skill.loader import load_skill
    from ..suite import load_suite

    info = log.settings.suite
    try:
        suite = load_suite(Path(info.path), format=info.format)
        skill = load_skill(Path(info.skill_dir))
    except (SkillabError, OSError) as exc:
        raise UsageError(f"{results}: the suite it ran ({info.path}) cannot be read to regrade: {exc}") from None
    if skill.content_hash() != info.skill_hash:
        raise UsageError(f"{results}: the skill {info.skill} changed since that run; regrading would blind "
                         "the judge to another skill (regrade from the commit that ran)")
    ran = {r.case_name for r in log.records} | set(log.settings.trigger_only)
    hashes = {suite_hash(suite), suite_hash(suite.select(sorted(ran)))}
    if info.suite_hash is not None and info.suite_hash not in hashes:
        raise UsageError(f"{results}: the suite {info.path} (its cases or grading) changed since that run; "
                         "regrading would judge against other prompts (regrade from the commit that ran)")
    return {c.name: c.prompt for c in suite.cases}, skill


def _judge(args: argparse.Namespace, log: RunLog) -> ExpectationJudge:
    """The judge: ``--judge-model``, else the one that graded the run."""
    from ..agents.registry import create_judge

    models, adapter = log.settings.models, log.settings.adapter.name
    name = args.judge_model or models.judge
    if adapter == "mock" and name == MOCK_JUDGE:
        name = None  # the mock judge of a mock run
    config = RunConfig(
        agent=AgentSettings(adapter=adapter, model=ModelRole(models.agent)),
        judge=JudgeSettings(model=ModelRole(name, args.provider, args.base_url),
                            same_family=args.judge_same_family or bool(models.judge_same_family)),
        credentials=Credentials.resolve(),
    )
    return create_judge(config)
