"""``skillab budget serve`` as a job step starts it: the token from the environment only, the
URL to give the shards printed, the final ledger printed on SIGTERM; and ``--budget-url`` is a
run option a repository's config file cannot set."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import urllib.request
from pathlib import Path

from skillab.cli import main

ROOT = Path(__file__).resolve().parents[2]
TOKEN = "serve-token-" + "S" * 24


def test_serve_refuses_to_start_without_a_run_token(monkeypatch, capsys):
    monkeypatch.delenv("SKILLAB_BUDGET_TOKEN", raising=False)
    assert main(["budget", "serve", "--listen", "127.0.0.1:0"]) == 2
    err = capsys.readouterr().err
    assert "set SKILLAB_BUDGET_TOKEN" in err and "Traceback" not in err


def test_a_bad_rpm_or_address_is_one_line_and_exit_2(monkeypatch, capsys):
    monkeypatch.setenv("SKILLAB_BUDGET_TOKEN", TOKEN)
    assert main(["budget", "serve", "--rpm", "anthropic=fast"]) == 2
    assert main(["budget", "serve", "--listen", "nowhere"]) == 2
    err = capsys.readouterr().err
    assert "--rpm 'anthropic=fast'" in err and "--listen 'nowhere'" in err


def test_serve_prints_the_url_answers_with_the_token_and_prints_its_ledger_on_sigterm():
    env = {**os.environ, "SKILLAB_BUDGET_TOKEN": TOKEN, "PYTHONPATH": str(ROOT / "runner")}
    proc = subprocess.Popen([sys.executable, "-m", "skillab", "budget", "serve", "--max-cost-usd", "3",
                             "--rpm", "60", "--listen", "127.0.0.1:0"],
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        first = proc.stdout.readline()
        url = first.split(" at ", 1)[1].split(";", 1)[0]
        assert url.startswith("http://127.0.0.1:") and "--budget-url " + url in first
        request = urllib.request.Request(url + "/v1/status", headers={"Authorization": f"Bearer {TOKEN}"})
        with urllib.request.urlopen(request, timeout=30) as answer:
            assert json.load(answer)["cap_usd"] == 3
        try:
            urllib.request.urlopen(url + "/v1/status", timeout=30)
            raise AssertionError("answered without the token")
        except urllib.error.HTTPError as exc:
            assert exc.code == 401
    finally:
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err
    assert json.loads(out.strip().splitlines()[-1])["spent_usd"] == 0
    assert TOKEN not in first + out + err


def test_a_config_file_cannot_point_a_run_at_a_budget_service(tmp_path, capsys, monkeypatch):
    skill = tmp_path / "s"
    skill.mkdir()
    (skill / "SKILL.md").write_text("---\nname: s\ndescription: d\n---\nbody\n")
    (skill / "eval.yaml").write_text("cases:\n  - name: a\n    prompt: p\n    validators:\n      - cmd: 'true'\n")
    (tmp_path / "skillab.toml").write_text('budget-url = "http://10.0.0.9:8765"\n')
    monkeypatch.chdir(tmp_path)
    assert main(["run", str(skill), "--adapter", "mock", "--no-history", "--quiet"]) == 2
    err = capsys.readouterr().err
    assert "'budget-url' cannot be set from a config file: give --budget-url on the command line" in err
    assert "unknown key" not in err
