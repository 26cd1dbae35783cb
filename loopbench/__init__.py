"""loopbench's public Python API: what a script, a notebook or a plugin uses.

Run a grid (``Experiment``), read results (``load``, ``Results``), write a pattern
(``register_pattern`` with ``PatternOptions``, ``RunContext`` and ``Outcome``) or a task
set (``register_taskset``), and test either with a scripted model. Everything else in
the ``harness``, ``graders`` and ``tasks`` packages may change between releases.
"""

from harness.api import Experiment, ModelLike, Results, as_client, load
from harness.models.scripted import FunctionModel, ScriptedModel, text_reply, tool_reply
from harness.models.types import Message, ModelClient, ModelRequest, ModelResponse
from harness.patterns.base import CallFloor, Outcome, PatternOptions, RunContext
from harness.patterns.registry import register as register_pattern
from harness.report.separation import SeparationRule
from harness.runner import RunSettings
from harness.sampling import Sampling
from tasks.registry import register_taskset
from tasks.taskset import TaskSet, load_taskset

__all__ = [
    "CallFloor",
    "Experiment",
    "FunctionModel",
    "Message",
    "ModelClient",
    "ModelLike",
    "ModelRequest",
    "ModelResponse",
    "Outcome",
    "PatternOptions",
    "Results",
    "RunContext",
    "RunSettings",
    "Sampling",
    "ScriptedModel",
    "SeparationRule",
    "TaskSet",
    "as_client",
    "load",
    "load_taskset",
    "register_pattern",
    "register_taskset",
    "text_reply",
    "tool_reply",
]
