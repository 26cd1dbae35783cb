"""A judge grader as the judge's contract has it (loopbench/graders/base.py: it asks
``GraderSetup.judge``, gives a verdict with its usage, raises ``JudgeFailed`` with the
usage a failed verdict took, grades the final answer only, and gives its identity), a task
set it grades, and loopback endpoints for the runs and the judge."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import loopbench
from loopbench.graders.base import GraderSetup, JudgeFailed
from loopbench.harness.errors import BadInput
from loopbench.harness.fakes.fake_server import Reply
from loopbench.harness.models.types import Message, ModelAPIError, ModelRequest

GRADER = "asking_judge"


class RubricTask(loopbench.TaskBase):
    expected: str


class AskingJudge(loopbench.Grader[RubricTask]):
    grades_on_the_way = False

    def __init__(self, setup: GraderSetup) -> None:
        if setup.judge is None:
            raise BadInput(f"grader {GRADER} needs --judge-model")
        self.judge = setup.judge
        self.prompt = str(setup.options.get("prompt", "Does the answer meet the rubric?"))

    def identity(self) -> dict[str, Any]:
        return {
            "judge_model": self.judge.model,
            "judge_sampling": dict(self.judge.sampling),
            "prompt": self.prompt,
        }

    async def grade(self, task: RubricTask, answer: str) -> loopbench.Grade:
        said = f"{self.prompt}\nRubric: {task.expected}\nAnswer: {answer}\nSay PASS or FAIL."
        request = ModelRequest(self.judge.model, (Message("user", said),))
        try:
            response = await self.judge.client.complete(request)
        except ModelAPIError as exc:
            raise JudgeFailed("judge_api_error", str(exc), exc.usage) from exc
        text = response.message.content
        if text.startswith(("PASS", "FAIL")):
            return loopbench.Grade(text.startswith("PASS"), f"judge: {text}", usage=response.usage)
        raise JudgeFailed("judge_unreadable", f"no verdict in {text!r}", response.usage)


def register() -> None:
    """Registers the grader (within the ``registries`` fixture, gone after the test)."""
    loopbench.register_grader(GRADER, RubricTask, "the judge says it meets the rubric")(AskingJudge)


#: The tasks, by the verdict the judge gives on them.
TASKS = {"good": "PASS", "bad": "FAIL", "down": 500, "garbled": "I am not sure."}


def write_set(folder: Path, grader_options: str = "") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    toml = f'name = "rubrics"\ngrader = "{GRADER}"\n'
    if grader_options:
        toml += f"grader_options = {{{grader_options}}}\n"
    (folder / "taskset.toml").write_text(toml)
    lines = [
        json.dumps({"id": tid, "question": f"Explain {tid}.", "expected": f"rubric {tid}"})
        for tid in TASKS
    ]
    (folder / "tasks.jsonl").write_text("\n".join(lines) + "\n")
    return folder


def runs_reply(body: dict[str, Any]) -> Reply:
    """The runs' endpoint: an explanation of whatever is asked."""
    question = body["messages"][-1]["content"]
    return Reply(f"Here is my explanation of it. Answer: {question.split()[-1]}")


class JudgeScript:
    """The judge's endpoint: each task's verdict as ``TASKS`` says, until ``mended``."""

    def __init__(self) -> None:
        self.mended = False

    def __call__(self, body: dict[str, Any]) -> Reply:
        asked = body["messages"][-1]["content"]
        tid = next(t for t in TASKS if f"rubric {t}" in asked)
        said = "PASS" if self.mended and tid in ("down", "garbled") else TASKS[tid]
        if isinstance(said, int):
            return Reply(status=said, headers={"Retry-After": "0"})
        return Reply(said)
