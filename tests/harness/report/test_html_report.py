"""`loopbench report`: one HTML file, opened in a real browser (Debian's Chromium, driven by
playwright) with the network cut off, and read as a person would: what the page shows.

The results come from a small grid run through the CLI against a fake server that answers
right and wrong, fails with HTTP 500, loops until the step budget ends the run, and replies
with ``</script><script>alert(1)</script>``; one task's question holds a script too.
"""

import json
import re
import shutil
import struct

import pytest
from click.testing import CliRunner

from loopbench.harness.cli.main import main
from loopbench.harness.cli.report import report_command
from loopbench.harness.cli.table import table_command
from loopbench.harness.events import parse_events
from loopbench.harness.fakes.fake_server import FakeServer, Reply, question_index
from loopbench.harness.report.html._conversation import conversation
from loopbench.harness.report.html.render import page_json
from loopbench.harness.results.reading import read_records
from loopbench.harness.results.store import iter_traces

try:
    from playwright.sync_api import sync_playwright
except ImportError:  # a dev dependency: pip install -e '.[dev]'
    sync_playwright = None

CHROMIUM = shutil.which("chromium")
browser_test = pytest.mark.skipif(
    sync_playwright is None or CHROMIUM is None,
    reason="needs playwright (pip install -e '.[dev]') and the system Chromium (apt-get install "
    "chromium; `make test` installs it when run as root); no browser is downloaded",
)

REPLY_SCRIPT = "</script><script>alert(1)</script> 4"
TASKS = [
    ("sum", "What is 80 + 4?", 84),
    ("flip", "What is 50 + 50?", 100),
    ("script", "What is 2 + 2? <script>alert('task')</script>", 4),
    ("outage", "What is 7 * 6?", 42),
    ("loop", "What is 3 * 3?", 9),
]
DIRECT, REACT = "direct", "react:max_steps=3"
PRICING = ["--price-as", "gpt-5-mini"]


def responder(body):
    """direct: right but on `flip`; react: looks up with calc, then answers; the server fails
    react's `outage` calls, and react's `loop` repeats its calc until the budget ends it."""
    messages = body["messages"]
    start = question_index(messages)
    question = messages[start]["content"]
    turns = sum(m["role"] == "assistant" for m in messages[start:])
    tools = bool(body.get("tools"))
    expression = re.search(r"\d+ [+*] \d+", question)
    if "7 * 6" in question and tools:
        return Reply(status=500)
    if "2 + 2" in question:
        return Reply(REPLY_SCRIPT)
    if tools and expression and (turns == 0 or "3 * 3" in question):
        arguments = json.dumps({"expression": expression.group()})
        call = {
            "id": "c1",
            "type": "function",
            "function": {"name": "calc", "arguments": arguments},
        }
        return Reply(tool_calls=[call], finish_reason="tool_calls")
    if "50 + 50" in question:
        return Reply("100" if tools else "84")
    return Reply(str(next(answer for _, q, answer in TASKS if q == question)))


@pytest.fixture(scope="module")
def results(tmp_path_factory):
    root = tmp_path_factory.mktemp("report")
    tasks = root / "tasks"
    tasks.mkdir()
    (tasks / "taskset.toml").write_text('name = "mini"\ntools = ["calc"]\n')
    lines = [
        json.dumps({"id": id_, "question": q, "expected": {"numbers": [answer]}})
        for id_, q, answer in TASKS
    ]
    (tasks / "tasks.jsonl").write_text("\n".join(lines) + "\n")
    out = root / "results"
    with FakeServer(responder) as server:
        args = ["run", "--tasks", str(tasks), "--base-url", server.base_url, "--model", "fake"]
        args += ["--repeats", "2", "--max-retries", "0", "--quiet", "--out", str(out), *PRICING]
        args += ["--arm", DIRECT, "--arm", REACT]
        ran = CliRunner().invoke(main, args, env={"LOOPBENCH_API_KEY": "k"})
    assert ran.exit_code == 0, ran.output
    return out


@pytest.fixture(scope="module")
def report(results):
    path = results.parent / "report.html"
    made = CliRunner().invoke(
        report_command, [str(results), "--vs", DIRECT, *PRICING, "-o", str(path)]
    )
    assert made.exit_code == 0, made.output
    assert made.output.startswith(f"wrote {path}")
    return path


def test_the_grid_holds_every_kind_of_run(results):
    ended = {(r.arm, r.task_id): (r.status, r.correct) for r in read_records(results)}
    assert ended[(DIRECT, "sum")] == ("answered", True)
    assert ended[(DIRECT, "flip")] == ("answered", False)
    assert ended[(REACT, "outage")] == ("api_error", None)
    assert ended[(REACT, "loop")] == ("step_budget", None)


def test_the_page_loads_nothing_and_embeds_text_only_escaped(report):
    html = report.read_text()
    assert not re.search(r"""(?:src|href)\s*=\s*["'](?!data:|#)""", html)
    assert "<link" not in html and "@import" not in html and "url(" not in html
    [block] = re.findall(
        r'<script type="application/json" id="report-data">(.*?)</script>', html, re.S
    )
    assert "<" not in block and "alert(1)" in block
    assert html.count("<script") == 2  # the data block and the page's own script, no other
    data = json.loads(block)
    assert REPLY_SCRIPT in {run["answer"] for run in data["runs"]}
    assert data["questions"]["script"] == TASKS[2][1]
    assert data["systems"] and all("question" not in run for run in data["runs"])
    [asked] = [e for e in data["runs"][0]["trace"] if e["k"] == "message"]
    assert asked == {"k": "message", "role": "user", "text": "", "question": True}


def test_page_json_escapes_what_would_end_a_script_and_refuses_nan():
    value = {"a": "</script><!-- & \u2028"}
    text = page_json(value)
    assert not re.search("[<>&\u2028]", text) and json.loads(text) == value
    with pytest.raises(ValueError):
        page_json({"a": float("nan")})


def test_a_trace_shows_each_message_once(results):
    [record] = [
        r for r in read_records(results) if (r.arm, r.task_id, r.repeat) == (REACT, "sum", 0)
    ]
    [line] = [line for line in iter_traces(results) if line["run_id"] == record.run_id]
    entries = conversation(parse_events(line["events"]))
    assert [e["k"] for e in entries] == ["system", "message", "reply", "tool", "reply"]
    assert entries[1]["text"] == "What is 80 + 4?"
    assert entries[2]["calls"] == [{"name": "calc", "args": '{"expression": "80 + 4"}'}]
    assert (entries[3]["tool"], entries[3]["result"], entries[4]["text"]) == ("calc", "84", "84")


def test_a_conversation_holds_the_example_apart_and_says_where_a_new_one_starts():
    example = [
        {"role": "user", "content": "Question: an example"},
        {"role": "assistant", "content": "Action: finish[1]"},
    ]
    asked = {"role": "user", "content": "Question: the real one"}
    looked = {"role": "assistant", "content": "Action: lookup[x]"}
    guarded = {"role": "user", "content": "Observation: you have been round this loop"}
    critique = [{"role": "user", "content": "Critique this."}]

    def request(call, messages):
        sent = {"model": "m", "system": "S", "messages": messages, "tools": []}
        sent |= {"temperature": None, "max_output_tokens": None, "stop": []}
        return {"kind": "request", "call": call, "request": sent}

    def response(call, message):
        usage = {"input": 1, "output": 1, "cached": 0}
        got = {"message": message, "finish_reason": "stop", "usage": usage, "retries": 0}
        return {"kind": "response", "call": call, "response": got}

    events = [
        request(1, [*example, asked]),
        response(1, looked),
        {
            "kind": "tool_call",
            "step": 1,
            "tool": "lookup",
            "arguments": {"t": "x"},
            "ok": True,
            "result": "5",
        },
        {"kind": "repeated_action", "step": 1, "tool": "lookup", "guarded": True},
        request(2, [*example, asked, looked, guarded]),
        response(2, {"role": "assistant", "content": "???"}),
        {"kind": "parse_failure", "step": 2, "text": "???"},
        request(3, critique),
        request(4, critique),
    ]
    entries = conversation(parse_events(events))
    kinds = [e["k"] for e in entries]
    assert kinds == [
        "system",
        "example",
        "message",
        "reply",
        "tool",
        "event",
        "message",
        "reply",
        "event",
        "again",
        "message",
        "again",
    ]
    assert [m["text"] for m in entries[1]["messages"]] == [m["content"] for m in example]
    assert entries[4]["args"] == '{"t": "x"}'
    assert entries[6]["text"] == guarded["content"]  # what the guard showed differs: kept
    assert entries[8]["detail"] == {"step": 2}  # the reply's text is not repeated
    assert (entries[9]["same"], entries[11]["same"]) == (False, True)


#: A prompt slot's text that would end the block it is shown in and run a script.
PROMPT_SCRIPT = "</pre><script>alert('prompt')</script> & <b>Answer</b> in a few words.\nThen stop."


@pytest.fixture(scope="module")
def prompted(tmp_path_factory):
    """A report of ``direct`` and ``direct:prompts=hostile``, whose one slot holds a script."""
    root = tmp_path_factory.mktemp("prompted")
    hostile = root / "hostile.toml"
    hostile.write_text(f"answer = {json.dumps(PROMPT_SCRIPT)}\n")
    out, path = root / "results", root / "report.html"
    with FakeServer() as server:
        args = ["run", "--tasks", "depot", "--limit", "2", "--base-url", server.base_url]
        args += ["--model", "fake", "--quiet", "--out", str(out)]
        args += ["--arm", "direct", "--arm", f"direct:prompts={hostile}"]
        ran = CliRunner().invoke(main, args, env={"LOOPBENCH_API_KEY": "k"})
    assert ran.exit_code == 0, ran.output
    made = CliRunner().invoke(report_command, [str(out), "-o", str(path)])
    assert made.exit_code == 0, made.output
    [hashed] = {r.prompts_hash for r in read_records(out) if r.prompts_hash}
    return path, hashed


def test_the_page_shows_each_arms_overridden_slots_escaped(prompted, report):
    path, hashed = prompted
    html = path.read_text()
    [section] = re.findall(r'<section id="prompts">(.*?)</section>', html, re.S)
    assert "direct:prompts=hostile" in section and hashed in section
    assert "<dt>answer</dt>" in section
    assert "&lt;/pre&gt;&lt;script&gt;alert(&#39;prompt&#39;)&lt;/script&gt; &amp;" in section
    assert "<script" not in section and html.count("<script") == 2
    assert 'href="#prompts"' in html
    assert 'id="prompts"' not in report.read_text()  # no arm overrode a slot: no section


def test_a_folder_without_traces_lists_its_runs_without_them(tmp_path):
    out = tmp_path / "r.html"
    made = CliRunner().invoke(report_command, ["tests/fixtures/results-0.1.0", "-o", str(out)])
    assert made.exit_code == 0, made.output
    [block] = re.findall(r'id="report-data">(.*?)</script>', out.read_text(), re.S)
    runs = json.loads(block)["runs"]
    assert runs and all(run["trace"] is None for run in runs)
    assert "No plot: no arm has a cost per correct answer" in out.read_text()


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["missing-folder"], "no such file"),
        (["RESULTS", "--vs", "nope"], "no arm 'nope'"),
        (["RESULTS", "--price-as", "no-such-model"], "no-such-model"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(results, tmp_path, args, says):
    args = [
        str(results) if a == "RESULTS" else str(tmp_path / a) if a == "missing-folder" else a
        for a in args
    ]
    result = CliRunner().invoke(report_command, [*args, "-o", str(tmp_path / "r.html")])
    assert result.exit_code == 2, result.output
    assert result.output.startswith("Error:") and says in result.output
    assert len(result.output.strip().splitlines()) == 1 and not (tmp_path / "r.html").exists()


def test_output_a_folder_is_refused(results, tmp_path):
    result = CliRunner().invoke(report_command, [str(results), "-o", str(tmp_path)])
    assert result.exit_code == 2 and "give -o a file name" in result.output


def test_a_folder_without_runs_is_refused(tmp_path):
    (tmp_path / "runs.jsonl").write_text("")
    result = CliRunner().invoke(report_command, [str(tmp_path), "-o", str(tmp_path / "r.html")])
    assert result.exit_code == 2 and "no finished runs yet" in result.output


# In the browser.


@pytest.fixture(scope="module")
def browser():
    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        yield launched
        launched.close()


class Watched:
    """A page of the report, and everything it tried that it should not have."""

    def __init__(self, browser, report):
        self.url = report.resolve().as_uri()
        self.page = browser.new_page(viewport={"width": 1400, "height": 900})
        self.requests, self.refused, self.errors, self.dialogs = [], [], [], []
        self.page.on("request", lambda request: self.requests.append(request.url))
        self.page.on("console", lambda m: m.type == "error" and self.errors.append(m.text))
        self.page.on("pageerror", lambda error: self.errors.append(str(error)))
        self.page.on("dialog", self._dialog)
        self.page.route("**/*", self._route)
        self.page.goto(self.url)

    def _route(self, route):
        if route.request.url == self.url:
            route.continue_()
        else:
            self.refused.append(route.request.url)
            route.abort()

    def _dialog(self, dialog):
        self.dialogs.append(dialog.message)
        dialog.dismiss()

    def texts(self, selector):
        return self.page.locator(selector).all_inner_texts()

    def visible_runs(self):
        return self.page.locator("#run-table tbody tr:visible")

    def assert_clean(self):
        assert self.requests and set(self.requests) == {self.url} and not self.refused
        assert self.errors == [] and self.dialogs == []


@pytest.fixture
def page(browser, report):
    watched = Watched(browser, report)
    yield watched
    watched.page.close()


def table_cells(results, arm):
    """The markdown table's cells of one arm, by column, as `loopbench table` prints them."""
    printed = CliRunner().invoke(table_command, [str(results), "--vs", DIRECT, *PRICING]).output
    rows = [
        [c.strip() for c in line.strip("|").split("|")]
        for line in printed.splitlines()
        if line.startswith("|")
    ]
    header = rows[0]
    [row] = [r for r in rows[2:] if r[0] == arm]
    return dict(zip(header, row, strict=True))


def matrix_cell(page, task, arm):
    column = page.texts(".matrix thead th").index(arm) + 1
    row = page.page.locator(".matrix tbody tr", has=page.page.locator(f'th[data-sort="{task}"]'))
    return row.locator(f"td:nth-child({column})")


@browser_test
def test_the_page_opens_offline_with_no_error_and_looks_like_a_report(page, tmp_path):
    page.page.wait_for_load_state("load")
    shot = tmp_path / "report.png"
    page.page.screenshot(path=str(shot), full_page=True)
    data = shot.read_bytes()
    width, height = struct.unpack(">II", data[16:24])
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 100_000
    assert width == 1400 and height > 2000
    assert page.page.title().startswith("loopbench report: mini on fake")
    page.assert_clean()


@browser_test
def test_summary_has_one_row_per_arm_with_the_tables_numbers(page, results):
    header = page.texts("#summary thead th")
    rows = page.page.locator("#summary tbody tr")
    assert rows.count() == 2
    for index, arm in enumerate([DIRECT, REACT]):
        shown = dict(zip(header, rows.nth(index).locator("td").all_inner_texts(), strict=True))
        printed = table_cells(results, arm)
        assert shown["arm"] == arm
        for column in ("accuracy [95% CI]", "vs direct [95% CI], p", "cost $", "ended"):
            assert shown[column] == printed[column], column
    assert table_cells(results, REACT)["accuracy [95% CI]"].startswith("50% ")


@browser_test
def test_clicking_a_header_sorts_the_rows(page):
    def arms():
        return page.texts("#summary tbody tr td:first-child")

    header = page.page.locator("#summary thead th", has_text="tok in")
    column = page.texts("#summary thead th").index("tok in")
    header.click()
    ascending = arms()
    tokens = [
        float(t.replace(",", "")) for t in page.texts(f"#summary tbody td:nth-child({column + 1})")
    ]
    assert tokens == sorted(tokens) and tokens[0] < tokens[-1]
    assert header.get_attribute("aria-sort") == "ascending"
    header.click()
    assert arms() == ascending[::-1]


@browser_test
def test_both_plots_are_drawn(page):
    figures = page.page.locator("#plots figure img")
    assert figures.count() == 2
    for index in range(2):
        image = figures.nth(index)
        assert image.evaluate("i => i.complete && i.naturalWidth > 0")
        box = image.bounding_box()
        assert box["width"] > 300 and box["height"] > 150
    assert page.texts("#plots figcaption") == [
        "Accuracy against cost per correct answer",
        "How runs ended",
    ]


@browser_test
def test_the_matrix_grades_each_cell_and_marks_the_tasks_arms_disagree_on(page):
    def cell(task, arm):
        return matrix_cell(page, task, arm).inner_text()

    assert (cell("flip", DIRECT), cell("flip", REACT)) == ("0/2", "2/2")
    assert (cell("sum", DIRECT), cell("loop", REACT)) == ("2/2", "0/2")
    assert cell("outage", REACT) == "—+2"  # no graded run; two api errors
    flips = page.page.locator(".matrix tbody tr.flip th").all_inner_texts()
    assert sorted(t.split()[0] for t in flips) == ["flip", "loop"]
    page.page.check("#only-flips")
    assert page.page.locator(".matrix tbody tr:visible").count() == 2
    page.assert_clean()


@browser_test
def test_searching_filters_the_runs(page):
    assert page.visible_runs().count() == 20
    page.page.fill("#search", "api_error")
    statuses = page.visible_runs().locator("td:nth-child(4)").all_inner_texts()
    assert statuses == ["api_error", "api_error"]
    assert page.page.inner_text("#count") == "2 of 20 runs"
    page.page.fill("#search", 'label:"budget"')
    assert page.visible_runs().locator("td:nth-child(2)").all_inner_texts() == ["loop", "loop"]
    page.page.fill("#search", "direct wrong")  # words match arm, task, status or label
    assert page.visible_runs().count() == 0
    page.page.fill("#search", "")
    assert page.visible_runs().count() == 20
    matrix_cell(page, "flip", DIRECT).click()  # a cell lists its runs
    assert page.page.input_value("#search") == f'arm:"{DIRECT}" task:"flip"'
    assert page.visible_runs().count() == 2


@browser_test
def test_clicking_a_run_opens_its_trace_as_a_conversation(page, results):
    page.page.fill("#search", f'arm:"{REACT}" task:loop repeat:0')
    assert page.visible_runs().count() == 1
    page.visible_runs().first.click()
    trace = page.page.locator("#trace")
    assert trace.is_visible()
    assert page.page.inner_text("#trace-title") == f"{REACT} · loop · repeat 0"
    assert page.page.inner_text("#trace .question") == "Question\nWhat is 3 * 3?"
    tools = page.texts("#trace .turn.tool .who")
    assert len(tools) == 3 and all(
        t.startswith('tool calc({"expression": "3 * 3"})') for t in tools
    )
    verdict = page.page.inner_text("#trace .verdict")
    assert "step_budget" in verdict and "repetition" in verdict and "budget" in verdict
    page.page.keyboard.press("Escape")
    assert not trace.is_visible()
    [run_id] = [
        r.run_id
        for r in read_records(results)
        if (r.arm, r.task_id, r.repeat) == (REACT, "loop", 1)
    ]
    page.page.goto(f"{page.url}#run={run_id}")  # a link to one run opens its trace
    page.page.reload()
    assert page.page.inner_text("#trace-title") == f"{REACT} · loop · repeat 1"
    page.assert_clean()


@browser_test
def test_script_in_a_reply_or_a_question_is_shown_as_text_and_never_runs(page):
    page.page.fill("#search", f'arm:"{DIRECT}" task:script repeat:1')
    page.visible_runs().first.click()
    body = page.page.inner_text("#trace-body")
    assert REPLY_SCRIPT in body and "<script>alert('task')</script>" in body
    assert page.page.evaluate("document.scripts.length") == 2
    page.page.wait_for_timeout(100)
    page.assert_clean()  # no dialog: neither alert ran


@browser_test
def test_the_prompts_an_arm_overrode_are_shown_as_text_and_never_run(browser, prompted):
    path, hashed = prompted
    watched = Watched(browser, path)
    try:
        assert watched.texts("#prompts h3") == [f"direct:prompts=hostile prompts {hashed}"]
        assert watched.texts("#prompts dt") == ["answer"]
        assert watched.texts("#prompts dd pre") == [PROMPT_SCRIPT]
        assert watched.page.evaluate("document.scripts.length") == 2
        watched.page.wait_for_timeout(100)
        watched.assert_clean()  # no dialog: the slot's script did not run
    finally:
        watched.page.close()
