"""What a prompt file promises: an override that cannot reach the model, or that drops what
the run needs, is refused when the file loads (one line, exit 2, no request sent); a
variable written Python's way (``{question}``) is refused with ``{{ question }}``
suggested; and ``a>b>c`` is the pipeline ``pipeline:stages=a>b>c``, named as it is."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

import loopbench
from loopbench.harness.arms import ArmError, PromptFileError, parse_arm, parse_arms
from loopbench.harness.cli.main import main
from loopbench.harness.errors import BadInput
from loopbench.harness.fakes.fake_server import FakeServer
from loopbench.harness.patterns.catalog import registered
from loopbench.harness.slot_templates import python_style, used_variables


def cli_run(arm: str, out: Path) -> tuple[Any, FakeServer]:
    """``loopbench run`` of ``arm`` on two depot tasks against the loopback fake."""
    with FakeServer() as server:
        args = ["run", "--tasks", "depot", "--limit", "2", "--arm", arm, "--quiet"]
        args += ["--model", "fake", "--base-url", server.base_url, "--out", str(out)]
        return CliRunner().invoke(main, args), server


def written(folder: Path, name: str, slots: dict[str, str]) -> Path:
    path = folder / name
    path.write_text("".join(f"{k} = {json.dumps(v)}\n" for k, v in slots.items()))
    return path


#: Each rule, broken: the arm (FILE its prompt file), the file's slots, what the one line
#: must say. A slot shown only in another's variable that its text leaves out; a text
#: dropping a variable its slot needs; a variable written {name}. KEPT: each kept.
BROKEN: dict[str, tuple[str, dict[str, str], list[str]]] = {
    "thought-not-shown": (
        "react:prompts=FILE",
        {"system": "Be careful. {{ action }} {{ finish }}", "thought": "Reason about units."},
        ["slot 'thought'", "never reach the model", "slot 'system'", "{{ thought }}"],
    ),
    "action-not-shown": (
        "react_text:prompts=FILE",
        {"system": "Look it up. {{ thought }} {{ tools }}", "action": "Act: {{ tools }}"},
        ["slot 'action'", "slot 'system'", "{{ action }}"],
    ),
    "critique-not-shown": (
        "reflexion:prompts=FILE",
        {"critique": "Wrong: {{ failure }}", "retry": "Try again."},
        ["slot 'critique'", "slot 'retry'", "{{ critique }}"],
    ),
    "step-dropped": (
        "plan_execute:prompts=FILE",
        {"execute_step": "Question: {{ question }}\n{{ results }}\nDo the next step."},
        ["slot 'execute_step'", "{{ step }}"],
    ),
    "answer-dropped": (
        "pipeline:stages=cot>direct,prompts=FILE",
        {"handover": "{{ question }}\n\nCheck it, then answer."},
        ["slot 'handover'", "{{ answer }}"],
    ),
    "stage-step-dropped": (
        "direct>plan_execute:prompts=FILE",
        {"execute_step": "{{ question }} {{ results }}"},
        ["'direct>plan_execute:prompts=", "stage 2", "slot 'execute_step'", "{{ step }}"],
    ),
    "question-dropped": (
        "react_text:prompts=FILE",
        {"question": "Answer the question."},
        ["slot 'question'", "{{ question }}"],
    ),
    "tools-dropped": (
        "rewoo:prompts=FILE",
        {"planner": "Plan every tool call, then call submit_plan."},
        ["slot 'planner'", "{{ tools }}"],
    ),
    "question-and-answer-dropped": (
        "pipeline:stages=cot>direct,prompts=FILE",
        {"handover": "Check the earlier answer, then answer."},
        ["slot 'handover'", "{{ question }} and {{ answer }}"],
    ),
    "python-question": (
        "cot:prompts=FILE",
        {"step": "Solve {question} step by step. End with 'Answer:'."},
        ["slot 'step'", "{question}", "{{ question }}", "line 1"],
    ),
    "python-answer": (
        "pipeline:stages=cot>direct,prompts=FILE",
        {"handover": "{{ question }}\nEarlier: { answer }\nCheck it."},
        ["slot 'handover'", "{answer}", "{{ answer }}"],
    ),
}

#: Arms whose prompt files keep their promises: what one of their requests holds.
KEPT: dict[str, tuple[str, dict[str, str], str]] = {
    "thought-shown": (
        "react:prompts=FILE",
        {
            "system": "Be careful. {{ thought }} {{ action }} {{ finish }}",
            "thought": "Reason about units.",
        },
        "Be careful. Reason about units.",
    ),
    "system-whole": (
        "react:prompts=FILE",
        {"system": "Answer from the tools. {{ finish }}"},
        "Answer from the tools.",
    ),
    "step-reworded": (
        "plan_execute:prompts=FILE",
        {"execute_step": "Do this: {{ step }}\n(for: {{ question }})\n{{ results }}"},
        "Do this: ",
    ),
    "answer-reworded": (
        "pipeline:stages=cot>direct,prompts=FILE",
        {"handover": "Earlier: {{ answer }}\nNow: {{ question }}"},
        "Earlier: ",
    ),
    "stages-alone": (
        "cot:prompts=FILE>direct",
        {"step": "Be brief. End with 'Answer:'."},
        "Be brief.",
    ),
    "literal-braces": (
        "cot:prompts=FILE",
        {"step": 'Reply as {x} or {"a": 1}, literally {{ "{question}" }}. End with Answer:.'},
        'Reply as {x} or {"a": 1}, literally {question}.',
    ),
}


@pytest.mark.parametrize("case", BROKEN)
def test_a_broken_promise_is_one_line_exit_2_and_no_request(case: str, tmp_path: Path) -> None:
    arm, slots, said = BROKEN[case]
    arm = arm.replace("FILE", str(written(tmp_path, "p.toml", slots)))
    result, server = cli_run(arm, tmp_path / "out")
    assert result.exit_code == 2, result.output
    [line] = result.output.strip().splitlines()
    assert line.startswith("Error: ") and str(tmp_path / "p.toml") in line, line
    assert all(word in line for word in said), line
    assert server.served.requests == 0
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("case", KEPT)
def test_a_kept_promise_runs_and_its_text_is_sent(case: str, tmp_path: Path) -> None:
    arm, slots, sent = KEPT[case]
    arm = arm.replace("FILE", str(written(tmp_path, "p.toml", slots)))
    result, server = cli_run(arm, tmp_path / "out")
    assert result.exit_code == 0, result.output
    texts = [m.get("content") for body in server.served.bodies for m in body["messages"]]
    assert any(sent in text for text in texts if isinstance(text, str)), texts


def test_the_api_and_an_experiment_file_refuse_the_same(tmp_path: Path) -> None:
    slots = {"execute_step": "{{ question }} {{ results }}"}
    with pytest.raises(PromptFileError, match=r"slot 'execute_step' leaves out \{\{ step \}\}"):
        loopbench.arm("plan_execute", prompts=slots)
    with pytest.raises(BadInput, match=r"writes \{question\}"):
        loopbench.arm("cot", prompts={"step": "{question}"})
    written(tmp_path, "p.toml", slots)
    (tmp_path / "exp.toml").write_text('arms = ["direct>plan_execute:prompts=p.toml"]\n')
    with FakeServer() as server:
        args = ["run", "--experiment", str(tmp_path / "exp.toml"), "--tasks", "depot"]
        args += ["--model", "fake", "--base-url", server.base_url, "--out", str(tmp_path / "o")]
        result = CliRunner().invoke(main, args)
    assert result.exit_code == 2, result.output
    [line] = result.output.strip().splitlines()
    assert "stage 2" in line and "p.toml" in line and "{{ step }}" in line, line
    assert server.served.requests == 0


def test_a_text_left_as_built_in_is_taken_wherever_it_goes(tmp_path: Path) -> None:
    """A printed prompt file given back whole, system edited: the thought it no longer
    shows is still the built-in text, which changes nothing sent."""
    thought = registered()["react"].prompts.slots["thought"].default
    path = written(tmp_path, "p.toml", {"system": "{{ action }} {{ finish }}", "thought": thought})
    assert parse_arm(f"react:prompts={path}").prompts["thought"] == thought


@pytest.mark.parametrize("pattern", sorted(registered()))
def test_every_patterns_built_in_slots_keep_their_own_promises(pattern: str) -> None:
    """Each slot's built-in text uses what it needs, its host shows it, no variable is
    written Python's way; and the built-in text, changed, passes every check."""
    prompts = registered()[pattern].prompts
    for slot in prompts.slots.values():
        assert set(slot.needs) <= set(slot.variables) & used_variables(slot.default), slot.name
        if slot.shown_in is not None:
            host, variable = prompts.slots[slot.shown_in[0]], slot.shown_in[1]
            assert variable in host.variables and variable in used_variables(host.default)
        assert python_style(slot.default, {"question", *prompts.variables}) is None, slot.name
        assert prompts.problems({slot.name: slot.default + " (changed)"}) == [], slot.name


def test_stages_alone_are_the_pipeline_and_named_as_it_is(tmp_path: Path) -> None:
    short = parse_arm("plan_execute>react_text:guard=on,max_steps=5")
    long = parse_arm("pipeline:stages=plan_execute>react_text;guard=on;max_steps=5")
    assert short.spec == long.spec == "pipeline:stages=plan_execute>react_text;guard=on;max_steps=5"
    assert short.resolved == long.resolved
    assert (
        parse_arm("cot>direct;max_steps=2>cot").spec == "pipeline:stages=cot>direct;max_steps=2>cot"
    )
    with pytest.raises(ArmError, match=r"^arm 'cot>pipeline': stage 2 is a pipeline"):
        parse_arm("cot>pipeline")
    with pytest.raises(BadInput, match=r"^arm 'cot>nope': stage 2: no pattern named 'nope'"):
        parse_arm("cot>nope")


def test_a_grid_of_stages_alone_is_each_stages_grid() -> None:
    arms = parse_arms(["cot|direct>react_text:guard=on|off"])
    assert [arm.spec for arm in arms] == [
        "pipeline:stages=cot>react_text;guard=on",
        "pipeline:stages=cot>react_text;guard=off",
        "pipeline:stages=direct>react_text;guard=on",
        "pipeline:stages=direct>react_text;guard=off",
    ]
    with pytest.raises(ArmError, match="runs the same configuration"):
        parse_arms(["cot>react_text;guard=on", "pipeline:stages=cot>react_text;guard=on"])


def test_stages_alone_run_from_the_cli_an_experiment_file_and_the_api(tmp_path: Path) -> None:
    result, server = cli_run("cot>direct", tmp_path / "cli")
    assert result.exit_code == 0, result.output
    assert server.served.requests == 4  # two stages on two tasks
    (tmp_path / "exp.toml").write_text('arms = ["cot>direct"]\n')
    table = (
        loopbench.Experiment(
            "depot", ["cot>direct"], model=lambda r: "Answer: 84", out=tmp_path / "api", limit=1
        )
        .run()
        .table()
    )
    assert list(table["arm"]) == ["pipeline:stages=cot>direct"]
    assert list(loopbench.load(tmp_path / "cli").table()["arm"]) == ["pipeline:stages=cot>direct"]
    with FakeServer() as served:
        args = ["run", "--experiment", str(tmp_path / "exp.toml"), "--tasks", "depot"]
        args += ["--limit", "1", "--model", "fake", "--base-url", served.base_url]
        result = CliRunner().invoke(main, [*args, "--out", str(tmp_path / "exp"), "--quiet"])
    assert result.exit_code == 0, result.output
    assert list(loopbench.load(tmp_path / "exp").table()["arm"]) == ["pipeline:stages=cot>direct"]


def test_the_printed_prompt_file_says_what_each_slot_must_keep() -> None:
    printed = CliRunner().invoke(main, ["patterns", "plan_execute", "--prompts"]).output
    assert "must keep {{ question }}, {{ results }}, {{ step }}\nexecute_step = " in printed
    printed = CliRunner().invoke(main, ["patterns", "react", "--prompts"]).output
    assert "sent only as {{ thought }} in system\nthought = " in printed
