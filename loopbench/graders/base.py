"""What a grader is: it reads answers to tasks of one model and says whether each is right.

A grader is built for a task set (``GraderSetup``) by the factory registered under its
name (loopbench/graders/registry.py, which also names the task model it reads). Besides
``grade``, it may give patterns a check to run on a task's code before answering
(``check``: the code-test grader's feedback suite) and measures of the answers given on
the way (``measures``: the code-test grader's edits).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Generic, TypeVar

from loopbench.graders.code_check import CodeCheck
from loopbench.graders.exact import Grade, normalise
from loopbench.graders.reading import answer_text
from loopbench.harness.errors import BadInput, ModelError
from loopbench.harness.models.types import ModelClient, Usage
from loopbench.sandbox.run import Sandbox

TaskT = TypeVar("TaskT")

#: A check a pattern may run on an answer without the answer key (Game of 24's: the
#: expression uses the task's numbers and makes 24): its verdict and why.
AnswerCheck = Callable[[str], Grade]


class GraderOptionError(BadInput):
    """A grader option the grader does not take, or a value it cannot use; names the option
    and what is expected."""


@dataclass(frozen=True)
class JudgeEndpoint:
    """The model a grader asks for its verdict (the ``judge`` grader's): its own endpoint,
    made by the runner like the runs' (keys, retries, rate limits, the response cache)."""

    client: ModelClient
    model: str
    sampling: Mapping[str, float | int | str] = field(default_factory=dict)
    """What every judge request sends, pinned so a verdict repeats: temperature 0, and a
    seed where the endpoint takes one; recorded with the grader's identity."""


class JudgeFailed(ModelError):
    """The judge gave no verdict on an answer: its endpoint failed after retries
    (``judge_api_error``) or its reply held no verdict that could be read
    (``judge_unreadable``). A grading status of the run, never a failure of the pattern;
    ``usage`` is what the judge's calls took all the same."""

    def __init__(self, kind: str, message: str, usage: Usage | None = None) -> None:
        super().__init__(message)
        self.kind = kind
        self.usage = usage if usage is not None else Usage()


@dataclass(frozen=True)
class GraderSetup:
    """What a grader is built from: its task set's folder and settings."""

    folder: Path
    """The task set's folder (a grader may read files of its own there)."""
    timeout_s: float = 10.0
    """taskset.toml's ``timeout_s``: the wall-clock limit on one run of a suite."""
    sandbox: Sandbox | None = None
    """The sandbox a caller made for a grader that runs code; unset, such a grader makes
    one with ``timeout_s``."""
    options: Mapping[str, Any] = field(default_factory=dict)
    """The grader's options: taskset.toml's ``grader_options`` or ``--grader NAME:K=V``;
    a factory refuses one it does not take (``BadInput``)."""
    tasks: Sequence[Any] = ()
    """The set's tasks, for what a grader reads from the whole set (the labels a label
    set uses)."""
    judge: JudgeEndpoint | None = None
    """The judge's endpoint (``--judge-model``, ``[judge]``), for a grader that asks a model;
    a grader that needs one and is given none refuses to be built (``BadInput``)."""


@dataclass(frozen=True)
class SelfCase:
    """One answer the grader must judge as said: ``loopbench grade --self-test`` runs it."""

    expected: Any
    """The task's ``expected``, as tasks.jsonl writes it."""
    answer: str
    correct: bool
    why: str = ""
    options: Mapping[str, Any] = field(default_factory=dict)
    """The grader's options for this case (``GraderSetup.options``)."""


class Grader(ABC, Generic[TaskT]):
    """Grades answers to tasks of its registered task model."""

    grades_on_the_way: bool = True
    """Whether the answers given on the way (reflection's draft, best_of_n's candidates) are
    graded too; a grader whose every verdict is a paid model call grades the final one only."""

    reads_reply: bool = False
    """Whether ``grade`` is given the final reply whole, as the model wrote it (promptfoo's
    output: not stripped, not cut to its final answer) in place of the pattern's answer,
    where the answer was read from one reply."""

    def identity(self) -> dict[str, Any]:
        """What besides its name and options makes this grader's verdicts what they are (the
        judge's model, sampling and prompt texts), recorded in the folder's experiment.json:
        runs graded otherwise are not added to it. Empty by default."""
        return {}

    @abstractmethod
    async def grade(self, task: TaskT, answer: str) -> Grade:
        """Whether ``answer`` is right for ``task``, and why."""

    def check(self, task: TaskT) -> CodeCheck | None:
        """What a pattern may run on its code before answering; none by default."""
        return None

    def answer_check(self, task: TaskT) -> AnswerCheck | None:
        """A check a pattern may run on an answer (best_of_n's ``verifier=check``,
        reflexion's ``check=grader``); only a grader whose verdict needs nothing the task
        hides from the model offers one. None by default."""
        return None

    def canonical(self, task: TaskT, answer: str) -> str:
        """The answer as votes and agreement compare it: equal for answers the grader reads
        alike. By default the sentence the final answer commits in (loopbench/graders/reading.py),
        normalised."""
        return normalise(answer_text(answer).value or "")

    def measures(self, task: TaskT, answers: list[str], verdicts: list[bool]) -> dict[str, float]:
        """Measures of the answers given on the way (``verdicts``: whether each was right),
        recorded in the run's metrics; none by default."""
        return {}
