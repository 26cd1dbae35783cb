"""Task files written to be misread or to exhaust the reader: each refused in one line
naming the file, the row and the field, exit 2, in bounded time; a data file read with a
limit stops at its first rows, and the folder it runs into is tied to those."""

import json
import time

import duckdb
import pytest
from click.testing import CliRunner

import loopbench
import loopbench.harness.files
import loopbench.tasks.data_files
from loopbench.harness.cli.main import main
from loopbench.harness.results.identity import describe_change
from loopbench.harness.structured import MAX_ALIASED, StructureError, load_json, load_yaml
from loopbench.tasks.loading import load_taskset
from loopbench.tasks.taskset import TaskSetError

ROW = {"id": "a", "question": "Capital of France?", "answer": "Paris"}


def listed(path):
    """``tasks list --tasks PATH``: its exit code and its output."""
    result = CliRunner().invoke(main, ["tasks", "list", "--tasks", str(path)])
    return result.exit_code, result.output


def refused(path, *said):
    code, output = listed(path)
    assert code == 2 and output.count("\n") == 1 and output.startswith("Error:"), output
    assert str(path) in output and all(s in output for s in said), output
    return output


def laughs(levels=9, width=10):
    lines = ["- &a0 [" + ", ".join(["lol"] * width) + "]"]
    lines += [f"- &a{n} [" + ", ".join([f"*a{n - 1}"] * width) + "]" for n in range(1, levels + 1)]
    return "\n".join([*lines, f"- vars: {{question: *a{levels}}}\n  assert: []"]) + "\n"


def test_yaml_aliases_that_multiply_are_refused_at_once_naming_the_line(tmp_path):
    data = tmp_path / "laughs.yaml"
    data.write_text(laughs())
    start = time.monotonic()
    refused(data, f"{data}:", "aliases standing for more than")
    assert time.monotonic() - start < 30  # a hang, not a speed: it is refused at once


def test_yaml_aliases_within_the_bound_are_read_and_a_merge_key_may_be_overridden():
    text = "- &base {type: equals, value: Paris}\n- *base\n- {<<: *base, value: Rome}\n"
    assert load_yaml(text) == [{"type": "equals", "value": v} for v in ("Paris", "Paris", "Rome")]
    many = "- &x [1, 2]\n" + "- *x\n" * (MAX_ALIASED // 3 - 1)
    assert len(load_yaml(many)) == MAX_ALIASED // 3
    with pytest.raises(StructureError, match="aliases standing for more than"):
        load_yaml(many + "- *x\n" * 2)


@pytest.mark.parametrize(
    ("text", "line", "said"),
    [
        ("- a: 1\n  a: 2\n", 2, "key 'a' given twice"),
        ("- &a [*a]\n", 1, "alias *a inside its own anchor"),
        ("- " + "[" * 101 + "]" * 101 + "\n", 1, "nested more than 100 levels"),
        ("- " + "[" * 100_000 + "\n", 1, "nesting depth"),
    ],
    ids=["duplicate key", "alias in its anchor", "101 deep", "100000 deep"],
)
def test_a_yaml_file_misread_or_too_deep_is_refused_naming_its_line(text, line, said, tmp_path):
    data = tmp_path / "t.yaml"
    data.write_text(text)
    refused(data, f"{data}:{line}:", said)


@pytest.mark.parametrize(
    ("value", "said"),
    [(".nan", "nan; expected a finite number"), ("-.inf", "-inf; expected a finite number")],
)
def test_a_yaml_answer_that_is_not_a_finite_number_is_refused(value, said, tmp_path):
    data = tmp_path / "t.yaml"
    data.write_text(f"- question: q?\n  answer: {value}\n")
    refused(data, f"{data}: item 1: column 'answer'", said)


DEEP = "[" * 100_000 + "]" * 100_000


@pytest.mark.parametrize(
    ("name", "text", "said"),
    [
        (
            "t.jsonl",
            '{"id": "a", "question": "q?", "answer": "1", "answer": "2"}\n',
            ":1: key 'answer'",
        ),
        ("t.jsonl", '{"id": "a", "question": "q?", "answer": NaN}\n', ":1: field 'answer': NaN"),
        ("t.jsonl", '{"id": "a", "question": "q?", "answer": [1, -Infinity]}\n', "'answer.1'"),
        ("t.jsonl", '{"id": "a", "question": "q?", "answer": 1e400}\n', "field 'answer': 1e400"),
        ("t.jsonl", '{"id": "a", "question": "q?", "answer": ' + DEEP + "}\n", ":1: lists"),
        ("t.json", '[{"id": "a", "question": "q?", "answer": ' + DEEP + "}]", ": lists and"),
        ("t.json", '[{"id": "a", "question": "q?", "id": "b", "answer": "1"}]', "key 'id'"),
        (
            "t.csv",
            f'id,question,answer,choices\na,q?,A,"{"[" * 100_000}"\n',
            ":2: column 'choices'",
        ),
        ("t.csv", 'id,question,answer,choices\na,q?,A,"[""x"", NaN]"\n', "'choices': field '1'"),
        ("t.csv", 'id,question,answer\na,q?,"{""n"": 1, ""n"": 2}"\n', ":2: column 'answer': key"),
        ("t.csv", f'id,question,answer\na,q?,"{"[" * 100_000}"\n', ":2: column 'answer': lists"),
    ],
    ids=[
        "jsonl duplicate key",
        "jsonl NaN",
        "jsonl -Infinity in a list",
        "jsonl 1e400",
        "jsonl 100000 deep",
        "json 100000 deep",
        "json duplicate key",
        "csv choices 100000 deep",
        "csv choices NaN",
        "csv answer duplicate key",
        "csv answer 100000 deep",
    ],
)
def test_a_json_value_misread_or_too_deep_is_refused_in_one_line(name, text, said, tmp_path):
    data = tmp_path / name
    data.write_text(text)
    refused(data, said)


def test_json_reading_refuses_what_would_be_misread_and_reads_the_rest():
    assert load_json('{"a": [1, 2.5, {"b": null}]}') == {"a": [1, 2.5, {"b": None}]}
    assert load_json("[" * 100 + "]" * 100)
    for text in ("[" * 101 + "]" * 101, '{"a": 1, "a": 1}', "[NaN]", "Infinity", "[1e999]"):
        with pytest.raises(StructureError):
            load_json(text)
    with pytest.raises(StructureError) as caught:
        load_json("{nope")
    assert caught.value.invalid and caught.value.line == 1


def test_a_folder_sets_tasks_jsonl_refuses_a_duplicate_key_nan_and_deep_nesting(tmp_path):
    (tmp_path / "taskset.toml").write_text('name = "t"\n')
    good = '{"id": "a", "question": "q", "expected": {"numbers": [1]}}\n'
    for line, said in [
        ('{"id": "b", "question": "q", "question": "r", "expected": {"numbers": [1]}}', "key"),
        ('{"id": "b", "question": "q", "expected": {"numbers": [NaN]}}', "numbers.0': NaN"),
        ('{"id": "b", "question": "q", "expected": ' + DEEP + "}", "nested more than 100"),
    ]:
        (tmp_path / "tasks.jsonl").write_text(good + line + "\n")
        with pytest.raises(TaskSetError, match=rf"tasks.jsonl:2: .*{said}"):
            load_taskset(tmp_path)


def test_a_csv_header_naming_a_column_twice_is_refused(tmp_path):
    data = tmp_path / "t.csv"
    data.write_text("id,question,answer,answer\na,q?,Paris,Rome\n")
    refused(data, f"{data}:1: column 'answer' is named twice", "columns 3 and 4")


def test_a_csv_row_with_more_cells_than_the_header_is_refused_and_empty_ones_are_read(tmp_path):
    data = tmp_path / "t.csv"
    data.write_text("id,question,answer\na,What is 1,000 + 1?,1001\n")
    refused(data, f"{data}:2: holds 4 cells, but the header names 3 columns")
    data.write_text("id,question,answer\na,What is 2 + 2?,4,, \n")
    assert listed(data)[0] == 0


def test_a_csv_line_of_too_many_cells_is_refused_before_they_are_made(tmp_path):
    data = tmp_path / "t.csv"
    data.write_text("id,question,answer\na,q,4" + "," * loopbench.tasks.data_files.MAX_CELLS + "\n")
    refused(data, f"{data}:2: holds more than")


def test_a_csv_with_two_byte_order_marks_is_refused_and_with_one_is_read(tmp_path):
    data = tmp_path / "t.csv"
    data.write_text("\ufeff\ufeffid,question,answer\na,q?,Paris\n", encoding="utf-8")
    refused(data, f"{data}:1: column", "byte order mark")
    data.write_text("\ufeffid,question,answer\na,q?,Paris\n", encoding="utf-8")
    assert [t.id for t in load_taskset(data).tasks] == ["a"]


def test_a_csv_byte_that_is_not_utf8_is_named_by_its_line(tmp_path):
    data = tmp_path / "t.csv"
    data.write_bytes(b"id,question,answer\n" + b"a,q?,Paris\n" * 5000 + b"b,\xff?,Rome\n")
    refused(data, f"{data}:5002: byte 0xff is not UTF-8")


def test_a_lone_surrogate_is_refused_in_an_id_and_replaced_in_a_question(tmp_path):
    data = tmp_path / "t.jsonl"
    data.write_text('{"id": "a\\ud800", "question": "q?", "answer": "1"}\n')
    refused(data, f"{data}:1: column 'id'", "lone surrogate")
    data.write_text(
        '{"id": "a", "question": "q\\udc00?", "answer": "1", "choices": "x|y\\ud800"}\n'
    )
    [task] = load_taskset(data, "em").tasks
    assert task.question == "q\ufffd?"
    folder = tmp_path / "set"
    folder.mkdir()
    (folder / "taskset.toml").write_text('name = "t"\n')
    line = {"id": "a", "question": "q\ud800?", "expected": {"numbers": [1]}}
    (folder / "tasks.jsonl").write_text(json.dumps(line) + "\n")
    assert load_taskset(folder).tasks[0].question == "q\ufffd?"
    (folder / "tasks.jsonl").write_text(json.dumps({**line, "id": "\udfff"}) + "\n")
    with pytest.raises(TaskSetError, match=r"tasks.jsonl:1: field 'id': .*lone surrogate"):
        load_taskset(folder)


def write_rows(path, rows):
    """Rows as the file's format writes them: CSV, JSONL or (through JSONL) Parquet."""
    if path.suffix == ".csv":
        path.write_text("id,question,answer\n" + "".join(f"{r[0]},{r[1]},{r[2]}\n" for r in rows))
        return path
    jsonl = path.with_suffix(".jsonl")
    keys = ("id", "question", "answer")
    jsonl.write_text("".join(json.dumps(dict(zip(keys, r, strict=True))) + "\n" for r in rows))
    if path.suffix == ".parquet":
        with duckdb.connect() as db:
            db.execute(f"COPY (SELECT * FROM read_json_auto('{jsonl}')) TO '{path}'")
    return path


@pytest.mark.parametrize(
    ("suffix", "unreadable"),
    [(".csv", b"d,q4?," + b"x" * 200_000 + b"\n"), (".jsonl", b"{not json\n")],
)
def test_a_limit_reads_only_the_first_rows_of_a_data_file(suffix, unreadable, tmp_path):
    # The fourth row cannot be read (a CSV field over the csv module's limit, text that is
    # not JSON): with a limit of 2, the reader reads a third to know there are more, and
    # stops there.
    rows = [("a", "q1?", "Paris"), ("b", "q2?", "Rome"), ("c", "q3?", "Oslo")]
    data = write_rows(tmp_path / f"t{suffix}", rows)
    data.write_bytes(data.read_bytes() + unreadable)
    first = load_taskset(data, limit=2)
    assert [t.id for t in first.tasks] == ["a", "b"] and first.more
    assert first.fingerprint()["first"] == 2
    with pytest.raises(TaskSetError, match=rf"t{suffix}:[45]: "):
        load_taskset(data)


def test_a_limit_is_asked_of_duckdb_so_rows_past_it_are_never_fetched(monkeypatch, tmp_path):
    # Past the first rows, their text would be over the cap: fetched, they would be refused.
    monkeypatch.setattr(loopbench.tasks.data_files, "MAX_INPUT_BYTES", 10_000)
    data = tmp_path / "t.parquet"
    with duckdb.connect() as db:
        db.execute(
            "COPY (SELECT 't' || i AS id, 'q' || repeat('x', 1000) AS question, 'P' AS answer "
            f"FROM range(20) r(i)) TO '{data}'"
        )
    first = load_taskset(data, limit=2)
    assert [t.id for t in first.tasks] == ["t0", "t1"] and first.more
    refused(data, "cells hold more than 0 MiB of text")


def test_a_parquet_file_of_too_many_rows_is_refused_by_its_count_before_a_row_is_fetched(
    monkeypatch, tmp_path
):
    # Fetched, the first four rows' text would be over the cap, and refused as that.
    monkeypatch.setattr(loopbench.tasks.data_files, "MAX_INPUT_BYTES", 3_000)
    monkeypatch.setattr(loopbench.tasks.data_files, "MAX_ROWS", 3)
    data = tmp_path / "t.parquet"
    with duckdb.connect() as db:
        db.execute(
            "COPY (SELECT 't' || i AS id, 'q' || repeat('x', 1000) AS question, 'P' AS answer "
            f"FROM range(20) r(i)) TO '{data}'"
        )
    refused(data, "holds more than 3 rows")


@pytest.mark.parametrize("suffix", [".csv", ".jsonl", ".parquet"])
def test_a_file_read_whole_within_its_limit_is_not_marked_as_read_in_part(suffix, tmp_path):
    data = write_rows(tmp_path / f"t{suffix}", [("a", "q1?", "Paris"), ("b", "q2?", "Rome")])
    whole = load_taskset(data, limit=2)
    assert len(whole.tasks) == 2 and not whole.more and "first" not in whole.fingerprint()


def test_a_parquet_cell_nested_too_deep_is_refused(tmp_path):
    data = tmp_path / "t.parquet"
    deep = "[" * 101 + "1" + "]" * 101
    with duckdb.connect() as db:
        db.execute(f"COPY (SELECT 'a' id, 'q?' question, {deep} answer) TO '{data}'")
    refused(data, ": row index 0: column 'answer': lists and objects nested more than 100")


class Scored(loopbench.TaskBase):
    expected: float


@pytest.fixture
def float_grader(registries):
    details = loopbench.GraderDetails(from_target=lambda target, extras: float(target))
    register = loopbench.register_grader("scored", Scored, "a float", details)
    register(lambda setup: None)


def test_an_answer_a_grader_reads_as_nan_is_refused(float_grader, tmp_path):
    data = tmp_path / "t.csv"
    data.write_text("id,question,answer\na,q?,nan\n")
    with pytest.raises(TaskSetError, match=r"t.csv:2: column 'answer': nan; expected a finite"):
        load_taskset(data, "scored")


@pytest.mark.parametrize("suffix", [".csv", ".jsonl", ".parquet", ".json"])
def test_a_file_of_more_rows_than_are_read_at_once_is_refused_unless_limited(
    suffix, monkeypatch, tmp_path
):
    monkeypatch.setattr(loopbench.tasks.data_files, "MAX_ROWS", 3)
    rows = [(f"t{i}", f"q{i}?", "Paris") for i in range(4)]
    if suffix == ".json":
        data = tmp_path / "t.json"
        data.write_text(
            json.dumps([dict(zip(("id", "question", "answer"), r, strict=True)) for r in rows])
        )
    else:
        data = write_rows(tmp_path / f"t{suffix}", rows)
    refused(data, "holds more than 3 rows", "--limit N")
    assert len(load_taskset(data, limit=2).tasks) == 2


def test_a_parquet_file_over_the_input_cap_is_refused_before_duckdb_reads_it(tmp_path):
    data = tmp_path / "big.parquet"
    with data.open("wb") as out:
        out.truncate(loopbench.harness.files.MAX_INPUT_BYTES + 1)  # sparse: nothing written
    refused(data, "is larger than 256 MiB")


def test_a_jsonl_line_or_json_file_over_its_cap_is_refused(monkeypatch, tmp_path):
    monkeypatch.setattr(loopbench.tasks.data_files, "MAX_LINE_BYTES", 100)
    data = tmp_path / "t.jsonl"
    data.write_text(json.dumps({**ROW, "question": "x" * 200}) + "\n")
    refused(data, f"{data}:1: a line over")
    monkeypatch.setitem(loopbench.tasks.data_files.MAX_DOCUMENT_BYTES, ".json", 100)
    data = tmp_path / "t.json"
    data.write_text(json.dumps([{**ROW, "question": "x" * 200}]))
    refused(data, "write it as JSONL")


def test_a_folder_run_with_a_limit_goes_on_without_one_and_sees_a_changed_task():
    first = {"tasks": {"a": "1"}, "tools": "t", "first": 1}
    whole = {"tasks": {"a": "1", "b": "2"}, "tools": "t"}
    assert describe_change(first, whole) == [] and describe_change(whole, first) == []
    assert describe_change(first, {**whole, "tasks": {"a": "9", "b": "2"}}) == [
        "tasks changed since: a"
    ]
    assert describe_change(whole, {"tasks": {"a": "1"}, "tools": "t"}) == ["tasks removed since: b"]


def test_a_run_with_a_limit_then_without_adds_the_rest_to_the_folder(tmp_path):
    rows = [("a", "q1?", "Paris"), ("b", "q2?", "Rome"), ("c", "q3?", "Oslo")]
    data = write_rows(tmp_path / "t.csv", rows)
    out = tmp_path / "r"
    for flags in (["--limit", "1"], [], ["--limit", "2"]):
        args = ["run", "--tasks", str(data), "--arm", "direct", "--model", "fake", "--quiet"]
        args += ["--base-url", "http://127.0.0.1:9", "--max-retries", "0", "--out", str(out)]
        result = CliRunner().invoke(main, [*args, *flags], env={"LOOPBENCH_API_KEY": "k"})
        assert result.exit_code == 3, result.output  # every run failed to connect: none graded
    meta = json.loads((out / "experiment.json").read_text())
    assert set(meta["fingerprint"]["tasks"]) == {"a", "b", "c"}
    assert "first" not in meta["fingerprint"]
    assert len((out / "runs.jsonl").read_text().splitlines()) == 3


def test_a_lone_surrogate_in_an_encyclopedia_entry_is_replaced(tmp_path):
    (tmp_path / "taskset.toml").write_text('name = "t"\ntools = ["lookup"]\n')
    line = {"id": "a", "question": "q", "expected": {"numbers": [1]}}
    (tmp_path / "tasks.jsonl").write_text(json.dumps(line) + "\n")
    (tmp_path / "encyclopedia.json").write_text('{"entries": {"Oslo": "a city \\ud800"}}')
    assert load_taskset(tmp_path).encyclopedia.entries == {"Oslo": "a city \ufffd"}
