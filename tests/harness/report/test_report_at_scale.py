"""`loopbench report` of a folder too large to list every run: the tables, plots and counts
are over every run, and the page lists a fixed sample of runs with their traces.

The threshold is lowered to 50 runs so that a folder of a few hundred synthetic runs,
written as the store writes them (records and traces), is a large one.
"""

import hashlib
import json
import os
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pandas as pd
import pytest

from loopbench.harness.report.failures import LABELS, labelled_frame
from loopbench.harness.report.html import _page as page_module
from loopbench.harness.report.html._page import build_page
from loopbench.harness.report.html._sample import CORRECT_PER_ARM, PER_LABEL, sample_rows
from loopbench.harness.report.html._scan import records_of, run_id_in
from loopbench.harness.report.html.render import render_page
from loopbench.harness.report.model_axis import model_and_arm
from loopbench.harness.results.frames import Pricing
from loopbench.harness.results.prices import load_prices
from loopbench.harness.results.reading import read_records
from loopbench.harness.results.records import RunRecord
from loopbench.harness.results.statuses import INFRASTRUCTURE_STATUSES
from loopbench.harness.results.store import RecordWriter
from loopbench.harness.stats.separation import SeparationRule, StoppedRun

from .test_html_report import Watched, browser_test
from .test_html_report import browser as browser

LOW = 50
MODELS = ("m1", "m2")
ARMS = ("cot", "direct")
TASKS = [f"t{number:02}" for number in range(20)]
REPEATS = 4
PRICING = Pricing(load_prices(None), "gpt-5-mini")
#: How a run ends, by (task + 3 * repeat + arm) % 6: about 13 runs of each per model and arm,
#: so some failure labels have more runs than the page lists.
ENDINGS = [
    ("answered", True),
    ("answered", True),
    ("answered", False),
    ("api_error", None),
    ("step_budget", None),
    ("truncated", None),
]


def question(task):
    return f"How many trucks does depot {task} hold?"


def run(model, arm, task, repeat, status, correct, run_id=None, supersedes=None):
    record = RunRecord(
        run_id=run_id or hashlib.md5(f"{model}{arm}{task}{repeat}".encode()).hexdigest(),
        arm=arm,
        pattern=arm,
        task_set="synthetic",
        task_id=task,
        repeat=repeat,
        model=model,
        status=status,
        answer={True: "42", False: "41"}.get(correct),
        correct=correct,
        turns=1,
        tokens_in=1000 + repeat,
        tokens_out=100,
        supersedes=supersedes,
        loopbench_version="0.2.0",
    )
    asked = {"role": "user", "content": question(task)}
    request = {"model": model, "system": "S", "messages": [asked], "tools": []}
    request |= {"temperature": None, "max_output_tokens": None, "stop": []}
    response = {"message": {"role": "assistant", "content": "42"}, "finish_reason": "stop"}
    response |= {"usage": {"input": 1000 + repeat, "output": 100, "cached": 0}, "retries": 0}
    events = [
        {"t": 0.0, "kind": "request", "call": 1, "request": request},
        {"t": 0.5, "kind": "response", "call": 1, "response": response},
    ]
    return record, events


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    """320 runs on two models, each with its trace; three runs retried after an api_error
    (``--retry-errors``), whose first records count no more."""
    path = tmp_path_factory.mktemp("large") / "results"
    path.mkdir()
    with RecordWriter(path) as writer:
        for model in MODELS:
            for a, arm in enumerate(ARMS):
                for t, task in enumerate(TASKS):
                    for repeat in range(REPEATS):
                        status, correct = ENDINGS[(t + 3 * repeat + a) % len(ENDINGS)]
                        if (model, arm, repeat) == ("m1", "cot", 0) and t < 3:
                            first = f"superseded{t}"
                            writer.append(*run(model, arm, task, repeat, "api_error", None, first))
                            writer.append(
                                *run(model, arm, task, repeat, "answered", True, None, first)
                            )
                            continue
                        writer.append(*run(model, arm, task, repeat, status, correct))
    return path


@pytest.fixture(scope="module")
def full(folder):
    return build_page(folder, PRICING)


@pytest.fixture(scope="module")
def sampled(folder):
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(page_module, "LIST_ALL_RUNS", LOW)
        return build_page(folder, PRICING)


def listed(page):
    return pd.DataFrame(page.data["runs"])


def test_below_the_threshold_every_run_is_listed_and_above_a_sample(folder, full, sampled):
    runs = len(read_records(folder))
    assert runs == len(MODELS) * len(ARMS) * len(TASKS) * REPEATS
    assert len(full.data["runs"]) == runs and full.sample is None
    assert 0 < len(sampled.data["runs"]) < runs
    assert (sampled.sample.listed, sampled.sample.runs) == (len(sampled.data["runs"]), runs)


@pytest.mark.parametrize(("runs", "sampled"), [(LOW, False), (LOW + 1, True)])
def test_the_threshold_is_a_number_of_runs_listed_in_full(tmp_path, monkeypatch, runs, sampled):
    monkeypatch.setattr(page_module, "LIST_ALL_RUNS", LOW)
    with RecordWriter(tmp_path) as writer:
        for repeat in range(runs):
            writer.append(*run("m1", "cot", "t00", repeat, "answered", repeat % 2 == 0))
    page = build_page(tmp_path, PRICING)
    assert (page.sample is not None) is sampled
    assert (len(page.data["runs"]) < runs) is sampled


def test_every_arm_and_label_with_runs_has_runs_listed_up_to_the_cap(folder, sampled):
    labelled = labelled_frame(folder)
    arms = [model_and_arm(m, a) for m, a in zip(labelled.model, labelled.arm, strict=True)]
    carrying = Counter(
        (arm, label) for arm, found in zip(arms, labelled.labels, strict=True) for label in found
    )
    assert max(carrying.values()) > PER_LABEL  # the folder puts the cap to the test
    runs = sampled.data["runs"]
    shown = Counter((run["arm"], label) for run in runs for label in run["labels"])
    for group, count in carrying.items():
        assert shown[group] >= min(count, PER_LABEL), group
    correct = Counter(run["arm"] for run in runs if run["correct"])
    assert correct.keys() == set(arms) and min(correct.values()) >= CORRECT_PER_ARM
    assert len(runs) <= len(carrying) * PER_LABEL + len(correct) * CORRECT_PER_ARM


def test_sample_rows_takes_at_most_k_of_each_arm_and_label_in_a_fixed_order():
    rows = 200
    labelled = pd.DataFrame(
        {
            "model": "m",
            "arm": ["a" if i % 2 else "b" for i in range(rows)],
            "task_id": [f"t{i}" for i in range(rows)],
            "repeat": 0,
            "run_id": [f"r{i}" for i in range(rows)],
            "correct": [i % 5 == 0 for i in range(rows)],
            "failed": [i % 5 != 0 for i in range(rows)],
            "labels": [() if i % 5 == 0 else (LABELS[i % 3],) for i in range(rows)],
        }
    )
    chosen = labelled.iloc[sample_rows(labelled)]
    groups = Counter(zip(labelled.arm, labelled.labels, strict=True))
    shown = Counter(zip(chosen.arm, chosen.labels, strict=True))
    for (arm, found), count in groups.items():
        expected = min(count, CORRECT_PER_ARM if found == () else PER_LABEL)
        assert shown[(arm, found)] == expected, (arm, found)
    shuffled = labelled.sample(frac=1, random_state=1).reset_index(drop=True)
    again = shuffled.iloc[sample_rows(shuffled)]
    assert set(again["run_id"]) == set(chosen["run_id"])  # by the runs, not their order


def test_the_sample_is_the_same_in_every_process(folder, sampled):
    """Python's own hash of a string changes with PYTHONHASHSEED: the sample must not."""
    script = (
        "import json, sys; from pathlib import Path\n"
        "from loopbench.harness.report.html import _page\n"
        "from loopbench.harness.report.html._page import build_page\n"
        "from loopbench.harness.results.prices import load_prices\n"
        "from loopbench.harness.results.frames import Pricing\n"
        f"_page.LIST_ALL_RUNS = {LOW}\n"
        "page = build_page(Path(sys.argv[1]), Pricing(load_prices(None), 'gpt-5-mini'))\n"
        "print(json.dumps(sorted(run['id'] for run in page.data['runs'])))\n"
    )
    ids = []
    for seed in ("1", "2"):
        env = {**os.environ, "PYTHONHASHSEED": seed}
        made = subprocess.run(
            [sys.executable, "-c", script, str(folder)], env=env, capture_output=True, text=True
        )
        assert made.returncode == 0, made.stderr
        ids.append(json.loads(made.stdout))
    assert ids[0] == ids[1] == sorted(listed(sampled)["id"])


def test_the_page_says_how_many_runs_it_lists_and_how_to_get_them_all(folder, sampled):
    html = render_page(sampled)
    [note] = re.findall(r'<p class="warn" id="sample-note">(.*?)</p>', html, re.S)
    text = re.sub(r"<[^>]+>", "", note)
    assert f"lists {len(sampled.data['runs'])} of 320 runs" in text
    assert f"loopbench export {folder} --format parquet" in text and "--format csv" in text
    assert f"up to {PER_LABEL} of the runs carrying it" in text
    assert 'id="sample-note"' not in render_page(build_page(folder, PRICING))


def test_aggregates_are_over_every_run(folder, full, sampled):
    assert sampled.summary == full.summary and sampled.notes == full.notes
    assert [(p.title, p.image is None, p.key) for p in sampled.plots] == [
        (p.title, p.image is None, p.key) for p in full.plots
    ]
    assert sampled.failures == full.failures and sampled.labels == full.labels
    assert sampled.matrix == full.matrix
    assert sampled.facts[:-1] == full.facts[:-1]  # the last is when the report was made
    assert dict(full.facts)["runs"] == "320 (2 arms, 20 tasks, 4 repeats)"
    assert sum(arm.runs for arm in sampled.failures) == 320
    # The matrix against the records themselves.
    cells = Counter()
    for record in read_records(folder):
        key = (record.task_id, model_and_arm(record.model, record.arm))
        graded = record.status not in INFRASTRUCTURE_STATUSES
        cells[(*key, "runs")] += 1
        cells[(*key, "graded")] += graded
        cells[(*key, "correct")] += graded and record.correct is True
    for row in sampled.matrix:
        assert row.question == question(row.task)
        for arm, cell in zip(sampled.arms, row.cells, strict=True):
            counted = tuple(cells[(row.task, arm, n)] for n in ("correct", "graded", "runs"))
            assert (cell.correct, cell.graded, cell.runs) == counted


def test_the_listed_runs_are_the_runs_that_count_with_their_traces(folder, full, sampled):
    retried = {record.supersedes for record in read_records(folder) if record.supersedes}
    assert len(retried) == 3
    shown = sampled.data["runs"]
    assert not {run["id"] for run in shown} & retried
    by_id = {run["id"]: run for run in full.data["runs"]}
    for run in shown:  # as the full page lists the same run: fields, labels and trace
        assert run == by_id[run["id"]]
        assert [entry["k"] for entry in run["trace"]] == ["system", "message", "reply"]


def test_records_of_reads_only_the_runs_asked_for_as_read_records_does():
    folder = Path("tests/fixtures/results-0.1.0")  # schema 1: upgraded as it is read
    records = read_records(folder)
    wanted = {records[3].run_id, records[-1].run_id, "not-a-run"}
    assert records_of(folder, wanted) == [records[3], records[-1]]


def test_records_of_takes_a_copied_line_once_as_read_records_does(tmp_path):
    record, _ = run("m1", "cot", "t00", 0, "answered", True, run_id="once")
    (tmp_path / "runs.jsonl").write_text((record.model_dump_json() + "\n") * 2)
    assert records_of(tmp_path, {"once"}) == [record]


def test_records_of_finds_an_id_written_with_an_escape(tmp_path):
    record, _ = run("m1", "cot", "t00", 0, "answered", True, run_id="dépôt")
    line = record.model_dump_json().replace("dépôt", "d\\u00e9p\\u00f4t")
    (tmp_path / "runs.jsonl").write_text(line + "\n")
    assert records_of(tmp_path, {"dépôt"}) == [record]


@pytest.mark.parametrize("threshold", [LOW, None])
def test_the_stopping_rule_note_is_the_one_the_records_give(tmp_path, monkeypatch, threshold):
    with RecordWriter(tmp_path) as writer:
        for a, arm in enumerate(ARMS):
            for t, task in enumerate(TASKS[:10]):
                for repeat in range(3):
                    writer.append(*run("m1", arm, task, repeat, "answered", (t + a) % 3 > 0))
    stopped = StoppedRun(SeparationRule(max_repeats=4), list(ARMS), TASKS[:10])
    stopped.save(tmp_path)
    if threshold:
        monkeypatch.setattr(page_module, "LIST_ALL_RUNS", threshold)
    page = build_page(tmp_path, PRICING)
    assert (page.sample is not None) is bool(threshold)
    assert page.notes[-1] == stopped.footnote(read_records(tmp_path))
    assert "60 runs made, 20 not spent" in page.notes[-1]


@pytest.mark.parametrize(
    ("line", "run_id"),
    [
        (b'{"schema_version":2,"run_id":"abc","arm":"x"}\n', "abc"),
        (b'{"run_id": "abc", "events": []}\n', "abc"),
        (b'{"answer":"\\"run_id\\":\\"no\\"","run_id" :  "abc"}\n', "abc"),
        (b'{"run_id":"a\\u00e9"}\n', "a\u00e9"),
        (b'{"arm":"x"}\n', None),
    ],
)
def test_run_id_in_finds_the_key_not_text_that_looks_like_it(line, run_id):
    assert run_id_in(line) == run_id


@browser_test
def test_a_sampled_page_opens_lists_its_runs_and_a_run_opens_its_trace(browser, sampled, tmp_path):
    path = tmp_path / "report.html"
    path.write_text(render_page(sampled), encoding="utf-8")
    page = Watched(browser, path)
    count = len(sampled.data["runs"])
    assert page.visible_runs().count() == count
    assert page.page.inner_text("#count") == f"{count} of {count} runs"
    assert f"lists {count} of 320 runs" in page.page.inner_text("#sample-note")
    page.page.fill("#search", 'label:"api error"')
    api_errors = [run for run in sampled.data["runs"] if "api error" in run["labels"]]
    assert page.visible_runs().count() == len(api_errors) > 0
    page.visible_runs().first.click()  # the list is in the page data's order
    first = api_errors[0]
    assert page.page.locator("#trace").is_visible()
    title = f"{first['arm']} · {first['task']} · repeat {first['repeat']}"
    assert page.page.inner_text("#trace-title") == title
    assert page.page.inner_text("#trace .question") == f"Question\n{question(first['task'])}"
    assert page.page.locator("#trace .turn.reply").count() == 1
    assert "api_error" in page.page.inner_text("#trace .verdict")
    page.assert_clean()
    page.page.close()
