import asyncio

from harness.models.counting import CountingClient
from harness.models.scripted import ScriptedModel
from harness.patterns.base import RunContext
from harness.trace import Trace
from tasks.loading import load_taskset

DEPOT = load_taskset("depot")


def run_pattern(pattern, replies, question="How many years after Porto?", tool="plain"):
    """Run ``pattern`` against scripted replies; returns (outcome, model, ctx)."""
    model = ScriptedModel(replies)
    trace = Trace()
    ctx = RunContext(
        question,
        CountingClient(model, trace),
        "m",
        DEPOT.toolset({"lookup": {"variant": tool}}),
        trace,
    )
    outcome = asyncio.run(pattern.run(ctx))
    return outcome, model, ctx
