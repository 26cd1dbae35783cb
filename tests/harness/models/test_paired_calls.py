"""``run --paired``: arms share an identical request's response within a task and repeat."""

import asyncio

import pytest

from loopbench.harness.models.counting import CountingClient
from loopbench.harness.models.paired import SharedCalls
from loopbench.harness.models.scripted import text_reply
from loopbench.harness.models.types import Message, ModelAPIError, ModelRequest, ModelResponse


class SlowModel:
    """Answers after a pause, numbering its replies, so concurrent askers overlap."""

    def __init__(self, fail_first: bool = False) -> None:
        self.calls = 0
        self.fail_first = fail_first

    async def complete(self, request: ModelRequest) -> ModelResponse:
        self.calls += 1
        number = self.calls
        await asyncio.sleep(0.01)
        if self.fail_first and number == 1:
            raise ModelAPIError("endpoint down")
        return text_reply(f"reply {number}")


def request(text: str = "write add") -> ModelRequest:
    return ModelRequest("m", (Message("user", text),))


def test_two_arms_asking_at_once_get_one_response_and_one_call():
    async def main() -> tuple[list[ModelResponse], int]:
        model, shared = SlowModel(), SharedCalls()
        arms = [shared.client(model, "t1#0") for _ in range(3)]
        replies = await asyncio.gather(*(arm.complete(request()) for arm in arms))
        return replies, model.calls

    replies, calls = asyncio.run(main())
    assert calls == 1
    assert {r.message.content for r in replies} == {"reply 1"}
    assert sorted(r.from_cache for r in replies) == [False, True, True]


def test_the_shared_reply_counts_as_a_cache_hit_with_its_usage():
    async def main() -> CountingClient:
        model, shared = SlowModel(), SharedCalls()
        await shared.client(model, "t1#0").complete(request())
        second = CountingClient(shared.client(model, "t1#0"))
        await second.complete(request())
        return second

    counted = asyncio.run(main())
    assert counted.cache_hits == 1 and counted.calls == 1


@pytest.mark.parametrize(
    ("scope_a", "scope_b", "text_b"),
    [("t1#0", "t1#1", "write add"), ("t1#0", "t2#0", "write add"), ("t1#0", "t1#0", "other")],
    ids=["another repeat", "another task", "another request"],
)
def test_nothing_is_shared_across_repeats_tasks_or_different_requests(scope_a, scope_b, text_b):
    async def main() -> int:
        model, shared = SlowModel(), SharedCalls()
        await shared.client(model, scope_a).complete(request())
        await shared.client(model, scope_b).complete(request(text_b))
        return model.calls

    assert asyncio.run(main()) == 2


def test_a_runs_repeated_request_is_a_new_sample_not_the_first_again():
    async def main() -> list[str]:
        model, shared = SlowModel(), SharedCalls()
        run = shared.client(model, "t1#0")
        return [(await run.complete(request())).message.content for _ in range(2)]

    assert asyncio.run(main()) == ["reply 1", "reply 2"]


def test_when_the_first_call_fails_a_waiting_arm_makes_its_own():
    async def main() -> tuple[object, object, int]:
        model, shared = SlowModel(fail_first=True), SharedCalls()
        first, second = await asyncio.gather(
            shared.client(model, "t1#0").complete(request()),
            shared.client(model, "t1#0").complete(request()),
            return_exceptions=True,
        )
        return first, second, model.calls

    first, second, calls = asyncio.run(main())
    assert isinstance(first, ModelAPIError)
    assert isinstance(second, ModelResponse) and not second.from_cache
    assert calls == 2
