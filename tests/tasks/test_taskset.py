import json

import pytest

from graders import grade
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
            {"id": "a", "question": "q", "expected": {}},
            {"id": "b", "question": "q", "expected": {"numbers": ["many"]}},
        ],
    )
    with pytest.raises(TaskSetError, match=r"tasks.jsonl:2: field 'expected.numbers.0'"):
        load_taskset(folder)


def test_duplicate_id_is_refused(tmp_path):
    task = {"id": "a", "question": "q", "expected": {}}
    folder = write_set(tmp_path / "s", [task, task])
    with pytest.raises(TaskSetError, match="already used on line 1"):
        load_taskset(folder)


def test_unknown_tool_lists_known_ones(tmp_path):
    folder = write_set(
        tmp_path / "s",
        [{"id": "a", "question": "q", "expected": {}}],
        toml='name = "x"\ntools = ["search"]\n',
    )
    with pytest.raises(TaskSetError, match="tools may be: lookup, calc"):
        load_taskset(folder)


def test_unknown_name_lists_builtins():
    with pytest.raises(TaskSetError, match="built-in name \\(depot"):
        load_taskset("nope")
