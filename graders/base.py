"""What a grader is: it reads answers to tasks of one model and says whether each is right.

A grader is built for a task set (``GraderSetup``) by the factory registered under its
name (graders/registry.py, which also names the task model it reads). Besides
``grade``, it may give patterns a check to run on a task's code before answering
(``check``: the code-test grader's feedback suite) and measures of the answers given on
the way (``measures``: the code-test grader's edits).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass
from pathlib import Path
from typing import Generic, TypeVar

from graders.code_check import CodeCheck
from graders.exact import Grade
from graders.sandbox import Sandbox

TaskT = TypeVar("TaskT")


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


class Grader(ABC, Generic[TaskT]):
    """Grades answers to tasks of its registered task model."""

    @abstractmethod
    async def grade(self, task: TaskT, answer: str) -> Grade:
        """Whether ``answer`` is right for ``task``, and why."""

    def check(self, task: TaskT) -> CodeCheck | None:
        """What a pattern may run on its code before answering; none by default."""
        return None

    def measures(self, task: TaskT, answers: list[str], verdicts: list[bool]) -> dict[str, float]:
        """Measures of the answers given on the way (``verdicts``: whether each was right),
        recorded in the run's metrics; none by default."""
        return {}
