import asyncio
from dataclasses import replace

from harness.experiment import parse_arm
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


def below_floor(spec, max_steps):
    """The pattern of arm ``spec`` run with ``max_steps`` below its call floor, which
    parse_arm refuses: the limits wrapper's own refusal (for an arm built in code) is what
    is tested."""
    limited = parse_arm(spec).build()
    return replace(limited, options=limited.options.model_copy(update={"max_steps": max_steps}))
