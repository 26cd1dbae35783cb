"""A right answer to each depot question, as the exact grader reads one: its entities,
then its numbers. For scripted models that must answer right (or not) on purpose."""

from loopbench.tasks.loading import load_taskset
from loopbench.tasks.taskset import Task

DEPOT = load_taskset("depot")
RIGHT = {
    t.question: " ".join([*t.expected.entities, *(f"{n:g}" for n in t.expected.numbers)])
    for t in DEPOT.tasks
    if isinstance(t, Task)
}
