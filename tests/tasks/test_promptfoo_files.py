"""promptfoo's files read as promptfoo reads them (loopbench/tasks/promptfoo_tests.py,
loopbench/tasks/promptfoo_config.py): a test's description is its id, a config is read for its
tests, and what would be graded otherwise than promptfoo grades it is refused in one line
naming the file, the test and the key."""

import json

import pytest
from click.testing import CliRunner

from loopbench.harness.cli.main import main
from loopbench.tasks.loading import load_taskset

TEST = {
    "vars": {"question": "Capital of France?"},
    "assert": [{"type": "icontains", "value": "paris"}],
}


def write(path, data):
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def ids(path):
    return [task.id for task in load_taskset(path).tasks]


def refusal(path) -> str:
    """The one line ``tasks list`` prints refusing ``path``, exit 2."""
    result = CliRunner().invoke(main, ["tasks", "list", "--tasks", str(path)])
    assert result.exit_code == 2, result.output
    assert len(result.output.strip().splitlines()) == 1, result.output
    return result.output


def test_a_tests_description_is_its_id_and_a_test_without_one_keeps_its_number(tmp_path):
    tests = [
        {**TEST, "description": "france"},
        TEST,
        {**TEST, "vars": {"question": "q", "id": "x"}},
    ]
    assert ids(write(tmp_path / "t.yaml", tests)) == ["france", "2", "x"]


def test_two_tests_with_one_description_are_refused_naming_both(tmp_path):
    path = write(tmp_path / "t.yaml", [{**TEST, "description": "same"}] * 2)
    said = refusal(path)
    assert f"{path}: item 2" in said and "'same' is already the id of" in said and "item 1" in said


def test_a_config_is_read_for_its_tests_inline_by_path_and_as_a_list(tmp_path):
    write(tmp_path / "more.yaml", [{**TEST, "description": "from a file"}])
    inline = {"prompts": ["{{question}}"], "providers": ["openai:gpt-4o"]}
    cases = {
        "inline.yaml": {**inline, "tests": [{**TEST, "description": "inline"}]},
        "path.yaml": {**inline, "tests": "file://more.yaml"},
        "list.yaml": {**inline, "tests": ["more.yaml", {**TEST, "description": "inline"}]},
    }
    found = {name: ids(write(tmp_path / name, config)) for name, config in cases.items()}
    assert found == {
        "inline.yaml": ["inline"],
        "path.yaml": ["from a file"],
        "list.yaml": ["from a file", "inline"],
    }


def test_a_configs_default_test_is_added_to_every_test(tmp_path):
    default = {"vars": {"question": "default?"}, "assert": [{"type": "not-contains", "value": "x"}]}
    config = {"defaultTest": default, "tests": [{"description": "d", "assert": TEST["assert"]}]}
    [task] = load_taskset(write(tmp_path / "c.yaml", config)).tasks
    assert task.question == "default?"
    assert [a.type for a in task.expected] == ["not-contains", "icontains"]


@pytest.mark.parametrize(
    ("config", "says"),
    [
        ({"prompts": ["hi"]}, "give the tests file itself, or add tests: to the config"),
        ({"tests": "https://example.com/t.yaml"}, "only a local file of tests is read"),
        ({"tests": "tests/*.yaml"}, "only a local file of tests is read"),
        ({"tests": "file://t.csv"}, "a CSV of promptfoo's __expected columns is not read"),
        ({"tests": [TEST], "scenarios": [{}]}, "scenarios are not read here"),
        ({"tests": "file://c.yaml"}, "a promptfoo config, named as a file of tests"),
        (
            {"tests": [TEST], "defaultTest": {"options": {"transform": "output.trim()"}}},
            "defaultTest: options.transform is not applied here",
        ),
    ],
)
def test_a_config_that_cannot_be_read_as_asked_is_refused(tmp_path, config, says):
    assert says in refusal(write(tmp_path / "c.yaml", config))


@pytest.mark.parametrize(
    ("test", "says"),
    [
        ({"options": {"transform": "output.trim()"}}, "options.transform is not applied here"),
        ({"options": {"postprocess": "x"}}, "options.postprocess is not applied here"),
        ({"threshold": 0.5}, "key 'threshold' is not read here"),
        ({"provider": "openai:gpt-4o"}, "key 'provider' is not read here"),
        (
            {"assert": [{"type": "equals", "value": "x", "transform": "output"}]},
            "assert 1: key 'transform'",
        ),
        ({"assert": [{"type": "javascript", "value": "1"}]}, "the types graded are equals"),
        (
            {"vars": {"question": ["a", "b"]}},
            "holds a list, for which promptfoo runs the test once per item",
        ),
        ({"vars": {"question": "file://q.txt"}}, "names a file"),
        ({"assert": [{"type": "equals", "value": "{{ other }}"}]}, "not one of the test's vars"),
        ({"assert": [{"type": "equals", "value": "{{ question | upper }}"}]}, "a template beyond"),
        ({"assert": [{"type": "regex", "value": "(?i)paris"}]}, "inline flags such as (?i)"),
        ({"assert": [{"type": "contains", "value": "file://a.txt"}]}, "a file named as a value"),
    ],
)
def test_what_promptfoo_would_act_on_is_refused_naming_the_test(tmp_path, test, says):
    path = write(tmp_path / "t.yaml", [TEST, {**TEST, "description": "second", **test}])
    said = refusal(path)
    assert f"{path}: item 2" in said and says in said


def test_yaml_is_read_as_promptfoo_reads_it_yes_and_no_being_texts(tmp_path):
    path = tmp_path / "t.yaml"
    path.write_text(
        "- description: 017\n"
        "  vars: {question: yes}\n"
        "  assert: [{type: equals, value: no}, {type: contains, value: on}]\n"
        "- vars: {question: 2024-03-01}\n"
        "  assert: [{type: equals, value: 0o17}]\n"
    )
    first, second = load_taskset(path).tasks
    assert (first.id, first.question) == ("17", "yes")
    assert [a.value for a in first.expected] == ["no", "on"]
    assert second.question == "2024-03-01" and second.expected[0].value == 15
