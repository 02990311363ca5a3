"""Harbor jobs as they really end up on disk: cases whose names collide as file names, trials that
never finished, result files cut short or not Harbor's. What can't be read is an ``error``,
never a pass or a fail, and no trial is counted for a case or an arm it did not run."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from skillab.cli import main
from skillab.harbor.export import MANIFEST

from .test_harbor import SQL, export, harbor, is_valid_task, needs_harbor, trial


def import_doc(job: Path, tmp_path: Path) -> dict:
    output = tmp_path / "results.json"
    assert main(["import", "--harbor", str(job), "--output", str(output), "--json"]) in (0, 1)
    return json.loads(output.read_text())


def write_trials(job: Path, results: list[dict]) -> None:
    for result in results:
        (job / result["trial_name"]).mkdir(parents=True)
        (job / result["trial_name"] / "result.json").write_text(json.dumps(result))


def colliding_suite(tmp_path: Path) -> Path:
    suite = tmp_path / "suite"
    shutil.copytree(SQL, suite)
    text = (suite / "eval.yaml").read_text()
    text = text.replace("- name: add-optional-column", "- name: add optional column")
    text = text.replace("- name: drop-legacy-column", "- name: add_optional_column")
    (suite / "eval.yaml").write_text(text)
    return suite


def test_cases_whose_names_collide_as_file_names_get_their_own_tasks_and_trials(tmp_path):
    tasks = tmp_path / "tasks"
    assert main(["export", "--harbor", str(tasks), str(colliding_suite(tmp_path))]) == 0
    manifest = json.loads((tasks / MANIFEST).read_text())
    by_case = {case["name"]: case["tasks"] for case in manifest["cases"]}
    names = [task for case in by_case.values() for task in case.values()]
    # Each arm of each case is its own directory: none overwrote another.
    assert len(set(names)) == len(names) == 12
    assert sorted(p.name for p in tasks.iterdir() if p.is_dir()) == sorted(names)
    assert all(is_valid_task(tasks / name) for name in names)
    spaced, underscored = by_case["add optional column"], by_case["add_optional_column"]
    assert (tasks / spaced["with_skill"] / "instruction.md").read_text() != (
        tasks / underscored["with_skill"] / "instruction.md").read_text()
    job = tmp_path / "job"
    write_trials(job, [trial(tasks, spaced["with_skill"], 0, 1), trial(tasks, spaced["without_skill"], 0, 0),
                       trial(tasks, underscored["with_skill"], 0, 0),
                       trial(tasks, underscored["without_skill"], 0, 0)])
    doc = import_doc(job, tmp_path)
    outcomes = {c["case_name"]: c["outcome"] for c in doc["cases"]}
    assert outcomes == {"add optional column": "flip_to_pass", "add_optional_column": "fail_kept"}


def test_trials_that_never_finished_or_cannot_be_read_are_errors_of_their_own_arm(tmp_path):
    tasks = export(tmp_path)
    job = tmp_path / "job"
    write_trials(job, [
        trial(tasks, "add-optional-column--with-skill", 0, 1),
        trial(tasks, "add-optional-column--without-skill", 0, 0),
        trial(tasks, "drop-legacy-column--with-skill", 0, 1),
        trial(tasks, "index-on-large-table--without-skill", 0, 0),
        trial(tasks, "rename-column--with-skill", 0, 1),
    ])
    # Harbor writes config.json when a trial starts and result.json when it ends: a partial job.
    running = job / "drop-legacy-column--without-s__Ab3dE9x"
    running.mkdir()
    (running / "config.json").write_text(json.dumps(
        {"task": {"path": str(tasks / "drop-legacy-column--without-skill")},
         "trial_name": running.name}))
    # A result.json cut short (the job was killed while writing it).
    cut = job / "index-on-large-table--with-sk__Zz9yX8w"
    cut.mkdir()
    (cut / "config.json").write_text(json.dumps(
        {"task": {"path": str(tasks / "index-on-large-table--with-skill")}, "trial_name": cut.name}))
    (cut / "result.json").write_text('{"task_name": "index-on-large-table--with-skill", "trial_na')
    # Valid JSON that is not a TrialResult.
    odd = job / "rename-column--without-skill__Qq1wE2r"
    odd.mkdir()
    (odd / "config.json").write_text(json.dumps(
        {"task": {"path": str(tasks / "rename-column--without-skill")}, "trial_name": odd.name}))
    (odd / "result.json").write_text('{"reward": 1}')
    # Nothing says which task this one ran: left out, and said so.
    (job / "orphan__Xx0").mkdir()
    (job / "orphan__Xx0" / "result.json").write_text("{")
    doc = import_doc(job, tmp_path)
    cases = {c["case_name"]: c for c in doc["cases"]}
    assert cases["add-optional-column"]["outcome"] == "flip_to_pass"
    for name, arm in (("drop-legacy-column", "without_skill"), ("index-on-large-table", "with_skill"),
                      ("rename-column", "without_skill")):
        record = cases[name]
        assert record["outcome"] == "error", name
        assert record[arm]["passed"] is False and record[arm]["error"], name
        # The other arm is its own trial, untouched.
        other = "with_skill" if arm == "without_skill" else "without_skill"
        assert record[other]["error"] is None, name
    assert "never finished" in cases["drop-legacy-column"]["without_skill"]["error"]
    assert "unreadable" in cases["index-on-large-table"]["with_skill"]["error"]
    assert "unreadable" in cases["rename-column"]["without_skill"]["error"]
    assert doc["outcome_counts"]["error"] == 3
    assert any(w.startswith("trial orphan__Xx0: its result.json is unreadable") for w in doc["warnings"])


@needs_harbor
def test_an_export_with_colliding_names_passes_harbors_own_loader(tmp_path):
    tasks = tmp_path / "tasks"
    assert main(["export", "--harbor", str(tasks), str(colliding_suite(tmp_path))]) == 0
    report = harbor("validate", tasks)
    assert len(report) == 12 and all(entry["valid"] for entry in report.values()), report


def test_several_suites_export_each_into_its_own_folder_inside_dir(tmp_path):
    """Two suites of one skill, and a skill whose name is a path: neither overwrites the other's
    tasks, and nothing is written outside DIR."""
    first, second, third = (tmp_path / n for n in ("first", "second", "third"))
    for copy in (first, second, third):
        shutil.copytree(SQL, copy)
    (second / "eval.yaml").write_text((second / "eval.yaml").read_text().replace(
        "- name: add-optional-column", "- name: only-in-second"))
    skill = (third / "SKILL.md").read_text()
    (third / "SKILL.md").write_text(skill.replace("name: sql-migration-safety", "name: ../escaped", 1))
    out = tmp_path / "out" / "dir"
    assert main(["export", "--harbor", str(out), str(first), str(second), str(third)]) == 0
    assert not (tmp_path / "out" / "escaped").exists()
    folders = sorted(p.name for p in out.iterdir())
    assert len(folders) == 3, folders
    suites = {json.loads((out / f / MANIFEST).read_text())["suite"]["path"]: out / f for f in folders}
    assert set(suites) == {str(d / "eval.yaml") for d in (first, second, third)}
    # Each folder holds exactly the tasks its own manifest lists.
    for folder in suites.values():
        manifest = json.loads((folder / MANIFEST).read_text())
        listed = {task for case in manifest["cases"] for task in case["tasks"].values()}
        assert {p.name for p in folder.iterdir() if p.is_dir()} == listed
    assert (suites[str(first / "eval.yaml")] / "add-optional-column--with-skill").is_dir()
    assert (suites[str(second / "eval.yaml")] / "only-in-second--with-skill").is_dir()


def test_a_job_over_two_exports_counts_each_trial_for_its_own_export_only(tmp_path):
    """Two versions of one suite exported side by side and run in one Harbor job: their tasks
    share names, and a trial of one is never counted for the other."""
    old = tmp_path / "old"
    shutil.copytree(SQL, old)
    (old / "SKILL.md").write_text((old / "SKILL.md").read_text() + "\nAn older wording.\n")
    new_tasks, old_tasks = tmp_path / "out" / "new", tmp_path / "out" / "old"
    assert main(["export", "--harbor", str(new_tasks), str(SQL)]) == 0
    assert main(["export", "--harbor", str(old_tasks), str(old)]) == 0
    job = tmp_path / "job"
    case = "add-optional-column"
    write_trials(job, [trial(new_tasks, f"{case}--with-skill", 0, 1), trial(new_tasks, f"{case}--without-skill", 0, 0),
                       trial(old_tasks, f"{case}--with-skill", 1, 0), trial(old_tasks, f"{case}--without-skill", 1, 0)])
    for tasks, expected in ((new_tasks, "flip_to_pass"), (old_tasks, "fail_kept")):
        output = tmp_path / f"{tasks.name}.json"
        assert main(["import", "--harbor", str(job), "--tasks", str(tasks), "--output", str(output), "--json"]) in (0, 1)
        doc = json.loads(output.read_text())
        runs = [c for c in doc["cases"] if c["case_name"] == case]
        assert [c["outcome"] for c in runs] == [expected], runs
        other = old_tasks if tasks == new_tasks else new_tasks
        assert f"2 trial(s) ran tasks of another export ({other}); left out: import them with --tasks {other}" \
            in doc["warnings"]
