"""ReliableProvider over real loopback endpoints: retries, Retry-After, key rotation, model
fallbacks, and a failover chain with a cooldown (time and sleeps are injected, not waited)."""

from __future__ import annotations

import pytest

from edge.core.messages import ChatMessage
from edge.providers.base import ProviderError, TextDelta, collect
from edge.providers.keys import KeyRing
from edge.providers.openai import OpenAICompatibleProvider
from edge.providers.reliable import ChainEntry, ReliableProvider, RetryPolicy
from tests.providers.fakes import Fail, OpenAIFake, Say

HELLO = [ChatMessage.user("hello")]


class Clock:
    def __init__(self):
        self.now = 1000.0
        self.slept: list[float] = []

    def __call__(self) -> float:
        return self.now

    async def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)


@pytest.fixture
def clock():
    return Clock()


@pytest.fixture
async def endpoints(serve):
    made = []

    async def make(fake, model="m", keys=("sk-test",)):
        server = await serve(fake)
        provider = OpenAICompatibleProvider(server.url, model, keys=KeyRing(keys),
                                            name=f"ep{len(made)}")
        made.append(provider)
        return server, provider

    yield make
    for provider in made:
        await provider.aclose()


def reliable(chain, clock, **policy):
    return ReliableProvider(chain, RetryPolicy(**policy), sleep=clock.sleep, clock=clock,
                            jitter=lambda: 1.0)


async def test_failover_to_the_second_provider_then_back_to_the_first_after_cooldown(
        endpoints, clock):
    first_fake = OpenAIFake(script=[Fail(500, "boom")] * 3)
    first_server, first = await endpoints(first_fake)
    second_server, second = await endpoints(OpenAIFake(default=Say("from the second")))
    chain = reliable([first, second], clock, max_retries=2, cooldown_seconds=30)

    answer = await chain.chat(HELLO)
    assert answer.text == "from the second"
    assert len(first_server.requests) == 3  # one try and two retries
    assert clock.slept == [0.5, 1.0]  # exponential backoff (jitter pinned to its maximum)

    clock.now += 10  # still cooling down: the first is not asked
    assert (await chain.chat(HELLO)).text == "from the second"
    assert len(first_server.requests) == 3

    clock.now += 25  # cooldown over, and the first has recovered
    first_fake.default = Say("from the first")
    assert (await chain.chat(HELLO)).text == "from the first"
    assert len(first_server.requests) == 4 and len(second_server.requests) == 2


async def test_retry_after_is_honoured_and_a_long_one_moves_on(endpoints, clock):
    server, provider = await endpoints(OpenAIFake(script=[Fail(429, "slow down", "2"),
                                                          Say("fine")]))
    assert (await reliable([provider], clock).chat(HELLO)).text == "fine"
    assert clock.slept == [2.0] and len(server.requests) == 2

    server2, patient = await endpoints(OpenAIFake(script=[Fail(429, "come back", "90")]))
    _, other = await endpoints(OpenAIFake(default=Say("other")))
    assert (await reliable([patient, other], clock).chat(HELLO)).text == "other"
    assert len(server2.requests) == 1 and clock.slept == [2.0]


async def test_429_rotates_to_the_next_key_at_once(endpoints, clock):
    server, provider = await endpoints(OpenAIFake(keys=("sk-one", "sk-two"),
                                                  script=[Fail(429, "limit")]),
                                       keys=("sk-one", "sk-two"))
    assert (await reliable([provider], clock).chat(HELLO)).text == "ok"
    keys = [r.headers["authorization"] for r in server.requests]
    assert keys == ["Bearer sk-one", "Bearer sk-two"] and clock.slept == [0.0]


async def test_other_4xx_is_not_retried_and_the_error_is_summarised(endpoints, clock):
    server, provider = await endpoints(OpenAIFake(default=Fail(401, "Incorrect API key sk-test")))
    with pytest.raises(ProviderError, match="every configured model failed: ep0/m") as caught:
        await reliable([ChainEntry(provider, fallback_models=["m2"])], clock).chat(HELLO)
    assert len(server.requests) == 1  # no retry, and no fallback model with the same bad key
    assert "sk-test" not in str(caught.value)


async def test_model_fallback_list_is_tried_in_order(endpoints, clock):
    server, provider = await endpoints(OpenAIFake(script=[Fail(404, "model big not found")],
                                                  default=Say("small answered")), model="big")
    chain = reliable([ChainEntry(provider, fallback_models=["small"])], clock)
    answer = await chain.chat(HELLO)
    assert (answer.text, answer.model) == ("small answered", "small")
    assert [r.json["model"] for r in server.requests] == ["big", "small"]


async def test_stream_fails_over_before_the_first_event(endpoints, clock):
    _, broken = await endpoints(OpenAIFake(default=Fail(503, "unavailable")))
    _, healthy = await endpoints(OpenAIFake(default=Say("streamed reply")))
    chain = reliable([broken, healthy], clock, max_retries=0)
    events = [e async for e in chain.stream(HELLO)]
    assert "".join(e.text for e in events if isinstance(e, TextDelta)) == "streamed reply"
    assert (await collect(chain.stream(HELLO))).text == "streamed reply"
