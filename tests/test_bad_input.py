"""Bad input through the real CLI: exit code 2 and one line, ``Error: ...``, naming the file
(the line and the field where there are some) and what is expected; never a traceback.

Every case builds its input in a fresh folder and returns the command line that reads it.
A ``run`` points at a closed port with ``--model fake``, so a case that got as far as a
request would show up as a run, not as a refusal.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from loopbench.harness.cli.main import main
from loopbench.harness.config import SHIPPED_EXPERIMENTS, load_experiment, shipped_experiments
from loopbench.harness.results.prices import MAX_PRICE, load_prices
from loopbench.harness.results.records import RunRecord
from loopbench.tasks.loading import load_taskset

NOWHERE = ["--model", "fake", "--base-url", "http://127.0.0.1:9/v1", "--max-retries", "0"]
RUN = ["run", "--quiet", *NOWHERE]

FOLDER = "<a folder>"  # a folder where a file is expected
UNREADABLE = "<unreadable>"  # the good content, but opening it for reading is refused
Content = str | bytes | None  # None: no such file

TASK = {"id": "t1", "question": "What is 2 + 2?", "expected": {"numbers": [4]}}
GOOD_SET: dict[str, Content] = {
    "taskset.toml": 'name = "mine"\ntools = ["lookup", "calc"]\n',
    "tasks.jsonl": json.dumps(TASK) + "\n",
    "encyclopedia.json": json.dumps({"entries": {"A": "a", "B": "b"}, "related": {"A": ["B"]}}),
}
GOOD_PRICES = 'as_of = "2025-08-01"\n[models.m]\ninput = 1.0\noutput = 2.0\n'
RECORD = RunRecord(
    arm="direct",
    pattern="direct",
    task_set="mine",
    task_id="t1",
    repeat=0,
    model="gpt-5-mini",
    status="answered",
    answer="4",
    correct=True,
    turns=1,
    tokens_in=100,
    tokens_out=10,
).model_dump_json()
GOOD_RUNS = f"{RECORD}\n"
#: An experiment file whose published table for its arm lacks its accuracy (line 5).
PUBLISHED = 'arms = ["direct"]\n[published.direct]\nmodel = "GPT-4"\nsource = "Yao et al. 2023"\n'

assert all(
    f in RECORD for f in ('"schema_version":2', '"repeat":0', '"tokens_in":100', '"cost_usd":null')
)

Build = Callable[[Path, pytest.MonkeyPatch], list[str]]


@dataclass(frozen=True)
class Case:
    build: Build
    words: tuple[str, ...]
    """What the one error line must hold: the file, line and field, and what is expected."""


def write(
    path: Path, content: Content, monkeypatch: pytest.MonkeyPatch, good: Content = ""
) -> Path:
    if content is None:
        return path
    path.parent.mkdir(parents=True, exist_ok=True)
    if content == FOLDER:
        path.mkdir()
    elif content == UNREADABLE:
        write(path, good, monkeypatch)
        unreadable(monkeypatch, path)
    elif isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content, encoding="utf-8")
    return path


def unreadable(monkeypatch: pytest.MonkeyPatch, target: Path) -> None:
    """Reading ``target`` fails as a file without read permission does (tests run as root,
    for whom chmod 000 changes nothing)."""
    real, real_os = Path.open, os.open

    def guarded(self: Path, mode: str = "r", *args: object, **kwargs: object) -> object:
        if self == target and "r" in mode and "+" not in mode:
            raise PermissionError(13, "Permission denied", str(self))
        return real(self, mode, *args, **kwargs)

    def guarded_os(path: object, flags: int, *args: object, **kwargs: object) -> int:
        if Path(str(path)) == target and flags & os.O_ACCMODE == os.O_RDONLY:
            raise PermissionError(13, "Permission denied", str(path))
        return real_os(path, flags, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(Path, "open", guarded)
    monkeypatch.setattr(os, "open", guarded_os)


def task_set(**files: Content) -> Build:
    """``run --tasks`` on a task set whose files are the good ones but for ``files``."""

    def build(tmp: Path, mp: pytest.MonkeyPatch) -> list[str]:
        for name, good in GOOD_SET.items():
            write(tmp / "set" / name, files.get(name.replace(".", "_"), good), mp, good)
        return [*RUN, "--arm", "direct", "--tasks", str(tmp / "set"), "--out", str(tmp / "out")]

    return build


def experiment(content: Content) -> Build:
    def build(tmp: Path, mp: pytest.MonkeyPatch) -> list[str]:
        path = write(tmp / "exp.toml", content, mp, 'arms = ["direct"]\n')
        return [*RUN, "--experiment", str(path), "--out", str(tmp / "out")]

    return build


def prices(command: str, content: Content) -> Build:
    def build(tmp: Path, mp: pytest.MonkeyPatch) -> list[str]:
        path = write(tmp / "prices.toml", content, mp, GOOD_PRICES)
        if command == "run":
            return [*RUN, "--arm", "direct", "--prices", str(path), "--out", str(tmp / "out")]
        results = write(tmp / "res" / "runs.jsonl", GOOD_RUNS, mp).parent
        return ["table", str(results), "--prices", str(path)]

    return build


READERS = {
    "table": lambda bad, good, tmp: ["table", bad],
    "plot": lambda bad, good, tmp: ["plot", bad, "--kind", "status", "-o", str(tmp / "p.png")],
    "cost": lambda bad, good, tmp: ["cost", "measured", bad],
    "compare-baseline": lambda bad, good, tmp: ["compare", bad, good],
    "compare-candidate": lambda bad, good, tmp: ["compare", good, bad],
}


def results(command: str, runs: Content) -> Build:
    """A command that reads a results folder, on one whose runs.jsonl is ``runs``."""

    def build(tmp: Path, mp: pytest.MonkeyPatch) -> list[str]:
        good = write(tmp / "good" / "runs.jsonl", GOOD_RUNS, mp).parent
        (tmp / "bad").mkdir()
        write(tmp / "bad" / "runs.jsonl", runs, mp, GOOD_RUNS)
        return READERS[command](str(tmp / "bad"), str(good), tmp)

    return build


def traces_folder(*command: str) -> Build:
    """``command`` on a results folder whose traces.jsonl is a folder."""

    def build(tmp: Path, mp: pytest.MonkeyPatch) -> list[str]:
        results = write(tmp / "res" / "runs.jsonl", GOOD_RUNS, mp).parent
        (results / "traces.jsonl").mkdir()
        return [a.replace("{res}", str(results)).replace("{tmp}", str(tmp)) for a in command]

    return build


def recorded_experiment(content: Content) -> Build:
    """``table`` on a results folder whose experiment.json is ``content``."""

    def build(tmp: Path, mp: pytest.MonkeyPatch) -> list[str]:
        write(tmp / "res" / "experiment.json", content, mp)
        return ["table", str(write(tmp / "res" / "runs.jsonl", GOOD_RUNS, mp).parent)]

    return build


def out_folder(**files: Content) -> Build:
    """``run --out`` into a folder already holding ``files`` (a resume)."""

    def build(tmp: Path, mp: pytest.MonkeyPatch) -> list[str]:
        for name, content in files.items():
            write(tmp / "out" / name.replace("_", "."), content, mp, GOOD_RUNS)
        return [*RUN, "--arm", "direct", "--tasks", "depot", "--out", str(tmp / "out")]

    return build


def cli(*args: str) -> Build:
    def build(tmp: Path, mp: pytest.MonkeyPatch) -> list[str]:
        return [a.replace("{tmp}", str(tmp)) for a in args]

    return build


def case(build: Build, *words: str, id: str) -> object:
    return pytest.param(Case(build, words), id=id)


def line(task: dict[str, object]) -> str:
    return json.dumps(task) + "\n"


def task(**changes: object) -> str:
    return line({**TASK, **changes})


def expecting(**expected: object) -> str:
    return task(expected=expected)


def book(**fields: object) -> str:
    return json.dumps({"entries": {"A": "a", "B": "b"}, **fields})


LATIN1 = b"caf\xe9"
DEEP = "[" * 5000 + "]" * 5000
LONG_NUMBER = "9" * 5000


TASK_SETS = [
    case(cli(*RUN, "--arm", "direct", "--tasks", "{tmp}/nope"), "nope", "built-in", id="no-set"),
    case(task_set(taskset_toml=None), "taskset.toml", "no such file", "name =", id="toml-none"),
    case(task_set(taskset_toml=FOLDER), "taskset.toml", "is a folder", id="toml-folder"),
    case(
        task_set(taskset_toml='name = "  "\ntools = ["lookup", "calc"]\n'),
        "taskset.toml",
        "field 'name'",
        "not be blank",
        id="toml-name-blank",
    ),
    case(
        task_set(taskset_toml=UNREADABLE),
        "taskset.toml",
        "cannot be read (Permission denied)",
        id="toml-unreadable",
    ),
    case(
        task_set(taskset_toml=b'# mine\nname = "' + LATIN1 + b'"\n'),
        "taskset.toml:2",
        "0xe9 is not UTF-8",
        id="toml-latin1",
    ),
    case(task_set(taskset_toml=""), "taskset.toml", "field 'name'", "required", id="toml-empty"),
    case(
        task_set(taskset_toml='name = "x"\ntools = [calc]\n'),
        "taskset.toml:2",
        "not valid TOML",
        "tools =",
        id="toml-syntax",
    ),
    case(
        task_set(taskset_toml="name = 3\n"),
        "taskset.toml",
        "field 'name' on line 1",
        "valid string",
        id="toml-name-int",
    ),
    case(
        task_set(taskset_toml='name = "x"\ntools = "calc"\n'),
        "taskset.toml",
        "field 'tools' on line 2",
        "valid list",
        id="toml-tools-str",
    ),
    case(
        task_set(taskset_toml='name = "x"\ntools = ["search"]\n'),
        "taskset.toml",
        "field 'tools.0' on line 2",
        "no tool named 'search' is registered: give 'lookup'",
        id="toml-tools-unknown",
    ),
    case(
        task_set(taskset_toml='name = "x"\ntools = [1]\n'),
        "taskset.toml",
        "field 'tools.0' on line 2",
        id="toml-tools-int",
    ),
    case(
        task_set(taskset_toml='name = "x"\ngrader = "fuzzy"\n'),
        "taskset.toml",
        "field 'grader' on line 2",
        "'exact'",
        id="toml-grader",
    ),
    case(
        task_set(taskset_toml='name = "x"\ntoolz = []\n'),
        "taskset.toml",
        "field 'toolz' on line 2",
        "Extra inputs",
        id="toml-unknown-key",
    ),
    case(
        task_set(taskset_toml=f'name = "x"\nsize = {LONG_NUMBER}\n'),
        "taskset.toml",
        "number too long",
        id="toml-long-number",
    ),
    case(
        task_set(taskset_toml=f'name = "x"\nx = {DEEP}\n'),
        "taskset.toml",
        "nesting too deep",
        id="toml-deep",
    ),
    case(task_set(tasks_jsonl=None), "tasks.jsonl", "no such file", '"question"', id="jsonl-none"),
    case(task_set(tasks_jsonl=FOLDER), "tasks.jsonl", "is a folder", id="jsonl-folder"),
    case(
        task_set(tasks_jsonl=UNREADABLE),
        "tasks.jsonl",
        "cannot be read (Permission denied)",
        id="jsonl-unreadable",
    ),
    case(task_set(tasks_jsonl=""), "tasks.jsonl", "holds no tasks", '"id"', id="jsonl-empty"),
    case(task_set(tasks_jsonl="\n \n\t\n"), "tasks.jsonl", "holds no tasks", id="jsonl-blank"),
    case(
        task_set(tasks_jsonl=task().encode() + b'{"id": "' + LATIN1 + b'"}\n'),
        "tasks.jsonl:2",
        "0xe9 is not UTF-8",
        id="jsonl-latin1",
    ),
    case(
        task_set(tasks_jsonl=task() + "{not json\n"),
        "tasks.jsonl:2",
        "Invalid JSON",
        id="jsonl-syntax",
    ),
    case(task_set(tasks_jsonl="[1, 2]\n"), "tasks.jsonl:1", "(whole line)", id="jsonl-array"),
    case(task_set(tasks_jsonl=task(id=7)), "tasks.jsonl:1", "field 'id'", "string", id="id-int"),
    case(
        task_set(tasks_jsonl=line({"id": "t1", "question": "q"})),
        "tasks.jsonl:1",
        "field 'expected'",
        "required",
        id="expected-none",
    ),
    case(
        task_set(tasks_jsonl=expecting(numbers="84")),
        "tasks.jsonl:1",
        "field 'expected.numbers'",
        "valid array",
        id="numbers-str",
    ),
    case(
        task_set(tasks_jsonl=expecting(numbers=["84"])),
        "tasks.jsonl:1",
        "field 'expected.numbers.0'",
        "valid number",
        id="number-str",
    ),
    case(
        task_set(tasks_jsonl=task().replace("[4]", f"[{LONG_NUMBER}]")),
        "tasks.jsonl:1",
        "number out of range",
        id="number-huge",
    ),
    case(
        task_set(tasks_jsonl=expecting(entities=[1])),
        "tasks.jsonl:1",
        "field 'expected.entities.0'",
        "valid string",
        id="entity-int",
    ),
    case(
        task_set(tasks_jsonl=expecting(numbers=[1], tolerance=-1)),
        "tasks.jsonl:1",
        "field 'expected.tolerance'",
        "greater than or equal to 0",
        id="tolerance-negative",
    ),
    case(
        task_set(tasks_jsonl=expecting()),
        "tasks.jsonl:1",
        "field 'expected'",
        "expects nothing",
        id="expects-nothing",
    ),
    case(
        task_set(tasks_jsonl=task() + task()),
        "tasks.jsonl:2",
        "already used on line 1",
        id="id-twice",
    ),
    case(
        task_set(tasks_jsonl=task(answer="4")),
        "tasks.jsonl:1",
        "field 'answer'",
        "Extra inputs",
        id="task-unknown-key",
    ),
    case(
        task_set(tasks_jsonl=DEEP + "\n"),
        "tasks.jsonl:1",
        "nested more than 100 levels",
        id="jsonl-deep",
    ),
    case(
        task_set(tasks_jsonl=task(id="x").replace('"x"', '"\\ud800"')),
        "tasks.jsonl:1",
        "lone surrogate",
        id="jsonl-lone-surrogate",
    ),
    case(task_set(encyclopedia_json=None), "encyclopedia.json", "no such file", id="book-none"),
    case(task_set(encyclopedia_json=FOLDER), "encyclopedia.json", "is a folder", id="book-folder"),
    case(
        task_set(encyclopedia_json=UNREADABLE),
        "encyclopedia.json",
        "cannot be read (Permission denied)",
        id="book-unreadable",
    ),
    case(
        task_set(encyclopedia_json=b'{"entries":\n{"A": "a",\n"B": "' + LATIN1 + b'"}}'),
        "encyclopedia.json:3",
        "0xe9 is not UTF-8",
        id="book-latin1",
    ),
    case(
        task_set(encyclopedia_json=""),
        "encyclopedia.json:1",
        "not valid JSON",
        '"entries"',
        id="book-empty",
    ),
    case(
        task_set(encyclopedia_json='{"entries":\n{"A": "a",}}'),
        "encyclopedia.json:2",
        "not valid JSON",
        id="book-syntax",
    ),
    case(task_set(encyclopedia_json="[]"), "encyclopedia.json", "JSON list", id="book-list"),
    case(
        task_set(encyclopedia_json="{}"),
        "encyclopedia.json",
        "field 'entries'",
        "required",
        id="book-no-entries",
    ),
    case(
        task_set(encyclopedia_json='{"entries": ["A"]}'),
        "encyclopedia.json",
        "field 'entries'",
        "valid dictionary",
        id="entries-list",
    ),
    case(
        task_set(encyclopedia_json='{"entries": {"A": 1}}'),
        "encyclopedia.json",
        "field 'entries.A'",
        "valid string",
        id="entry-int",
    ),
    case(
        task_set(encyclopedia_json='{"entries": {}}'),
        "encyclopedia.json",
        "field 'entries'",
        "at least 1",
        id="entries-empty",
    ),
    case(
        task_set(encyclopedia_json=book(related=["A", "B"])),
        "encyclopedia.json",
        "field 'related'",
        "valid dictionary",
        id="related-list",
    ),
    case(
        task_set(encyclopedia_json=book(related={"A": "B"})),
        "encyclopedia.json",
        "field 'related.A'",
        "valid list",
        id="related-str",
    ),
    case(
        task_set(encyclopedia_json=book(related={"A": [1]})),
        "encyclopedia.json",
        "field 'related.A.0'",
        "valid string",
        id="related-int",
    ),
    case(
        task_set(encyclopedia_json=book(related={"A": ["Z"]})),
        "encyclopedia.json",
        "field 'related.A'",
        "do not exist: ['Z']",
        id="related-unknown",
    ),
    case(
        task_set(encyclopedia_json=book(related={"Z": ["A"]})),
        "encyclopedia.json",
        "field 'related.Z'",
        "do not exist: ['Z']",
        id="related-unknown-key",
    ),
    case(
        task_set(encyclopedia_json=book(naming=3)),
        "encyclopedia.json",
        "field 'naming'",
        "valid string",
        id="naming-int",
    ),
    case(
        task_set(encyclopedia_json=book(entires={})),
        "encyclopedia.json",
        "field 'entires'",
        "Extra inputs",
        id="book-unknown-key",
    ),
    case(
        task_set(encyclopedia_json=f'{{"entries": {{"A": {LONG_NUMBER}}}}}'),
        "encyclopedia.json",
        "over 4300 digits",
        id="book-long-number",
    ),
    case(
        task_set(encyclopedia_json=DEEP),
        "encyclopedia.json",
        "nested more than 100 levels",
        id="book-deep",
    ),
]

EXPERIMENTS = [
    case(experiment(None), "exp.toml", "no such file", "arms =", id="exp-none"),
    case(experiment(FOLDER), "exp.toml", "is a folder", id="exp-folder"),
    case(experiment(UNREADABLE), "exp.toml", "Permission denied", id="exp-unreadable"),
    case(
        experiment(b'arms = ["direct"]\nout = "' + LATIN1 + b'"\n'),
        "exp.toml:2",
        "0xe9 is not UTF-8",
        id="exp-latin1",
    ),
    case(experiment(""), "exp.toml", "field 'arms'", "required", "arms = [", id="exp-empty"),
    case(experiment("arms = [direct]\n"), "exp.toml:1", "not valid TOML", id="exp-syntax"),
    case(
        experiment('arms = "direct"\n'),
        "exp.toml",
        "field 'arms' on line 1",
        "valid list",
        id="arms-str",
    ),
    case(
        experiment("arms = []\n"), "exp.toml", "field 'arms' on line 1", "at least 1", id="arms-0"
    ),
    case(experiment("arms = [1]\n"), "exp.toml", "field 'arms.0' on line 1", id="arms-int"),
    case(
        experiment('arms = ["direct"]\nrepeats = "3"\n'),
        "exp.toml",
        "field 'repeats' on line 2",
        "valid integer",
        id="repeats-str",
    ),
    case(
        experiment('arms = ["direct"]\nrepeats = true\n'),
        "exp.toml",
        "field 'repeats' on line 2",
        "valid integer",
        id="repeats-bool",
    ),
    case(
        experiment('arms = ["direct"]\nrepeats = 0\n'),
        "exp.toml",
        "field 'repeats' on line 2",
        "greater than or equal to 1",
        id="repeats-0",
    ),
    case(
        experiment('arms = ["direct"]\nconcurrency = 1.5\n'),
        "exp.toml",
        "field 'concurrency' on line 2",
        "valid integer",
        id="concurrency-float",
    ),
    case(
        experiment('arms = ["direct"]\ntasks = 5\n'),
        "exp.toml",
        "field 'tasks' on line 2",
        "valid string",
        id="tasks-int",
    ),
    case(
        experiment('arms = ["direct"]\nout = ["a"]\n'),
        "exp.toml",
        "field 'out' on line 2",
        id="out-list",
    ),
    case(
        experiment('arms = ["direct"]\narm = "cot"\n'),
        "exp.toml",
        "field 'arm' on line 2",
        "Extra inputs",
        id="exp-unknown-key",
    ),
    case(
        experiment('tasks = "depot"\narms = ["nope"]\n'),
        "exp.toml",
        "field 'arms' on line 2",
        "no pattern named 'nope'",
        id="arm-unknown",
    ),
    case(
        experiment('arms = [\n  "direct:foo=1",\n]\n'),
        "exp.toml",
        "field 'arms' on line 1",
        "no option 'foo'",
        id="arm-option-unknown",
    ),
    case(
        experiment('arms = [\n  {pattern = "pipeline", stages = [{guard = true}]},\n]\n'),
        "exp.toml",
        "field 'arms.0' on line 1",
        "stages.0.pattern",
        id="arm-table-stage-without-pattern",
    ),
    case(
        experiment(
            '[[arms]]\npattern = "pipeline"\nstages = [{pattern = "cot"}, {pattern = "nope"}]\n'
        ),
        "exp.toml",
        "field 'arms' on line 1",
        "stage 2: no pattern named 'nope'",
        id="arm-table-stage-unknown",
    ),
    case(
        experiment(f'arms = ["direct"]\nrepeats = {LONG_NUMBER}\n'),
        "exp.toml",
        "number too long",
        id="exp-long-number",
    ),
    case(
        experiment('arms = ["direct"]\nout = ""\n'),
        "exp.toml",
        "field 'out' on line 2",
        "must name a folder, not be blank",
        id="out-blank",
    ),
    case(
        experiment('arms = ["direct"]\ncache = " "\n'),
        "exp.toml",
        "field 'cache' on line 2",
        "not be blank",
        id="cache-blank",
    ),
    case(
        experiment('arms = ["direct"]\nprices = ""\n'),
        "exp.toml",
        "field 'prices' on line 2",
        "not be blank",
        id="prices-blank",
    ),
    case(
        experiment(
            'arms = ["direct"]\n\n[[models]]\nname = "a"\n\n[[models]]\nname = "b"\nurl = "x"\n'
        ),
        "exp.toml",
        "field 'models.1.url' on line 8",
        "Extra inputs",
        id="models-unknown-key",
    ),
    case(
        experiment('arms = ["direct"]\n[[models]]\nname = "a"\nbase_url = ""\n'),
        "exp.toml",
        "field 'models.0.base_url' on line 4",
        "not be blank",
        id="models-base-url-blank",
    ),
    case(
        experiment('arms = ["react_text:' + ",".join(f"k{i}=a|b|c" for i in range(12)) + '"]'),
        "exp.toml",
        "531441 arms, more than 10000",
        id="arm-grid-huge",
    ),
    case(
        experiment(PUBLISHED + "accuracy = 74\n"),
        "exp.toml",
        "field 'published.direct.accuracy' on line 5",
        "less than or equal to 1",
        id="published-percent",
    ),
    case(
        experiment(PUBLISHED.replace('model = "GPT-4"\n', "") + "accuracy = 0.74\n"),
        "exp.toml",
        "field 'published.direct.model'",
        "required",
        id="published-no-model",
    ),
    case(
        experiment(PUBLISHED + 'accuracy = "74%"\n'),
        "exp.toml",
        "field 'published.direct.accuracy' on line 5",
        "valid number",
        id="published-text",
    ),
    case(
        experiment(PUBLISHED + "accuracy = 0.74\ncost = 0.7\n"),
        "exp.toml",
        "field 'published.direct.cost' on line 6",
        "Extra inputs",
        id="published-unknown-key",
    ),
    case(
        experiment(PUBLISHED.replace("published.direct", 'published."cot"') + "accuracy = 0.7\n"),
        "exp.toml",
        "field 'published.cot' on line 2",
        "names no arm of the file",
        id="published-no-such-arm",
    ),
    case(
        experiment('arms = ["direct"]\npublished = ["direct"]\n'),
        "exp.toml",
        "field 'published' on line 2",
        "dictionary",
        id="published-not-a-table",
    ),
    case(
        recorded_experiment('{"published": {"direct": {"model": "GPT-4", "source": "x"}}}'),
        "experiment.json",
        "field 'published.direct.accuracy'",
        "required",
        id="published-recorded-bad",
    ),
]

BAD_PRICES = [
    (None, ("prices.toml", "no such file", "input = ")),
    (FOLDER, ("prices.toml", "is a folder")),
    (UNREADABLE, ("prices.toml", "Permission denied")),
    (b'as_of = "' + LATIN1 + b'"\n', ("prices.toml:1", "0xe9 is not UTF-8")),
    ("", ("prices.toml", "field 'models'", "required", "input and output")),
    ("[models.m]\ninput = \n", ("prices.toml:2", "not valid TOML")),
    (
        '[models.m]\ninput = "cheap"\noutput = 1\n',
        ("prices.toml", "field 'models.m.input' on line 2", "valid number"),
    ),
    (
        "[models.m]\ninput = -1\noutput = 1\n",
        ("prices.toml", "field 'models.m.input' on line 2", "greater than or equal to 0"),
    ),
    ("[models.m]\ninput = nan\noutput = 1\n", ("field 'models.m.input' on line 2", "finite")),
    ("[models.m]\ninput = 1\n", ("prices.toml", "field 'models.m.output' on line 1", "required")),
    (
        '[models."gpt-4.1"]\ninput = 1\noutput = [2]\n',
        ("prices.toml", "field 'models.gpt-4.1.output' on line 3", "valid number"),
    ),
    ("models = []\n", ("prices.toml", "field 'models' on line 1", "valid dictionary")),
    (
        "as_of = 2025-08-01\n[models.m]\ninput = 1\noutput = 2\n",
        ("prices.toml", "field 'as_of' on line 1", "valid string"),
    ),
    (
        "[models.m]\ninput = 1e308\noutput = 1\n",
        ("prices.toml", "field 'models.m.input' on line 2", "more than 1000000 USD per million"),
    ),
    (
        "[models.m]\ninput = 1\ncached_input = 2e6\noutput = 1\n",
        ("prices.toml", "field 'models.m.cached_input' on line 3", "more than 1000000"),
    ),
    (
        'currency = "EUR"\n[models.m]\ninput = 1\noutput = 2\n',
        ("prices.toml", "field 'currency' on line 1", "Extra inputs"),
    ),
]
PRICES = [
    case(prices(command, content), *words, id=f"prices-{command}-{i}")
    for command in ("run", "table")
    for i, (content, words) in enumerate(BAD_PRICES)
]

BAD_RUNS = {
    "runs-none": (None, ("runs.jsonl", "no such file")),
    "runs-folder": (FOLDER, ("runs.jsonl", "is a folder")),
    "runs-middle-line": (
        GOOD_RUNS + '{"arm": "direct", "task_\n' + RECORD.replace('"t1"', '"t2"') + "\n",
        ("runs.jsonl:2", "Invalid JSON"),
    ),
    "runs-wrong-type": (
        RECORD.replace('"repeat":0', '"repeat":"first"') + "\n",
        ("runs.jsonl:1", "field 'repeat'"),
    ),
    "runs-array": ("[]\n", ("runs.jsonl:1", "(whole line)")),
    "runs-schema-unknown": (
        RECORD.replace('"schema_version":2', '"schema_version":99') + "\n",
        ("runs.jsonl:1", "field 'schema_version'", "less than or equal to 2"),
    ),
    "runs-repeat-string": (
        RECORD.replace('"repeat":0', '"repeat":"0"') + "\n",
        ("runs.jsonl:1", "field 'repeat'", "valid integer"),
    ),
    "runs-negative-tokens": (
        RECORD.replace('"tokens_in":100', '"tokens_in":-5') + "\n",
        ("runs.jsonl:1", "field 'tokens_in'", "greater than or equal to 0"),
    ),
    "runs-nan-cost": (
        RECORD.replace('"cost_usd":null', '"cost_usd":NaN') + "\n",
        ("runs.jsonl:1", "field 'cost_usd'", "finite number"),
    ),
    "runs-latin1": (
        GOOD_RUNS.encode() + b'{"arm": "' + LATIN1 + b'"}\n',
        ("runs.jsonl:2", "UTF-8"),
    ),
    "runs-unreadable": (
        UNREADABLE,
        ("runs.jsonl", "Permission denied"),
    ),
}
RESULTS = [
    case(results(command, runs), *words, id=f"{command}-{name}")
    for command in READERS
    for name, (runs, words) in BAD_RUNS.items()
] + [
    case(
        results(command, ""),
        "bad",
        "no finished runs",
        id=f"{command}-runs-empty",
    )
    for command in READERS
]

TRACES_FOLDERS = [
    case(traces_folder(*command), "traces.jsonl", "is not a file", id=f"traces-folder-{name}")
    for name, command in {
        "report": ("report", "{res}", "-o", "{tmp}/r.html"),
        "failures": ("failures", "{res}"),
        "table": ("table", "{res}", "--failures"),
    }.items()
]

RESUMES = [
    case(cli(*RUN, "--arm", "direct", "--out", __file__), "is a file", "--out", id="out-file"),
    case(
        cli(*RUN, "--arm", "plan:max_steps=1", "--out", "{tmp}/out"),
        "plan:max_steps=1",
        "max_steps of at least 2",
        id="arm-below-its-floor",
    ),
    case(
        cli(*RUN, "--arm", "react_text:max_steps=0", "--out", "{tmp}/out"),
        "react_text:max_steps=0",
        "max_steps of at least 1",
        id="arm-without-a-step",
    ),
    case(
        cli(*RUN, "--arm", "self_consistency:samples=100,max_steps=5", "--out", "{tmp}/out"),
        "needs max_steps of at least 100",
        id="arm-fewer-steps-than-samples",
    ),
    case(
        cli(*RUN, "--arm", "pipeline:max_steps=3,stages=plan_execute>cot", "--out", "{tmp}/out"),
        "needs max_steps of at least 4",
        "plan_execute 3, cot 1",
        id="pipeline-below-its-stages-floors",
    ),
    case(
        cli(*RUN, "--arm", "pipeline:stages=cot>react_text:guard=on", "--out", "{tmp}/out"),
        "stage 2 is 'react_text:guard=on'",
        "PATTERN;key=value",
        id="pipeline-stage-written-as-an-arm",
    ),
    case(
        cli(*RUN, "--arm", "direct", "--out", f"{__file__}/sub"),
        "test_bad_input.py",
        "--out",
        id="out-under-a-file",
    ),
    case(out_folder(experiment_json=""), "experiment.json", "not a JSON object", id="meta-empty"),
    case(out_folder(experiment_json="[]"), "experiment.json", "not a JSON object", id="meta-list"),
    case(out_folder(experiment_json=LATIN1), "experiment.json", "unusable", id="meta-latin1"),
    case(
        out_folder(experiment_json=FOLDER),
        "experiment.json",
        "folder",
        id="meta-folder",
    ),
    case(
        out_folder(experiment_json=UNREADABLE),
        "experiment.json",
        "Permission denied",
        id="meta-unreadable",
    ),
    case(
        out_folder(runs_jsonl=GOOD_RUNS + "{garbled\n" + GOOD_RUNS.replace('"t1"', '"t2"')),
        "runs.jsonl:2",
        "Invalid JSON",
        id="resume-middle-line",
    ),
    case(
        out_folder(runs_jsonl=GOOD_RUNS.encode() + LATIN1 + b"\n"),
        "runs.jsonl:2",
        "UTF-8",
        id="resume-latin1",
    ),
    case(
        out_folder(runs_jsonl=FOLDER),
        "runs.jsonl",
        "folder",
        id="resume-runs-folder",
    ),
]

GRADES = [
    case(cli("grade", "--answer", "4", "--expected", "{4}"), "--expected", "JSON", id="g-syntax"),
    case(cli("grade", "--answer", "4", "--expected", "[4]"), "--expected", "e.g.", id="g-list"),
    case(
        cli("grade", "--answer", "4", "--expected", '{"numbers": ["4"]}'),
        "--expected",
        "field 'numbers.0'",
        id="g-number-str",
    ),
    case(
        cli("grade", "--answer", "4", "--expected", '{"numbers": [1e999]}'),
        "--expected",
        "finite",
        id="g-number-inf",
    ),
    case(
        cli("grade", "--answer", "4", "--expected", "{}"),
        "--expected",
        "expects nothing",
        id="g-nothing",
    ),
    case(
        cli("grade", "--answer", "4", "--expected", '{"number": [4]}'),
        "--expected",
        "field 'number'",
        id="g-unknown-key",
    ),
    case(cli("grade", "--answer", "4", "--expected", DEEP), "--expected", "nested", id="g-deep"),
    case(
        cli("grade", "--answer", "4", "--expected", LONG_NUMBER),
        "--expected",
        "4300 digits",
        id="g-long-number",
    ),
]

COSTS = [
    case(cli("cost", "retry", "--p", "2", "--k", "3"), "'--p'", "0<=x<=1", id="retry-p"),
    case(cli("cost", "retry", "--p", "1", "--k", "-1"), "'--k'", "1<=x", id="retry-k"),
    case(cli("cost", "verifier", "--p", "0.5", "--f", "-1"), "'--f'", id="verifier-f"),
    case(cli("cost", "verifier", "--p", "0.5", "--f", "0", "--m", "0"), "'--m'", id="verifier-m"),
    case(cli("cost", "patterns", "--steps", "-1"), "'--steps'", id="patterns-steps"),
    case(cli("cost", "patterns", "--breadth", "1" + "0" * 30), "'--breadth'", id="patterns-b"),
    case(cli("cost", "patterns", "--candidates", "0"), "'--candidates'", id="patterns-m"),
    case(cli("cost", "patterns", "--cache-rate", "2"), "'--cache-rate'", id="patterns-cache"),
    case(cli("cost", "patterns", "--prompt", "-1"), "'--prompt'", id="patterns-prompt"),
    case(cli("cost", "growth", "--steps", "2,-5"), "--steps", "0 to 10000", id="growth-negative"),
    case(cli("cost", "growth", "--steps", "10**12"), "--steps", "whole numbers", id="growth-expr"),
    case(cli("cost", "growth", "--steps", "99999999"), "--steps", "0 to 10000", id="growth-huge"),
]


def plot_to(output: str) -> Build:
    def build(tmp: Path, mp: pytest.MonkeyPatch) -> list[str]:
        good = write(tmp / "good" / "runs.jsonl", GOOD_RUNS, mp).parent
        (tmp / "a folder").mkdir()
        return ["plot", str(good), "--kind", "status", "-o", output.replace("{tmp}", str(tmp))]

    return build


PLOTS = [
    case(plot_to("{tmp}/a folder"), "a folder", "is a folder", id="plot-to-folder"),
    case(plot_to("{tmp}/none/p.png"), "p.png", "cannot be written", id="plot-to-nowhere"),
    case(plot_to(f"{__file__}/p.png"), "p.png", "cannot be written", id="plot-under-a-file"),
]

BAD_INPUTS = (
    TASK_SETS + EXPERIMENTS + PRICES + RESULTS + TRACES_FOLDERS + RESUMES + GRADES + COSTS + PLOTS
)


def refused(result: Result, words: tuple[str, ...]) -> str:
    """The one error line, after checking the exit code and that nothing else went wrong."""
    shown = result.output
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        shown += "".join(traceback.format_exception(result.exception))
    assert result.exit_code == 2, shown
    assert "Traceback" not in shown
    last = shown.strip().splitlines()[-1]
    assert last.startswith("Error: "), shown  # the message is one line, and the last one
    for word in words:
        assert word in last, f"{word!r} not in {last!r}"
    return last


@pytest.mark.parametrize("case", BAD_INPUTS)
def test_bad_input_exits_2_with_one_line_naming_file_line_and_field(
    case: Case, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    args = case.build(tmp_path, monkeypatch)
    refused(CliRunner().invoke(main, args), case.words)


def test_a_bad_task_set_writes_no_results_folder(tmp_path, monkeypatch):
    refused(
        CliRunner().invoke(main, task_set(tasks_jsonl=expecting())(tmp_path, monkeypatch)),
        ("tasks.jsonl:1",),
    )
    assert not (tmp_path / "out").exists()


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads a file whatever its permissions")
def test_a_file_without_read_permission_is_refused(tmp_path, monkeypatch):
    args = task_set()(tmp_path, monkeypatch)
    (tmp_path / "set" / "tasks.jsonl").chmod(0)
    refused(CliRunner().invoke(main, args), ("tasks.jsonl", "Permission denied"))


BOM = "\ufeff"


def test_a_bom_is_accepted_in_every_loader(tmp_path, monkeypatch):
    for name, good in GOOD_SET.items():
        assert isinstance(good, str)
        write(tmp_path / "set" / name, BOM + good, monkeypatch)
    assert load_taskset(tmp_path / "set").encyclopedia is not None
    (tmp_path / "exp.toml").write_text(BOM + 'arms = ["direct"]\n', encoding="utf-8")
    assert load_experiment(tmp_path / "exp.toml").arms == ["direct"]
    (tmp_path / "prices.toml").write_text(BOM + GOOD_PRICES, encoding="utf-8")
    assert load_prices(tmp_path / "prices.toml").find("m") is not None


def test_a_bom_in_a_task_set_runs_through_the_cli(tmp_path):
    folder = tmp_path / "set"
    folder.mkdir()
    (folder / "taskset.toml").write_text(BOM + 'name = "mine"\ntools = ["calc"]\n')
    (folder / "tasks.jsonl").write_text(BOM + task())
    args = [*RUN, "--arm", "direct", "--tasks", str(folder), "--out", str(tmp_path / "out")]
    result = CliRunner().invoke(main, args)
    # Read and run: its one run failed to connect, so nothing was graded (exit 3).
    assert result.exit_code == 3, result.output
    assert "1 runs done" in result.output and "api_error" in result.output


def test_a_bom_in_runs_jsonl_is_accepted(tmp_path):
    (tmp_path / "runs.jsonl").write_text(BOM + GOOD_RUNS, encoding="utf-8")
    result = CliRunner().invoke(main, ["table", str(tmp_path)])
    assert result.exit_code == 0, result.output


def test_an_answer_with_a_400_digit_number_is_graded_not_a_crash():
    result = CliRunner().invoke(
        main, ["grade", "--answer", "9" * 400, "--expected", '{"numbers": [9]}']
    )
    assert result.exit_code == 0 and result.output.startswith("wrong: expected numbers [9]")


def test_huge_repeats_start_running_in_bounded_memory(tmp_path):
    """--repeats 10**15 must start at once in 1 GB of address space: jobs expanded lazily."""
    code = (
        "import resource, sys; resource.setrlimit(resource.RLIMIT_AS, (2**30, 2**30)); "
        "from loopbench.harness.cli.main import main; main(sys.argv[1:])"
    )
    args = [*RUN, "--arm", "direct", "--repeats", str(10**15), "--out", str(tmp_path / "out")]
    log = tmp_path / "stderr"
    env = {**os.environ, "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1"}
    with log.open("wb") as err:
        process = subprocess.Popen(
            [sys.executable, "-c", code, *args], stdout=subprocess.DEVNULL, stderr=err, env=env
        )
        try:
            deadline = time.monotonic() + 60
            while process.poll() is None and time.monotonic() < deadline:
                if b"runs to do" in log.read_bytes():
                    break
                time.sleep(0.1)
        finally:
            process.kill()
            process.wait()
    said = log.read_bytes().decode(errors="replace")
    assert "runs to do" in said and "Traceback" not in said, said[-2000:]


def test_an_experiment_is_taken_by_its_shipped_name_from_any_folder(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # no experiments/ here, as for an installed package
    for given in ("chapter3", "chapter3.toml", "experiments/chapter3.toml"):
        config = load_experiment(Path(given))
        assert config.tasks == "depot" and len(config.arms) == 6, given
    assert "chapter3" in shipped_experiments() and "full-grid" in shipped_experiments()


def test_a_file_at_the_path_given_wins_over_a_shipped_experiment_of_its_name(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    Path("chapter3").write_text('arms = ["cot"]\n')
    assert load_experiment(Path("chapter3")).arms == ["cot"]
    refused(
        CliRunner().invoke(main, [*RUN, "--experiment", "elsewhere/chapter3.toml"]),
        ("elsewhere/chapter3.toml", "no such file", "chapter3, full-grid"),
    )


def test_the_shipped_experiments_are_those_of_the_checkout():
    shipped = sorted(p.name for p in SHIPPED_EXPERIMENTS.glob("*.toml"))
    checkout = Path(__file__).parents[1] / "experiments"
    assert shipped == sorted(p.name for p in checkout.glob("*.toml")) != []


def test_a_price_at_the_most_a_price_may_be_is_taken(tmp_path):
    (tmp_path / "prices.toml").write_text(
        f"[models.m]\ninput = {MAX_PRICE}\noutput = {MAX_PRICE}\n", encoding="utf-8"
    )
    price = load_prices(tmp_path / "prices.toml").require("m")
    assert price.cost(10**12, 10**12) == 2 * 10**12
