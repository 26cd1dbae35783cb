"""The judge's endpoint: where a grader that asks a model for its verdicts (the ``judge``
grader) sends its requests, resolved and opened like the runs' endpoints (the same clients,
keys, retries, rate limits and response cache) but counted apart, and its sampling pinned
so a verdict repeats: temperature 0, and a seed (the run's, else 0) where the endpoint
takes one (Anthropic's Messages API takes none)."""

from __future__ import annotations

import contextlib
from collections.abc import Mapping
from contextvars import ContextVar
from dataclasses import replace

from loopbench.graders.base import JudgeEndpoint
from loopbench.harness.config import JudgeConfig, RunConfig
from loopbench.harness.endpoints import open_clients
from loopbench.harness.models.anthropic_endpoint import (
    ANTHROPIC,
    OPENAI,
    chosen_provider,
    resolve_anthropic,
)
from loopbench.harness.models.cache import CachingClient, ResponseCache
from loopbench.harness.models.endpoint import (
    GIVEN,
    Endpoint,
    EndpointNotConfigured,
    resolve_endpoint,
)
from loopbench.harness.models.openai_compat import Connection
from loopbench.harness.models.types import ModelClient, ModelRequest, ModelResponse

#: The response cache's scope of the judge's calls: one for every run, so the same answer
#: graded again (a resumed run, the same regrade again) replays the verdict already paid for.
JUDGE_SCOPE = "judge"
#: Which attempt at a run's verdict this is: 0 as the run is made, then one more for each
#: ``grade --regrade`` of it. Each attempt has a scope of its own in the response cache, so
#: a regrade asks the judge afresh instead of replaying the reply it could not read.
JUDGE_ATTEMPT: ContextVar[int] = ContextVar("JUDGE_ATTEMPT", default=0)


def judge_sampling(provider: str, seed: int | None) -> dict[str, float | int | str]:
    """What every judge request sends: temperature 0, and ``seed`` (0 when unset) unless
    the endpoint takes none."""
    if provider == ANTHROPIC:
        return {"temperature": 0.0}
    return {"temperature": 0.0, "seed": 0 if seed is None else seed}


def resolve_judge(config: RunConfig) -> Endpoint | None:
    """The judge's endpoint ``config`` names (``[judge]``, ``--judge-model``), or None: its
    own base URL, else the runs' (the one they share), with the runs' key variable unless
    it names its own. ``EndpointNotConfigured`` says what is missing, as the judge's."""
    judge = config.judge
    if judge is None or judge.model is None:
        return None
    url = judge.base_url or _runs_url(config)
    provider = chosen_provider(
        judge.provider or (config.provider if judge.base_url is None else None), judge.model, url
    )
    return resolve_judge_at(judge, url, judge.api_key_env or config.api_key_env, provider)


def resolve_judge_at(judge: JudgeConfig, url: str | None, key_env: str, provider: str) -> Endpoint:
    """The judge's endpoint at ``url`` in the API it speaks, refused naming the judge."""
    assert judge.model is not None
    try:
        if provider == ANTHROPIC:
            found = resolve_anthropic(url, judge.model, key_env)
        else:
            found = resolve_endpoint(url, judge.model, key_env)
    except EndpointNotConfigured as exc:
        raise EndpointNotConfigured(f"the judge's endpoint (--judge-base-url): {exc}") from None
    if found.source == GIVEN and judge.base_url is not None:
        return replace(found, source="--judge-base-url")
    return found


def _runs_url(config: RunConfig) -> str | None:
    """The runs' one base URL, when they have one."""
    given = [entry.base_url for entry in config.models if entry.base_url is not None]
    urls = list(dict.fromkeys([*config.base_urls, *given]))
    return urls[0] if len(urls) == 1 else None


class PinnedJudgeClient:
    """The judge's client: every request sent with the pinned sampling and, with a response
    cache, through it (a fresh view per call, so the same request is the same verdict
    wherever it comes from)."""

    def __init__(
        self,
        inner: ModelClient,
        sampling: Mapping[str, float | int | str],
        cache: ResponseCache | None = None,
    ) -> None:
        self._inner = inner
        self._sampling = dict(sampling)
        self._cache = cache

    async def complete(self, request: ModelRequest) -> ModelResponse:
        temperature = self._sampling.get("temperature")
        seed = self._sampling.get("seed")
        # guard: judge-sampling-pinned
        request = replace(
            request,
            temperature=float(temperature) if isinstance(temperature, int | float) else None,
            seed=seed if isinstance(seed, int) else None,
        )
        if self._cache is None:
            return await self._inner.complete(request)
        attempt = JUDGE_ATTEMPT.get()
        scope = JUDGE_SCOPE if attempt == 0 else f"{JUDGE_SCOPE}#{attempt}"
        return await CachingClient(self._inner, self._cache, scope).complete(request)


def pinned_judge(
    client: ModelClient,
    model: str,
    provider: str = OPENAI,
    seed: int | None = None,
    cache: ResponseCache | None = None,
) -> JudgeEndpoint:
    """A judge endpoint around ``client``: its sampling pinned (``judge_sampling``) and
    recorded in ``JudgeEndpoint.sampling``, its calls through ``cache`` when given."""
    sampling = judge_sampling(provider, seed)
    return JudgeEndpoint(PinnedJudgeClient(client, sampling, cache), model, sampling)


async def open_judge(
    stack: contextlib.AsyncExitStack,
    endpoint: Endpoint,
    how: Connection,
    seed: int | None,
    cache: ResponseCache | None,
) -> JudgeEndpoint:
    """The judge's client opened like the runs' (``how``: timeout, retries, rate limit),
    closed with ``stack``, its sampling pinned."""
    clients = await open_clients(stack, [endpoint], how)
    return pinned_judge(clients[endpoint.model][0], endpoint.model, endpoint.provider, seed, cache)
