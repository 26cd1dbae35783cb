"""A scripted judge, for tests and the docs: it reads the task's reference and the answer
from the judge grader's request (the ``<reference>`` and ``<answer>`` sections of its
built-in prompt) and gives a verdict by one rule.

The rule: an answer passes when it holds the reference's text, both normalised (lower
case, punctuation dropped, white space collapsed); with no reference, when it is not
blank. So the truth of each verdict is known, and the judge's errors are made on purpose:
``false_pass`` is the chance a failing answer is passed (1 - specificity), ``false_fail``
the chance a passing one is failed (1 - sensitivity), drawn from a seeded RNG; it answers
``unreadable`` of its replies with text holding no verdict and ``errors`` of them with an
HTTP 500. On the ``score`` scale (its system prompt asks for a score) a pass is 5 and a
fail 1.

``ScriptedJudge`` answers as a ``ModelClient`` does; as a responder of the fake server it
serves a judge endpoint (``python -m loopbench.harness.fakes.serve --judge``).
"""

from __future__ import annotations

import json
import random
import re
import threading
from dataclasses import dataclass, field
from typing import Any

from loopbench.graders.exact import normalise
from loopbench.harness.fakes.fake_server import Reply
from loopbench.harness.models.types import (
    Message,
    ModelAPIError,
    ModelRequest,
    ModelResponse,
    Usage,
)

UNREADABLE = "I would rather not say."


def _section(text: str, name: str) -> str | None:
    found = re.search(rf"<{name}>\n?(.*?)\n?</{name}>", text, re.DOTALL)
    return None if found is None else found.group(1)


def truth(prompt: str) -> bool:
    """The rule's verdict on the answer in ``prompt``, before any error is made."""
    answer = normalise(_section(prompt, "answer") or "")
    reference = _section(prompt, "reference")
    if reference is None or not normalise(reference):
        return bool(answer)
    return f" {normalise(reference)} " in f" {answer} "


@dataclass
class ScriptedJudge:
    """The judge, with its error rates and the seed of its draws; ``calls`` counts what it
    answered, ``usage`` what it billed (a token for every four characters)."""

    false_pass: float = 0.0
    false_fail: float = 0.0
    unreadable: float = 0.0
    errors: float = 0.0
    seed: int = 0
    calls: int = 0
    usage: Usage = field(default_factory=Usage)
    _rng: random.Random = field(init=False, repr=False)
    _lock: threading.Lock = field(init=False, repr=False, default_factory=threading.Lock)

    def __post_init__(self) -> None:
        self._rng = random.Random(self.seed)

    def reply(self, system: str, prompt: str) -> Reply:
        """What it answers a request with ``system`` and user message ``prompt``."""
        with self._lock:
            self.calls += 1
            draws = [self._rng.random() for _ in range(3)]
        if draws[0] < self.errors:
            return Reply(status=500)
        if draws[1] < self.unreadable:
            return Reply(UNREADABLE)
        passed = truth(prompt)
        flip = self.false_fail if passed else self.false_pass
        passed = passed != (draws[2] < flip)
        reason = "holds the reference" if passed else "misses the reference"
        if '"score"' in system:
            return Reply(json.dumps({"score": 5 if passed else 1, "reason": reason}))
        return Reply(json.dumps({"verdict": "pass" if passed else "fail", "reason": reason}))

    async def complete(self, request: ModelRequest) -> ModelResponse:
        prompt = "\n".join(m.content for m in request.messages if m.role == "user")
        made = self.reply(request.system, prompt)
        if made.status != 200:
            raise ModelAPIError(f"HTTP {made.status} from the scripted judge", made.status)
        usage = Usage((len(request.system) + len(prompt)) // 4, len(made.content) // 4 + 1)
        self.usage += usage
        return ModelResponse(Message("assistant", made.content), usage=usage)

    def __call__(self, body: dict[str, Any]) -> Reply:
        """A chat-completions request's reply, as the fake server asks its responder."""
        messages = body.get("messages", [])
        system = "\n".join(str(m.get("content", "")) for m in messages if m["role"] == "system")
        prompt = "\n".join(str(m.get("content", "")) for m in messages if m["role"] == "user")
        return self.reply(system, prompt)
