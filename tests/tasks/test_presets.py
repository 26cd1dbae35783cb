"""Datasets as they are published (GSM8K, MMLU, ARC, BoolQ, SQuAD, HellaSwag): each shape
known by its columns or named with --preset, run end to end against a fake endpoint that
answers in the styles models write, every grade right and the options shown to the model;
a shape no preset or column maps refused in one line naming the flags that map one."""

import json

import pytest
from click.testing import CliRunner

from loopbench.graders.label import LabelExpected
from loopbench.harness.cli.main import main
from loopbench.harness.fakes.fake_server import FakeServer, Reply
from loopbench.harness.results.reading import read_records
from loopbench.tasks.loading import load_taskset
from loopbench.tasks.taskset import TaskSetError

ARMS = ["direct"]

#: What the fake model answers, by a word of the question (the first found).
REPLIES = {
    "Janet": "16 - 3 - 4 = 9 eggs are left, and 9 * 2 = 18.\n#### 18",
    "Tobias": "He has 3 + 4 = 7.\n#### 7",
    "capital of France": "Lyon is a large city, but the capital is Paris.\nAnswer: B) Paris",
    "largest planet": "Mars and Earth are small.\nAnswer: B",
    "plants take in": "Plants use carbon dioxide in photosynthesis.\nAnswer: B) carbon dioxide",
    "magnet attract": "Answer: (A)",
    "capital of france": "Paris is named as the capital.\nAnswer: yes",
    "capital of germany": "The passage says Berlin is.\nAnswer: true",
    "Which team won": "The answer is Denver Broncos",
    "How many points": "Answer: 10",
    "roof": "The man is on a roof, so he pulls up roofing.\nAnswer: D",
    "lawn": "Answer: A",
}


def responder(body):
    question = next(m["content"] for m in reversed(body["messages"]) if m["role"] == "user")
    said = next((reply for word, reply in REPLIES.items() if word in question), "no idea")
    return Reply(said)


GSM8K = [
    {
        "question": "Janet has 16 eggs. She eats 3 and bakes with 4, and sells the rest at $2 "
        "each. How many dollars does she make?",
        "answer": "She has 16 - 3 - 4 = <<16-3-4=9>>9 eggs.\nShe makes 9 * 2 = $<<9*2=18>>18."
        "\n#### 18",
    },
    {"question": "Tobias has 3 apples and buys 5. How many?", "answer": "3 + 5 = 8\n#### 8"},
]
MMLU_ROWS = [
    ["What is the capital of France?", "Lyon", "Paris", "Nice", "Lille", "B"],
    ["Which is the largest planet?", "Mars", "Earth", "Jupiter", "Venus", "C"],
]
MMLU_HF = [
    {"question": row[0], "subject": "misc", "choices": row[1:5], "answer": "ABCD".index(row[5])}
    for row in MMLU_ROWS
]
ARC = [
    {
        "id": "Mercury_7",
        "question": "Which gas do plants take in?",
        "choices": {"text": ["oxygen", "carbon dioxide", "helium", "neon"], "label": list("ABCD")},
        "answerKey": "B",
    },
    {
        "id": "NYSEDREGENTS_3",
        "question": "What does a magnet attract?",
        "choices": {"text": ["iron", "wood", "glass"], "label": ["1", "2", "3"]},
        "answerKey": "1",
    },
]
BOOLQ = [
    {
        "question": "is paris the capital of france",
        "answer": True,
        "passage": "Paris is the capital and most populous city of France.",
    },
    {
        "question": "is munich the capital of germany",
        "answer": False,
        "passage": "Berlin is the capital of Germany; Munich is the capital of Bavaria.",
    },
]
CONTEXT = "The Denver Broncos defeated the Carolina Panthers 24-10 to win Super Bowl 50."
SQUAD_HF = [
    {
        "id": "56be4db0acb8001400a502ec",
        "title": "Super_Bowl_50",
        "context": CONTEXT,
        "question": "Which team won Super Bowl 50?",
        "answers": {"text": ["Denver Broncos", "Denver Broncos"], "answer_start": [4, 4]},
    },
    {
        "id": "56be4db0acb8001400a502ed",
        "title": "Super_Bowl_50",
        "context": CONTEXT,
        "question": "How many points did the Panthers score?",
        "answers": {"text": ["10"], "answer_start": [58]},
    },
]
SQUAD_V11 = {
    "version": "1.1",
    "data": [
        {
            "title": "Super_Bowl_50",
            "paragraphs": [
                {
                    "context": CONTEXT,
                    "qas": [
                        {
                            "id": row["id"],
                            "question": row["question"],
                            "answers": [
                                {"text": t, "answer_start": s}
                                for t, s in zip(
                                    row["answers"]["text"],
                                    row["answers"]["answer_start"],
                                    strict=True,
                                )
                            ],
                        }
                        for row in SQUAD_HF
                    ],
                }
            ],
        }
    ],
}
ENDINGS = [
    "is using wrap to wrap a pair of skis.",
    "is ripping level tiles off.",
    "is holding a rubik's cube.",
    "starts pulling up roofing on a roof.",
]
HELLASWAG = [
    {
        "ind": 4,
        "activity_label": "Roof shingle removal",
        "ctx_a": "A man is sitting on a roof.",
        "ctx_b": "he",
        "ctx": "A man is sitting on a roof. he",
        "endings": ENDINGS,
        "label": "3",
    },
    {
        "ind": 9,
        "activity_label": "Mowing the lawn",
        "ctx_a": "A woman pushes a mower across the lawn.",
        "ctx_b": "she",
        "endings": ["turns it off.", "jumps into a pool.", "reads a book.", "flies away."],
        "label": 0,
    },
]


def write_jsonl(path, rows):
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    return path


def write_json(path, document):
    path.write_text(json.dumps(document))
    return path


def write_mmlu_csv(path, header):
    lines = ["question,A,B,C,D,answer"] if header else []
    lines += [",".join(f'"{cell}"' for cell in row) for row in MMLU_ROWS]
    path.write_text("\n".join(lines) + "\n")
    return path


#: Each shape: its file, the preset it is known as, its grader, the right grade of each
#: task (the model is wrong on some), and what each request must show the model.
SHAPES = {
    "gsm8k": (
        lambda d: write_jsonl(d / "gsm8k.jsonl", GSM8K),
        "gsm8k",
        "number",
        {"1": True, "2": False},
        ["Janet has 16 eggs"],
    ),
    "mmlu-csv": (
        lambda d: write_mmlu_csv(d / "mmlu.csv", header=True),
        "mmlu",
        "choice",
        {"1": True, "2": False},
        ["A) Lyon\nB) Paris\nC) Nice\nD) Lille", "A) Mars\nB) Earth\nC) Jupiter\nD) Venus"],
    ),
    "mmlu-csv-headerless": (
        lambda d: write_mmlu_csv(d / "test.csv", header=False),
        "mmlu",
        "choice",
        {"1": True, "2": False},
        ["A) Lyon\nB) Paris\nC) Nice\nD) Lille", "A) Mars\nB) Earth\nC) Jupiter\nD) Venus"],
    ),
    "mmlu-hf": (
        lambda d: write_jsonl(d / "mmlu.jsonl", MMLU_HF),
        "mmlu",
        "choice",
        {"1": True, "2": False},
        ["A) Lyon\nB) Paris\nC) Nice\nD) Lille", "A) Mars\nB) Earth\nC) Jupiter\nD) Venus"],
    ),
    "arc": (
        lambda d: write_jsonl(d / "arc.jsonl", ARC),
        "arc",
        "choice",
        {"Mercury_7": True, "NYSEDREGENTS_3": True},
        ["A) oxygen\nB) carbon dioxide\nC) helium\nD) neon", "A) iron\nB) wood\nC) glass"],
    ),
    "boolq": (
        lambda d: write_jsonl(d / "boolq.jsonl", BOOLQ),
        "boolq",
        "label",
        {"1": True, "2": False},
        ["Paris is the capital and most populous", "Answer yes or no."],
    ),
    "squad-hf": (
        lambda d: write_jsonl(d / "squad.jsonl", SQUAD_HF),
        "squad",
        "f1",
        {"56be4db0acb8001400a502ec": True, "56be4db0acb8001400a502ed": True},
        [CONTEXT],
    ),
    "squad-v1.1": (
        lambda d: write_json(d / "dev-v1.1.json", SQUAD_V11),
        "squad",
        "f1",
        {"56be4db0acb8001400a502ec": True, "56be4db0acb8001400a502ed": True},
        [CONTEXT],
    ),
    "hellaswag": (
        lambda d: write_jsonl(d / "hellaswag.jsonl", HELLASWAG),
        "hellaswag",
        "choice",
        {"4": True, "9": True},
        ["A) is using wrap", "D) starts pulling up roofing", "Which ending", "A) turns it off."],
    ),
}


def run(tasks, *flags, server=None, out=None):
    args = ["run", "--tasks", str(tasks), "--quiet", *flags]
    args += [a for arm in ARMS for a in ("--arm", arm)]
    if server is not None:
        args += ["--base-url", server.base_url, "--model", "fake", "--out", str(out)]
    return CliRunner().invoke(main, args, env={"LOOPBENCH_API_KEY": "k"}, catch_exceptions=False)


def verdicts(out):
    by_task = {}
    for record in read_records(out):
        by_task.setdefault(record.task_id, set()).add(record.correct)
    return {task: verdicts.pop() for task, verdicts in by_task.items() if len(verdicts) == 1}


@pytest.fixture
def server():
    with FakeServer(responder) as srv:
        yield srv


def asked(server):
    """The text of every user message the model was sent."""
    return [
        m["content"] for b in server.served.bodies for m in b["messages"] if m["role"] == "user"
    ]


@pytest.mark.parametrize("named", [False, True], ids=["recognised", "--preset"])
@pytest.mark.parametrize("shape", SHAPES)
def test_a_published_dataset_runs_with_its_grades_right_and_its_options_shown(
    shape, named, server, tmp_path
):
    write, preset, grader, right, shown = SHAPES[shape]
    data = write(tmp_path)
    flags = ["--preset", preset] if named else []
    result = run(data, *flags, server=server, out=tmp_path / "r")
    assert result.exit_code == 0, result.output
    assert verdicts(tmp_path / "r") == right
    texts = asked(server)
    for part in shown:
        assert any(part in text for text in texts), (part, texts)
    listed = CliRunner().invoke(main, ["tasks", "list", "--tasks", str(data)])
    assert listed.output.splitlines()[-1].split()[1:4] == [str(len(right)), grader, preset]
    listed = CliRunner().invoke(main, ["tasks", "list", "--tasks", str(data), "--format", "json"])
    assert json.loads(listed.output)[-1] == {
        "name": str(data),
        "tasks": len(right),
        "tools": [],
        "grader": grader,
        "mapping": preset,
    }


def test_gsm8k_keeps_the_worked_solution_as_a_reference_never_as_the_gold(tmp_path):
    taskset = load_taskset(write_jsonl(tmp_path / "gsm8k.jsonl", GSM8K))
    first = taskset.tasks[0]
    assert first.expected.number == 18 and first.reference == GSM8K[0]["answer"]
    assert "####" not in first.question
    fingerprint = first.fingerprint
    assert first.model_copy(update={"reference": "other"}).fingerprint == fingerprint


@pytest.mark.parametrize(
    ("grader", "kind"), [("number", "NumberTask"), ("em", "EmTask"), ("exact", "Task")]
)
def test_a_gsm8k_file_under_another_grader_reads_the_number_after_its_marks(grader, kind, tmp_path):
    taskset = load_taskset(write_jsonl(tmp_path / "gsm8k.jsonl", GSM8K), grader)
    assert type(taskset.tasks[0]).__name__ == kind and taskset.mapping == "gsm8k"
    assert "18" in json.dumps(taskset.tasks[0].expected.model_dump())
    assert "eggs" not in json.dumps(taskset.tasks[0].expected.model_dump())


def test_squad_under_em_grades_every_gold_answer(server, tmp_path):
    data = write_jsonl(tmp_path / "squad.jsonl", SQUAD_HF)
    result = run(data, "--grader", "em", server=server, out=tmp_path / "r")
    assert result.exit_code == 0, result.output
    assert set(verdicts(tmp_path / "r").values()) == {True}
    assert load_taskset(data, "em").tasks[0].expected.answers == ["Denver Broncos"]


def test_mmlu_keeps_its_subject_as_the_slice(tmp_path):
    taskset = load_taskset(write_jsonl(tmp_path / "mmlu.jsonl", MMLU_HF))
    assert {task.slice for task in taskset.tasks} == {"misc"}
    assert len(taskset.only_slice("misc").tasks) == 2


def test_a_taskset_toml_or_an_experiment_file_names_the_preset(server, tmp_path):
    write_jsonl(tmp_path / "rows.jsonl", BOOLQ)
    (tmp_path / "taskset.toml").write_text('name = "b"\nfile = "rows.jsonl"\npreset = "boolq"\n')
    taskset = load_taskset(tmp_path)
    assert (taskset.grader, taskset.mapping) == ("label", "boolq")
    (tmp_path / "exp.toml").write_text(
        'tasks = "rows.jsonl"\narms = ["direct"]\npreset = "boolq"\n'
    )
    args = ["run", "--experiment", str(tmp_path / "exp.toml"), "--quiet", "--out"]
    args += [str(tmp_path / "r"), "--base-url", server.base_url, "--model", "fake"]
    result = CliRunner().invoke(main, args, env={"LOOPBENCH_API_KEY": "k"})
    assert result.exit_code == 0, result.output
    assert verdicts(tmp_path / "r") == {"1": True, "2": False}


def test_mapped_columns_read_a_recognised_shape_by_its_columns(tmp_path):
    data = write_jsonl(tmp_path / "gsm8k.jsonl", GSM8K)
    taskset = load_taskset(
        data, columns={"answer": "answer", "question": "question", "x": "answer"}
    )
    assert taskset.mapping == "columns" and taskset.grader == "em"


def refused(result, server, *said):
    assert result.exit_code == 2, result.output
    assert result.output.count("\n") == 1, result.output
    assert server.served.requests == 0
    for part in said:
        assert part in result.output, result.output


def test_a_shape_no_preset_or_column_maps_is_refused_naming_the_flags_that_map_it(server, tmp_path):
    data = write_jsonl(tmp_path / "odd.jsonl", [{"prompt": "Capital of France?", "gold": "Paris"}])
    result = run(data, server=server, out=tmp_path / "r")
    refused(result, server, "odd.jsonl:1: column 'question': missing", "--question", "--preset")
    assert "gsm8k" in result.output and "squad" in result.output


@pytest.mark.parametrize("kind", ["data file", "folder"])
def test_an_unknown_preset_is_refused_listing_the_known_ones(kind, server, tmp_path):
    data = write_jsonl(tmp_path / "gsm8k.jsonl", GSM8K) if kind == "data file" else "depot"
    result = run(data, "--preset", "gsm8", server=server, out=tmp_path / "r")
    refused(result, server, "--preset 'gsm8': no such preset; known: arc, boolq, gsm8k")
    listed = CliRunner().invoke(main, ["tasks", "list", "--preset", "gsm8"])
    assert listed.exit_code == 2 and "known: arc, boolq" in listed.output


def test_an_unknown_preset_in_taskset_toml_is_refused_listing_the_known_ones(tmp_path):
    write_jsonl(tmp_path / "rows.jsonl", GSM8K)
    (tmp_path / "taskset.toml").write_text('name = "g"\nfile = "rows.jsonl"\npreset = "gsm"\n')
    with pytest.raises(
        TaskSetError, match=r"taskset.toml: field .preset. on line 3: no such preset"
    ):
        load_taskset(tmp_path)


def test_a_preset_with_mapped_columns_is_refused(server, tmp_path):
    data = write_jsonl(tmp_path / "gsm8k.jsonl", GSM8K)
    result = run(data, "--preset", "gsm8k", "--question", "q", server=server, out=tmp_path / "r")
    refused(result, server, "--preset gsm8k: reads the file's own columns")


def test_a_preset_for_a_set_that_is_not_a_data_file_is_refused(server, tmp_path):
    result = run("depot", "--preset", "gsm8k", server=server, out=tmp_path / "r")
    refused(result, server, "--preset read a data file's")


@pytest.mark.parametrize(
    ("preset", "rows", "said"),
    [
        (
            "gsm8k",
            [GSM8K[0], {"question": "How many?", "answer": "3 + 5 = 8"}],
            ":2: column 'answer': holds no '#### N' line",
        ),
        (
            "arc",
            [{**ARC[0], "answerKey": "E"}],
            ":1: column 'answerKey': 'E' is not one of the labels",
        ),
        ("boolq", [{**BOOLQ[0], "answer": "maybe"}], ":1: column 'answer': expected true or false"),
        (
            "squad",
            [{**SQUAD_HF[0], "answers": {"text": [], "answer_start": []}}],
            ":1: column 'answers': holds no gold answer",
        ),
        (
            "hellaswag",
            [{**HELLASWAG[0], "label": 4}],
            ":1: column 'label': expected an option's index from 0 to 3",
        ),
        (
            "mmlu",
            [{**MMLU_HF[0], "answer": "2"}],
            ":1: column 'answer': expected the right option's letter (A to D)",
        ),
    ],
    ids=["gsm8k", "arc", "boolq", "squad", "hellaswag", "mmlu"],
)
def test_a_row_not_of_its_presets_shape_is_refused_in_one_line(
    preset, rows, said, server, tmp_path
):
    data = write_jsonl(tmp_path / "rows.jsonl", rows)
    result = run(data, "--preset", preset, server=server, out=tmp_path / "r")
    refused(result, server, said, f"the {preset} preset reads")


def test_a_row_fitting_two_presets_is_refused_asking_which(server, tmp_path):
    row = {"question": "q?", "A": "1", "B": "2", "C": "3", "D": "4", "answer": "#### 2"}
    data = write_jsonl(tmp_path / "rows.jsonl", [row])
    result = run(data, server=server, out=tmp_path / "r")
    refused(result, server, "fit the presets gsm8k and mmlu; name the dataset with --preset")


def test_a_squad_document_not_of_its_shape_is_refused_naming_where(server, tmp_path):
    broken = {"data": [{"title": "t", "paragraphs": [{"context": "c", "qas": "none"}]}]}
    data = write_json(tmp_path / "dev.json", broken)
    result = run(data, server=server, out=tmp_path / "r")
    refused(result, server, "dev.json: data[0].paragraphs[0].qas: expected a list of objects")


def test_label_aliases_name_only_labels():
    LabelExpected(label="yes", labels=["yes", "no"], aliases={"no": ["false"]})
    with pytest.raises(ValueError, match="aliases names 'maybe', which is not one of labels"):
        LabelExpected(label="yes", labels=["yes", "no"], aliases={"maybe": ["perhaps"]})
