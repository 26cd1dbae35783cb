"""Task sets known by name besides the folders beside this package: HumanEval
(``tasks.loading`` registers it) and those plugins add.

A plugin adds one with ``loopbench.register_taskset(name, source)``, or declares an entry
point in the group ``loopbench.tasksets`` whose name is the set's name and whose object
is the source. A source is a folder (a path) or a function returning a TaskSet.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Union

from harness.plugins import TASKSET_GROUP, PluginError, load_entry_points

if TYPE_CHECKING:
    from tasks.taskset import TaskSet

TaskSetSource = Union["Callable[[], TaskSet]", str, Path]

_SOURCES: dict[str, TaskSetSource] = {}
_plugins_loaded = False


def register_taskset(name: str, source: TaskSetSource) -> None:
    """Make ``--tasks NAME`` load ``source``: a task set folder, or a function returning
    a TaskSet (called only when the set is asked for)."""
    if not name or "/" in name:
        raise ValueError(f"a task set name is one word, not {name!r}")
    if name in _SOURCES:
        raise ValueError(f"a task set named {name!r} is already registered")
    _SOURCES[name] = source


def registered_tasksets() -> dict[str, TaskSetSource]:
    global _plugins_loaded
    if not _plugins_loaded:
        from importlib.metadata import entry_points

        for point, loaded in zip(
            entry_points(group=TASKSET_GROUP), load_entry_points(TASKSET_GROUP), strict=True
        ):
            if isinstance(loaded, ModuleType):
                continue  # a module registers its sets as it is imported
            if not (callable(loaded) or isinstance(loaded, str | Path)):
                raise PluginError(
                    f"plugin task set {point.name!r} ({point.value}) is neither a folder nor "
                    "a function returning a TaskSet"
                )
            if point.name not in _SOURCES:
                register_taskset(point.name, loaded)
        _plugins_loaded = True
    return dict(_SOURCES)
