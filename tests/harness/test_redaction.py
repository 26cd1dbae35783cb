"""One redaction for every secret in every form, and every writer applying it."""

import base64
import html
import json
import sys
from typing import Any
from urllib.parse import quote, quote_plus

import pytest
from click.testing import CliRunner

from loopbench.harness.models.cache import ResponseCache
from loopbench.harness.models.types import Message, ModelResponse, ToolCall, Usage
from loopbench.harness.redaction import (
    MARK,
    Redactor,
    holds_secrets,
    protected,
    redact,
)
from loopbench.harness.results.records import RunRecord
from loopbench.harness.results.store import RecordWriter
from loopbench.harness.streams import redacted_output
from tests.secret_text import b64, runs_of_eight

KEY = "sk-proj-Ab3dEf9hIjKlMn0pQrStUv"
PASSWORD = 'p/a#s?s@w"rd\\x9'


FORMS = [
    lambda s: s,
    lambda s: json.dumps(s)[1:-1],
    lambda s: json.dumps(s)[1:-1].replace("/", "\\/"),
    lambda s: "".join(f"\\u{ord(c):04x}" for c in s),
    lambda s: "".join(f"\\u{ord(c):04X}" for c in s),
    lambda s: "".join(f"%{b:02x}" for b in s.encode()),
    lambda s: quote(s, safe=""),
    quote_plus,
    html.escape,
    b64,
    lambda s: b64("a" + s)[2:-2],
    lambda s: b64("ab" + s)[3:-2],
    lambda s: base64.urlsafe_b64encode(s.encode()).decode(),
    lambda s: b64(f"user:{s}"),
    str.upper,
    str.lower,
    str.swapcase,
]


@pytest.mark.parametrize("secret", [KEY, PASSWORD])
@pytest.mark.parametrize("form", range(len(FORMS)))
def test_every_form_of_a_secret_is_redacted(secret, form):
    encoded = FORMS[form](secret)
    text = redact_with(secret, f"before {encoded} after")
    assert text.startswith("before ") and text.endswith(" after")
    core = text.removeprefix("before ").removesuffix(" after")
    # Left of a base64 form: the characters that also hold the bytes around the secret.
    assert MARK in core and len(core) <= len(MARK) + 10
    assert not [r for r in runs_of_eight(encoded) if r in core.replace(MARK, "|")]


def redact_with(secret: str, text: str) -> str:
    return Redactor([secret], [("user", secret)])(text)


def test_a_part_of_eight_characters_is_redacted_and_seven_are_not():
    redactor = Redactor([KEY])
    assert redactor(f"x{KEY[5:13]}y") == f"x{MARK}y"
    assert redactor(f"x{KEY[5:12]}y") == f"x{KEY[5:12]}y"


def test_a_secret_of_six_or_seven_characters_is_redacted_whole_and_a_shorter_not_alone():
    assert Redactor(["hunter2"])("the hunter2 word") == f"the {MARK} word"
    assert Redactor(["bob"])("bob and bobby") == "bob and bobby"
    assert Redactor(["bob"], [("bob", "pw")])("bob:pw") == MARK


HAND_KEY = "sk-test-newcomer-1234"


def test_a_word_of_a_key_written_by_hand_is_left_where_ordinary_text_holds_it():
    redactor = Redactor([HAND_KEY])
    for text in ("/home/newcomer/results", "/tmp/newcomer-results/", "NEWCOMER, Newcomer"):
        assert redactor(text) == text
    assert redactor("a 1234-page book") == "a 1234-page book"  # too short anyway


def test_a_key_written_by_hand_is_redacted_whole_in_every_form_and_where_it_is_cut():
    redactor = Redactor([HAND_KEY], [("user", HAND_KEY)])
    for form in FORMS:
        encoded = form(HAND_KEY)
        said = redactor(f"Authorization: Bearer {encoded} at /home/newcomer")
        assert said.startswith("Authorization: Bearer ") and MARK in said, encoded
        assert said.endswith(" at /home/newcomer") and HAND_KEY[:8] not in said
    # Cut by an endpoint or a model: each run reaching past one word of it is the key's.
    assert redactor("sent sk-test-newc...") == f"sent {MARK}..."
    assert redactor("key ...ewcomer-1234") == f"key ...e{MARK}"
    assert redactor("in /tmp/test-newcomer") == f"in /tmp/{MARK}er"


def test_a_run_within_a_random_word_of_a_key_is_redacted():
    redactor = Redactor(["sk-proj-Ab3dEf9hIjKlMn0pQrStUv", "correcthorsebatterystaplezebra"])
    assert redactor("x f9hIjKlM y") == f"x {MARK} y"  # cases, letters and digits mixed
    assert redactor("x batterys y") == f"x {MARK} y"  # letters past LONGEST_WORD
    assert Redactor(["sk-a-bcdefghij"])("x bcdefghij y") == "x bcdefghij y"


def test_text_without_secrets_is_left_as_it_is():
    text = "Thought: look it up.\nAction: lookup[Paris] " * 50
    assert Redactor([KEY, PASSWORD])(text) == text


def test_json_text_stays_json_where_a_secret_with_escapes_is_cut():
    line = json.dumps({"a": f"x{PASSWORD}y", "b": [PASSWORD[3:12]], "c": 1})
    redacted = Redactor([PASSWORD])(line)
    assert json.loads(redacted)["c"] == 1 and 'w\\"rd' not in redacted
    # A tool printed the key with every character escaped: JSON writes each backslash twice.
    printed = json.dumps({"output": "".join(f"\\u{ord(c):04x}" for c in KEY) + "!"})
    assert json.loads(Redactor([KEY])(printed)) == {"output": f"{MARK}!"}
    # A secret that starts with "n", after a line break: the "n" of its escape is matched.
    printed = json.dumps({"output": "x\nAbcdefgh12345"})
    assert json.loads(Redactor(["nAbcdefgh12345"])(printed)) == {"output": f"x{MARK}"}
    assert Redactor([PASSWORD]).json_text(line) == json.dumps(
        {"a": f"x{MARK}y", "b": [MARK], "c": 1}, ensure_ascii=False
    )


def test_protected_holds_secrets_only_within_it():
    assert not holds_secrets() and redact(KEY) == KEY
    with protected([KEY]):
        with protected([PASSWORD], [("user", PASSWORD)]):
            assert redact(f"{KEY} {PASSWORD}") == f"{MARK} {MARK}"
        assert redact(PASSWORD) == PASSWORD and redact(KEY) == MARK
    assert not holds_secrets() and redact(KEY) == KEY


def record(answer: str, **fields: Any) -> RunRecord:
    return RunRecord(
        run_id="r1",
        experiment_id="e1",
        arm="cot",
        task_set="depot",
        task_id="t1",
        repeat=0,
        model="m",
        status="answered",
        answer=answer,
        **fields,
    )


def test_records_traces_and_the_cache_are_redacted_as_written(tmp_path):
    with protected([KEY]):
        with RecordWriter(tmp_path) as writer:
            writer.append(record(f"key {KEY}"), [{"kind": "tool", "output": KEY.lower()}])
        cache = ResponseCache(tmp_path / "cache")
        reply = Message("assistant", KEY, (ToolCall("c", "run", json.dumps({"k": KEY})),))
        cache.put("k1", {"system": KEY}, ModelResponse(reply, "stop", Usage(1, 1)))
        cache.close()
    written = [
        p.read_bytes().decode("utf-8", "replace") for p in tmp_path.rglob("*") if p.is_file()
    ]
    assert written and not [
        r for text in written for r in runs_of_eight(KEY) if r.lower() in text.lower()
    ]
    assert MARK in (tmp_path / "runs.jsonl").read_text()
    assert MARK in (tmp_path / "traces.jsonl").read_text()


def test_an_error_line_and_whatever_is_printed_are_redacted(capsys):
    with protected([KEY]), redacted_output():
        print(f"out {KEY}")
        print(f"err {KEY.upper()}", file=sys.stderr)
    captured = capsys.readouterr()
    assert captured.out == f"out {MARK}\n" and captured.err == f"err {MARK}\n"


def test_every_command_redacts_the_key_in_its_environment(tmp_path):
    from loopbench.harness.cli.main import main

    missing = tmp_path / f"runs-{KEY}"
    result = CliRunner().invoke(main, ["table", str(missing)], env={"LOOPBENCH_API_KEY": KEY})
    assert result.exit_code == 2 and MARK in result.output
    assert not [r for r in runs_of_eight(KEY) if r in result.output]


def test_a_path_holding_a_word_of_the_key_is_printed_whole(tmp_path):
    from loopbench.harness.cli.main import main

    missing = tmp_path / "newcomer" / "results"
    result = CliRunner().invoke(main, ["table", str(missing)], env={"OPENAI_API_KEY": HAND_KEY})
    assert result.exit_code == 2 and f"{missing}: no such file" in result.output


def test_the_report_and_exports_redact_what_a_folder_holds(tmp_path):
    """A folder written before its secrets were known: what is made of it leaves them out."""
    from loopbench.harness.cli.main import main

    folder = tmp_path / "runs"
    folder.mkdir()
    (folder / "experiment.json").write_text(json.dumps({"experiment_id": "e1"}))
    with RecordWriter(folder) as writer:
        held = record(f"key {KEY}", options={"system": KEY})
        writer.append(held, [{"t": 0.0, "kind": "remark", "text": KEY}])
    assert KEY in (folder / "runs.jsonl").read_text()
    outputs = {"report.html": "report", "runs.csv": "export", "runs.parquet": "export"}
    for name, command in outputs.items():
        fmt = ["--format", name.rpartition(".")[2]] if command == "export" else []
        args = [command, str(folder), *fmt, "-o", str(tmp_path / name)]
        ran = CliRunner().invoke(main, args, env={"LOOPBENCH_API_KEY": KEY})
        assert ran.exit_code == 0, ran.output
    for name in outputs:
        text = (tmp_path / name).read_bytes().decode("utf-8", "replace")
        assert not [r for r in runs_of_eight(KEY) if r in text], name
    assert MARK in (tmp_path / "runs.csv").read_text()


def test_the_ci_job_summary_is_redacted(tmp_path, monkeypatch):
    from loopbench.harness.cli.step_summary import VARIABLE, append_step_summary

    monkeypatch.setenv(VARIABLE, str(tmp_path / "summary.md"))
    with protected([KEY]):
        append_step_summary(f"| arm | {KEY} |")
    assert (tmp_path / "summary.md").read_text() == f"### loopbench compare\n\n| arm | {MARK} |\n\n"
