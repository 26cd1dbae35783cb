"""Running one tool action inside a loop, with the repeated-action guard (seed 003).

Every tool-using pattern acts through ``Actions``, so ``guard=on`` means the same
thing everywhere: an action already run in this run (same tool, same arguments,
whether it succeeded or failed) is counted as a repeat and, with the guard on, the
model is told it has been round the loop instead of being shown the result again.
Arguments are compared validated when they validate, and as written otherwise.

What the model is told is the ``guard`` slot (``GUARD_SLOT``), which a pattern lists among
its own and hands to ``Actions`` rendered.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from loopbench.harness.events import RepeatedActionEvent, ToolCallEvent
from loopbench.harness.patterns.base import RunContext
from loopbench.harness.patterns.prompts import Slot
from loopbench.harness.tools import ToolResult, ToolServerFailure, ToolSet

GUARD_OBSERVATION = (
    "You have been round this loop: you already ran this exact action. "
    "Using ONLY the observations above, give your final answer now."
)
GUARD_SLOT = Slot(
    "guard",
    GUARD_OBSERVATION,
    about="what a repeated action shows instead of its result (guard=on)",
)


def _as_written(arguments: str | dict[str, Any]) -> str:
    if isinstance(arguments, dict):
        return json.dumps(arguments, sort_keys=True, default=str)
    return arguments.strip()


@dataclass
class Actions:
    ctx: RunContext
    tools: ToolSet
    guard: bool
    warning: str = GUARD_OBSERVATION
    """What a repeat shows instead of its result when the guard is on."""
    seen: set[tuple[str, str]] = field(default_factory=set)

    async def run(self, step: int, name: str, arguments: str | dict[str, Any]) -> ToolResult:
        """Invoke a tool; with the guard on, a repeat's result is replaced. Raises only
        ``ToolServerFailure`` (its server crashed or hung), after recording the call."""
        try:
            result = await self.tools.invoke(name, arguments)
        except ToolServerFailure as exc:  # the call was made: counted, then the run ends
            failed = ToolCallEvent(
                step=step, tool=name, arguments=arguments, ok=False, result=str(exc)
            )
            self.ctx.emit(failed)
            raise
        self.ctx.emit(ToolCallEvent.unchecked(step, name, arguments, result.ok, result.content))
        # guard: guard-counts-failed-repeats
        key = (name, result.args_key or _as_written(arguments))
        if key not in self.seen:
            self.seen.add(key)
            return result
        self.ctx.emit(RepeatedActionEvent.unchecked(step, name, self.guard))
        if self.guard:
            return ToolResult(result.ok, self.warning, result.args_key, guarded=True)
        return result
