import asyncio
from pathlib import Path

from loopbench.harness.arms import Arm, parse_arm
from loopbench.harness.models.counting import CountingClient
from loopbench.harness.models.scripted import ScriptedModel
from loopbench.harness.patterns.base import RunContext
from loopbench.harness.trace import Trace
from loopbench.tasks.loading import load_taskset

#: The pattern tests' own task set: a few depot questions and the entries they look up,
#: with depot's tools (lookup, calc), so that a change to depot changes none of these tests.
TASKS = load_taskset(Path(__file__).parents[2] / "fixtures" / "pattern_tasks")


def run_pattern(pattern, replies, question="How many years after Porto?", tool="plain"):
    """Run ``pattern`` against scripted replies; returns (outcome, model, ctx)."""
    model = ScriptedModel(replies)
    trace = Trace()
    ctx = RunContext(
        question,
        CountingClient(model, trace),
        "m",
        TASKS.toolset({"lookup": {"variant": tool}}),
        trace,
    )
    outcome = asyncio.run(pattern.run(ctx))
    return outcome, model, ctx


def arm_with_max_steps(spec, max_steps):
    """Arm ``spec`` with ``max_steps`` as given, even below its call floor, as an arm built
    in code may be (parse_arm refuses it): the limits wrapper's own refusal is tested so."""
    arm = parse_arm(spec)
    return Arm(arm.info, arm.options.model_copy(update={"max_steps": max_steps}))


def below_floor(spec, max_steps):
    """The pattern of arm ``spec`` with ``max_steps`` below its call floor."""
    return arm_with_max_steps(spec, max_steps).build()
