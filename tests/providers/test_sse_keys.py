"""SSE parsing edge cases and API key resolution order."""

import asyncio

from edge.core.sse import SseEvent, iter_sse
from edge.providers.endpoint import parse_retry_after
from edge.providers.keys import KeyRing, resolve_api_keys


def events(lines):
    async def feed():
        for line in lines:
            yield line

    async def read():
        return [e async for e in iter_sse(feed())]

    return asyncio.run(read())


def test_sse_joins_data_lines_keeps_ids_and_drops_an_unfinished_event():
    got = events(["id: 7", "event: delta", "data:first", "data:  second", "retry: 10", "",
                  "", ":keepalive", "data: tail"])
    assert got == [SseEvent("delta", "first\n second", "7")]


def test_key_order_is_explicit_then_provider_variable_then_edge_api_key():
    env = {"ANTHROPIC_API_KEY": "from-var", "EDGE_API_KEY": "generic"}
    assert resolve_api_keys(["a", None, "a", "b"], "ANTHROPIC_API_KEY", env) == ["a", "b"]
    assert resolve_api_keys([], "ANTHROPIC_API_KEY", env) == ["from-var"]
    assert resolve_api_keys([], "GROQ_API_KEY", env) == ["generic"]
    assert resolve_api_keys([], None, {}) == []


def test_key_ring_rotates_round_robin_and_redacts():
    ring = KeyRing(["k1", "k2"])
    assert [ring.current, ring.rotate(), ring.current, ring.rotate(), ring.current] == [
        "k1", True, "k2", True, "k1"]
    assert not KeyRing(["only"]).rotate()
    assert ring.redact("bad key k2") == "bad key ***"


def test_retry_after_accepts_seconds_and_http_dates():
    assert parse_retry_after("5") == 5.0
    assert parse_retry_after("Wed, 21 Oct 2015 07:28:10 GMT", now=1445412480.0) == 10.0
    assert parse_retry_after("soon") is None and parse_retry_after("9999") == 120.0
