"""One model served by several endpoints (``--base-url`` given more than once for one
``--model``), and the one client a grid's runs share."""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence

from loopbench.harness.models.router import ModelRouter
from loopbench.harness.models.types import ModelClient, ModelRequest, ModelResponse


class Replicas:
    """Runs take the replicas in turn, and each run keeps to the one it took (the runner
    calls ``pick`` once a run): a run's requests build on each other, and a server's
    prompt cache serves only what it has seen, so a run's cached tokens and latency are
    what one server would give. A request from outside a run takes the next replica."""

    def __init__(self, clients: Sequence[ModelClient]) -> None:
        self.clients = list(clients)
        self._turn = itertools.count()

    def pick(self) -> ModelClient:
        return self.clients[next(self._turn) % len(self.clients)]

    async def complete(self, request: ModelRequest) -> ModelResponse:
        return await self.pick().complete(request)


def grid_client(clients: Mapping[str, Sequence[ModelClient]]) -> ModelClient:
    """The client of a grid, from each model's clients: a model's several endpoints are
    its replicas; several models are routed by the model each request names."""
    per_model = {
        model: used[0] if len(used) == 1 else Replicas(used) for model, used in clients.items()
    }
    return ModelRouter(per_model) if len(per_model) > 1 else next(iter(per_model.values()))
