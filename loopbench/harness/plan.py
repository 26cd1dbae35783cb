"""A RunConfig resolved once into what a run needs, each part made where it is defined.

``Experiment.from_config`` asks for the plan, then runs it; nothing here is resolved
again. In order, each refused (``BadInput``) before anything is sent:

1. the plugins named (``--plugin``), so that every name after is looked up among all
   that is registered (installed plugins' entry points are loaded as a kind is first
   looked up, where a broken one is said with what named it);
2. the arms, parsed and checked once, each pattern built once (``loopbench.harness.arms``);
3. the endpoints (unless given: resolved already; ``loopbench.harness.endpoints``), and the judge's
   (``loopbench.harness.judge_endpoint``);
4. the task set (``loopbench.tasks.loading``);
5. the runtime objects the config asks for (unless given; ``loopbench.harness.run_settings``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

from loopbench.harness.arms import Arm, ArmError, parse_arms
from loopbench.harness.config import RunConfig
from loopbench.harness.endpoints import resolve_endpoints
from loopbench.harness.judge_endpoint import resolve_judge
from loopbench.harness.models.endpoint import Endpoint, EndpointNotConfigured
from loopbench.harness.plugins import load_plugin
from loopbench.harness.run_settings import run_settings
from loopbench.harness.runner import RunSettings
from loopbench.tasks.loading import load_taskset
from loopbench.tasks.taskset import TaskSet, with_servers


@dataclass(frozen=True)
class RunPlan:
    """What a RunConfig resolves to."""

    config: RunConfig
    arms: list[Arm]
    taskset: TaskSet
    endpoints: list[Endpoint]
    """Each model's endpoints; none with ``embedded``."""
    embedded: bool
    """No endpoint is configured: the embedded model serves the run."""
    settings: RunSettings
    judge: Endpoint | None = None
    """The judge's endpoint (``[judge]``, ``--judge-model``), opened with the runs'."""


def plan_run(
    config: RunConfig,
    endpoints: Sequence[Endpoint] | None = None,
    settings: RunSettings | None = None,
    say: Callable[[str], None] = print,
) -> RunPlan:
    """``config`` resolved (see the module's docstring); ``say`` is told what a user should
    know (how isolated the sandbox is)."""
    for module in config.plugins:
        load_plugin(module)
    if not config.arms:
        raise ArmError("give at least one --arm, or an --experiment file that lists arms")
    arms = parse_arms(config.arms, config.arm_written_at)
    if config.published:
        config.check_published({arm.spec for arm in arms})
    embedded, found = (False, [*endpoints]) if endpoints is not None else resolve_endpoints(config)
    if config.executor == "ray" and embedded:
        raise EndpointNotConfigured(
            "--executor ray: the embedded model listens on this machine's loopback only; "
            "give --model and --base-url of a served model"
        )
    # guard: embedded-model-refuses-stream
    if config.stream and embedded:
        raise EndpointNotConfigured(
            "--stream: the embedded model's server reports no usage in a stream, so every "
            "run's tokens would be unknown; run it without --stream"
        )
    judge = resolve_judge(config)
    taskset = load_taskset(
        config.tasks, config.grader, config.columns, config.rows_to_read, config.preset
    )
    # guard: experiment-mcp-servers-offered
    if config.mcp:  # an experiment file's MCP servers: started and checked now, as a set's
        where = str(config._file or "the run's settings")
        taskset = with_servers(taskset, config.mcp, where)
    if settings is None:
        settings = run_settings(config, taskset, say)
        if config.executor == "ray":
            from loopbench.harness.executors.ray import RayExecutor  # needs the ray extra

            settings = replace(settings, executor=RayExecutor.for_config(config, found))
    return RunPlan(config, arms, taskset, found, embedded, settings, judge)
