"""A matrix shard's Action job under the shared budget: SKILLAB_BUDGET_URL from the job's
environment reaches the run (as ``--budget-url`` does), a bad one is refused in one line, and a
service it cannot reach leaves the shard on its own cap, said in its results."""

from __future__ import annotations

from skillab.budget.ledger import RunBudget
from skillab.budget.service import BudgetServer

from ..action_harness import github, private_cache, run_action  # noqa: F401 (fixtures)
from ..skillgen import answers, grep_case, make_skill

TOKEN = "action-budget-" + "A" * 24


def test_an_unreachable_budget_service_is_a_line_in_the_shards_results(tmp_path, github):  # noqa: F811
    workspace = tmp_path / "workspace"
    make_skill(workspace / "skills", [grep_case("a")], name="alpha", responses={"a": answers("SKILLED", "plain")})
    gone = BudgetServer(("127.0.0.1", 0), RunBudget(), TOKEN)
    url = gone.url
    gone.server_close()
    result = run_action(workspace, event_name="schedule", event_file="schedule.json", api_url=github.url,
                        inputs={"adapter": "mock", "max-cost-usd": "3"},
                        env={"SKILLAB_BUDGET_URL": url, "SKILLAB_BUDGET_TOKEN": TOKEN,
                             # How long the shard waits for the service to come up, from the job's env.
                             "SKILLAB_BUDGET_WAIT_S": "0.5"})
    assert result.code == 0, result.log
    [suite] = result.results()["suites"]
    [line] = [w for w in suite["warnings"] if w.startswith("shared budget not used")]
    assert url in line and "its local cap ($3, --max-cost-usd)" in line
    assert TOKEN not in result.log


def test_a_budget_url_that_is_not_one_is_refused(tmp_path, github):  # noqa: F811
    workspace = tmp_path / "workspace"
    make_skill(workspace / "skills", [grep_case("a")], name="alpha", responses={"a": answers("SKILLED", "plain")})
    result = run_action(workspace, event_name="schedule", event_file="schedule.json", api_url=github.url,
                        inputs={"adapter": "mock"}, env={"SKILLAB_BUDGET_URL": "https://user:pw@budget:1"},
                        in_process=True)
    assert result.code == 2
    assert "--budget-url: expected http://HOST:PORT of `skillab budget serve`, got a URL with credentials" in result.log
    assert "pw@" not in result.log


def test_a_budget_wait_that_is_not_a_number_is_refused(tmp_path, github):  # noqa: F811
    workspace = tmp_path / "workspace"
    make_skill(workspace / "skills", [grep_case("a")], name="alpha", responses={"a": answers("SKILLED", "plain")})
    result = run_action(workspace, event_name="schedule", event_file="schedule.json", api_url=github.url,
                        inputs={"adapter": "mock"}, env={"SKILLAB_BUDGET_WAIT_S": "soon"}, in_process=True)
    assert result.code == 2
    assert "SKILLAB_BUDGET_WAIT_S: expected a number, got 'soon'" in result.log
