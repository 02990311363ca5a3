"""``skillab cache list`` and ``skillab cache clear [--skill NAME] [--expired]`` on a cache
real runs filled."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

from skillab.cli import main

from ..skillgen import answers, grep_case, make_skill


def fill(tmp_path: Path, cache: Path) -> None:
    for name in ("alpha-skill", "beta-skill"):
        skill = make_skill(tmp_path / name, [grep_case("a"), grep_case("b")], name=name,
                           responses={"a": answers("SKILLED", "no"), "b": answers("SKILLED", "no")})
        assert main(["run", str(skill), "--adapter", "mock", "--no-history", "--quiet", "--cache-dir", str(cache),
                     "--output", str(tmp_path / f"{name}.json")]) == 0


def listing(cache: Path, capsys) -> dict:
    assert main(["cache", "list", "--cache-dir", str(cache), "--json"]) == 0
    return {row["skill"]: row for row in json.loads(capsys.readouterr().out)["skills"]}


def test_list_shows_each_skills_baselines(tmp_path, capsys):
    cache = tmp_path / "cache"
    fill(tmp_path, cache)
    capsys.readouterr()
    rows = listing(cache, capsys)
    assert set(rows) == {"alpha-skill", "beta-skill"}
    assert rows["alpha-skill"]["entries"] == 2 and rows["alpha-skill"]["cases"] == 2
    assert rows["alpha-skill"]["models"] == ["mock"] and rows["alpha-skill"]["expired"] == 0
    assert main(["cache", "list", "--cache-dir", str(cache)]) == 0
    out = capsys.readouterr().out
    assert "4 entries" in out and "alpha-skill: 2 entries (2 cases)" in out


def test_clear_one_skill_keeps_the_others_and_the_next_run_uses_them(tmp_path, capsys):
    cache = tmp_path / "cache"
    fill(tmp_path, cache)
    assert main(["cache", "clear", "--cache-dir", str(cache), "--skill", "alpha-skill"]) == 0
    assert "removed 2 entries (skill alpha-skill)" in capsys.readouterr().out
    assert set(listing(cache, capsys)) == {"beta-skill"}
    # The kept baselines still serve a run: beta's without-skill arms come from the cache.
    skill = tmp_path / "beta-skill" / "beta-skill"
    main(["run", str(skill), "--adapter", "mock", "--no-history", "--quiet", "--cache-dir", str(cache),
          "--output", str(tmp_path / "again.json")])
    doc = json.loads((tmp_path / "again.json").read_text())
    assert all(c["without_skill"]["cached"] for c in doc["cases"])


def test_clear_expired_and_clear_all(tmp_path, capsys):
    cache = tmp_path / "cache"
    fill(tmp_path, cache)
    old = next(cache.glob("*/*.json"))
    data = json.loads(old.read_text())
    data["created_at"] = time.time() - 30 * 86400
    old.write_text(json.dumps(data))
    assert main(["cache", "clear", "--cache-dir", str(cache), "--expired"]) == 0
    assert "removed 1 entry (expired)" in capsys.readouterr().out and not old.exists()
    (cache / "junk").mkdir()
    (cache / "junk" / "x.json").write_text("not json")
    assert main(["cache", "clear", "--cache-dir", str(cache)]) == 0
    assert "removed 4 entries" in capsys.readouterr().out
    assert list(cache.glob("*/*.json")) == []


def test_a_cache_dir_that_is_a_file_exits_2(tmp_path, capsys):
    (tmp_path / "f").write_text("x")
    assert main(["cache", "list", "--cache-dir", str(tmp_path / "f")]) == 2
    assert "is a file" in capsys.readouterr().err


def test_the_default_cache_is_the_runs(tmp_path, capsys):
    skill = make_skill(tmp_path, [grep_case("a")], responses={"a": answers("SKILLED", "no")})
    main(["run", str(skill), "--adapter", "mock", "--no-history", "--quiet", "--output", str(tmp_path / "r.json")])
    capsys.readouterr()
    assert main(["cache", "list", "--json"]) == 0
    listed = json.loads(capsys.readouterr().out)
    assert Path(listed["directory"]) == Path(os.environ["XDG_CACHE_HOME"]) / "skillab" / "baselines"
    assert [s["skill"] for s in listed["skills"]] == ["demo-skill"]
