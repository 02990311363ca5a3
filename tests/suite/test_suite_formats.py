"""Choosing a suite format: by file name, by ``format=``, and formats registered later."""

from __future__ import annotations

import dataclasses
import json
import sys
import textwrap
from pathlib import Path
from typing import ClassVar

import pytest

from skillab.core.checks import GraderResult
from skillab.errors import SuiteError, UsageError
from skillab.formats import DEFAULT_REGISTRY, Grader, SuiteFormat
from skillab.grading.graders import GradingInput
from skillab.suite import (
    FormatRegistry,
    Suite,
    find_suite_file,
    known_formats,
    lazy_loader,
    load_suite,
    register_format,
)

SUITE = textwrap.dedent(
    """\
    cases:
      - name: only
        prompt: do it
        expectations: [it is done]
    """
)


def write(path: Path, text: str = SUITE) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def plain_loader(fmt: str):
    """A loader for a made-up format: one case per line of the file."""

    def load(path: Path) -> Suite:
        from skillab.suite import Case

        lines = path.read_text().split()
        cases = tuple(Case(name=n, prompt=n, expectations=("x",)) for n in lines)
        return Suite(path=path, format=fmt, cases=cases)

    return load


@pytest.fixture
def registry() -> FormatRegistry:
    fresh = FormatRegistry()
    native = lazy_loader("skillab.formats.eval_yaml.parser:load_eval_yaml")
    fresh.register("eval.yaml", ("eval.yaml", "eval.yml"), native)
    return fresh


@pytest.fixture
def restore_default_registry():
    saved = dict(DEFAULT_REGISTRY._formats)
    yield
    DEFAULT_REGISTRY._formats.clear()
    DEFAULT_REGISTRY._formats.update(saved)


# --- the native format -------------------------------------------------------------------------


def test_a_skill_directory_loads_its_eval_yaml(tmp_path):
    write(tmp_path / "skill" / "eval.yaml")
    suite = load_suite(tmp_path / "skill")
    assert (suite.format, suite.path, suite.skill_dir) == (
        "eval.yaml",
        tmp_path / "skill" / "eval.yaml",
        tmp_path / "skill",
    )
    assert [c.name for c in suite.cases] == ["only"]


def test_eval_yml_is_accepted(tmp_path):
    write(tmp_path / "eval.yml")
    assert find_suite_file(tmp_path) == (tmp_path / "eval.yml", "eval.yaml")
    assert load_suite(tmp_path / "eval.yml").format == "eval.yaml"


def test_both_spellings_in_one_directory_are_ambiguous(tmp_path):
    write(tmp_path / "eval.yaml")
    write(tmp_path / "eval.yml")
    with pytest.raises(SuiteError) as caught:
        find_suite_file(tmp_path)
    assert "eval.yaml and eval.yml" in str(caught.value)


def test_a_suite_file_loads_directly_with_the_skill_dir_beside_it(tmp_path):
    path = write(tmp_path / "s" / "eval.yaml")
    suite = load_suite(path)
    assert suite.skill_dir == tmp_path / "s" and suite.path == path


def test_a_file_with_another_name_needs_format(tmp_path):
    path = write(tmp_path / "suite.yaml")
    with pytest.raises(SuiteError) as caught:
        load_suite(path)
    assert "--format" in str(caught.value) and "eval.yaml" in str(caught.value)
    assert load_suite(path, format="eval.yaml").cases[0].name == "only"


def test_format_restricts_the_directory_search(tmp_path):
    write(tmp_path / "eval.yaml")
    assert find_suite_file(tmp_path, format="eval.yaml") == (tmp_path / "eval.yaml", "eval.yaml")


def test_an_unknown_format_is_a_usage_error_listing_the_known_ones(tmp_path):
    write(tmp_path / "eval.yaml")
    for call in (
        lambda: load_suite(tmp_path, format="nope"),
        lambda: find_suite_file(tmp_path, format="nope"),
    ):
        with pytest.raises(UsageError) as caught:
            call()
        assert "unknown suite format 'nope'" in str(caught.value)
        assert "eval.yaml" in str(caught.value)
    assert not isinstance(caught.value, SuiteError)


def test_a_directory_without_a_suite_file(tmp_path):
    with pytest.raises(SuiteError) as caught:
        find_suite_file(tmp_path)
    assert f"no eval.yaml in {tmp_path}" in str(caught.value)
    assert "eval.yml" in str(caught.value)


@pytest.mark.parametrize("call", [load_suite, find_suite_file])
def test_a_missing_path(tmp_path, call):
    with pytest.raises(SuiteError) as caught:
        call(tmp_path / "absent")
    assert "does not exist" in str(caught.value)
    assert caught.value.first.path == tmp_path / "absent"


def test_find_on_a_file_says_it_is_not_a_directory(tmp_path):
    with pytest.raises(SuiteError, match="is not a directory"):
        find_suite_file(write(tmp_path / "eval.yaml"))


def test_parse_errors_come_through_load_suite_with_the_file_path(tmp_path):
    path = write(tmp_path / "eval.yaml", "cases:\n  - name: a\n    prompt: p\n")
    with pytest.raises(SuiteError) as caught:
        load_suite(tmp_path)
    assert caught.value.first.path == path and caught.value.first.line == 2


def test_the_native_format_is_registered_first():
    assert known_formats()[0] == "eval.yaml"


def test_each_builtin_format_is_found_by_the_file_names_its_package_declares():
    # The registry finds suite files before importing a format's package, by this table.
    from skillab.formats import BUILTIN_FILENAMES, BUILTIN_FORMATS

    declared = {name: (fmt.filenames, fmt.sniffed) for name, fmt in BUILTIN_FORMATS.items()}
    assert BUILTIN_FILENAMES == declared
    assert all(DEFAULT_REGISTRY.get(name) is fmt for name, fmt in BUILTIN_FORMATS.items())


# --- registering formats -----------------------------------------------------------------------


def test_a_registered_format_is_found_by_file_name(registry, tmp_path):
    registry.register("lines", ("cases.txt",), plain_loader("lines"))
    write(tmp_path / "cases.txt", "a b c")
    suite = registry.load(tmp_path)
    assert suite.format == "lines" and [c.name for c in suite.cases] == ["a", "b", "c"]
    assert registry.load(tmp_path / "cases.txt").format == "lines"


def test_the_registry_fills_in_the_skill_dir(registry, tmp_path):
    registry.register("lines", ("cases.txt",), plain_loader("lines"))
    write(tmp_path / "cases.txt", "a")
    assert registry.load(tmp_path).skill_dir == tmp_path


def test_formats_are_searched_in_registration_order(registry, tmp_path):
    registry.register("lines", ("cases.txt",), plain_loader("lines"))
    write(tmp_path / "cases.txt", "a")
    write(tmp_path / "eval.yaml")
    assert registry.find(tmp_path) == (tmp_path / "eval.yaml", "eval.yaml")
    assert registry.find(tmp_path, format="lines") == (tmp_path / "cases.txt", "lines")


def test_format_overrides_the_file_name(registry, tmp_path):
    registry.register("lines", ("cases.txt",), plain_loader("lines"))
    path = write(tmp_path / "eval.yaml", "x y")
    assert [c.name for c in registry.load(path, format="lines").cases] == ["x", "y"]


def test_a_file_name_belongs_to_one_format(registry):
    with pytest.raises(ValueError, match="already owns eval.yml"):
        registry.register("other", ("eval.yml",), plain_loader("other"))


def test_registering_a_name_again_replaces_it(registry, tmp_path):
    registry.register("lines", ("cases.txt",), plain_loader("lines"))
    registry.register("lines", ("list.txt",), plain_loader("lines"))
    assert registry.names() == ("eval.yaml", "lines")
    assert registry.for_filename("cases.txt") is None
    assert registry.for_filename("list.txt").name == "lines"


def test_a_format_needs_a_name_and_file_names(registry):
    with pytest.raises(ValueError):
        registry.register("", ("x",), plain_loader("x"))
    with pytest.raises(ValueError):
        registry.register("x", (), plain_loader("x"))


def test_an_empty_registry_still_explains_itself(tmp_path):
    with pytest.raises(UsageError, match="known formats: none"):
        FormatRegistry().get("eval.yaml")
    with pytest.raises(SuiteError, match="no suite file"):
        FormatRegistry().find(tmp_path)


def test_register_format_reaches_load_suite(restore_default_registry, tmp_path):
    register_format("lines", ("cases.txt",), plain_loader("lines"))
    write(tmp_path / "cases.txt", "one")
    assert "lines" in known_formats()
    assert load_suite(tmp_path).format == "lines"


# --- lazy loaders --------------------------------------------------------------------------------


def test_lazy_loader_imports_its_module_on_first_call(tmp_path):
    module = tmp_path / "skillab_fake_format.py"
    module.write_text(
        "from skillab.suite import Suite\n"
        "def load(path):\n"
        "    return Suite(path=path, format='fake', cases=())\n"
    )
    sys.path.insert(0, str(tmp_path))
    try:
        loader = lazy_loader("skillab_fake_format:load")
        assert "skillab_fake_format" not in sys.modules
        assert loader(tmp_path / "x").format == "fake"
        assert "skillab_fake_format" in sys.modules
    finally:
        sys.path.remove(str(tmp_path))
        sys.modules.pop("skillab_fake_format", None)


def test_lazy_loader_rejects_a_malformed_target():
    with pytest.raises(ValueError):
        lazy_loader("no_colon_here")


def test_a_lazy_loader_for_a_missing_module_fails_only_when_called():
    loader = lazy_loader("skillab_not_installed_format:load")
    with pytest.raises(ModuleNotFoundError):
        loader(Path("x"))


# --- a whole format from outside skillab -----------------------------------------------------


@dataclasses.dataclass(frozen=True)
class ShoutGrader:
    """A made-up format's grader spec: the answer must contain ``word``."""

    judged: ClassVar[bool] = False
    reads_work: ClassVar[bool] = False
    word: str


def grade_shout(spec: ShoutGrader, grading: GradingInput) -> GraderResult:
    found = spec.word in grading.final_output
    return GraderResult("contains", f"shouts {spec.word}", found, "found" if found else "not found")


def load_shout(path: Path) -> Suite:
    from skillab.suite import Case

    cases = tuple(Case(name=w.lower(), prompt=f"say {w}", graders=(ShoutGrader(w),)) for w in path.read_text().split())
    return Suite(path=path, format="shout", cases=cases)


SHOUT = SuiteFormat(
    name="shout",
    filenames=("shout.txt",),
    parse=load_shout,
    graders=(Grader(ShoutGrader, grade_shout),),
    layout=lambda directory: (directory / "shout.txt").is_file(),
    markdown_section=lambda named, inline: "\n".join(f"**Shouted** — {inline(name, 60)}" for name, _doc in named),
    terminal_section=lambda doc: ["  shouted      yes"],
)


def test_a_format_registered_from_outside_parses_grades_reports_and_is_discovered(
    restore_default_registry, tmp_path, capsys
):
    from skillab.cli import main
    from skillab.github.discovery import is_suite_dir

    skill = tmp_path / "shouter"
    write(skill / "SKILL.md", "---\nname: shouter\ndescription: Shouts.\n---\nShout.\n")
    write(skill / "shout.txt", "HELLO")
    write(skill / "mock-responses.yaml", "hello:\n  with: HELLO there\n  without: hi there\n")
    bare = write(tmp_path / "bare" / "shout.txt", "HI").parent
    DEFAULT_REGISTRY.add(SHOUT)

    out = tmp_path / "results.json"
    code = main(["run", str(skill), "--adapter", "mock", "--output", str(out), "--cache-dir",
                 str(tmp_path / "cache"), "--no-history", "--markdown", str(tmp_path / "report.md")])
    doc = json.loads(out.read_text())
    assert code == 0, capsys.readouterr().err
    (case,) = doc["cases"]
    assert case["outcome"] == "flip_to_pass" and doc["suite"]["format"] == "shout"
    assert case["with_skill"]["extra"]["graders"][0]["label"] == "shouts HELLO"
    assert "**Shouted** — shouter" in (tmp_path / "report.md").read_text()
    assert "shouted      yes" in capsys.readouterr().out
    assert is_suite_dir(bare) and not is_suite_dir(tmp_path)
