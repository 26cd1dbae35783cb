"""Prompt slots: with none overridden every pattern sends what it sent before they existed,
byte for byte; an overridden slot's text reaches the requests that slot makes, and no
other request changes; a bad prompt file is one line, exit 2, before any request; two
prompt versions of one pattern are two arms."""

from __future__ import annotations

import asyncio
import copy
import json
import os
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

import loopbench
from loopbench.harness.arms import parse_arm, prompt_files_in
from loopbench.harness.cli.main import main
from loopbench.harness.config import load_experiment
from loopbench.harness.fakes.fake_server import FakeServer
from loopbench.harness.models.counting import CountingClient
from loopbench.harness.models.scripted import ScriptedModel, tool_reply
from loopbench.harness.patterns.acting import GUARD_OBSERVATION
from loopbench.harness.patterns.base import RunContext
from loopbench.harness.patterns.catalog import registered
from loopbench.harness.trace import Trace
from loopbench.tasks.loading import load_taskset
from tests.harness.patterns.requests_sent import (
    FIXTURE,
    REGENERATE,
    SETS,
    SPECS,
    changed,
    every_request,
    sent,
    specs_of,
)

BEFORE: dict[str, list[Any]] = json.loads(FIXTURE.read_text())


def canonical(value: Any) -> Any:
    return json.loads(json.dumps(value, sort_keys=True))


def test_with_no_slot_overridden_every_pattern_sends_what_it_sent_before() -> None:
    difference = changed(canonical(every_request()), BEFORE, "the requests sent")
    assert difference is None, difference


def test_a_changed_request_is_named_where_it_changed_with_the_command_that_records_it() -> None:
    got = copy.deepcopy(BEFORE)
    got["depot react"][0]["messages"][0]["content"] += " Be brief."
    said = changed(got, BEFORE, "the requests sent")
    assert said is not None and REGENERATE in said, said
    assert "['depot react'][0]['messages'][0]['content']" in said and "Be brief." in said
    assert changed(BEFORE, BEFORE, "the requests sent") is None


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


@pytest.mark.parametrize("spec", specs_of("coding"))
def test_the_printed_prompt_file_given_back_sends_the_same_bytes(spec: str, tmp_path: Path) -> None:
    """Every slot overridden with its built-in text as printed: the templates render to the
    very texts the pattern sent before."""
    path = printed_prompt_file(spec.partition(":")[0], tmp_path)
    for tasks in SETS:
        if spec not in specs_of(tasks):
            continue
        got = canonical(sent(with_prompts(spec, path), tasks, tmp_path))
        difference = changed(got, BEFORE[f"{tasks} {spec}"], f"{tasks} {spec}")
        assert difference is None, difference


def marked(pattern: str) -> dict[str, str]:
    """A marker text for every slot of ``pattern``, using every variable it receives."""
    slots = registered()[pattern].prompts.slots.values()
    return {
        slot.name: f"MARK-{slot.name} " + " ".join("{{ " + v + " }}" for v in slot.variables)
        for slot in slots
    }


#: Slots the fake's runs never reach (its plans never fail nor have phases, its critiques
#: never ask for a rewrite, it repeats no action): their overrides are tested in their
#: patterns' own tests.
UNREACHED = {
    "goal_decomposition": {"plan_phase", "plan_phase_request"},
    "plan": {"guard"},
    "plan_execute": {"replan", "replan_request"},
    "react": {"guard"},
    "react_text": {"guard", "no_action"},
    "reflection": {"rewrite"},
    "rewoo": {"guard"},
}


@pytest.mark.parametrize("pattern", sorted({spec.partition(":")[0] for spec in SPECS}))
def test_an_overridden_slot_reaches_its_requests_and_no_other_request_changes(
    pattern: str, tmp_path: Path
) -> None:
    reached = set()
    for name, text in marked(pattern).items():
        path = tmp_path / f"{name}.toml"
        path.write_text(f"{name} = {json.dumps(text)}\n", encoding="utf-8")
        for tasks in SETS:
            for spec in (s for s in specs_of(tasks) if s.partition(":")[0] == pattern):
                got = canonical(sent(with_prompts(spec, path), tasks, tmp_path))
                before = BEFORE[f"{tasks} {spec}"]
                # Until the slot is first sent, every request is what it was; from then on
                # the fake may answer another text otherwise, and the runs diverge.
                for n, (now, then) in enumerate(zip(got, before, strict=False)):
                    if f"MARK-{name}" in json.dumps(now):
                        reached.add(name)
                        break
                    difference = changed(now, then, f"{tasks} {spec}, slot {name} set, request {n}")
                    assert difference is None, difference
                else:
                    assert len(got) == len(before), (spec, tasks, name)
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


def run_with(tmp_path: Path, spec: str, replies: list[Any], **slots: str) -> Any:
    """Arm ``spec`` with ``slots`` overridden by a prompt file, against scripted replies:
    the requests it sent."""
    path = tmp_path / "slots.toml"
    path.write_text("".join(f"{name} = {json.dumps(text)}\n" for name, text in slots.items()))
    arm = parse_arm(with_prompts(spec, path))
    model, trace = ScriptedModel(replies), Trace()
    tools = load_taskset(SETS["depot"][0]).toolset(arm.options.tool_options())
    ctx = RunContext(
        "How far?", CountingClient(model, trace), "m", tools, trace, prompts=arm.prompts
    )
    asyncio.run(arm.build().run(ctx))
    return model.requests


def test_the_slots_the_fake_never_reaches_are_sent_where_their_paths_go(tmp_path: Path) -> None:
    """UNREACHED above, on paths scripted here: a replan, a phase planned, a rewrite."""
    looping = tool_reply(("lookup", {"title": "Nile"}))
    step = {"id": 1, "description": "a"}
    replies = [tool_reply(("plan", {"steps": [step]})), looping, looping, looping]
    replies += [tool_reply(("plan", {"steps": [{**step, "id": 2}]})), "6650", "6650 km"]
    sent_ = run_with(
        tmp_path, "plan_execute:replan=on", replies, replan="R-SYS",
        replan_request="R-REQ {{ failed_id }} {{ failed_step }}|{{ question }}|{{ results }}",
    )  # fmt: skip
    assert sent_[4].system == "R-SYS" and sent_[4].messages[0].content == "R-REQ 1 a|How far?|"
    phase = {"name": "facts", "description": "find the years"}
    replies = [tool_reply(("decomposition", {"goal": "g", "phases": [phase]}))]
    replies += [tool_reply(("phase_tasks", {"tasks": ["find A"]})), "1889", "84"]
    sent_ = run_with(
        tmp_path, "goal_decomposition", replies, plan_phase="P-SYS",
        plan_phase_request="P-REQ {{ phase }}: {{ description }}|{{ question }}",
    )  # fmt: skip
    assert sent_[1].system == "P-SYS"
    assert sent_[1].messages[0].content == "P-REQ facts: find the years|How far?"
    critique = tool_reply(("critique", {"needs_refinement": True, "critique": "say years"}))
    sent_ = run_with(tmp_path, "reflection", ["84", critique, "84 years"], rewrite="W-SYS")
    assert sent_[2].system == "W-SYS"


@pytest.mark.parametrize("spec", ["react:guard=on", "react_text:guard=on"])
def test_without_an_override_a_repeat_shows_the_built_in_guard(spec: str, tmp_path: Path) -> None:
    """The override tests above change a slot; here none is, on a path the fake skips."""
    replies: list[Any] = (
        [tool_reply(("lookup", {"title": "Nile"}))] * 2 + ["x"]
        if spec.startswith("react:")
        else ["Action: lookup[Nile]"] * 2 + ["Action: finish[x]"]
    )
    sent_ = run_with(tmp_path, spec, replies)
    assert GUARD_OBSERVATION in sent_[2].messages[-1].content


def test_an_experiment_files_prompt_files_are_read_from_its_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = tmp_path / "experiments"
    folder.mkdir()
    (folder / "terse.toml").write_text('step = "Be terse. End with Answer: X."\n')
    (folder / "grid.toml").write_text(
        'arms = ["cot:prompts=terse.toml", "pipeline:stages=cot;prompts=terse.toml>direct"]\n'
    )
    monkeypatch.chdir(tmp_path)  # elsewhere: the files are named from the experiment's folder
    config = load_experiment(folder / "grid.toml")
    arms = [parse_arm(spec) for spec in config.arms]
    assert [arm.spec for arm in arms] == [
        "cot:prompts=terse",
        "pipeline:stages=cot;prompts=terse>direct",
    ]
    assert arms[0].prompts == {"step": "Be terse. End with Answer: X."}
    assert prompt_files_in("cot:prompts=/abs/x.toml", folder) == "cot:prompts=/abs/x.toml"
