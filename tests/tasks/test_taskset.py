import json

import pytest
from click.testing import CliRunner

from graders import grade
from harness.cli import main
from tasks import TaskSetError, load_taskset


def test_depot_has_six_public_and_six_company_questions():
    depot = load_taskset("depot")
    slices = [t.slice for t in depot.tasks]
    assert slices.count("public") >= 6 and slices.count("company") >= 6
    assert depot.toolset("plain").names == ["lookup", "calc"]


def test_every_depot_expectation_is_reachable_from_the_encyclopedia():
    # Each expected number is stated in, or computed from, looked-up entries:
    # a grader fed its own expectation must accept it.
    for task in load_taskset("depot").tasks:
        answer = " ".join([*task.expected.entities, *(f"{n:g}" for n in task.expected.numbers)])
        assert grade(answer, task.expected.numbers, task.expected.entities).correct, task.id


def write_set(folder, tasks, toml='name = "mine"\ntools = ["calc"]\n'):
    folder.mkdir(exist_ok=True)
    (folder / "taskset.toml").write_text(toml)
    (folder / "tasks.jsonl").write_text("".join(json.dumps(t) + "\n" for t in tasks))
    return folder


def test_user_folder_loads(tmp_path):
    folder = write_set(
        tmp_path / "s", [{"id": "a", "question": "1+1?", "expected": {"numbers": [2]}}]
    )
    loaded = load_taskset(str(folder))
    assert loaded.name == "mine" and loaded.tasks[0].id == "a"
    assert loaded.toolset().names == ["calc"]


def test_bad_field_names_file_line_and_field(tmp_path):
    folder = write_set(
        tmp_path / "s",
        [
            {"id": "a", "question": "q", "expected": {"numbers": [1]}},
            {"id": "b", "question": "q", "expected": {"numbers": ["many"]}},
        ],
    )
    with pytest.raises(TaskSetError, match=r"tasks.jsonl:2: field 'expected.numbers.0'"):
        load_taskset(folder)


def test_duplicate_id_is_refused(tmp_path):
    task = {"id": "a", "question": "q", "expected": {"numbers": [1]}}
    folder = write_set(tmp_path / "s", [task, task])
    with pytest.raises(TaskSetError, match="already used on line 1"):
        load_taskset(folder)


def test_unknown_tool_lists_known_ones(tmp_path):
    folder = write_set(
        tmp_path / "s",
        [{"id": "a", "question": "q", "expected": {"numbers": [1]}}],
        toml='name = "x"\ntools = ["search"]\n',
    )
    with pytest.raises(TaskSetError, match="tools may be: lookup, calc"):
        load_taskset(folder)


def test_unknown_name_lists_builtins():
    with pytest.raises(TaskSetError, match="built-in name \\(depot"):
        load_taskset("nope")


ANSWER_KEYS_THAT_WOULD_GRADE_WRONG = [
    # (the task line as written, the field named, what is said)
    ('"expected": {"numbers": [84], "tolerance": NaN}', "expected.tolerance", "finite"),
    ('"expected": {"numbers": [NaN]}', "expected.numbers.0", "finite"),
    ('"expected": {"numbers": [Infinity]}', "expected.numbers.0", "finite"),
    ('"expected": {"numbers": [84], "tolerance": -0.5}', "expected.tolerance", "greater than"),
    ('"expected": {}', "expected", "expects nothing"),
    ('"expected": {"numbers": [], "entities": []}', "expected", "expects nothing"),
    ('"expected": {"entities": ["  "]}', "expected.entities.0", "white space"),
]


@pytest.mark.parametrize(("expected", "field", "said"), ANSWER_KEYS_THAT_WOULD_GRADE_WRONG)
def test_an_answer_key_that_would_grade_wrong_is_refused_by_file_line_and_field(
    tmp_path, expected, field, said
):
    folder = write_set(tmp_path / "s", [{"id": "a", "question": "q", "expected": {"numbers": [1]}}])
    with (folder / "tasks.jsonl").open("a") as handle:
        handle.write('{"id": "b", "question": "q", ' + expected + "}\n")
    with pytest.raises(TaskSetError, match=rf"tasks.jsonl:2: field '{field}': .*{said}"):
        load_taskset(folder)


@pytest.mark.parametrize("field", ["id", "question"])
def test_a_blank_id_or_question_is_refused(tmp_path, field):
    task = {"id": "a", "question": "q", "expected": {"numbers": [1]}, field: " \t "}
    folder = write_set(tmp_path / "s", [task])
    with pytest.raises(TaskSetError, match=rf"tasks.jsonl:1: field '{field}': .*white space"):
        load_taskset(folder)


@pytest.mark.parametrize(("expected", "field", "said"), ANSWER_KEYS_THAT_WOULD_GRADE_WRONG)
def test_loopbench_grade_refuses_the_same_answer_keys(expected, field, said):
    key = expected.removeprefix('"expected": ')
    result = CliRunner().invoke(main, ["grade", "--answer", "999", "--expected", key])
    assert result.exit_code == 2 and "Error: --expected: " in result.output
    assert said in result.output and "Traceback" not in result.output
