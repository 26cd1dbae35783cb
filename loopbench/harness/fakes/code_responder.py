"""A scripted model for coding task sets: drives every code arm end to end, no model needed.

It knows the task set's reference solutions and plays each task one of four parts,
picked by a hash of the task's id so every run of the grid agrees:

- *wrong first*: its first attempt is a stub that fails every test; shown a failing
  test it answers the reference (a fix for the feedback loop);
- *broken by review*: right at first, but self-review's rewrite is the stub (a breakage);
- *right*: right at first; self-review's rewrite changes the code, not the result.

Self-review always asks for a change. Its own tests only check that the entry point is
callable, so they accept the stub: the false accepts of a weak self-written check.

    python -m loopbench.harness.fakes.serve --tasks coding   # serves it on loopback
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from loopbench.harness.fakes.fake_server import Reply, default_responder
from loopbench.harness.patterns.coding import CODE_SYSTEM, TESTS_SYSTEM
from loopbench.harness.patterns.reflection import CODE_REWRITE_SYSTEM
from loopbench.tasks.taskset import CodeTask, TaskSet

PARTS = ("wrong first", "broken by review", "right", "right")
CRITIQUE = {"needs_refinement": True, "critique": "Make the code clearer."}


def part(task_id: str) -> str:
    digest = hashlib.sha256(task_id.encode("utf-8")).digest()
    return PARTS[digest[0] % len(PARTS)]


def stub(entry_point: str) -> str:
    return f"def {entry_point}(*args, **kwargs):\n    raise NotImplementedError\n"


def fenced(code: str) -> str:
    return f"Here is the code.\n\n```python\n{code.rstrip()}\n```\n"


class CodeResponder:
    """A responder for ``FakeServer``: request body in, scripted reply out."""

    def __init__(self, taskset: TaskSet) -> None:
        self.tasks = [t for t in taskset.tasks if isinstance(t, CodeTask)]

    def _task(self, messages: list[dict[str, Any]]) -> CodeTask | None:
        text = next((str(m.get("content") or "") for m in messages if m["role"] == "user"), "")
        return next((t for t in self.tasks if t.question in text), None)

    def __call__(self, body: dict[str, Any]) -> Reply:
        messages = body["messages"]
        system = messages[0]["content"] if messages and messages[0]["role"] == "system" else ""
        task = self._task(messages)
        if task is None:
            return default_responder(body)
        suites, role = task.suites, part(task.id)
        if system == TESTS_SYSTEM:
            return Reply(fenced(f"assert callable({suites.entry_point})"))
        if system == CODE_SYSTEM:
            first = sum(m["role"] == "user" for m in messages) == 1
            wrong = first and role == "wrong first"
            return Reply(fenced(stub(suites.entry_point) if wrong else suites.reference))
        if system == CODE_REWRITE_SYSTEM:
            if role == "right":
                return Reply(fenced(f"{suites.reference}\n\nREVIEWED = True\n"))
            return Reply(fenced(stub(suites.entry_point)))
        if body.get("tool_choice") or "needs_refinement" in system:
            return _critique(body)
        return default_responder(body)


def _critique(body: dict[str, Any]) -> Reply:
    arguments = json.dumps(CRITIQUE)
    if not body.get("tool_choice"):
        return Reply(arguments)
    call = {
        "id": "call_1",
        "type": "function",
        "function": {"name": "critique", "arguments": arguments},
    }
    return Reply(tool_calls=[call], finish_reason="tool_calls")
