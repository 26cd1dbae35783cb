"""loopbench's public Python API: what a script, a notebook or a plugin uses.

Run a grid (``Experiment``, or ``Experiment.from_config`` with a ``RunConfig``: the shape
flags and experiment files build; an ``Observer`` watches it run), read results
(``load``, ``Results``), write a pattern (``register_pattern`` with ``PatternOptions``,
``RunContext`` and ``Outcome``; its prompts as ``Prompts`` of ``Slot``, which an arm may
override), a task set (``register_taskset``), a tool a task set can name
(``register_tool`` with ``Tool``, ``ToolOptions`` and ``ToolSource``) or a grader
(``register_grader`` with ``Grader``, ``GraderSetup``, ``TaskBase`` and ``Grade``; what
else it says of itself in ``GraderDetails``), and
test them with a scripted model. Everything else in the ``harness``, ``graders`` and
``tasks`` packages may change between releases.
"""

from graders.base import Grader, GraderSetup
from graders.exact import Grade
from graders.register import GraderDetails, register_grader
from graders.task_models import TaskBase
from harness.api import Experiment, Results, load
from harness.arms import arm
from harness.config import ModelEntry, RunConfig
from harness.models.scripted import (
    FunctionModel,
    ModelLike,
    ScriptedModel,
    as_client,
    text_reply,
    tool_reply,
)
from harness.models.types import Message, ModelClient, ModelRequest, ModelResponse
from harness.observer import Observer
from harness.patterns.base import CallFloor, Outcome, PatternOptions, RunContext
from harness.patterns.prompts import Prompts, Slot
from harness.patterns.registry import register as register_pattern
from harness.runner import RunSettings
from harness.sampling import Sampling
from harness.stats.separation import SeparationRule
from harness.tools import Tool, ToolOptions
from tasks.loading import load_taskset
from tasks.taskset import TaskSet
from tasks.taskset_registry import register_taskset
from tasks.tool_registry import register_tool
from tasks.tools import ToolSource

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
