import json

import pytest
from click.testing import CliRunner

import loopbench
from loopbench.graders.exact import grade
from loopbench.harness.cli.main import main
from loopbench.tasks.loading import load_taskset
from loopbench.tasks.taskset import TaskSetError


def test_depot_has_six_public_and_six_company_questions():
    depot = load_taskset("depot")
    slices = [t.slice for t in depot.tasks]
    assert slices.count("public") >= 6 and slices.count("company") >= 6
    offered = depot.toolset({"lookup": {"variant": "plain"}}).names
    # Every tool the set names is built; its questions need at least a look-up and arithmetic.
    assert offered == list(depot.tools) and {"lookup", "calc"} <= set(offered)


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


def test_unknown_tool_lists_known_ones(tmp_path, registries):
    loopbench.register_tool("echo", loopbench.ToolOptions, "says it back")(lambda s, o: None)
    folder = write_set(
        tmp_path / "s",
        [{"id": "a", "question": "q", "expected": {"numbers": [1]}}],
        toml='name = "x"\ntools = ["search"]\n',
    )
    with pytest.raises(TaskSetError, match=r"tools may be: lookup, (\w+, )*echo;"):
        load_taskset(folder)


def test_unknown_name_lists_the_sets_it_could_load(tmp_path, registries):
    mine = write_set(tmp_path / "s", [{"id": "a", "question": "q", "expected": {"numbers": [1]}}])
    loopbench.register_taskset("mine", mine)
    with pytest.raises(TaskSetError, match=r"built-in name \(.*\bdepot\b.*\bmine\b"):
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


CODE_TOML = 'name = "code"\ngrader = "code_tests"\ntimeout_s = 5\n'
CODE_TASK = {
    "id": "add",
    "question": "Write add(a, b).",
    "expected": {"entry_point": "add", "suite": "add"},
}


SUITE = "def test_adds(candidate):\n    assert candidate(1, 2) == 3\n"
REFERENCE = "def add(a, b):\n    return a + b\n"


def write_code_set(folder, task=CODE_TASK, files=("feedback.py", "heldout.py", "reference.py")):
    write_set(folder, [task], CODE_TOML)
    suite = folder / "suites" / "add"
    suite.mkdir(parents=True, exist_ok=True)
    for name in files:
        (suite / name).write_text(f"# {name}\n" + (REFERENCE if name == "reference.py" else SUITE))
    return folder


def test_a_coding_set_loads_its_suites(tmp_path):
    loaded = load_taskset(str(write_code_set(tmp_path / "c")))
    assert loaded.is_code and loaded.timeout_s == 5 and loaded.tools == ()
    suites = loaded.tasks[0].suites
    assert suites.entry_point == "add"
    assert suites.feedback.startswith("# feedback.py") and suites.heldout.startswith("# heldout.py")


def test_a_coding_tasks_fingerprint_follows_its_tests(tmp_path):
    folder = write_code_set(tmp_path / "c")
    before = load_taskset(str(folder)).tasks[0].fingerprint
    (folder / "suites" / "add" / "heldout.py").write_text("def test_other(candidate):\n    pass\n")
    assert load_taskset(str(folder)).tasks[0].fingerprint != before


def test_the_depot_fingerprints_are_those_recorded_before_coding_sets():
    # The committed reference run was written before coding task sets existed: its runs
    # must still resume as done, so every depot task's fingerprint is the one it recorded.
    from pathlib import Path

    runs = Path(__file__).parents[2] / "results" / "reference" / "local-smollm2" / "runs.jsonl"
    recorded = {
        record["task_id"]: record["task_fingerprint"]
        for record in map(json.loads, runs.read_text().splitlines())
    }
    now = {task.id: task.fingerprint for task in load_taskset("depot").tasks}
    assert now == recorded


@pytest.mark.parametrize(
    ("task", "files", "message"),
    [
        (CODE_TASK, ("feedback.py", "reference.py"), "heldout.py: no such file"),
        (
            {**CODE_TASK, "expected": {"entry_point": "add me", "suite": "add"}},
            ("feedback.py", "heldout.py", "reference.py"),
            "entry_point': Value error, must be a Python name",
        ),
        (
            {**CODE_TASK, "expected": {"entry_point": "add", "suite": "../add"}},
            ("feedback.py", "heldout.py", "reference.py"),
            "must be the name of a folder under suites/",
        ),
        (
            {**CODE_TASK, "expected": {"numbers": [3]}},
            ("feedback.py", "heldout.py", "reference.py"),
            "tasks.jsonl:1: field 'expected.entry_point': Field required",
        ),
    ],
    ids=["missing suite file", "entry point not a name", "suite outside suites/", "exact key"],
)
def test_a_bad_coding_set_says_where_and_what(tmp_path, task, files, message):
    folder = write_code_set(tmp_path / "c", task, files)
    with pytest.raises(TaskSetError) as caught:
        load_taskset(str(folder))
    assert message in str(caught.value)
    assert str(folder) in str(caught.value)


def test_the_coding_set_is_built_in():
    from loopbench.tasks.loading import builtin_names

    assert {"coding", "depot", "humaneval"} <= set(builtin_names())


@pytest.mark.parametrize(
    ("file", "text", "message"),
    [
        ("heldout.py", "def test_x(candidate:\n", "heldout.py:1: not valid Python"),
        ("feedback.py", "def helper():\n    pass\n", "feedback.py: defines no test"),
        ("reference.py", "def plus(a, b):\n    return a + b\n", "defines no 'add'"),
    ],
    ids=["suite does not parse", "suite without a test", "reference without the entry point"],
)
def test_a_coding_sets_suites_are_checked_when_it_loads(tmp_path, file, text, message):
    folder = write_code_set(tmp_path / "c")
    (folder / "suites" / "add" / file).write_text(text)
    with pytest.raises(TaskSetError) as caught:
        load_taskset(str(folder))
    assert message in str(caught.value) and str(folder / "suites" / "add") in str(caught.value)


def test_a_suite_timeout_beyond_an_hour_is_refused(tmp_path):
    folder = write_code_set(tmp_path / "c")
    (folder / "taskset.toml").write_text('name = "c"\ngrader = "code_tests"\ntimeout_s = 1e300\n')
    with pytest.raises(TaskSetError, match="timeout_s"):
        load_taskset(str(folder))


@pytest.mark.parametrize("number", [float("nan"), float("inf"), -float("inf")])
def test_an_answer_key_refuses_a_number_that_is_not_finite_given_from_python_too(number):
    """A file's NaN is refused as it is read; a task made in Python meets the key's own
    type: a NaN in the key would make every answer wrong, an infinity match nothing."""
    from pydantic import ValidationError

    from loopbench.graders.task_models import Task

    with pytest.raises(ValidationError, match="finite"):
        Task.model_validate({"id": "t", "question": "q", "expected": {"numbers": [number]}})
