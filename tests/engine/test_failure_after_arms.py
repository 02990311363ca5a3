"""A run that fails after its arms ran keeps them: the results document holds every finished
arm, ``report`` renders it and ``--resume`` runs none of them again; the run exits 1 with one
line saying what failed.

The failure is real: an agent from another package (a ``.dist-info`` on ``PYTHONPATH``, as
``pip install`` leaves it) whose ``sandbox_profile``, read only once every arm has finished, for
the results' isolation block, raises.
"""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

from skillab.engine.salvage import failed_after_arms

from ..core.test_plugins import install_package, install_plugin, skillab

AGENT = textwrap.dedent('''
    """The lines plugin's echo agent, counting its arms, that cannot say how it is confined:
    its sandbox_profile raises."""

    from pathlib import Path

    from skillab_lines_plugin import EchoAgent

    CALLS = Path(__file__).with_name("calls.log")


    class FaultyProfileAgent(EchoAgent):
        name = "faulty-profile"

        def run(self, request):
            with CALLS.open("a") as out:
                out.write(request.case.name + "\\n")
            return super().run(request)

        def sandbox_profile(self, sandbox):
            raise RuntimeError("the profile probe found no cgroup")
''')

ENTRY_POINTS = "[skillab.agents]\nfaulty-profile = skillab_faulty_agent:FaultyProfileAgent\n"


def suite(root: Path) -> Path:
    skill = root / "greeter"
    skill.mkdir(parents=True)
    (skill / "SKILL.md").write_text("---\nname: greeter\ndescription: Greets people in a known way.\n---\n"
                                    "Always answer SKILLED.\n")
    (skill / "eval.yaml").write_text(
        "cases:\n" + "".join(f"  - name: case-{i}\n    prompt: Say hello {i}.\n"
                             "    validators:\n      - cmd: grep -q SKILLED answer.txt\n" for i in range(3)))
    return skill


def test_a_failure_after_the_arms_ran_writes_every_finished_arm_and_exits_1(tmp_path):
    site = tmp_path / "site"
    install_plugin(site)
    install_package(site, "skillab_faulty_agent", AGENT, ENTRY_POINTS)
    skill = suite(tmp_path)
    run = ["run", str(skill), "--adapter", "faulty-profile", "--model", "any", "--no-cache", "--no-history",
           "--quiet", "--output", "results.json"]
    done = skillab(run, site, tmp_path)
    assert done.returncode == 1, done.stderr
    assert "Traceback" not in done.stderr
    errors = [line for line in done.stderr.splitlines() if line.startswith("skillab: ") and "failed" in line]
    assert len(errors) == 1 and "the profile probe found no cgroup" in errors[0], done.stderr
    assert "--resume results.json" in errors[0]
    doc = json.loads((tmp_path / "results.json").read_text())
    assert sorted(c["case_name"] for c in doc["cases"]) == ["case-0", "case-1", "case-2"]
    for case in doc["cases"]:
        assert case["with_skill"]["passed"] is True and case["without_skill"]["passed"] is False
    assert doc["failure"] == failed_after_arms(RuntimeError("the profile probe found no cgroup"))
    calls = (site / "calls.log").read_text().splitlines()
    assert len(calls) == 6

    # `report` renders what it holds; `--resume` keeps every arm and runs none again.
    shown = skillab(["report", "results.json", "--markdown", "report.md"], site, tmp_path)
    assert shown.returncode == 0, shown.stderr
    assert "the profile probe found no cgroup" in (tmp_path / "report.md").read_text()
    again = skillab([*run, "--resume", "results.json"], site, tmp_path)
    assert again.returncode == 1, again.stderr
    assert (site / "calls.log").read_text().splitlines() == calls
    assert len(json.loads((tmp_path / "results.json").read_text())["cases"]) == 3

