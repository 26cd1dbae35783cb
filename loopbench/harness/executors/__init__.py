"""Where a grid's runs are made: in this process, or on a Ray cluster.

An executor (``loopbench.harness.runner.Executor``) takes the runner and the jobs still to run,
makes them with at most ``concurrency`` in flight, and hands each finished run to
``finish`` (its record and trace events) as it arrives. The driver alone writes the
results folder, and writes a run key once: an executor may hand a run over twice (a Ray
task retried after its first result came back) without a second record.

- ``run_local`` (``loopbench.harness.executors.local``): this process's event loop; the default.
- ``RayExecutor`` (``loopbench.harness.executors.ray``): Ray workers, each with its own clients;
  needs the ``ray`` extra (see docs/ray.md).

Errors::

    ExecutorError       the grid could not be made as asked; the runs made are recorded
    └── RayUnavailable  --executor ray without Ray installed
"""

from __future__ import annotations

from loopbench.harness.errors import BadInput
from loopbench.harness.models.types import ModelRequest, ModelResponse


class ExecutorError(BadInput):
    pass


class RayUnavailable(ExecutorError):
    pass


class OnWorkers:
    """The driver's model client when the executor's workers hold the clients: never
    called."""

    async def complete(self, request: ModelRequest) -> ModelResponse:
        raise RuntimeError("this grid's runs are made by its executor's workers, not here")
