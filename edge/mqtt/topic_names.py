"""The node's topic names under its base (``edge-agent/kitchen``): its own topics (availability,
health, events, chat) and each published pin's state, duty and command topics. Below the entity
kinds (:mod:`edge.mqtt.entities`) and the pins' names (:mod:`edge.mqtt.topics`), which both use it.

>>> node = Topics("edge-agent/kitchen")
>>> node.set("led"), node.sensor("Living Room", "temperature")
('edge-agent/kitchen/led/set', 'edge-agent/kitchen/sensor/Living_Room/temperature')
"""

from __future__ import annotations

import re
from collections.abc import Collection
from dataclasses import dataclass

SET_SUFFIX = "/set"


def slugify(name: str) -> str:
    """``Living Room`` -> ``Living_Room``: topic- and object-id-safe."""
    return re.sub(r"[^A-Za-z0-9_-]+", "_", name).strip("_") or "_"


NODE_TOPICS = frozenset({"availability", "events", "health", "refused", "node", "request",
                         "response", "chat", "sensor", "camera"})
"""The node's own topics under its base: a pin whose name is one of these is published under
``<board>-<name>`` instead (as pins of the same name on two boards are), so it never writes over
the node's health or answers its requests."""


@dataclass(frozen=True)
class Topics:
    base: str

    @property
    def availability(self) -> str:
        """``online``, or ``offline`` (retained; the broker says it for an agent that vanished: the last will)."""
        return f"{self.base}/availability"

    @property
    def refused(self) -> str:
        """Each refused command: ``{"event_type": "refused", "pin", "command", "reason", "topic"}``; never retained."""
        return f"{self.base}/refused"

    @property
    def events(self) -> str:
        """What the boards report: inputs, the watchdog, a board down or up."""
        return f"{self.base}/events"

    @property
    def health(self) -> str:
        """Version, uptime and boards (retained; every ``health_interval_seconds`` and when a
        board goes down or comes back)."""
        return f"{self.base}/health"

    @property
    def chat(self) -> str:
        """With ``chat = true``: prompts (and ``/status``, ``/pins``...) in, plain text."""
        return f"{self.base}/chat"

    @property
    def chat_reply(self) -> str:
        """With ``chat = true``: the answers, plain text."""
        return f"{self.base}/chat/reply"

    def state(self, slug: str) -> str:
        """Each pin's state, retained, on every change whoever made it: ``ON``/``OFF``, a
        servo's angle, an analog pin's value (0..1 of its reference)."""
        return f"{self.base}/{slug}"

    def duty(self, slug: str) -> str:
        """A PWM pin's duty, in percent."""
        return f"{self.base}/{slug}/duty"

    def set(self, slug: str) -> str:
        """Commands: ``ON``/``OFF``, a PWM duty ``0``..``100``, a servo angle ``0``..``180``."""
        return f"{self.base}/{slug}{SET_SUFFIX}"

    def sensor(self, sensor: str, quantity: str) -> str:
        """A sensor's readings of one quantity, retained."""
        return f"{self.base}/sensor/{slugify(sensor)}/{slugify(quantity)}"

    def camera(self, camera: str) -> str:
        """Each picture ``camera`` takes, as JPEG bytes (Home Assistant's image entity)."""
        return f"{self.base}/camera/{slugify(camera)}"

    def sensor_availability(self, sensor: str) -> str:
        """``online`` while the sensor's reads succeed, ``offline`` while they fail."""
        return f"{self.base}/{slugify(sensor)}/availability"

    def command_slug(self, topic: str, slugs: Collection[str]) -> str | None:
        """The published pin named by a command topic ``<base>/<slug>/set``; None for any other
        topic, another spelling of a pin among them."""
        prefix = self.base + "/"
        if not (topic.startswith(prefix) and topic.endswith(SET_SUFFIX)):
            return None
        slug = topic[len(prefix):-len(SET_SUFFIX)]
        return slug if slug in slugs else None
