"""Published datasets end to end, under every kind of arm: each file shape (GSM8K, MMLU CSV
and Hugging Face JSONL, ARC with letter and number labels, BoolQ, SQuAD v1.1 and Hugging
Face JSONL, HellaSwag) run with ``loopbench run`` against a fake endpoint that answers each
question in a style models write (terse, worked, eliminating options, markdown, LaTeX
``\\boxed{}``, self-correcting, hedging, negating, GSM8K's ``####``), right and wrong.

Each record's grade must be a careful reader's, whatever the arm, and each request must show
the model what it needs: a question's options, a passage, a context. Each file runs once
(a module-scoped cache); the cases read its records."""

import json
from dataclasses import dataclass

import pytest
from click.testing import CliRunner

from loopbench.harness.cli.main import main
from loopbench.harness.fakes.fake_server import FakeServer, Reply
from loopbench.harness.results.reading import read_records

ARMS = ["direct", "cot", "self_consistency:samples=3", "pipeline:stages=cot>direct"]


@dataclass(frozen=True)
class Case:
    """One question: its task id, a word only its question holds, what the model answers,
    and a careful reader's verdict of that answer."""

    task: str
    word: str
    reply: str
    right: bool


@dataclass(frozen=True)
class Shape:
    file: str
    preset: str
    content: str
    cases: tuple[Case, ...]
    shown: dict[str, tuple[str, ...]]
    """What a request about a case (by its word) must show the model."""


def jsonl(rows: list[dict[str, object]]) -> str:
    return "".join(json.dumps(row) + "\n" for row in rows)


# GSM8K: the gold is the number after '####' in the worked solution.
GSM8K_ROWS = [
    ("Janet has 16 eggs, eats 3, bakes with 4 and sells the rest at $2. Dollars?", 18),
    ("Tobias has 3 apples and buys 5. How many apples?", 8),
    ("A farmer sells 10 melons at $2 each. How many dollars does the farmer get?", 20),
    ("What is 6 times 7 for the quiz?", 42),
    ("How many pens fit in 3 boxes of 4?", 12),
    ("A bike costs $1,000 plus $250 in tax. What is the total cost in dollars?", 1250),
    ("3 hens lay 6 eggs each. How many eggs in all?", 18),
    ("A shop sells 9 cakes a day for 2 days. How many cakes?", 18),
    ("Sam reads 5 pages a night for 4 nights. How many pages?", 20),
    ("A baker sells 9 loaves at $2 each. How many dollars?", 18),
    ("Ann has 10 stamps and gets 8 more. How many stamps?", 18),
    ("Kim buys 3 bags of 6 apples. How many apples?", 18),
    ("A jar holds 4 sweets for each of 5 children. How many sweets?", 20),
    ("Lea sells 6 cups of lemonade at $3 each. How many dollars?", 18),
]
GSM8K = Shape(
    "gsm8k.jsonl",
    "gsm8k",
    jsonl(
        [
            {"question": q, "answer": f"Worked out step by step.\n#### {gold}"}
            for q, gold in GSM8K_ROWS
        ]
    ),
    (
        Case("1", "Janet", "16 - 3 - 4 = 9 eggs are left, and 9 * 2 = 18.\n#### 18", True),
        Case("2", "Tobias", "He has 3 + 4 = 7 apples.\n#### 7", False),
        Case(
            "3",
            "melons",
            "#### 18\n\nWait, I made an error: 10 melons at $2 is 20 dollars. The answer is 20.",
            True,
        ),
        Case("4", "quiz", "Six sevens: $6 \\times 7 = 42$, so the result is $\\boxed{42}$.", True),
        Case("5", "pens", "Answer: 12 or 13", False),
        Case("6", "bike", "1,000 + 250 = 1,250.\n\n**Answer:** $1,250", True),
        Case("7", "hens", "18 eggs (3 hens x 6)", True),
        Case("8", "cakes", "#### 18\nWait, I made an error. The answer is 20.", False),
        Case("9", "pages", "The answer is 20 pages, not 18.", True),
        Case("10", "loaves", "Total = 9 \u00d7 $2 = **$18**", True),
        Case("11", "stamps", "Answer: eighteen stamps", True),
        Case(
            "12",
            "bags of 6",
            "\\boxed{18}\n\nLet me double-check: 3 * 6 = 18. Yes.",
            True,
        ),
        Case("13", "sweets", "Answer: 20%", False),
        Case("14", "lemonade", "Answer: 18 cups... no, 16 dollars.", False),
    ),
    {"Janet": ("Janet has 16 eggs",)},
)

# MMLU: question, four options, the right option's letter.
MMLU_ROWS = [
    ["What is the capital of France?", "Lyon", "Paris", "Nice", "Lille", "B"],
    ["Which is the largest planet?", "Mars", "Earth", "Jupiter", "Venus", "C"],
    ["Which metal is liquid at room temperature?", "Iron", "Copper", "Mercury", "Tin", "B"],
    ["Which gas do humans exhale most of?", "Nitrogen", "Oxygen", "Argon", "Neon", "A"],
    ["Which number is prime?", "4", "6", "7", "9", "C"],
    ["Which planet is the most massive?", "Mars", "Earth", "Jupiter", "Venus", "C"],
    ["Which colour do you get by mixing blue and yellow?", "Red", "Green", "Pink", "Grey", "B"],
    ["Which animal is a mammal?", "Whale", "Shark", "Trout", "Eel", "A"],
    ["Which ocean is the largest?", "Indian", "Arctic", "Atlantic", "Pacific", "D"],
    ["Which city is in Italy?", "Madrid", "Rome", "Porto", "Bern", "B"],
    ["Which is a noble gas?", "Argon", "Iron", "Sodium", "Carbon", "A"],
    ["Which shape has three sides?", "Square", "Circle", "Triangle", "Hexagon", "C"],
    ["Which river flows through Cairo?", "Nile", "Seine", "Thames", "Volga", "A"],
    ["Which city is the capital of Spain?", "Seville", "Madrid", "Valencia", "Bilbao", "B"],
    ["Which of these is a fruit?", "Apple", "Carrot", "Potato", "Onion", "A"],
]
MMLU_CASES = (
    Case("1", "capital of France", "**Answer:** B) Paris", True),
    Case(
        "2",
        "largest planet",
        "Mars (A) and Earth (B) are small, and Venus (D) is Earth's size. Not A, B or D; C.",
        True,
    ),
    Case("3", "liquid at room", "Answer: B\n\nWait, actually it's C.", False),
    Case("4", "exhale", "A or B", False),
    Case("5", "prime", "4 and 6 and 9 are composite, so the answer is C) 7.", True),
    Case("6", "most massive", "It's C - Jupiter is over 300 Earth masses.", True),
    Case("7", "blue and yellow", "Answer: B\n\nHmm, wait. Actually it is A.", False),
    Case("8", "mammal", "Sharks, trout and eels are fish.\n\n$\\boxed{A}$", True),
    Case(
        "9",
        "ocean",
        "B is wrong because the Arctic is the smallest, and C is also wrong. The answer must be D.",
        True,
    ),
    Case("10", "in Italy", "Answer: Rome", True),
    Case("11", "noble gas", "I'm torn between A and C, but I'll go with C.", False),
    Case("12", "three sides", "Either B or C.", False),
    Case("13", "Cairo", "Answer: A\n\nWait, actually it's B.\n\nNo, A was right.", True),
    Case(
        "14", "capital of Spain", "**B) Madrid** is the capital; Seville (A) is in the south.", True
    ),
    Case("15", "a fruit", "Between A and B, A.", True),
)
MMLU_SHOWN = {
    "capital of France": ("A) Lyon\nB) Paris\nC) Nice\nD) Lille",),
    "largest planet": ("A) Mars\nB) Earth\nC) Jupiter\nD) Venus",),
    "prime": ("A) 4\nB) 6\nC) 7\nD) 9",),
}
MMLU_CSV = Shape(
    "test.csv",
    "mmlu",
    "".join(",".join(f'"{cell}"' for cell in row) + "\n" for row in MMLU_ROWS),
    MMLU_CASES,
    MMLU_SHOWN,
)
MMLU_HF = Shape(
    "mmlu.jsonl",
    "mmlu",
    jsonl(
        [
            {"question": r[0], "subject": "misc", "choices": r[1:5], "answer": "ABCD".index(r[5])}
            for r in MMLU_ROWS
        ]
    ),
    MMLU_CASES,
    MMLU_SHOWN,
)


def arc_row(
    id_: str, question: str, texts: list[str], labels: list[str], key: str
) -> dict[str, object]:
    return {
        "id": id_,
        "question": question,
        "choices": {"text": texts, "label": labels},
        "answerKey": key,
    }


ARC = Shape(
    "arc.jsonl",
    "arc",
    jsonl(
        [
            arc_row(
                "Mercury_7",
                "Which gas do plants take in?",
                ["oxygen", "carbon dioxide", "helium", "neon"],
                list("ABCD"),
                "B",
            ),
            arc_row(
                "Mercury_8",
                "Which organ pumps blood?",
                ["lung", "liver", "heart", "skin"],
                list("ABCD"),
                "C",
            ),
            arc_row(
                "NYSEDREGENTS_3",
                "What does a magnet attract?",
                ["iron", "wood", "glass", "paper"],
                list("1234"),
                "1",
            ),
            arc_row(
                "NYSEDREGENTS_4",
                "Which season is coldest?",
                ["summer", "spring", "autumn", "winter"],
                list("1234"),
                "4",
            ),
        ]
    ),
    (
        Case(
            "Mercury_7",
            "plants take in",
            "Plants take in carbon dioxide, not oxygen, for photosynthesis.\nAnswer: B",
            True,
        ),
        Case("Mercury_8", "pumps blood", "The liver filters blood.\n\nAnswer: (B) liver", False),
        Case("NYSEDREGENTS_3", "magnet attract", "The answer is (A) iron.", True),
        Case(
            "NYSEDREGENTS_4",
            "coldest",
            "Summer (A) is the warmest, so not A. I'd say C, autumn... "
            "no wait, winter is colder: D.",
            True,
        ),
    ),
    {
        "plants take in": ("A) oxygen\nB) carbon dioxide\nC) helium\nD) neon",),
        "magnet attract": ("A) iron\nB) wood\nC) glass\nD) paper",),
    },
)

PARIS = "Paris is the capital and most populous city of France."
BERLIN = "Berlin is the capital of Germany; Munich is the capital of Bavaria."
NILE = "The Nile is about 6,650 km long and flows north into the Mediterranean Sea."
MOON = "The Moon orbits the Earth about once every 27 days."
BOOLQ = Shape(
    "boolq.jsonl",
    "boolq",
    jsonl(
        [
            {"question": "is paris the capital of france", "answer": True, "passage": PARIS},
            {"question": "is munich the capital of germany", "answer": False, "passage": BERLIN},
            {"question": "does the nile flow north", "answer": True, "passage": NILE},
            {"question": "does the moon orbit the sun directly", "answer": False, "passage": MOON},
            {"question": "is munich in bavaria", "answer": True, "passage": BERLIN},
            {"question": "is the nile shorter than 1,000 km", "answer": False, "passage": NILE},
            {
                "question": "is munich the capital city of germany",
                "answer": False,
                "passage": BERLIN,
            },
            {"question": "does the moon orbit the earth", "answer": True, "passage": MOON},
            {"question": "is the moon a planet", "answer": False, "passage": MOON},
        ]
    ),
    (
        Case("1", "capital of france", "Yes, the passage says Paris is the capital.", True),
        Case("2", "capital of germany", "No. Berlin is; Munich is Bavaria's capital.", True),
        Case("3", "nile flow", "No, it flows south.", False),
        Case("4", "orbit the sun", "Answer: **false**", True),
        Case("5", "munich in bavaria", "Yes? No - Berlin is the capital of Germany.", False),
        Case("6", "shorter than", "The Nile is about 6,650 km long, so no.", True),
        Case(
            "7",
            "capital city of germany",
            "No, that's not correct: Munich is the capital of Bavaria, not Germany.",
            True,
        ),
        Case("8", "orbit the earth", "True.", True),
        Case("9", "moon a planet", "Nope.", True),
    ),
    {"capital of france": (PARIS, "Answer yes or no."), "nile flow": (NILE,)},
)

BOWL = "The Denver Broncos defeated the Carolina Panthers 24-10 to win Super Bowl 50."
RADIO = (
    "Edison is often named, but Nikola Tesla demonstrated wireless transmission in 1893 "
    "in St. Louis."
)
SQUAD_ROWS = [
    ("q1", BOWL, "Which team won Super Bowl 50?", ["Denver Broncos", "Broncos"]),
    ("q2", BOWL, "How many points did the Panthers score?", ["10"]),
    ("q3", RADIO, "Who demonstrated wireless transmission in 1893?", ["Nikola Tesla"]),
    ("q4", BOWL, "Which team lost Super Bowl 50?", ["Carolina Panthers"]),
    ("q5", BOWL, "Who were the champions of Super Bowl 50?", ["Denver Broncos"]),
    ("q6", BOWL, "Who was beaten in Super Bowl 50?", ["Carolina Panthers"]),
    ("q7", BOWL, "Which side took the title?", ["Denver Broncos", "Broncos"]),
    ("q8", BOWL, "What was the losing side's score?", ["10"]),
    ("q9", RADIO, "Who gave the 1893 demonstration?", ["Nikola Tesla"]),
    ("q10", BOWL, "What score did Carolina get?", ["10"]),
    ("q11", BOWL, "Who finished second in Super Bowl 50?", ["Carolina Panthers"]),
    ("q12", BOWL, "Who was the runner-up of Super Bowl 50?", ["Carolina Panthers"]),
    ("q13", BOWL, "Who was the winner of Super Bowl 50?", ["Denver Broncos"]),
]
SQUAD_CASES = (
    Case("q1", "Which team won", "The **Denver Broncos** won, 24-10.", True),
    Case("q2", "How many points", "Answer: 24", False),
    Case("q3", "Who demonstrated", "It was not Edison but Nikola Tesla.", True),
    Case("q4", "Which team lost", "Broncos? No, Panthers.", True),
    Case("q5", "champions", "Denver Broncos, not Panthers", True),
    Case("q6", "beaten", "Not the Carolina Panthers; the Broncos.", False),
    Case("q7", "took the title", "Answer: the Broncos", True),
    Case("q8", "losing side", "The Carolina Panthers scored 10.", True),
    Case("q9", "1893 demonstration", "Nikola Tesla (not Edison).", True),
    Case("q10", "did Carolina get", "They scored ten points.", True),
    Case("q11", "finished second", "The Panthers lost 24-10.", True),
    Case("q12", "runner-up", "Not the Broncos \u2014 the Panthers.", True),
    Case("q13", "the winner", "The Denver Broncos lost.", False),
)
SQUAD_SHOWN = {"Which team won": (BOWL,), "Who demonstrated": (RADIO,)}
SQUAD_HF = Shape(
    "squad.jsonl",
    "squad",
    jsonl(
        [
            {
                "id": id_,
                "title": "t",
                "context": context,
                "question": question,
                "answers": {"text": gold, "answer_start": [context.find(g) for g in gold]},
            }
            for id_, context, question, gold in SQUAD_ROWS
        ]
    ),
    SQUAD_CASES,
    SQUAD_SHOWN,
)
SQUAD_V11 = Shape(
    "dev-v1.1.json",
    "squad",
    json.dumps(
        {
            "version": "1.1",
            "data": [
                {
                    "title": "t",
                    "paragraphs": [
                        {
                            "context": context,
                            "qas": [
                                {
                                    "id": id_,
                                    "question": question,
                                    "answers": [
                                        {"text": g, "answer_start": context.find(g)} for g in gold
                                    ],
                                }
                                for id_, c, question, gold in SQUAD_ROWS
                                if c == context
                            ],
                        }
                        for context in (BOWL, RADIO)
                    ],
                }
            ],
        }
    ),
    SQUAD_CASES,
    SQUAD_SHOWN,
)

HELLASWAG = Shape(
    "hellaswag.jsonl",
    "hellaswag",
    jsonl(
        [
            {
                "ind": 4,
                "activity_label": "Roof shingle removal",
                "ctx": "A man is sitting on a roof. he",
                "endings": [
                    "is using wrap to wrap a pair of skis.",
                    "is ripping level tiles off.",
                    "is holding a rubik's cube.",
                    "starts pulling up roofing on a roof.",
                ],
                "label": "3",
            },
            {
                "ind": 9,
                "activity_label": "Mowing the lawn",
                "ctx": "A woman pushes a mower across the lawn. she",
                "endings": ["turns it off.", "jumps into a pool.", "reads a book.", "flies away."],
                "label": 0,
            },
            {
                "ind": 11,
                "activity_label": "Baking",
                "ctx": "A baker kneads dough on a table. he",
                "endings": ["eats the table.", "shapes it into loaves.", "sings.", "leaves."],
                "label": 1,
            },
        ]
    ),
    (
        Case("4", "roof", "The man is on a roof, so he pulls up roofing.\n\n**Answer: D**", True),
        Case("9", "lawn", "I'd eliminate B, C and D, which leaves A.", True),
        Case("11", "baker", "Answer: \\boxed{C}", False),
    ),
    {
        "roof": ("A) is using wrap", "D) starts pulling up roofing"),
        "lawn": ("A) turns it off.\nB) jumps into a pool.",),
    },
)

SHAPES = {
    "gsm8k": GSM8K,
    "mmlu-csv-headerless": MMLU_CSV,
    "mmlu-hf": MMLU_HF,
    "arc": ARC,
    "boolq": BOOLQ,
    "squad-hf": SQUAD_HF,
    "squad-v1.1": SQUAD_V11,
    "hellaswag": HELLASWAG,
}

#: Cases the graders' reading (graders/) gets wrong, by (shape, task): why, as seen.
SQUAD_MISREAD = {
    "q11": "'The Panthers lost 24-10.': F1 0.00 (best 'Carolina Panthers')",
    "q13": "'The Denver Broncos lost.' for the winner: F1 0.80 (best 'Denver Broncos') passes",
}
PERCENT = "'Answer: 20%' for 20 sweets: 'final number 20 matches', a percentage read as a count"
MISREAD: dict[tuple[str, str], str] = {
    **{
        (name, task): why
        for name in ("squad-hf", "squad-v1.1")
        for task, why in SQUAD_MISREAD.items()
    },
    ("gsm8k", "13"): PERCENT,
}


@dataclass(frozen=True)
class Ran:
    records: dict[tuple[str, str], object]
    asked: list[str]
    output: str
    unmatched: list[str]
    """Requests that hold no case's word, or more than one (the script could not tell)."""


def user_text(body: dict[str, list[dict[str, str]]]) -> str:
    return next(m["content"] for m in reversed(body["messages"]) if m["role"] == "user")


@pytest.fixture(scope="module")
def ran(tmp_path_factory):
    """Each shape run once, on demand: its records by (task, arm) and what was asked."""
    done: dict[str, Ran] = {}

    def run_shape(name: str) -> Ran:
        if name in done:
            return done[name]
        shape = SHAPES[name]
        folder = tmp_path_factory.mktemp(name)
        data = folder / shape.file
        data.write_text(shape.content)

        unmatched: list[str] = []

        def responder(body):
            question = user_text(body)
            about = [case for case in shape.cases if case.word in question]
            if len(about) != 1:
                unmatched.append(question)
                return Reply("")
            return Reply(about[0].reply)

        with FakeServer(responder) as server:
            args = ["run", "--tasks", str(data), "--quiet", "--out", str(folder / "r")]
            args += ["--base-url", server.base_url, "--model", "fake"]
            args += [a for arm in ARMS for a in ("--arm", arm)]
            result = CliRunner().invoke(
                main, args, env={"LOOPBENCH_API_KEY": "k"}, catch_exceptions=False
            )
            asked = [user_text(b) for b in server.served.bodies]
        records = {(r.task_id, r.arm): r for r in read_records(folder / "r")}
        output = f"exit {result.exit_code}: {result.output}"
        done[name] = Ran(records, asked, output, unmatched)
        return done[name]

    return run_shape


def grade_cases():
    for name, shape in SHAPES.items():
        for case in shape.cases:
            for arm in ARMS:
                why = MISREAD.get((name, case.task))
                marks = [pytest.mark.xfail(strict=True, reason=why)] if why else []
                yield pytest.param(name, case, arm, marks=marks, id=f"{name}-{case.task}-{arm}")


@pytest.mark.parametrize(("shape", "case", "arm"), list(grade_cases()))
def test_every_grade_is_a_careful_readers_whatever_the_arm(shape, case, arm, ran):
    records = ran(shape).records
    assert (case.task, arm) in records, ran(shape).output
    record = records[case.task, arm]
    assert record.correct is case.right, (case.reply, record.answer, record.grade_reason)


@pytest.mark.parametrize("shape", SHAPES)
def test_every_request_shows_the_model_what_the_task_gives(shape, ran):
    assert ran(shape).output.startswith("exit 0:"), ran(shape).output
    assert ran(shape).unmatched == []
    asked = ran(shape).asked
    for word, parts in SHAPES[shape].shown.items():
        about = [text for text in asked if word in text]
        assert len(about) >= len(ARMS), (word, asked)
        for text in about:
            for part in parts:
                assert part in text, (part, text)


#: Three samples per question, each in its own style: self_consistency votes over what the
#: grader reads of each (a hedge votes for nothing), so the winner is the reader's.
VOTES = {
    "gsm8k": (
        GSM8K,
        {
            "Janet": ("#### 18", "She makes **18** dollars.", "\\boxed{20}", True),
            "Tobias": ("#### 7", "He has 7 apples, not 8.", "Answer: 8", False),
        },
    ),
    "mmlu-hf": (
        MMLU_HF,
        {
            "capital of France": ("**Answer:** B) Paris", "Not A, C or D; B.", "Answer: C", True),
            "largest planet": ("A or C", "Answer: D", "D) Venus", False),
            "prime": ("C or D", "Answer: D\n\nWait, actually it's C.", "(C) 7", True),
        },
    ),
}


@pytest.mark.parametrize("name", VOTES)
def test_self_consistency_votes_over_samples_written_in_different_styles(name, tmp_path):
    shape, samples = VOTES[name]
    data = tmp_path / shape.file
    data.write_text(shape.content)
    asked: dict[str, int] = {}

    def responder(body):
        question = user_text(body)
        word = next((w for w in samples if w in question), None)
        if word is None:
            return Reply("")
        asked[word] = asked.get(word, 0) + 1
        return Reply(samples[word][(asked[word] - 1) % 3])

    with FakeServer(responder) as server:
        args = ["run", "--tasks", str(data), "--quiet", "--out", str(tmp_path / "r")]
        args += ["--base-url", server.base_url, "--model", "fake"]
        args += ["--arm", "self_consistency:samples=3"]
        result = CliRunner().invoke(main, args, env={"LOOPBENCH_API_KEY": "k"})
    assert result.exit_code == 0, result.output
    tasks = {case.word: case.task for case in shape.cases}
    graded = {r.task_id: r for r in read_records(tmp_path / "r")}
    for word, (*said, right) in samples.items():
        record = graded[tasks[word]]
        assert record.correct is right, (said, record.answer, record.grade_reason)
    assert set(asked.values()) == {3}
