"""Several models in one grid: each request goes to the client of the model it names."""

from __future__ import annotations

from collections.abc import Mapping

from loopbench.harness.models.types import ModelClient, ModelRequest, ModelResponse


class ModelRouter:
    """A client over several models (``--model`` given more than once): the runner names
    each run's model in its requests, and this sends them to that model's endpoint."""

    def __init__(self, clients: Mapping[str, ModelClient]) -> None:
        self.clients = dict(clients)

    async def complete(self, request: ModelRequest) -> ModelResponse:
        # guard: each-request-goes-model-endpoint
        client = self.clients.get(request.model)
        if client is None:  # a bug in loopbench, recorded as pattern_error
            raise LookupError(
                f"no client for model {request.model!r}; models: {', '.join(self.clients)}"
            )
        return await client.complete(request)
