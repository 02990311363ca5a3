"""skillab against a real model: llama-cpp-python's OpenAI-compatible server with SmolLM2-135M.

What these show: the plumbing (tools offered and called, tool turns accepted, the judge's
output read, truncation, reproducible sampling) and the statistics on real model noise (a known
effect is found, a null one is not claimed). What they cannot show: the value of any skill for
a frontier model; a 135M model follows almost no instruction, it copies facts from its prompt.
"""

from __future__ import annotations

import json
from pathlib import Path

import yaml

from skillab.cli import main
from skillab.grading.judge import Judge
from skillab.providers.openai_compat import OpenAICompatClient
from skillab.providers.retry import RetryPolicy

from .server import MODEL, LlamaServer

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "team-facts"
# Short answers: the tier's time is the model's tokens.
MAX_TOKENS = "64"


def skillab_run(server: LlamaServer, suite: Path, out: Path, *, seed: int, adapter: str = "llm",
                extra: tuple[str, ...] = ()) -> dict:
    main(["run", str(suite), "--adapter", adapter, "--model", MODEL, "--base-url", server.base_url,
          "--seed", str(seed), "--temperature", "0.7", "--max-tokens", MAX_TOKENS,
          "--concurrency", "1", "--no-cache", "--no-history", "--quiet", "--judge-consistency", "0",
          "--output", str(out), *extra])
    return json.loads(out.read_text())


def suite(root: Path, name: str, body: str, cases: list[dict]) -> Path:
    folder = root / name
    folder.mkdir()
    (folder / "SKILL.md").write_text(f"---\nname: {name}\ndescription: {name} for the real-model tier.\n---\n"
                                     f"{body}\n")
    (folder / "eval.yaml").write_text(yaml.safe_dump({"cases": cases}, sort_keys=False))
    return folder


def facts(count: int = 12) -> list[tuple[str, str, str]]:
    """(case name, prompt, the word the answer needs) of the team-facts example's first cases."""
    cases = yaml.safe_load((EXAMPLE / "eval.yaml").read_text())["cases"][:count]
    return [(c["name"], c["prompt"], c["validators"][0]["label"].removeprefix("says ")) for c in cases]


def errors(doc: dict) -> list[str]:
    return [f"{c['case_name']} {arm}: {c[arm].get('error')}" for c in doc["cases"]
            for arm in ("with_skill", "without_skill") if c[arm]["errored"]]


def test_a_skill_with_a_strong_effect_helps_beyond_noise(llama, tmp_path):
    doc = skillab_run(llama, EXAMPLE, tmp_path / "r.json", seed=1)
    stats = doc["statistics"]
    assert errors(doc) == []
    assert stats["distinguishable"] and stats["lift_pts"] > 0, stats["summary"]
    assert "helps beyond noise" in stats["summary"]


# A validator no skill can move: whether the answer's length in bytes is even. Its pass rate is
# a coin the model's sampling flips, so the true lift is 0 whatever the prompts say.
EVEN_LENGTH = "test $(( $(wc -c < response.txt) % 2 )) -eq 0"


def null_suite(root: Path, cases: int = 8) -> Path:
    """The A/A suite: the example's questions, graded by ``EVEN_LENGTH``, and a skill that says
    nothing a task needs."""
    return suite(root, "null-skill", "This skill has no instructions. Answer as you would without it.",
                 [{"name": name, "prompt": prompt, "validators": [{"cmd": EVEN_LENGTH, "label": "even length"}]}
                  for name, prompt, _ in facts(cases)])


def test_a_null_skill_makes_no_claim_over_several_seeds(llama, tmp_path):
    null = null_suite(tmp_path)
    for seed in (1, 2, 3):
        doc = skillab_run(llama, null, tmp_path / f"aa-{seed}.json", seed=seed)
        assert errors(doc) == []
        assert not doc["statistics"]["distinguishable"], f"seed {seed}: {doc['statistics']['summary']}"


def test_a_harmful_skill_flips_cases_to_fail_and_hurts_beyond_noise(llama, tmp_path):
    # The same facts, now confidential: an answer must not disclose them. The model never knew
    # them; given the team-facts skill it repeats them.
    cases = [{"name": name, "prompt": prompt,
              "validators": [{"cmd": f"! grep -qi -- '{word}' response.txt", "label": f"keeps {word} confidential"}]}
             for name, prompt, word in facts()]
    leaky = suite(tmp_path, "leaky-notes", (EXAMPLE / "SKILL.md").read_text().split("---\n", 2)[2], cases)
    doc = skillab_run(llama, leaky, tmp_path / "r.json", seed=1)
    stats = doc["statistics"]
    assert errors(doc) == []
    assert doc["outcome_counts"].get("flip_to_fail", 0) >= 1
    assert stats["distinguishable"] and stats["lift_pts"] < 0, stats["summary"]
    assert "hurts beyond noise" in stats["summary"]


def test_the_agent_adapter_calls_a_real_tool(llama, tmp_path):
    cases = [{"name": "make-file", "prompt": "Use the write_file tool to create notes.txt containing the word hello.",
              "max_turns": 2, "validators": [{"cmd": "test -f notes.txt"}]}]
    agent = suite(tmp_path, "file-maker", "Create files with the write_file tool.", cases)
    doc = skillab_run(llama, agent, tmp_path / "r.json", seed=1, adapter="agent",
                      extra=("--max-tokens", "96"))
    assert errors(doc) == []
    case = doc["cases"][0]
    calls = case["with_skill"]["tool_call_count"] + case["without_skill"]["tool_call_count"]
    assert calls >= 1, "no tool call reached the workspace"


def test_the_judge_reads_every_verdict_of_a_small_model(llama):
    client = OpenAICompatClient(MODEL, api_key="none", base_url=llama.base_url, seed=1,
                                policy=RetryPolicy(max_attempts=2, base_delay_s=0.1))
    judge = Judge(client)
    items = [("The answer names a fruit.", "Name a fruit.", "An apple."),
             ("The answer names a fruit.", "Name a fruit.", "A hammer."),
             ("The answer is a greeting.", "Say hello.", "Hello there!"),
             ("The answer mentions port 8472.", "Which port?", "Port 8472."),
             ("The answer is in French.", "Say hello in French.", "Bonjour !")]
    results = [judge.grade(expectation, prompt=prompt, transcript="", final_output=answer)
               for expectation, prompt, answer in items]
    unreadable = [r.reason for r in results if r.errored]
    assert unreadable == []
    assert all(r.reason for r in results)


def test_the_same_seed_on_a_fresh_server_gives_the_same_answers(fresh_server, tmp_path):
    names = [name for name, _, _ in facts()[:3]]
    picked = ("--case", names[0], "--case", names[1], "--case", names[2])
    answers = []
    for attempt in range(2):
        server = fresh_server(seed=7)
        doc = skillab_run(server, EXAMPLE, tmp_path / f"r{attempt}.json", seed=7, extra=picked)
        server.stop()
        answers.append([(c["case_name"], c["with_skill"]["final_output"], c["without_skill"]["final_output"])
                        for c in doc["cases"]])
    assert len(answers[0]) == 3 and answers[0] == answers[1]

