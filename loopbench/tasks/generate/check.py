"""Re-running the reference solver over a generated set: every question's answer, hop count
and walk must be what the set records."""

from __future__ import annotations

from loopbench.graders.answer_keys import Expected
from loopbench.tasks.generate.solver import SolverError, solve
from loopbench.tasks.taskset import Task, TaskSet


def disagreements(taskset: TaskSet) -> list[tuple[str, str]]:
    """(task id, what differs) for every way the solver disagrees with a task."""
    assert taskset.encyclopedia is not None
    found: list[tuple[str, str]] = []
    for task in taskset.tasks:
        assert isinstance(task, Task)
        try:
            solved = solve(task.question, taskset.encyclopedia)
        except SolverError as exc:
            found.append((task.id, f"the solver cannot answer it: {exc}"))
            continue
        if solved.expected != task.expected:
            said, found_ = task.expected, solved.expected
            found.append(
                (
                    task.id,
                    f"expected {_show(said)}, the solver finds {_show(found_)}",
                )
            )
        if solved.hops != task.hops:
            found.append((task.id, f"hops is {task.hops}, the solver needs {solved.hops}"))
        elif task.solution is not None and task.solution != solved.solution:
            found.append(
                (task.id, f"the recorded solution differs from the solver's: {solved.solution}")
            )
    return found


def _show(expected: Expected) -> str:
    shown = [f"{n:g}" for n in expected.numbers] + [repr(e) for e in expected.entities]
    others = f" (distractors {', '.join(map(repr, expected.distractors))})"
    return "[" + ", ".join(shown) + "]" + (others if expected.distractors else "")
