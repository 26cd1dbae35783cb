"""Task sets from the files teams have: a CSV, a JSONL, a Parquet file, Inspect samples and
promptfoo tests run end to end against a fake endpoint, their records holding the file's
ids and the right grades; every malformed row refused in one line, exit 2, no request."""

import csv
import json

import duckdb
import pytest
from click.testing import CliRunner

import loopbench
from loopbench.graders.reading import answer_text
from loopbench.harness.cli.main import main
from loopbench.harness.fakes.fake_server import FakeServer, Reply
from loopbench.harness.results.reading import read_records
from loopbench.tasks.loading import load_taskset
from loopbench.tasks.taskset import TaskSetError

ARMS = ["direct", "cot", "self_consistency:samples=3"]

#: What the fake model answers, by a word of the question.
REPLIES = {"France": "Paris", "Japan": "Kyoto", "sum": "84", "Spain": "Madrid"}
#: What the rows expect: the model is right on all but Japan (Tokyo).
ROWS = [
    {"id": "fr", "question": "Capital of France?", "answer": "Paris"},
    {"id": "jp", "question": "Capital of Japan?", "answer": "Tokyo"},
    {"id": "sum", "question": "What is the sum of 40 and 44?", "answer": "84"},
]
RIGHT = {"fr": True, "jp": False, "sum": True}


def responder(body):
    question = next(m["content"] for m in reversed(body["messages"]) if m["role"] == "user")
    said = next((reply for word, reply in REPLIES.items() if word in question), "no idea")
    return Reply(f"Let me think.\nAnswer: {said}")


def run(tasks, *flags, server=None, out=None):
    args = ["run", "--tasks", str(tasks), "--quiet", *flags]
    args += [a for arm in ARMS for a in ("--arm", arm)]
    if server is not None:
        args += ["--base-url", server.base_url, "--model", "fake", "--out", str(out)]
    return CliRunner().invoke(main, args, env={"LOOPBENCH_API_KEY": "k"}, catch_exceptions=False)


def verdicts(out):
    records = read_records(out)
    assert {r.arm for r in records} == set(ARMS)
    by_task = {}
    for record in records:
        by_task.setdefault(record.task_id, set()).add(record.correct)
    return {task: verdicts.pop() for task, verdicts in by_task.items() if len(verdicts) == 1}


def write_csv(path, rows, fields=None):
    with path.open("w", newline="") as file:
        writer = csv.DictWriter(file, fieldnames=fields or list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    return path


def write_jsonl(path, rows):
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    return path


def write_parquet(path, rows):
    jsonl = write_jsonl(path.with_suffix(".jsonl"), rows)
    with duckdb.connect() as db:
        db.execute(f"COPY (SELECT * FROM read_json_auto('{jsonl}')) TO '{path}' (FORMAT parquet)")
    jsonl.unlink()
    return path


@pytest.fixture
def server():
    with FakeServer(responder) as srv:
        yield srv


@pytest.mark.parametrize("write", [write_csv, write_jsonl, write_parquet])
def test_a_data_file_runs_through_three_arms_with_its_ids_and_grades(write, server, tmp_path):
    suffix = {write_csv: "csv", write_jsonl: "jsonl", write_parquet: "parquet"}[write]
    data = write(tmp_path / f"capitals.{suffix}", ROWS)
    result = run(data, "--grader", "exact", server=server, out=tmp_path / "r")
    assert result.exit_code == 0, result.output
    assert verdicts(tmp_path / "r") == RIGHT
    assert {r.task_set for r in read_records(tmp_path / "r")} == {"capitals"}


def test_columns_are_mapped_by_flags_and_rows_without_an_id_are_numbered(server, tmp_path):
    rows = [{"prompt": r["question"], "gold": r["answer"]} for r in ROWS]
    data = write_csv(tmp_path / "mine.csv", rows)
    flags = ["--question", "prompt", "--answer", "gold", "--grader", "exact"]
    result = run(data, *flags, server=server, out=tmp_path / "r")
    assert result.exit_code == 0, result.output
    assert verdicts(tmp_path / "r") == {"1": True, "2": False, "3": True}


def test_an_inspect_file_is_read_as_it_is(server, tmp_path):
    samples = [
        {"id": "fr", "input": "Capital of France?", "target": "Paris", "metadata": {"x": 1}},
        {
            "id": "jp",
            "input": [
                {"role": "system", "content": "Be brief."},
                {"role": "user", "content": "Capital of Japan?"},
            ],
            "target": ["Tokyo"],
        },
        {
            "id": 3,
            "input": [{"role": "user", "content": [{"type": "text", "text": "The sum?"}]}],
            "target": "84",
        },
    ]
    data = write_jsonl(tmp_path / "inspect.jsonl", samples)
    result = run(data, "--grader", "exact", server=server, out=tmp_path / "r")
    assert result.exit_code == 0, result.output
    assert verdicts(tmp_path / "r") == {"fr": True, "jp": False, "3": True}


PROMPTFOO = """
- vars: {question: 'Capital of France?'}
  assert:
    - {type: icontains, value: paris}
    - {type: not-contains, value: Lyon}
- vars: {question: 'Capital of Japan?'}
  assert: [{type: equals, value: Tokyo}]
- vars: {question: 'Capital of Spain?'}
  assert: [{type: regex, value: "(?<city>Mad)rid"}]
"""


def test_promptfoo_tests_are_graded_by_their_asserts(server, tmp_path):
    data = tmp_path / "tests.yaml"
    data.write_text(PROMPTFOO)
    result = run(data, server=server, out=tmp_path / "r")
    assert result.exit_code == 0, result.output
    assert verdicts(tmp_path / "r") == {"1": True, "2": False, "3": True}


def test_a_promptfoo_assert_type_not_graded_here_is_refused(server, tmp_path):
    data = tmp_path / "tests.yaml"
    data.write_text("- vars: {q: hi}\n  assert: [{type: javascript, value: 'output.length'}]\n")
    result = run(data, server=server, out=tmp_path / "r")
    assert result.exit_code == 2 and server.served.requests == 0
    assert "javascript" in result.output and f"{data}: item 1" in result.output


def test_a_taskset_toml_names_the_file_its_columns_and_grader_options(server, tmp_path):
    rows = [{"q": r["question"], "a": r["answer"], "key": r["id"]} for r in ROWS]
    write_csv(tmp_path / "rows.csv", rows)
    (tmp_path / "taskset.toml").write_text(
        'name = "mine"\nfile = "rows.csv"\ngrader = "exact"\n'
        '[columns]\nquestion = "q"\nanswer = "a"\nid = "key"\n'
    )
    result = run(tmp_path, server=server, out=tmp_path / "r")
    assert result.exit_code == 0, result.output
    assert verdicts(tmp_path / "r") == RIGHT


class Picked(loopbench.TaskBase):
    expected: dict


class PickedGrader(loopbench.Grader[Picked]):
    async def grade(self, task, answer):
        said = answer_text(answer).value or ""
        return loopbench.Grade(said == task.expected["answer"], f"said {said!r}")


def picked(target, extras):
    """A letter, as the option it names."""
    if not isinstance(target, str) or len(target) != 1:
        raise ValueError("expected one letter")
    return {"answer": extras["choices"][ord(target) - ord("A")], "choices": extras["choices"]}


@pytest.fixture
def picked_grader(registries):
    details = loopbench.GraderDetails(from_target=picked)
    register = loopbench.register_grader("picked", Picked, "the option", details)
    register(lambda setup: PickedGrader())


def test_a_choices_column_reaches_the_grader_as_a_list(picked_grader, server, tmp_path):
    rows = [
        {"question": "Capital of France?", "answer": "B", "choices": "Lyon|Paris"},
        {"question": "Capital of Japan?", "answer": "A", "choices": '["Tokyo", "Kyoto"]'},
    ]
    data = write_csv(tmp_path / "mc.csv", rows)
    result = run(
        data, "--grader", "picked", "--choices", "choices", server=server, out=tmp_path / "r"
    )
    assert result.exit_code == 0, result.output
    assert verdicts(tmp_path / "r") == {"1": True, "2": False}
    assert load_taskset(data, "picked", {"choices": "choices"}).tasks[1].expected == {
        "answer": "Tokyo",
        "choices": ["Tokyo", "Kyoto"],
    }


MALFORMED = [
    ("missing column", [{"id": "a", "query": "q?", "answer": "1"}], [], ":2: column 'question'"),
    ("empty question", [{"id": "a", "question": " ", "answer": "1"}], [], ":2: column 'question'"),
    (
        "duplicate id",
        [
            {"id": "a", "question": "q?", "answer": "1"},
            {"id": "a", "question": "r?", "answer": "2"},
        ],
        [],
        ":3: column 'id'",
    ),
    (
        "choices not a list",
        [{"id": "a", "question": "q?", "answer": "A", "choices": "[1, 2"}],
        ["--choices", "choices"],
        ":2: column 'choices'",
    ),
    (
        "bad target",
        [{"id": "a", "question": "q?", "answer": "{not json"}],
        [],
        ":2: column 'answer'",
    ),
]


@pytest.mark.parametrize(("why", "rows", "flags", "said"), MALFORMED, ids=[m[0] for m in MALFORMED])
def test_a_malformed_row_is_refused_in_one_line_before_any_request(
    why, rows, flags, said, picked_grader, server, tmp_path
):
    fields = list(dict.fromkeys(k for row in rows for k in row))
    data = write_csv(tmp_path / "bad.csv", rows, fields)
    grader = "picked" if flags else "exact"
    result = run(data, "--grader", grader, *flags, server=server, out=tmp_path / "r")
    assert result.exit_code == 2, result.output
    assert result.output.count("\n") == 1 and f"{data}{said}" in result.output
    assert server.served.requests == 0 and not (tmp_path / "r").exists()


def test_a_malformed_parquet_row_is_named_by_its_index(server, tmp_path):
    rows = [
        {"id": "a", "question": "q?", "answer": "1"},
        {"id": "b", "question": "", "answer": "2"},
    ]
    data = write_parquet(tmp_path / "bad.parquet", rows)
    result = run(data, "--grader", "exact", server=server, out=tmp_path / "r")
    assert result.exit_code == 2 and server.served.requests == 0
    assert f"{data}: row index 1: column 'question': empty" in result.output


@pytest.mark.parametrize(
    ("spec", "said"),
    [("nope", "no grader named 'nope'"), ("asserts:strict=1", "takes no options")],
)
def test_an_unknown_grader_or_option_is_refused_in_one_line(spec, said, server, tmp_path):
    (tmp_path / "t.yaml").write_text("- vars: {q: hi}\n  assert: [{type: contains, value: hi}]\n")
    result = run(tmp_path / "t.yaml", "--grader", spec, server=server, out=tmp_path / "r")
    assert result.exit_code == 2 and result.output.count("\n") == 1 and said in result.output
    assert server.served.requests == 0


def test_a_grader_without_from_target_is_refused_for_a_data_file(server, tmp_path):
    data = write_csv(tmp_path / "d.csv", ROWS)
    result = run(data, "--grader", "code_tests", server=server, out=tmp_path / "r")
    assert result.exit_code == 2 and result.output.count("\n") == 1
    assert "code_tests" in result.output and server.served.requests == 0


def test_tasks_list_names_every_set_with_its_tasks_tools_and_grader(tmp_path):
    data = tmp_path / "tests.yaml"
    data.write_text(PROMPTFOO)
    listed = CliRunner().invoke(main, ["tasks", "list", "--tasks", str(data), "--format", "json"])
    assert listed.exit_code == 0, listed.output
    sets = json.loads(listed.output)
    assert all(set(s) >= {"name", "tasks", "tools", "grader", "mapping"} for s in sets)
    depot = next(s for s in sets if s["name"] == "depot")
    shipped = load_taskset("depot")  # what depot holds is its own business: listed as it is
    tools = list(shipped.tools)
    assert depot == {
        "name": "depot",
        "tasks": len(shipped.tasks),
        "tools": tools,
        "grader": "exact",
        "mapping": None,
    }
    mapping = "promptfoo"
    assert sets[-1] == {
        "name": str(data),
        "tasks": 3,
        "tools": [],
        "grader": "asserts",
        "mapping": mapping,
    }
    text = CliRunner().invoke(main, ["tasks", "list", "--tasks", str(data)]).output
    assert "depot" in text and ", ".join(tools) in text and "asserts" in text


def test_tasks_list_refuses_a_given_set_that_does_not_load(tmp_path):
    result = CliRunner().invoke(main, ["tasks", "list", "--tasks", str(tmp_path / "no.csv")])
    assert result.exit_code == 2 and "no.csv: no such file" in result.output


def test_an_experiment_file_names_a_data_file_its_columns_and_grader(server, tmp_path):
    rows = [{"prompt": r["question"], "gold": r["answer"], "key": r["id"]} for r in ROWS]
    write_csv(tmp_path / "rows.csv", rows)
    (tmp_path / "exp.toml").write_text(
        'tasks = "rows.csv"\narms = ["direct", "cot", "self_consistency:samples=3"]\n'
        'grader = "exact"\n[columns]\nquestion = "prompt"\nanswer = "gold"\nid = "key"\n'
    )
    args = ["run", "--experiment", str(tmp_path / "exp.toml"), "--quiet", "--out"]
    args += [str(tmp_path / "r"), "--base-url", server.base_url, "--model", "fake"]
    result = CliRunner().invoke(main, args, env={"LOOPBENCH_API_KEY": "k"})
    assert result.exit_code == 0, result.output
    assert verdicts(tmp_path / "r") == RIGHT


def test_grader_reads_a_folder_sets_tasks_with_its_own_task_model(tmp_path):
    (tmp_path / "taskset.toml").write_text('name = "t"\n')
    line = {"id": "a", "question": "q?", "expected": [{"type": "contains", "value": "x"}]}
    write_jsonl(tmp_path / "tasks.jsonl", [line])
    taskset = load_taskset(tmp_path, "asserts")
    assert taskset.grader == "asserts" and taskset.tasks[0].expected[0].value == "x"
    with pytest.raises(TaskSetError, match=r"tasks.jsonl:1: field 'expected'"):
        load_taskset(tmp_path)  # exact's task model does not read it


def test_a_choices_column_makes_a_multiple_choice_set_whose_options_the_model_is_shown(
    tmp_path,
):
    data = write_csv(
        tmp_path / "quiz.csv",
        [{"id": "fr", "question": "Capital of France?", "answer": "B", "choices": "Lyon|Paris"}],
    )
    taskset = load_taskset(data)
    assert taskset.grader == "choice"
    assert taskset.tasks[0].question == "Capital of France?\n\nA) Lyon\nB) Paris"


def test_self_consistency_on_a_choice_set_votes_on_the_option_chosen(tmp_path):
    # Three samples name B twice, once by its letter and once by its text, and A once: the
    # vote is B's. As texts all three differ, and a vote on texts would not say B.
    said = iter(["Answer: A", "Answer: Paris", "Answer: (B)"])
    data = write_csv(
        tmp_path / "quiz.csv",
        [{"id": "fr", "question": "Capital of France?", "answer": "B", "choices": "Lyon|Paris"}],
    )
    with FakeServer(lambda body: Reply(next(said))) as srv:
        args = ["run", "--tasks", str(data), "--quiet", "--arm", "self_consistency:samples=3"]
        args += ["--base-url", srv.base_url, "--model", "fake", "--out", str(tmp_path / "r")]
        result = CliRunner().invoke(main, args, env={"LOOPBENCH_API_KEY": "k"})
    assert result.exit_code == 0, result.output
    [record] = read_records(tmp_path / "r")
    assert record.correct is True
    assert answer_text(record.answer or "").value in {"Paris", "(B)"}


@pytest.mark.parametrize(
    "replies",
    [
        ["Answer: B", "Answer: A or C", "Answer: I am not sure"],
        ["Answer: A or C", "Answer: B"],
    ],
)
def test_samples_that_choose_no_option_do_not_outvote_one_that_does(replies, tmp_path):
    said = iter(replies)
    data = write_csv(
        tmp_path / "quiz.csv",
        [{"id": "q", "question": "Which?", "answer": "B", "choices": "Paris|Lyon|Nice"}],
    )
    with FakeServer(lambda body: Reply(next(said))) as srv:
        samples = f"self_consistency:samples={len(replies)}"
        args = ["run", "--tasks", str(data), "--quiet", "--arm", samples]
        args += ["--base-url", srv.base_url, "--model", "fake", "--out", str(tmp_path / "r")]
        result = CliRunner().invoke(main, args, env={"LOOPBENCH_API_KEY": "k"})
    assert result.exit_code == 0, result.output
    [record] = read_records(tmp_path / "r")
    assert (record.answer, record.correct) == ("B", True)


@pytest.mark.parametrize("numbers", ["4 9 10", "1 2 3 4 5", "0 4 9 10"])
def test_a_game24_row_that_is_not_four_positive_numbers_is_refused(numbers, server, tmp_path):
    data = write_csv(tmp_path / "g.csv", [{"id": "a", "question": "q?", "answer": numbers}])
    result = run(data, "--grader", "game24", server=server, out=tmp_path / "r")
    assert result.exit_code == 2 and result.output.count("\n") == 1
    assert f"{data}:2: column 'answer'" in result.output and server.served.requests == 0


def write_parquet_cells(path, answer_sql):
    with duckdb.connect() as db:
        db.execute(f"COPY (SELECT 'a' id, 'q?' question, {answer_sql} answer) TO '{path}'")
    return path


@pytest.mark.parametrize(
    ("cell", "gold"),
    [
        ("3.5::DECIMAL(5,2)", "3.5"),
        ("DATE '2024-03-01'", "2024-03-01"),
        ("TIMESTAMP '2024-03-01 10:30:00'", "2024-03-01T10:30:00"),
        ("1889", "1889"),
    ],
)
def test_a_parquet_decimal_date_or_integer_answer_is_the_gold_answer_as_text(cell, gold, tmp_path):
    data = write_parquet_cells(tmp_path / "x.parquet", cell)
    assert load_taskset(data).tasks[0].expected.answers == [gold]


def test_an_integer_answer_column_under_em_matches_its_text(server, tmp_path):
    data = write_jsonl(tmp_path / "sum.jsonl", [{"id": "sum", "question": "sum?", "answer": 84}])
    result = run(data, server=server, out=tmp_path / "r")
    assert result.exit_code == 0, result.output
    assert verdicts(tmp_path / "r") == {"sum": True}


def test_a_parquet_bytes_cell_is_refused_in_one_line_before_any_request(server, tmp_path):
    data = write_parquet_cells(tmp_path / "b.parquet", "'ab'::BLOB")
    result = run(data, server=server, out=tmp_path / "r")
    assert result.exit_code == 2 and result.output.count("\n") == 1
    assert f"{data}: row index 0: column 'answer': a bytes value" in result.output
    assert server.served.requests == 0


@pytest.mark.parametrize("kind", ["equals", "not-equals", "contains"])
def test_a_promptfoo_assert_without_its_value_is_refused(kind, server, tmp_path):
    data = tmp_path / "tests.yaml"
    test = "- vars: {{q: hi}}\n  assert: [{{type: {kind}{value}}}]\n"
    data.write_text(test.format(kind=kind, value=", value: hi") + test.format(kind=kind, value=""))
    result = run(data, server=server, out=tmp_path / "r")
    assert result.exit_code == 2 and result.output.count("\n") == 1
    assert f"{data}: item 2" in result.output and kind in result.output
    assert server.served.requests == 0
