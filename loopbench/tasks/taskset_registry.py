"""Task sets known by name besides the folders beside this package: HumanEval
(``loopbench.tasks.loading`` registers it) and those plugins add.

A plugin adds one with ``loopbench.register_taskset(name, source)``, or declares an entry
point in the group ``loopbench.tasksets`` whose name is the set's name and whose object
is the source. A source is a folder (a path) or a function returning a TaskSet.
"""

from __future__ import annotations

from collections.abc import Callable
from importlib.metadata import EntryPoint
from pathlib import Path
from typing import TYPE_CHECKING, Union

from loopbench.graders.task_models import TaskSetError
from loopbench.harness.errors import UnknownName
from loopbench.harness.plugins import PluginError
from loopbench.harness.registry import Registry

if TYPE_CHECKING:
    from loopbench.tasks.taskset import TaskSet

TaskSetSource = Union["Callable[[], TaskSet]", str, Path]


class UnknownTaskSet(TaskSetError, UnknownName):
    usage = False  # said as the task set's own refusals are: one line


class _TaskSets(Registry[TaskSetSource]):
    def adopt(self, point: EntryPoint, loaded: object) -> None:
        """An entry point naming a folder or a function is the set of its name."""
        if not (callable(loaded) or isinstance(loaded, str | Path)):
            raise PluginError(
                f"plugin task set {point.name!r} ({point.value}) is neither a folder nor "
                "a function returning a TaskSet"
            )
        if point.name not in self._entries:  # registered already, by its own module say
            register_taskset(point.name, loaded)


TASKSETS = _TaskSets(
    "task set",
    "loopbench.tasksets",
    UnknownTaskSet,
    "call loopbench.register_taskset(name, source)",
)


def register_taskset(name: str, source: TaskSetSource) -> None:
    """Make ``--tasks NAME`` load ``source``: a task set folder, or a function returning
    a TaskSet (called only when the set is asked for)."""
    if not name or "/" in name:
        raise ValueError(f"a task set name is one word, not {name!r}")
    TASKSETS.add(name, source)
