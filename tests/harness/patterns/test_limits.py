import asyncio

from harness.experiment import parse_arm
from harness.models import CountingClient, ModelRequest, ScriptedModel, text_reply, tool_reply
from harness.patterns import RunContext
from harness.trace import Trace

from .helpers import DEPOT, run_pattern


def test_token_ceiling_holds_a_pattern_with_phases_of_its_own():
    planned = tool_reply(
        ("submit_plan", {"steps": [{"tool": "lookup", "args": {"title": "Nile"}}]})
    )
    outcome, model, _ = run_pattern(parse_arm("rewoo:max_tokens=10").build(), [planned, "x"])
    assert outcome.status == "token_budget" and len(model.requests) == 1


def test_wrapped_pattern_keeps_its_name():
    assert parse_arm("react:step_timeout_s=5").build().name == "react"


class Slow(ScriptedModel):
    async def complete(self, request: ModelRequest):
        await asyncio.sleep(0.5)
        return await super().complete(request)


def test_step_timeout_ends_the_run_with_its_status():
    model = Slow([text_reply("x")])
    trace = Trace()
    ctx = RunContext("q", CountingClient(model, trace), "m", DEPOT.toolset(), trace)
    pattern = parse_arm("react:step_timeout_s=0.05").build()
    outcome = asyncio.run(pattern.run(ctx))
    assert outcome.status == "step_timeout" and "0.05 s" in outcome.error
