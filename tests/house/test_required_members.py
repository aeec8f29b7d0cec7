"""A boundary's required members are abstract: an adapter missing one fails when it is built,
with a TypeError naming it, not at its first call; the optional ones keep their defaults."""

from __future__ import annotations

from typing import Any

import pytest

from edge.channels.base import Channel
from edge.core.ratelimit import RateLimiter
from edge.memory.base import EmbeddingProvider, Memory
from edge.providers.base import Provider
from edge.providers.endpoint import WireProvider
from edge.tools.base import ModelTool
from peripherals.base import Board
from peripherals.sensors.base import Sensor

REQUIRED: dict[type, set[str]] = {
    Channel: {"listen", "send", "health_check"},
    Provider: {"name", "model", "chat"},
    WireProvider: {"send", "send_stream"},
    Memory: {"store", "recall", "get", "list", "forget", "count", "health_check", "close"},
    EmbeddingProvider: {"model_id", "dimensions", "embed"},
    RateLimiter: {"take", "count", "wait"},
    Board: {"resolve", "canonical", "capabilities", "connect", "close", "setup_pin", "read",
            "write", "pwm", "apply_safe_state", "subscribe", "status"},
    Sensor: {"read"},
    ModelTool: {"run"},
}
ARGS: dict[type, tuple[Any, ...]] = {WireProvider: ("wire", "model-1")}


def stub(*args: Any, **kwargs: Any) -> None:
    return None


def adapter(base: type, members: set[str]) -> type:
    """A subclass of ``base`` that writes ``members`` (as plain stubs) and nothing else."""
    return type(f"Partial{base.__name__}", (base,), {name: stub for name in members})


@pytest.mark.parametrize("base", REQUIRED, ids=lambda base: base.__name__)
def test_the_required_members_are_exactly_the_abstract_ones(base):
    assert base.__abstractmethods__ == frozenset(REQUIRED[base])
    adapter(base, REQUIRED[base])(*ARGS.get(base, ()))  # all of them: it builds


@pytest.mark.parametrize("base, missing", [(base, name) for base, names in REQUIRED.items()
                                           for name in sorted(names)],
                         ids=lambda value: getattr(value, "__name__", value))
def test_an_adapter_missing_a_required_member_fails_when_built(base, missing):
    partial = adapter(base, REQUIRED[base] - {missing})
    with pytest.raises(TypeError, match=rf"Can't instantiate abstract class {partial.__name__} "
                                        rf".*abstract method '?{missing}\b"):
        partial(*ARGS.get(base, ()))


async def test_the_optional_members_keep_their_defaults():
    channel = adapter(Channel, REQUIRED[Channel])()
    assert not channel.stalled() and await channel.start_typing("someone") is None
    sensor = adapter(Sensor, REQUIRED[Sensor])()
    sensor.kind = "stub"
    assert sensor.describe() == "stub" and sensor.close() is None
