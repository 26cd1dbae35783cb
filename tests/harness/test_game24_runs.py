"""Game of 24 through the patterns and the grid: the answer check as best_of_n's verifier
and reflexion's check, tot with the shipped prompt file, and the slice option."""

import asyncio
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

import loopbench
from loopbench.graders.base import GraderSetup
from loopbench.graders.registry import GRADERS
from loopbench.harness.arms import parse_arm
from loopbench.harness.cli.main import main
from loopbench.harness.models.counting import CountingClient
from loopbench.harness.models.scripted import ScriptedModel, text_reply, tool_reply
from loopbench.harness.patterns.base import RunContext
from loopbench.harness.tools import ToolSet
from loopbench.harness.trace import Trace
from loopbench.tasks.game24 import HARD_SLICE, solve
from loopbench.tasks.loading import load_taskset
from loopbench.tasks.taskset import TaskSetError

ROOT = Path(__file__).parents[2]
PROMPTS = ROOT / "experiments" / "prompts" / "game24-tot.toml"
QUESTION = "Use the numbers 4 9 10 13 and basic arithmetic operations (+ - * /) to obtain 24."


def checked_context(model, answer_check=True):
    """A run on the puzzle 4 9 10 13, with game24's answer check unless told otherwise."""
    info = GRADERS.lookup("game24")
    task = info.task_model.model_validate(
        {"id": "4-9-10-13", "question": QUESTION, "expected": {"numbers": [4, 9, 10, 13]}}
    )
    check = info.build(GraderSetup(ROOT)).answer_check(task) if answer_check else None
    trace = Trace()
    client = CountingClient(model, trace)
    return RunContext(QUESTION, client, "m", ToolSet([]), trace, answer_check=check)


def verdicts(ctx):
    return [e for e in ctx.trace.to_json() if e["kind"] == "verdict"]


def test_best_of_n_with_the_check_stops_at_the_first_candidate_it_accepts():
    model = ScriptedModel(
        [
            "Answer: 4 * 6 = 24",
            "Answer: (10 - 4) * (13 - 4) = 24",
            "Answer: (10 - 4) * (13 - 9) = 24",
            "Answer: (13 - 9) * (10 - 4) = 24",
        ]
    )
    ctx = checked_context(model)
    outcome = asyncio.run(parse_arm("best_of_n:n=4,verifier=check").build().run(ctx))
    assert outcome.status == "answered" and "(10 - 4) * (13 - 9)" in outcome.answer
    assert len(model.requests) == 3  # one call a candidate; no verdict call
    assert outcome.metrics["candidates"] == 3.0
    seen = verdicts(ctx)
    assert [v["accepted"] for v in seen] == [False, False, True]
    assert "uses 6" in seen[0]["reason"] and "uses 4 twice" in seen[1]["reason"]


def test_best_of_n_with_the_check_needs_one_call_at_least():
    assert parse_arm("best_of_n:verifier=check").build().call_floor().calls == 1


def test_reflexion_shows_the_checks_reason_and_stops_when_it_passes():
    model = ScriptedModel(["Answer: 4 + 9 + 10 + 13 = 24", "Answer: (10 - 4) * (13 - 9) = 24"])
    ctx = checked_context(model)
    outcome = asyncio.run(parse_arm("reflexion:check=grader,attempts=3").build().run(ctx))
    assert outcome.status == "answered" and len(model.requests) == 2
    assert "equals 36, not 24" in model.requests[1].messages[-1].content
    assert outcome.metrics["check_passed"] == 1.0


@pytest.mark.parametrize("spec", ["best_of_n:verifier=check", "reflexion:check=grader"])
def test_an_arm_needing_the_check_is_refused_where_the_grader_offers_none(spec):
    model = ScriptedModel([])
    outcome = asyncio.run(parse_arm(spec).build().run(checked_context(model, False)))
    assert outcome.status == "refused" and model.requests == []
    assert "offers an answer check" in outcome.error and "\n" not in outcome.error


def numbers_asked(request):
    return tuple(
        int(n) for n in re.search(r"numbers ([\d ]+) and", request.messages[0].content)[1].split()
    )


def solver_model(request):
    """Proposes and scores as tot asks; otherwise answers the puzzle with its first solution."""
    if request.tool_choice == "approaches":
        return tool_reply(("approaches", {"approaches": ["4 + 9 = 13", "13 - 9 = 4"]}))
    if request.tool_choice == "evaluation":
        return tool_reply(("evaluation", {"score": 0.5, "reason": "likely"}))
    return text_reply(f"Answer: {solve(numbers_asked(request))[0]} = 24")


def test_tot_self_consistency_and_best_of_n_run_on_the_hard_slice(tmp_path):
    arms = [
        f"tot:depth=3,breadth=2,beam=1,prompts={PROMPTS}",
        "self_consistency:samples=3",
        "best_of_n:n=2,verifier=check",
        "reflexion:check=grader",
    ]
    experiment = loopbench.Experiment(
        tasks="game24",
        arms=arms,
        slice=HARD_SLICE,
        limit=2,
        model=solver_model,
        model_name="solver",
        out=tmp_path / "r",
    )
    frame = experiment.run().frame()
    assert len(frame) == len(arms) * 2
    assert set(frame["slice"]) == {HARD_SLICE} and frame["correct"].all()
    hard = [t.id for t in load_taskset("game24").tasks if t.slice == HARD_SLICE]
    assert set(frame["task_id"]) == set(hard[:2])


def test_the_prompt_file_gives_tot_the_papers_steps(tmp_path):
    model = ScriptedModel(
        [
            tool_reply(("approaches", {"approaches": ["13 - 9 = 4 (left: 4 4 10)"]})),
            tool_reply(("evaluation", {"score": 1, "reason": "sure"})),
            "Answer: (10 - 4) * (13 - 9) = 24",
        ]
    )
    arm = parse_arm(f"tot:depth=1,breadth=1,beam=1,prompts={PROMPTS}")
    ctx = checked_context(model)
    ctx.prompts = arm.prompts  # as the runner gives an arm's prompt file
    outcome = asyncio.run(arm.build().run(ctx))
    assert outcome.status == "answered"
    propose, evaluate, answer = model.requests
    assert "(left: 8 10 14)" in propose.system and "sure/likely/impossible" in evaluate.system
    assert "Answer: (6 - 4) * (4 + 8) = 24" in answer.system


def test_an_unknown_slice_is_refused_naming_the_sets_slices(tmp_path):
    experiment = loopbench.Experiment(
        tasks="game24", slice="easy", model=solver_model, out=tmp_path / "r"
    )
    with pytest.raises(TaskSetError, match="its slices: hard-100"):
        experiment.run()
    assert not (tmp_path / "r").exists()


@pytest.mark.parametrize("how", ["flag", "file"])
def test_run_refuses_an_unknown_slice_in_one_line_before_any_request(tmp_path, how):
    args = ["run", "--tasks", "depot", "--out", str(tmp_path / "r")]
    args += ["--model", "m", "--base-url", "http://127.0.0.1:9/v1"]
    if how == "flag":
        args += ["--arm", "direct", "--slice", "hard-100"]
    else:
        (tmp_path / "e.toml").write_text('arms = ["direct"]\nslice = "hard-100"\n')
        args += ["--experiment", str(tmp_path / "e.toml")]
    result = CliRunner().invoke(main, args, env={"LOOPBENCH_API_KEY": "k"})
    assert result.exit_code == 2, result.output
    assert result.output.strip().count("\n") == 0
    assert "'hard-100'" in result.output and "its slices: company, public" in result.output
    assert not (tmp_path / "r").exists()
