"""The judge grader: a model of the user's choosing (the judge's endpoint, ``--judge-model``
or ``[judge]``) says whether each final answer meets its task's rubric.

A task gives its ``question``, its own ``rubric`` and its reference answer
(``expected``: any JSON, shown to the judge as text) when it has them; the set's rubric is
the grader option ``rubric``, which a task's own replaces. A task with neither a rubric nor
a reference gives the judge nothing to judge by, and is refused when the grader is built.

The judge is asked for a JSON object (loopbench/graders/judge_prompts.py holds its prompt slots,
loopbench/graders/judge_verdict.py reads its reply): ``{"verdict": "pass"|"fail", "reason": ...}``
on the ``pass_fail`` scale, ``{"score": 1-5, "reason": ...}`` on the ``score`` scale,
which passes from the option ``threshold`` (4) and records ``(score - 1) / 4``. Every
request sends the endpoint's pinned sampling (temperature 0, a seed) and at most
``MAX_JUDGE_TOKENS`` output tokens. A judge that fails (its endpoint after retries, a reply
with no verdict) raises ``JudgeFailed`` with what its calls took: a grading status, never
the pattern's failure. Only the final answer is graded: every verdict is a paid call.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

from pydantic import Field, JsonValue

from loopbench.graders.answer_keys import Filled
from loopbench.graders.base import Grader, GraderSetup, JudgeEndpoint, JudgeFailed
from loopbench.graders.exact import Grade
from loopbench.graders.judge_prompts import prompts_hash, read_prompt_file, rendered
from loopbench.graders.judge_verdict import HIGHEST, LOWEST, Unread, quoted, read_verdict
from loopbench.graders.options import GraderOptions, read_options
from loopbench.graders.register import GraderDetails, register_grader
from loopbench.graders.task_models import TaskBase, digest
from loopbench.harness.errors import BadInput
from loopbench.harness.models.types import Message, ModelError, ModelRequest, ModelResponse, Usage

#: The most output tokens a judge's reply may take: a verdict and a sentence of reason.
MAX_JUDGE_TOKENS = 512
#: What of ``JudgeEndpoint.sampling`` a judge request sends, as ModelRequest names it.
SAMPLING_FIELDS = ("temperature", "top_p", "seed", "max_output_tokens")


class JudgeSetupError(BadInput):
    """The judge grader cannot be built: no endpoint, a task with nothing to judge by."""


class JudgeTask(TaskBase):
    """An open-ended task: the question, and what the judge judges its answer by."""

    rubric: Filled | None = None
    """What a good answer does, for the judge; the set's ``rubric`` option when unset."""
    expected: JsonValue = None
    """The reference answer, any JSON (shown to the judge as text); none when unset."""

    @property
    def fingerprint(self) -> str:
        """Also changes when its rubric does (a task without one keeps the plain form)."""
        asked = self.model_dump(include={"id", "question", "expected"})
        return digest(asked if self.rubric is None else {**asked, "rubric": self.rubric})


class JudgeOptions(GraderOptions):
    rubric: Filled | None = None
    """The set's rubric, for a task without its own."""
    scale: Literal["pass_fail", "score"] = "pass_fail"
    threshold: int = Field(default=4, ge=LOWEST, le=HIGHEST)
    """On the ``score`` scale, the lowest score that passes."""
    prompts: Filled | None = None
    """A prompt file overriding the judge's slots (TOML, one key per slot)."""


def reference_text(expected: Any) -> str:
    """The reference answer as the judge reads it: a text as it is (a blank one is none),
    other JSON as JSON."""
    if expected is None:
        return ""
    return (
        expected.strip() if isinstance(expected, str) else json.dumps(expected, ensure_ascii=False)
    )


class JudgeGrader(Grader[JudgeTask]):
    grades_on_the_way = False

    def __init__(
        self, endpoint: JudgeEndpoint, options: JudgeOptions, prompts: Mapping[str, str]
    ) -> None:
        self._endpoint = endpoint
        self._options = options
        self._prompts = dict(prompts)
        """The slots a prompt file overrode."""

    def identity(self) -> dict[str, Any]:
        """The judge's model and sampling, and the texts of any slot a prompt file changed
        with their short hash: a changed prompt file makes other verdicts."""
        made: dict[str, Any] = {
            "judge_model": self._endpoint.model,
            "judge_sampling": dict(self._endpoint.sampling),
        }
        if self._prompts:
            made |= {"prompts": dict(self._prompts), "prompts_hash": prompts_hash(self._prompts)}
        return made

    def request(self, task: JudgeTask, answer: str) -> ModelRequest:
        """What the judge is sent for ``answer``: its slots filled in, its sampling pinned."""
        texts = rendered(
            self._prompts,
            {
                "question": task.question,
                "answer": answer,
                "rubric": task.rubric or self._options.rubric or "",
                "reference": reference_text(task.expected),
                "scale": self._options.scale,
            },
        )
        sampling: dict[str, Any] = {"max_output_tokens": MAX_JUDGE_TOKENS}
        sampling |= self._endpoint.sampling
        return ModelRequest(
            model=self._endpoint.model,
            messages=(Message("user", texts["user"]),),
            system=texts["system"],
            **sampling,
        )

    async def grade(self, task: JudgeTask, answer: str) -> Grade:
        try:
            response: ModelResponse = await self._endpoint.client.complete(
                self.request(task, answer)
            )
        except ModelError as exc:
            usage = getattr(exc, "usage", None)
            raise JudgeFailed(
                "judge_api_error",
                f"the judge's endpoint failed: {' '.join(str(exc).split())}",
                usage if isinstance(usage, Usage) else None,
            ) from exc
        reply = response.message.content
        said = read_verdict(reply, self._options.scale, self._options.threshold)
        if isinstance(said, Unread):
            raise JudgeFailed(
                "judge_unreadable",
                f"the judge's reply {said.why}: {quoted(reply)}",
                response.usage,
            )
        verdict = "pass" if said.passed else "fail"
        shown = verdict if said.score is None else f"{verdict} (score {said.score})"
        why = f"judge: {shown}" + (f": {said.reason}" if said.reason else "")
        score = None if said.score is None else (said.score - LOWEST) / (HIGHEST - LOWEST)
        return Grade(said.passed, why, score, response.usage)


def judged_options(setup: GraderSetup) -> tuple[JudgeOptions, dict[str, str]]:
    """The grader's options and the slots its prompt file overrides, checked against the
    set's tasks (each needs a rubric or a reference): everything but the endpoint, so that
    a set is checked when it loads, before a judge is given."""
    options = read_options("judge", setup.options, JudgeOptions)
    prompts = {}
    if options.prompts is not None:
        prompts = read_prompt_file(Path(options.prompts), options.prompts)
    for task in setup.tasks if options.rubric is None else ():
        # guard: judge-task-needs-rubric-or
        if (
            isinstance(task, JudgeTask)
            and task.rubric is None
            and not reference_text(task.expected)
        ):
            raise JudgeSetupError(
                f"task {task.id!r}: no rubric and no reference answer, so the judge has "
                "nothing to judge it by; give it a rubric or an expected answer, or give "
                'the set a rubric (grader_options = {rubric = "..."})'
            )
    return options, prompts


@register_grader(
    "judge",
    JudgeTask,
    "a judge model says whether the final answer meets the task's rubric or reference",
    GraderDetails(
        example='{"id": "q1", "question": "...", "rubric": "...", "expected": "..."}',
        from_target=lambda target, extras: target,
        check=judged_options,
        file_options=("prompts",),
    ),
)
def judge_grader(setup: GraderSetup) -> JudgeGrader:
    options, prompts = judged_options(setup)
    # guard: judge-needs-endpoint
    if setup.judge is None:
        raise JudgeSetupError(
            "grader 'judge' needs a judge model: give --judge-model (and --judge-base-url), "
            "or [judge] in an experiment file"
        )
    unknown = sorted(set(setup.judge.sampling) - set(SAMPLING_FIELDS))
    # guard: judge-sampling-only-sendable
    if unknown:
        raise JudgeSetupError(
            f"the judge's sampling {', '.join(map(repr, unknown))} is not sent by a judge "
            f"request; it sends {', '.join(SAMPLING_FIELDS)}"
        )
    return JudgeGrader(setup.judge, options, prompts)
