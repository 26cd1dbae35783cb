"""loopbench's public Python API: what a script, a notebook or a plugin uses.

Run a grid (``Experiment``, or ``Experiment.from_config`` with a ``RunConfig``: the shape
flags and experiment files build; an ``Observer`` watches it run), read results
(``load``, ``Results``), write a pattern (``register_pattern`` with ``PatternOptions``,
``RunContext`` and ``Outcome``; its prompts as ``Prompts`` of ``Slot``, which an arm may
override), a task set (``register_taskset``), a tool a task set can name
(``register_tool`` with ``Tool``, ``ToolOptions`` and ``ToolSource``) or a grader
(``register_grader`` with ``Grader``, ``GraderSetup``, ``TaskBase`` and ``Grade``; what
else it says of itself in ``GraderDetails``), and test them with a scripted model.
Everything else, in the packages under it (``loopbench.harness``, ``loopbench.graders``,
``loopbench.tasks``, ``loopbench.sandbox``), may change between releases.

Each name is imported from its home when first used, so that importing the package (as the
command line does) costs nothing until a name is asked for.
"""

import importlib as _importlib
from typing import TYPE_CHECKING as _TYPE_CHECKING
from typing import Any as _Any

if _TYPE_CHECKING:
    from loopbench.graders.base import Grader, GraderSetup
    from loopbench.graders.exact import Grade
    from loopbench.graders.register import GraderDetails, register_grader
    from loopbench.graders.task_models import TaskBase
    from loopbench.harness.api import Experiment, Results, load
    from loopbench.harness.arms import arm
    from loopbench.harness.config import ModelEntry, RunConfig
    from loopbench.harness.models.scripted import (
        FunctionModel,
        ModelLike,
        ScriptedModel,
        as_client,
        text_reply,
        tool_reply,
    )
    from loopbench.harness.models.types import Message, ModelClient, ModelRequest, ModelResponse
    from loopbench.harness.observer import Observer
    from loopbench.harness.patterns.base import CallFloor, Outcome, PatternOptions, RunContext
    from loopbench.harness.patterns.prompts import Prompts, Slot
    from loopbench.harness.patterns.registry import register as register_pattern
    from loopbench.harness.runner import RunSettings
    from loopbench.harness.sampling import Sampling
    from loopbench.harness.stats.separation import SeparationRule
    from loopbench.harness.tools import Tool, ToolOptions
    from loopbench.tasks.loading import load_taskset
    from loopbench.tasks.taskset import TaskSet
    from loopbench.tasks.taskset_registry import register_taskset
    from loopbench.tasks.tool_registry import register_tool
    from loopbench.tasks.tools import ToolSource

#: Each public name: the module it lives in, and its name there.
_HOMES: dict[str, tuple[str, str]] = {
    "CallFloor": ("loopbench.harness.patterns.base", "CallFloor"),
    "Experiment": ("loopbench.harness.api", "Experiment"),
    "FunctionModel": ("loopbench.harness.models.scripted", "FunctionModel"),
    "Grade": ("loopbench.graders.exact", "Grade"),
    "Grader": ("loopbench.graders.base", "Grader"),
    "GraderDetails": ("loopbench.graders.register", "GraderDetails"),
    "GraderSetup": ("loopbench.graders.base", "GraderSetup"),
    "Message": ("loopbench.harness.models.types", "Message"),
    "ModelClient": ("loopbench.harness.models.types", "ModelClient"),
    "ModelEntry": ("loopbench.harness.config", "ModelEntry"),
    "ModelLike": ("loopbench.harness.models.scripted", "ModelLike"),
    "ModelRequest": ("loopbench.harness.models.types", "ModelRequest"),
    "ModelResponse": ("loopbench.harness.models.types", "ModelResponse"),
    "Observer": ("loopbench.harness.observer", "Observer"),
    "Outcome": ("loopbench.harness.patterns.base", "Outcome"),
    "PatternOptions": ("loopbench.harness.patterns.base", "PatternOptions"),
    "Prompts": ("loopbench.harness.patterns.prompts", "Prompts"),
    "Results": ("loopbench.harness.api", "Results"),
    "RunConfig": ("loopbench.harness.config", "RunConfig"),
    "RunContext": ("loopbench.harness.patterns.base", "RunContext"),
    "RunSettings": ("loopbench.harness.runner", "RunSettings"),
    "Sampling": ("loopbench.harness.sampling", "Sampling"),
    "ScriptedModel": ("loopbench.harness.models.scripted", "ScriptedModel"),
    "SeparationRule": ("loopbench.harness.stats.separation", "SeparationRule"),
    "Slot": ("loopbench.harness.patterns.prompts", "Slot"),
    "TaskBase": ("loopbench.graders.task_models", "TaskBase"),
    "TaskSet": ("loopbench.tasks.taskset", "TaskSet"),
    "Tool": ("loopbench.harness.tools", "Tool"),
    "ToolOptions": ("loopbench.harness.tools", "ToolOptions"),
    "ToolSource": ("loopbench.tasks.tools", "ToolSource"),
    "arm": ("loopbench.harness.arms", "arm"),
    "as_client": ("loopbench.harness.models.scripted", "as_client"),
    "load": ("loopbench.harness.api", "load"),
    "load_taskset": ("loopbench.tasks.loading", "load_taskset"),
    "register_grader": ("loopbench.graders.register", "register_grader"),
    "register_pattern": ("loopbench.harness.patterns.registry", "register"),
    "register_taskset": ("loopbench.tasks.taskset_registry", "register_taskset"),
    "register_tool": ("loopbench.tasks.tool_registry", "register_tool"),
    "text_reply": ("loopbench.harness.models.scripted", "text_reply"),
    "tool_reply": ("loopbench.harness.models.scripted", "tool_reply"),
}

__all__ = [
    "CallFloor",
    "Experiment",
    "FunctionModel",
    "Grade",
    "Grader",
    "GraderDetails",
    "GraderSetup",
    "Message",
    "ModelClient",
    "ModelEntry",
    "ModelLike",
    "ModelRequest",
    "ModelResponse",
    "Observer",
    "Outcome",
    "PatternOptions",
    "Prompts",
    "Results",
    "RunConfig",
    "RunContext",
    "RunSettings",
    "Sampling",
    "ScriptedModel",
    "SeparationRule",
    "Slot",
    "TaskBase",
    "TaskSet",
    "Tool",
    "ToolOptions",
    "ToolSource",
    "arm",
    "as_client",
    "load",
    "load_taskset",
    "register_grader",
    "register_pattern",
    "register_taskset",
    "register_tool",
    "text_reply",
    "tool_reply",
]


def __getattr__(name: str) -> _Any:
    if name not in _HOMES:
        raise AttributeError(f"module 'loopbench' has no attribute {name!r}")
    module, attribute = _HOMES[name]
    value = getattr(_importlib.import_module(module), attribute)
    globals()[name] = value  # asked once
    return value


def __dir__() -> list[str]:
    return sorted(__all__)
