"""eval.yaml parsing: every rule of the spec's validation table, located by line, case and field."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest
from jsonschema import Draft202012Validator

from skillab.errors import SuiteError, SuiteIssue
from skillab.formats.eval_yaml.parser import REMOVED_REV1_KEYS, schema
from skillab.suite import SUITE_MAX_BYTES, Setup, load_suite, parse_eval_yaml
from skillab.suite.model import setup_path_problem
from skillab.yaml_source import MAX_ALIAS_EXPANSION, MAX_NODES

PATH = Path("skills/demo/eval.yaml")

GRADED = """\
    expectations:
      - "it works"
"""


def parse(text: str):
    return parse_eval_yaml(textwrap.dedent(text), PATH)


def issues_of(text: str) -> list[SuiteIssue]:
    with pytest.raises(SuiteError) as caught:
        parse(text)
    return caught.value.issues


def only_issue(text: str) -> SuiteIssue:
    issues = issues_of(text)
    assert len(issues) == 1, "\n".join(map(str, issues))
    return issues[0]


def case_with(body: str, name: str = "c1") -> str:
    """A one-case suite whose case carries ``body`` (indented four spaces, from line 4)."""
    return f"cases:\n  - name: {name}\n    prompt: do it\n" + textwrap.indent(
        textwrap.dedent(body), "    "
    )


def test_schema_is_a_valid_draft_2020_12_schema():
    Draft202012Validator.check_schema(schema())
    assert schema()["$schema"] == "https://json-schema.org/draft/2020-12/schema"


# --- the validation table, one rule at a time ------------------------------------------------


@pytest.mark.parametrize("text", ["", "   \n\n", "# only a comment\n"])
def test_an_empty_file_is_refused(text):
    issue = only_issue(text)
    assert "empty" in issue.message and issue.path == PATH


def test_top_level_must_be_a_mapping():
    issue = only_issue("- name: a\n- name: b\n")
    assert "top level must be a mapping" in issue.message and "got a list" in issue.message
    assert issue.line == 1


def test_top_level_null_is_not_a_mapping():
    assert "got null" in only_issue("~\n").message


def test_cases_key_is_required():
    issue = only_issue("{}\n")
    assert "missing 'cases'" in issue.message and issue.field == "cases"


@pytest.mark.parametrize(
    ("text", "words"),
    [("cases: []\n", "is empty"), ("cases: {a: 1}\n", "got a mapping"), ("cases:\n", "got null")],
)
def test_cases_must_be_a_non_empty_list(text, words):
    issue = only_issue(text)
    assert words in issue.message and issue.field == "cases" and issue.line == 1


def test_each_case_must_be_a_mapping():
    issue = only_issue("cases:\n  - just text\n")
    assert issue.case == "#0" and issue.line == 2 and "must be a mapping" in issue.message


def test_name_is_required():
    issue = only_issue("cases:\n  - prompt: p\n" + GRADED)
    assert (issue.case, issue.field, issue.line) == ("#0", "name", 2)
    assert "missing 'name'" in issue.message


@pytest.mark.parametrize(("value", "got"), [('""', "an empty string"), ('"   "', "a blank string"),
                                            ("5", "an integer (5)"), ("[a]", "a list")])
def test_name_must_be_a_non_empty_string(value, got):
    issue = only_issue(case_with(GRADED, name=value))
    assert (issue.case, issue.field, issue.line) == ("#0", "name", 2)
    assert f"must be a non-empty string, got {got}" in issue.message


def test_names_are_unique_after_stripping():
    text = case_with(GRADED, name="same") + "  - name: ' same '\n    prompt: p\n" + GRADED
    issue = only_issue(text)
    assert "duplicate case name 'same' — names must be unique within a suite" in issue.message
    assert (issue.case, issue.field, issue.line) == ("same", "name", 6)
    assert "line 2" in issue.message


def test_prompt_is_required():
    issue = only_issue("cases:\n  - name: a\n" + GRADED)
    assert (issue.case, issue.field, issue.line) == ("a", "prompt", 2)


@pytest.mark.parametrize("value", ['""', '"\\n\\t "', "[x]", "null"])
def test_prompt_must_be_a_non_empty_string(value):
    issue = only_issue(f"cases:\n  - name: a\n    prompt: {value}\n" + GRADED)
    assert (issue.case, issue.field, issue.line) == ("a", "prompt", 3)
    assert "must be a non-empty string" in issue.message


@pytest.mark.parametrize(
    ("body", "field", "line", "words"),
    [
        ("setup: echo hi\n", "setup", 4, "a list of commands, or a mapping"),
        ("setup: [echo, 3]\n", "setup[1]", 4, "must be a command string, got an integer"),
        ("setup:\n  file: {}\n", "setup.file", 5, "unknown key 'file' — did you mean 'files'?"),
        ("setup:\n  files: [a]\n", "setup.files", 5, "mapping of workspace-relative paths"),
        ("setup:\n  files:\n    a.txt: 3\n", "setup.files['a.txt']", 6, "the file's content"),
        ("setup:\n  files:\n    7: x\n", "setup.files", 6, "key that is not a string (a relative path): 7"),
        ("setup:\n  commands: ls\n", "setup.commands", 5, "a list of command strings"),
        ("setup:\n  commands: [ls, {a: 1}]\n", "setup.commands[1]", 5, "a command string"),
    ],
)
def test_setup_shape(body, field, line, words):
    issue = only_issue(case_with(body + "expectations: [x]\n"))
    assert (issue.case, issue.field, issue.line) == ("c1", field, line)
    assert words in issue.message


@pytest.mark.parametrize(
    ("body", "field", "line"),
    [
        ("expectations: it works\n", "expectations", 4),
        ("expectations:\n  - fine\n  - ''\n", "expectations[1]", 6),
        ("expectations:\n  - '   '\n", "expectations[0]", 5),
        ("expectations:\n  - 42\n", "expectations[0]", 5),
    ],
)
def test_expectations_are_non_empty_strings(body, field, line):
    issue = only_issue(case_with(body))
    assert (issue.case, issue.field, issue.line) == ("c1", field, line)


def test_validators_must_be_a_list():
    issue = only_issue(case_with("validators:\n  cmd: ls\n"))
    assert (issue.field, issue.line) == ("validators", 4) and "must be a list" in issue.message


@pytest.mark.parametrize(
    ("body", "field", "line", "words"),
    [
        ("validators:\n  - label: x\n", "validators[0].cmd", 5, "validator #0 is missing 'cmd'"),
        ("validators:\n  - cmd: ''\n", "validators[0].cmd", 5, "validator #0 'cmd' must be"),
        ("validators:\n  - cmd: ok\n  - cmd: ' '\n", "validators[1].cmd", 6, "validator #1 'cmd'"),
        ("validators:\n  - ls\n", "validators[0]", 5, "validator #0 must be a mapping"),
        ("validators:\n  - cmd: ls\n    label: 3\n", "validators[0].label", 6, "must be a string"),
    ],
)
def test_each_validator_has_a_non_empty_cmd(body, field, line, words):
    issue = only_issue(case_with(body))
    assert (issue.case, issue.field, issue.line) == ("c1", field, line)
    assert words in issue.message


@pytest.mark.parametrize(
    ("value", "got"),
    [("'0'", "a string ('0')"), ("true", "a boolean (true)"), ("0.0", "a number (0.0)"),
     ("null", "null")],
)
def test_expect_exit_code_is_an_integer_and_never_a_boolean(value, got):
    issue = only_issue(case_with(f"validators:\n  - cmd: ls\n    expect_exit_code: {value}\n"))
    assert (issue.field, issue.line) == ("validators[0].expect_exit_code", 6)
    assert f"validator #0 'expect_exit_code' must be an integer, got {got}" in issue.message


@pytest.mark.parametrize("value", ["0", "-1", "true", "false", "2.0", "'3'", "null"])
def test_max_turns_is_a_positive_integer(value):
    issue = only_issue(case_with(f"max_turns: {value}\n" + textwrap.dedent(GRADED)))
    assert (issue.case, issue.field, issue.line) == ("c1", "max_turns", 4)
    assert "must be a positive integer" in issue.message


@pytest.mark.parametrize("value", ["1", "'true'", "null", "[true]"])
def test_should_trigger_is_a_boolean(value):
    issue = only_issue(case_with(f"should_trigger: {value}\n"))
    assert (issue.case, issue.field, issue.line) == ("c1", "should_trigger", 4)
    assert "must be a boolean" in issue.message


def test_a_case_needs_a_grader():
    issue = only_issue("cases:\n  - name: bare\n    prompt: p\n")
    assert (issue.case, issue.field, issue.line) == ("bare", None, 2)
    assert "bare" in issue.message and "at least one assertion" in issue.message


def test_empty_grader_lists_do_not_count_as_a_grader():
    issue = only_issue(case_with("expectations: []\nvalidators: []\n"))
    assert "at least one assertion" in issue.message


@pytest.mark.parametrize("flag", ["true", "false"])
def test_trigger_only_cases_are_exempt_from_the_grader_rule(flag):
    suite = parse(case_with(f"should_trigger: {flag}\n"))
    assert suite.cases[0].trigger_only and suite.cases[0].should_trigger is (flag == "true")


@pytest.mark.parametrize("key", sorted(REMOVED_REV1_KEYS))
def test_removed_rev1_keys_carry_a_migration_message(key):
    issue = only_issue(case_with(f"{key}: something\n" + textwrap.dedent(GRADED)))
    assert (issue.case, issue.field, issue.line) == ("c1", key, 4)
    for words in ("removed in schema rev 2", key, "one execution contract"):
        assert words in issue.message


def test_trials_points_at_the_runs_flag():
    issue = only_issue(case_with("trials: 5\n" + textwrap.dedent(GRADED)))
    assert "--runs" in issue.message


@pytest.mark.parametrize(
    ("body", "field", "line"),
    [("tags: pii\n", "tags", 4), ("tags: [pii, 3]\n", "tags[1]", 4),
     ("description: 5\n", "description", 4), ("description: [a]\n", "description", 4)],
)
def test_tags_and_description_types(body, field, line):
    issue = only_issue(case_with(body + textwrap.dedent(GRADED)))
    assert (issue.case, issue.field, issue.line) == ("c1", field, line)


def test_unknown_case_key_names_the_key_and_suggests_the_right_one():
    issue = only_issue(case_with("expectation:\n  - it works\n"))
    assert (issue.case, issue.field, issue.line) == ("c1", "expectation", 4)
    assert "unknown key 'expectation'" in issue.message and "'expectations'" in issue.message


def test_unknown_key_without_a_close_match_lists_the_allowed_keys():
    issue = only_issue(case_with("zzz: 1\n" + textwrap.dedent(GRADED)))
    assert "unknown key 'zzz'" in issue.message and "allowed: name, prompt" in issue.message


def test_unknown_top_level_key():
    issue = only_issue("suite_name: x\n" + case_with(GRADED))
    assert (issue.case, issue.field, issue.line) == (None, "suite_name", 1)
    assert "unknown top-level key 'suite_name'" in issue.message


def test_unknown_validator_key():
    issue = only_issue(case_with("validators:\n  - cmd: ls\n    exit_code: 0\n"))
    assert (issue.field, issue.line) == ("validators[0].exit_code", 6)
    assert "validator #0 has unknown key 'exit_code'" in issue.message


# --- setup paths that leave the workspace ----------------------------------------------------


@pytest.mark.parametrize(
    ("rel", "problem"),
    [
        ("/etc/passwd", "is absolute"),
        ("\\\\server\\share", "is absolute"),
        ("C:\\Windows\\x", "is absolute"),
        ("c:x", "is absolute"),
        ("../x", "'..'"),
        ("a/../../x", "'..'"),
        ("a\\..\\..\\x", "'..'"),
        ("", "is empty"),
        ("   ", "is empty"),
        ("dir/", "names a directory"),
        (".", "names a directory"),
        ("a\0b", "NUL"),
    ],
)
def test_setup_file_paths_that_escape_are_refused(rel, problem):
    assert problem in (setup_path_problem(rel) or "")


@pytest.mark.parametrize("rel", ["a.txt", "data/rows.csv", "./x", "a..b", ".hidden", "a/.b/c"])
def test_setup_file_paths_inside_the_workspace_are_accepted(rel):
    assert setup_path_problem(rel) is None


def test_an_escaping_setup_path_is_a_parse_error_at_its_line():
    body = "setup:\n  files:\n    ok.txt: fine\n    ../../etc/cron.d/x: evil\n"
    issue = only_issue(case_with(body + textwrap.dedent(GRADED)))
    assert (issue.case, issue.field, issue.line) == ("c1", "setup.files", 7)
    assert "'../../etc/cron.d/x'" in issue.message and "inside the workspace" in issue.message


# --- every issue, together --------------------------------------------------------------------


def test_all_issues_are_reported_together_in_line_order():
    text = """\
    cases:
      - name: first
        prompt: ""
        max_turns: 0
        expectations: [ok]
      - name: second
        prompt: p
        mode: agentic
        validators:
          - cmd: ls
            expect_exit_code: "1"
      - name: first
        prompt: p
        expectations: [ok]
    """
    issues = issues_of(text)
    located = [(i.line, i.case, i.field) for i in issues]
    assert located == [
        (3, "first", "prompt"),
        (4, "first", "max_turns"),
        (8, "second", "mode"),
        (11, "second", "validators[0].expect_exit_code"),
        (12, "first", "name"),
    ]
    text = str(SuiteError(issues))
    assert text.count(str(PATH)) == 5


def test_issue_text_names_file_line_case_and_field():
    issue = only_issue(case_with("validators:\n  - cmd: ls\n    expect_exit_code: x\n"))
    assert str(issue).startswith(f"{PATH}:6: case c1 'validators[0].expect_exit_code' — ")


# --- bad input ---------------------------------------------------------------------------------


def test_malformed_yaml_names_the_line():
    issue = only_issue("cases:\n  - name: a\n    prompt: [unclosed\n  - name: b\n")
    assert issue.message.startswith("invalid YAML") and issue.line is not None
    assert issue.line >= 3


def test_a_tab_indent_is_malformed_yaml_with_its_line():
    issue = only_issue("cases:\n  - name: a\n\tprompt: p\n")
    assert issue.message.startswith("invalid YAML") and issue.line == 3


def test_several_documents_are_refused():
    issue = only_issue(case_with(GRADED) + "---\n" + case_with(GRADED))
    assert "single document" in issue.message


@pytest.mark.parametrize("tag", ["!!python/object:os.system {}", "!custom x", "!!set {a, b}"])
def test_unsafe_or_unknown_tags_are_refused(tag):
    issue = only_issue(case_with(f"description: {tag}\n" + textwrap.dedent(GRADED)))
    assert issue.message.startswith("invalid YAML") and issue.line == 4


def test_control_characters_are_refused_with_their_line():
    issue = only_issue(case_with(GRADED) + "# bell \x07\n")
    assert issue.line == 6 and "not allowed" in issue.message


def test_duplicate_mapping_keys_are_refused_not_silently_dropped():
    text = case_with("prompt: again\n" + textwrap.dedent(GRADED))
    issue = only_issue(text)
    assert (issue.case, issue.field, issue.line) == ("c1", "prompt", 4)
    assert "duplicate key 'prompt' (first on line 3)" in issue.message


def test_a_duplicated_cases_key_is_refused():
    issues = issues_of(case_with(GRADED) + case_with(GRADED, name="c2"))
    assert [(i.field, i.line) for i in issues] == [("cases", 6)]


def test_an_alias_bomb_is_refused():
    lines = ["a0: &a0 [x, x, x, x, x, x, x, x, x, x]"]
    for level in range(1, 10):
        ref = f"*a{level - 1}"
        lines.append(f"a{level}: &a{level} [{', '.join([ref] * 10)}]")
    issue = only_issue("\n".join(lines) + "\ncases: *a9\n")
    assert f"more than {MAX_ALIAS_EXPANSION}" in issue.message and issue.line is not None


def test_a_recursive_alias_is_refused():
    issue = only_issue("cases: &loop [*loop]\n")
    assert "alias" in issue.message and issue.line == 1


def test_deep_nesting_is_refused_without_crashing_the_interpreter():
    # libyaml's own composer recurses in C: this depth would end the process, not raise.
    issue = only_issue("cases: " + "[" * 1_000_000 + "]" * 1_000_000 + "\n")
    assert "nesting is deeper" in issue.message and issue.line == 1


def test_too_many_values_are_refused_with_the_line_reached():
    issue = only_issue("cases: [" + "x, " * (MAX_NODES + 10) + "]\n")
    assert f"more than {MAX_NODES} values" in issue.message and issue.line == 1


def test_moderate_nesting_past_the_limit_is_refused():
    issue = only_issue("cases: " + "[" * 80 + "]" * 80 + "\n")
    assert "nesting is deeper" in issue.message


def test_a_text_larger_than_the_limit_is_refused():
    issue = only_issue("#" * (SUITE_MAX_BYTES + 1))
    assert str(SUITE_MAX_BYTES) in issue.message


def test_a_file_larger_than_the_limit_is_refused_before_parsing(tmp_path):
    path = tmp_path / "eval.yaml"
    with path.open("wb") as handle:
        handle.truncate(SUITE_MAX_BYTES + 1)
    with pytest.raises(SuiteError) as caught:
        load_suite(path)
    assert "at most" in caught.value.first.message and "4 MiB" in caught.value.first.message


def test_a_file_at_the_limit_is_read(tmp_path):
    text = case_with(GRADED)
    path = tmp_path / "eval.yaml"
    path.write_text(text + "#" * (SUITE_MAX_BYTES - len(text)))
    assert path.stat().st_size == SUITE_MAX_BYTES
    assert load_suite(path).cases[0].name == "c1"


def test_non_utf8_bytes_name_the_offset_and_line(tmp_path):
    path = tmp_path / "eval.yaml"
    data = case_with(GRADED).encode()
    path.write_bytes(data + b"# caf\xe9\n")
    with pytest.raises(SuiteError) as caught:
        load_suite(path)
    issue = caught.value.first
    assert f"offset {len(data) + 5}" in issue.message and "0xe9" in issue.message
    assert issue.line == 6 and "UTF-8" in issue.message


def test_a_utf8_byte_order_mark_is_accepted(tmp_path):
    path = tmp_path / "eval.yaml"
    path.write_bytes(b"\xef\xbb\xbf" + case_with(GRADED).encode())
    assert load_suite(path).cases[0].name == "c1"


def test_a_directory_without_a_suite_says_so(tmp_path):
    with pytest.raises(SuiteError) as caught:
        load_suite(tmp_path)
    assert f"no eval.yaml in {tmp_path}" in str(caught.value)


def test_a_missing_path_is_a_suite_error(tmp_path):
    with pytest.raises(SuiteError) as caught:
        load_suite(tmp_path / "nope" / "eval.yaml")
    assert "does not exist" in str(caught.value)


def test_a_suite_file_that_is_not_a_regular_file_is_refused(tmp_path):
    import os

    fifo = tmp_path / "eval.yaml"
    os.mkfifo(fifo)
    with pytest.raises(SuiteError) as caught:
        load_suite(fifo)
    assert "not a regular file" in str(caught.value)


# --- normalization --------------------------------------------------------------------------


def test_validator_label_defaults_to_the_first_80_characters_of_cmd():
    cmd = "echo " + "x" * 100
    body = f"validators:\n  - cmd: {cmd}\n  - cmd: ls\n    label: ''\n  - cmd: ls\n    label: listed\n"
    specs = parse(case_with(body)).cases[0].to_spec_dict()["script_validators"]
    assert [v["label"] for v in specs] == [cmd[:80], "ls", "listed"]
    assert [v["expect_exit_code"] for v in specs] == [0, 0, 0]


def test_list_setup_equals_a_commands_only_mapping():
    listed = parse(case_with("setup: [a, b]\n" + textwrap.dedent(GRADED))).cases[0]
    mapped = parse(case_with("setup:\n  commands: [a, b]\n" + textwrap.dedent(GRADED))).cases[0]
    assert listed.setup == mapped.setup == Setup(commands=("a", "b"))


def test_case_fields_and_lines():
    text = """\
    cases:
      - name: '  first  '
        prompt: "  keep my spaces "
        tags: [a, b]
        description: about it
        max_turns: 3
        validators:
          - cmd: exit 1
            expect_exit_code: 1
      -
        name: second
        prompt: p
        setup:
          files:
            data/x.csv: "a,b\\n"
        expectations: [ok]
    """
    suite = parse(text)
    first, second = suite.cases
    assert (first.name, first.prompt, first.line, second.line) == ("first", "  keep my spaces ", 2, 11)
    assert (first.tags, first.description, first.max_turns) == (("a", "b"), "about it", 3)
    assert first.validators[0].expect_exit_code == 1 and first.should_trigger is None
    assert second.setup == Setup(files={"data/x.csv": "a,b\n"})
    assert (suite.format, suite.path, suite.skill_dir) == ("eval.yaml", PATH, PATH.parent)


def test_anchors_and_merge_keys_share_fragments():
    text = """\
    cases:
      - &base
        name: one
        prompt: p
        expectations: &checks [it works]
      - <<: *base
        name: two
        validators: [{cmd: ls}]
    """
    one, two = parse(text).cases
    assert two.prompt == "p" and two.expectations == one.expectations == ("it works",)
    assert two.validators[0].cmd == "ls" and two.line == 6


def test_merge_keys_keep_locations_for_merged_values():
    text = """\
    defaults: &d
      prompt: ""
    cases:
      - <<: *d
        name: x
        expectations: [ok]
    """
    located = sorted((i.field, i.line) for i in issues_of(text))
    assert located == [("defaults", 1), ("prompt", 2)]


def test_a_colon_inside_an_unquoted_value_gets_a_hint_with_its_column():
    issue = only_issue("cases:\n  - name: a\n    prompt: Say: hello to the user\n"
                       "    validators:\n      - cmd: 'true'\n")
    assert issue.line == 3
    assert "at column 16" in issue.message
    assert "a ': ' inside an unquoted value starts a mapping" in issue.message
    assert "prompt: 'Say: hello to the user'" in issue.message


def test_a_colon_inside_a_list_item_that_should_be_text_gets_the_same_hint():
    issue = only_issue("cases:\n  - name: a\n    prompt: hi\n    expectations:\n      - The answer says: hello\n")
    assert issue.line == 5 and "got a mapping" in issue.message
    assert "quote the whole text: 'The answer says: hello'" in issue.message
