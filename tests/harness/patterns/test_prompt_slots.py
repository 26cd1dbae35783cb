"""Prompt slots: with none overridden every pattern sends what it sent before they existed,
byte for byte; an overridden slot's text reaches the requests that slot makes, and no
other request changes; a bad prompt file is one line, exit 2, before any request; two
prompt versions of one pattern are two arms."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

import loopbench
from harness.cli.main import main
from harness.fakes.code_responder import CodeResponder
from harness.fakes.fake_server import FakeServer, Responder, default_responder
from harness.patterns.catalog import registered
from tasks.loading import load_taskset
from tests.harness.patterns.requests_sent import FIXTURE, SETS, SPECS, every_request, sent

BEFORE: dict[str, list[Any]] = json.loads(FIXTURE.read_text())


def responder(tasks: str) -> Responder:
    return CodeResponder(load_taskset(tasks)) if tasks == "coding" else default_responder


def canonical(value: Any) -> Any:
    return json.loads(json.dumps(value, sort_keys=True))


def test_with_no_slot_overridden_every_pattern_sends_what_it_sent_before() -> None:
    assert canonical(every_request()) == BEFORE


def test_every_shipped_pattern_declares_its_prompts_as_slots() -> None:
    shipped = {spec.partition(":")[0] for spec in SPECS}
    bare = [name for name in shipped if not registered()[name].prompts.slots]
    assert bare == []


def printed_prompt_file(pattern: str, folder: Path) -> Path:
    result = CliRunner().invoke(main, ["patterns", pattern, "--prompts"])
    assert result.exit_code == 0, result.output
    path = folder / f"{pattern}-printed.toml"
    path.write_text(result.output, encoding="utf-8")
    return path


def with_prompts(spec: str, path: Path) -> str:
    return f"{spec}{',' if ':' in spec else ':'}prompts={path}"


@pytest.mark.parametrize("spec", SPECS)
def test_the_printed_prompt_file_given_back_sends_the_same_bytes(spec: str, tmp_path: Path) -> None:
    """Every slot overridden with its built-in text as printed: the templates render to the
    very texts the pattern sent before."""
    path = printed_prompt_file(spec.partition(":")[0], tmp_path)
    for tasks, (limit, _) in SETS.items():
        got = sent(with_prompts(spec, path), tasks, limit, responder(tasks), tmp_path)
        assert canonical(got) == BEFORE[f"{tasks} {spec}"], tasks


def marked(pattern: str) -> dict[str, str]:
    """A marker text for every slot of ``pattern``, using every variable it receives."""
    slots = registered()[pattern].prompts.slots.values()
    return {
        slot.name: f"MARK-{slot.name} " + " ".join("{{ " + v + " }}" for v in slot.variables)
        for slot in slots
    }


#: Slots the fake's runs never reach (the fake's plans never fail nor have phases): their
#: overrides are tested in their pattern's own tests.
UNREACHED = {
    "plan_execute": {"replan", "replan_request"},
    "goal_decomposition": {"plan_phase", "plan_phase_request"},
}


@pytest.mark.parametrize("pattern", sorted({spec.partition(":")[0] for spec in SPECS}))
def test_an_overridden_slot_reaches_its_requests_and_no_other_request_changes(
    pattern: str, tmp_path: Path
) -> None:
    reached = set()
    for name, text in marked(pattern).items():
        path = tmp_path / f"{name}.toml"
        path.write_text(f"{name} = {json.dumps(text)}\n", encoding="utf-8")
        for spec in (s for s in SPECS if s.partition(":")[0] == pattern):
            for tasks, (limit, _) in SETS.items():
                got = canonical(
                    sent(with_prompts(spec, path), tasks, limit, responder(tasks), tmp_path)
                )
                before = BEFORE[f"{tasks} {spec}"]
                assert len(got) == len(before), (spec, tasks, name)
                for now, then in zip(got, before, strict=True):
                    changed = now != then
                    has_mark = f"MARK-{name}" in json.dumps(now)
                    assert changed == has_mark, (spec, tasks, name)
                    reached |= {name} if has_mark else set()
    assert reached == set(marked(pattern)) - UNREACHED.get(pattern, set())


@pytest.fixture
def nowhere(tmp_path: Path) -> list[str]:
    """A run's arguments against an endpoint that must never be reached."""
    return ["run", "--model", "m", "--base-url", "http://127.0.0.1:9/v1", "--max-retries", "0",
            "--out", str(tmp_path / "out")]  # fmt: skip


BAD_FILES = {
    "an unknown slot": ('stepp = "Think."\n', ["stepp", "not one of its slots", "step"]),
    "a variable the slot does not receive": (
        'step = "Think about {{ topic }}."\n',
        ["step", "topic", "receives no variables"],
    ),
    "a template that does not parse": ('step = "{% if %}"\n', ["step", "not a template"]),
    "not TOML": ("step = \n", ["not valid TOML"]),
    "a value that is not a text": ("step = 3\n", ["step", "must be a text"]),
}


@pytest.mark.parametrize("case", BAD_FILES)
def test_a_bad_prompt_file_is_one_line_naming_the_file_and_slot_with_no_request(
    case: str, tmp_path: Path, nowhere: list[str]
) -> None:
    text, said = BAD_FILES[case]
    path = tmp_path / "bad.toml"
    path.write_text(text, encoding="utf-8")
    result = CliRunner().invoke(main, [*nowhere, "--arm", f"cot:prompts={path}"])
    assert result.exit_code == 2, result.output
    [line] = result.output.strip().splitlines()
    assert line.startswith("Error: ") and str(path) in line, line
    assert all(word in line for word in said), line
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("kind", ["missing", "a FIFO"])
def test_a_prompt_file_that_cannot_be_read_is_one_line(
    kind: str, tmp_path: Path, nowhere: list[str]
) -> None:
    path = tmp_path / "p.toml"
    if kind == "a FIFO":
        os.mkfifo(path)
    result = CliRunner().invoke(main, [*nowhere, "--arm", f"cot:prompts={path}"])
    assert result.exit_code == 2, result.output
    [line] = result.output.strip().splitlines()
    assert line.startswith("Error: ") and str(path) in line, line


def test_two_prompt_versions_of_one_pattern_are_two_arms(tmp_path: Path) -> None:
    (tmp_path / "terse.toml").write_text('step = "Be terse. End with Answer: X."\n')
    (tmp_path / "long.toml").write_text('step = "Take your time. End with Answer: X."\n')
    arms = [f"cot:prompts={tmp_path / name}.toml" for name in ("terse", "long")] + ["cot"]
    seen: set[str] = set()

    def model(request: loopbench.ModelRequest) -> str:
        seen.add(request.system)
        return "Answer: 84"

    out = tmp_path / "r"
    loopbench.Experiment("depot", arms, model=model, out=out, limit=2).run()
    table = loopbench.load(out).table()
    assert sorted(table["arm"]) == ["cot", "cot:prompts=long", "cot:prompts=terse"]
    assert len(seen) == 3 and "Be terse. End with Answer: X." in seen
    records = loopbench.load(out).records()
    hashes = {r.arm: r.prompts_hash for r in records}
    assert hashes["cot"] is None and len(set(hashes.values())) == 3


def test_two_prompt_files_of_one_name_are_refused(tmp_path: Path) -> None:
    for folder in ("a", "b"):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "terse.toml").write_text(f'step = "{folder}: end with Answer: X."\n')
    arms = [f"cot:prompts={tmp_path / folder / 'terse.toml'}" for folder in ("a", "b")]
    with pytest.raises(ValueError, match="two arms are named 'cot:prompts=terse'"):
        loopbench.Experiment("depot", arms, model=lambda r: "Answer: 84", out=tmp_path / "r").run()


def test_the_response_cache_tells_prompt_versions_apart(tmp_path: Path) -> None:
    version = tmp_path / "v.toml"
    cache = tmp_path / "cache"
    served = []
    for n, text in enumerate(("First: end with Answer: X.", "Second: end with Answer: X.")):
        version.write_text(f"step = {json.dumps(text)}\n")
        with FakeServer() as server:
            args = ["run", "--model", "fake", "--base-url", server.base_url, "--limit", "2"]
            args += ["--arm", f"cot:prompts={version}", "--cache", str(cache), "--quiet"]
            result = CliRunner().invoke(main, [*args, "--out", str(tmp_path / f"r{n}")])
            assert result.exit_code == 0, result.output
            served.append(server.served.requests)
    assert served == [2, 2]  # the second text is not the first's replay
