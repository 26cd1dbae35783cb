"""The choice_or grader: a set mixing multiple-choice questions and plain ones, as an
Inspect file holds them, each task graded as its kind asks. A task with options (a
``ChoiceTask``: its options shown to the model) is graded by ``choice``; any other by the
grader the option ``plain`` names (``em`` unless given), built with the other options.

A data file whose Inspect samples mix both is read with it (loopbench/tasks/data_files.py): its rows
with ``choices`` become choice tasks, the others the plain grader's tasks. In tasks.jsonl
its tasks are read as choice's.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from loopbench.graders.base import AnswerCheck, Grader, GraderOptionError, GraderSetup, SelfCase
from loopbench.graders.choice import ChoiceTask, choice_from_target
from loopbench.graders.code_check import CodeCheck
from loopbench.graders.exact import Grade
from loopbench.graders.register import GRADERS, GraderDetails, GraderInfo, register_grader

NAME = "choice_or"
#: The grader of the tasks without options unless ``plain`` names another.
DEFAULT_PLAIN = "em"


class ChoiceOrGrader(Grader[Any]):
    """``choice`` for a ``ChoiceTask``, ``plain`` for any other task."""

    def __init__(self, choice: Grader[Any], plain: Grader[Any]) -> None:
        self._choice = choice
        self._plain = plain
        self.grades_on_the_way = choice.grades_on_the_way and plain.grades_on_the_way

    def _of(self, task: Any) -> Grader[Any]:
        return self._choice if isinstance(task, ChoiceTask) else self._plain

    def identity(self) -> dict[str, Any]:
        return self._plain.identity()

    async def grade(self, task: Any, answer: str) -> Grade:
        return await self._of(task).grade(task, answer)

    def check(self, task: Any) -> CodeCheck | None:
        return self._of(task).check(task)

    def answer_check(self, task: Any) -> AnswerCheck | None:
        return self._of(task).answer_check(task)

    def canonical(self, task: Any, answer: str) -> str:
        return self._of(task).canonical(task, answer)

    def measures(self, task: Any, answers: list[str], verdicts: list[bool]) -> dict[str, float]:
        return self._of(task).measures(task, answers, verdicts)


def plain_grader(options: Any) -> tuple[GraderInfo, dict[str, Any]]:
    """The grader ``plain`` names in ``options`` (``em`` unless given) and the options it is
    built with (the others); ``GraderOptionError`` for one that cannot grade beside choice."""
    given = dict(options)
    name = given.pop("plain", DEFAULT_PLAIN)
    # guard: choice-or-plain-grader-named
    if not isinstance(name, str) or name in (NAME, "choice"):
        raise GraderOptionError(
            f"grader {NAME!r}: option 'plain': {name!r} is not a grader for the tasks without "
            f"options; name one that reads a data file's answer (e.g. {DEFAULT_PLAIN}, exact)"
        )
    info = GRADERS.lookup(name)
    # guard: choice-or-plain-runs-no-code
    if info.runs_code or info.from_target is None:
        raise GraderOptionError(
            f"grader {NAME!r}: option 'plain': {name} grades only its own tasks.jsonl's tasks "
            f"(or runs code), not a data file's plain rows; name one that reads an answer "
            f"(e.g. {DEFAULT_PLAIN}, exact)"
        )
    return info, given


def _setups(setup: GraderSetup) -> tuple[GraderSetup, GraderSetup, GraderInfo]:
    """The choice grader's setup and the plain grader's (each with its own tasks), and the
    plain grader."""
    info, options = plain_grader(setup.options)
    chosen = tuple(t for t in setup.tasks if isinstance(t, ChoiceTask))
    rest = tuple(t for t in setup.tasks if not isinstance(t, ChoiceTask))
    choice = replace(setup, options={}, tasks=chosen)
    return choice, replace(setup, options=options, tasks=rest), info


def _check(setup: GraderSetup) -> object:
    """Its options checked when the set loads: the plain grader's own check (a judge's,
    which needs the run's endpoint to be built), else the grader built."""
    _, plain, info = _setups(setup)
    if info.details.check is not None:
        return info.details.check(plain)
    return choice_or_grader(setup)


_LYON = {"choices": ["Paris", "Lyon", "Nice"], "answer": "B"}
#: Its cases are choice's (a plain task's grader is the one ``plain`` names, with its own).
CHOICE_OR_CASES = (
    SelfCase(_LYON, "The answer is Lyon.", True, "a choice task graded by choice"),
    SelfCase(_LYON, "A or B", False, "a hedge, as choice reads it"),
)


@register_grader(
    NAME,
    ChoiceTask,
    "choice for a task with options, the grader named by option plain (em) for the others",
    GraderDetails(
        example='{"id": "q1", "question": "...", "expected": {"choices": ["Paris", "Lyon"], '
        '"answer": "B"}}',
        cases=CHOICE_OR_CASES,
        from_target=choice_from_target,
        check=_check,
        delegate_option="plain",
    ),
)
def choice_or_grader(setup: GraderSetup) -> ChoiceOrGrader:
    choice, plain, info = _setups(setup)
    return ChoiceOrGrader(GRADERS.lookup("choice").build(choice), info.build(plain))
