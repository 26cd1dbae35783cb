"""A fake OpenAI-compatible server on loopback, for tests and benchmarks.

It answers ``POST /v1/chat/completions`` with a responder's reply, reports usage
the way real servers do, optionally waits a fixed latency, and counts every
request and every token it served, so a test can check that what loopbench
recorded equals what the server served. It listens on 127.0.0.1 only.

    python -m loopbench.harness.fakes.serve --latency 0.05   # prints its base URL
    python -m loopbench.harness.fakes.serve --tasks coding   # a scripted coder for that set

A request asking ``stream: true`` is answered with server-sent events
(``loopbench.harness.fakes.fake_stream``), as its ``StreamScript`` says: a delay before the first
token, a stream cut short or one that stalls.
"""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web

from loopbench.harness.events import question_at
from loopbench.harness.fakes.fake_stream import StreamScript, chunks, send_stream
from loopbench.harness.fakes.loopback import LoopbackServer


@dataclass
class Reply:
    content: str = ""
    tool_calls: list[dict[str, Any]] = field(default_factory=list)
    finish_reason: str = "stop"
    #: Answer with this HTTP status and no completion instead (e.g. 429, 500).
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)


Responder = Callable[[dict[str, Any]], Reply]
#: Streams sent whole, at once.
NO_SCRIPT = StreamScript()


# Valid arguments for every structured output a shipped pattern asks for, by tool name.
STRUCTURED_REPLIES: dict[str, dict[str, Any]] = {
    "submit_plan": {
        "steps": [
            {"tool": "lookup", "args": {"title": "Eiffel Tower"}, "why": "completion year"},
            {"tool": "lookup", "args": {"title": "Sydney Opera House"}, "why": "opening year"},
            {"tool": "calc", "args": {"expression": "1973 - 1889"}, "why": "difference"},
        ]
    },
    "critique": {"needs_refinement": False, "critique": ""},
    "verdict": {"accept": True, "reason": "every number is in an observation"},
    "evaluation": {"score": 0.5, "reason": "plausible"},
    "approaches": {
        "approaches": [
            "Recall the year the Eiffel Tower was completed.",
            "Recall the year the Sydney Opera House opened.",
            "Subtract the earlier year from the later one.",
        ]
    },
    "plan": {
        "steps": [
            {"id": 1, "description": "Look up the Eiffel Tower."},
            {"id": 2, "description": "Compute the difference.", "depends_on": [1]},
        ]
    },
    "decomposition": {
        "goal": "answer the question",
        "phases": [{"name": "facts", "tasks": ["Look up the Eiffel Tower.", "Compute it."]}],
    },
}


def _asked_for(body: dict[str, Any], system: str) -> str | None:
    """The structured output requested: by tool_choice, or by the prompted-JSON schema."""
    choice = body.get("tool_choice")
    if isinstance(choice, dict):
        return str(choice["function"]["name"])
    if "matching this JSON schema" in system:
        fields = {
            "submit_plan": '"why"',
            "critique": '"needs_refinement"',
            "verdict": '"accept"',
            "evaluation": '"score"',
            "approaches": '"approaches"',
            "decomposition": '"phases"',
            "plan": '"depends_on"',
        }
        return next((name for name, field in fields.items() if field in system), None)
    return None


def default_responder(body: dict[str, Any]) -> Reply:
    """A deterministic model good enough to drive every shipped pattern end to end.

    Structured requests get valid arguments; a tool loop looks one thing up and then
    answers 84; the text loop does the same in Thought/Action form; anything asking
    for an 'Answer:' line gets one; everything else gets a short answer.
    """
    messages = body["messages"]
    system = messages[0]["content"] if messages and messages[0]["role"] == "system" else ""
    wanted = _asked_for(body, system)
    if wanted is not None:
        arguments = json.dumps(STRUCTURED_REPLIES[wanted])
        if body.get("tool_choice"):
            call = {
                "id": "call_1",
                "type": "function",
                "function": {"name": wanted, "arguments": arguments},
            }
            return Reply(tool_calls=[call], finish_reason="tool_calls")
        return Reply(arguments)
    start = question_index(messages)
    turns = sum(m["role"] == "assistant" for m in messages[start:])
    if body.get("tools"):
        if turns == 0:
            call = {
                "id": "call_1",
                "type": "function",
                "function": {"name": "lookup", "arguments": '{"title": "Paris"}'},
            }
            return Reply(tool_calls=[call], finish_reason="tool_calls")
        return Reply("84")
    if "Action:" in system:
        return Reply(
            "Thought: look it up.\nAction: lookup[Paris]"
            if turns == 0
            else "Thought: done.\nAction: finish[84]"
        )
    if "Answer:" in system:
        return Reply("1973 - 1889 = 84.\nAnswer: 84")
    return Reply("84")


def question_index(messages: list[dict[str, Any]]) -> int:
    """Where this run's question is (``loopbench.harness.events.question_at``); a request without
    one is not a run's."""
    at = question_at(messages)
    if at is None:
        raise ValueError("the request holds no question")
    return at


def usage_for(body: dict[str, Any], reply: Reply) -> dict[str, Any]:
    """Deterministic counts: four characters a token; a third of a multi-turn prompt cached."""
    prompt_chars = sum(len(m.get("content") or "") for m in body["messages"])
    prompt = prompt_chars // 4 + 1
    completion = (len(reply.content) + len(json.dumps(reply.tool_calls))) // 4 + 1
    cached = prompt // 3 if len(body["messages"]) > 2 else 0
    return {
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "total_tokens": prompt + completion,
        "prompt_tokens_details": {"cached_tokens": cached},
    }


@dataclass
class Served:
    requests: int = 0
    completions: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cached_tokens: int = 0
    bodies: list[dict[str, Any]] = field(default_factory=list)


class FakeServer(LoopbackServer):
    """Runs on its own thread and event loop, so synchronous code (a CLI) can call it."""

    def __init__(
        self,
        responder: Responder = default_responder,
        latency_s: float = 0.0,
        keep_bodies: bool = True,
        stream: StreamScript = NO_SCRIPT,
    ) -> None:
        super().__init__()
        #: What ``GET /v1/models`` lists (it answers a request naming any model).
        self.models: tuple[str, ...] = ("fake",)
        #: How a request asking ``stream: true`` is answered
        #: (``loopbench.harness.fakes.fake_stream``).
        self.stream = stream
        self.responder = responder
        self.latency_s = latency_s
        self.keep_bodies = keep_bodies
        self.served = Served()
        self._lock = threading.Lock()

    def routes(self, app: web.Application) -> None:
        super().routes(app)
        app.router.add_get("/v1/models", self.list_models)

    async def list_models(self, request: web.Request) -> web.StreamResponse:
        """``GET /v1/models``: the names it answers as (``models``), as OpenAI lists them."""
        listed = [
            {"id": name, "object": "model", "created": 0, "owned_by": "loopbench"}
            for name in self.models
        ]
        return web.json_response({"object": "list", "data": listed})

    def _count(self, usage: dict[str, Any]) -> None:
        """A completion served, and its usage reported."""
        with self._lock:
            self.served.completions += 1
            self.served.prompt_tokens += usage["prompt_tokens"]
            self.served.completion_tokens += usage["completion_tokens"]
            self.served.cached_tokens += usage["prompt_tokens_details"]["cached_tokens"]

    async def handle(self, request: web.Request) -> web.StreamResponse:
        body = await request.json()
        with self._lock:
            self.served.requests += 1
            if self.keep_bodies:
                self.served.bodies.append(body)
        if self.latency_s:
            await asyncio.sleep(self.latency_s)
        reply = self.responder(body)
        if body.get("stream") and reply.status == 200:
            usage = usage_for(body, reply)
            wanted = (body.get("stream_options") or {}).get("include_usage")
            events = chunks(reply.content, reply.tool_calls, reply.finish_reason,
                            usage if wanted else None)  # fmt: skip
            return await send_stream(request, events, self.stream, self.closing, self._count)
        status, answer = self.answer(body, reply)
        return web.json_response(answer, status=status, headers=reply.headers)

    def answer(self, body: dict[str, Any], reply: Reply) -> tuple[int, dict[str, Any]]:
        """The status and JSON body a request gets unstreamed, its usage counted: the
        chat endpoint's answer, and each line of a batch's output
        (``loopbench.harness.fakes.batch_server``)."""
        if reply.status != 200:
            return reply.status, {"error": {"message": "scripted failure"}}
        usage = usage_for(body, reply)
        self._count(usage)
        message: dict[str, Any] = {"role": "assistant", "content": reply.content or None}
        if reply.tool_calls:
            message["tool_calls"] = reply.tool_calls
        return 200, {
            "id": f"chatcmpl-{self.served.requests}",
            "object": "chat.completion",
            "model": body.get("model", "fake"),
            "choices": [{"index": 0, "message": message, "finish_reason": reply.finish_reason}],
            "usage": usage,
        }
