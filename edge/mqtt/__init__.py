"""The agent as a node on an MQTT broker, and in Home Assistant.

Topics under ``<base>`` (``[mqtt] base_topic``, default ``edge-agent/<node_id>``):

- ``<base>/availability``: ``online`` while connected, ``offline`` (the last will, retained) when
  the agent stops or vanishes;
- ``<base>/<pin>``: each allowlisted pin's state, retained, on every change whoever made it
  (``ON``/``OFF``; a servo's angle; an analog input's value, read every
  ``analog_interval_seconds`` and published when it moved by more than ``analog_deadband``);
  an input is ``ON`` while it is on (active: its switch closed), as everywhere else;
  a PWM pin also has ``<base>/<pin>/duty`` (percent);
- ``<base>/<pin>/set``: commands (``ON``/``OFF``, a PWM duty in percent, a servo angle), each
  through the hardware's one door as ``mqtt:<topic>`` (the caller's rate limit, then the pin's
  own ``max_switches_per_minute``); refusals go to ``<base>/refused`` (a Home Assistant event,
  ``{"event_type": "refused", "pin", "command", "reason", "topic"}``). Only the published name
  is a command topic: ``GPIO17/set`` or ``BOARD11/set`` for the pin published as ``led`` find
  nothing;
- ``<base>/sensor/<sensor>/<quantity>``: sensor readings, retained;
- ``<base>/<sensor>/availability``: ``online`` while the sensor's reads succeed, ``offline``
  while they fail (and until its first reading), retained;
- ``<base>/events``: what the boards reported (inputs, watchdog trips, down and up);
- ``<base>/health``: version, uptime and boards, retained, every ``health_interval_seconds``
  (its own timer, whatever else is published) and when a board goes down or comes back;
- ``<base>/chat`` and ``<base>/chat/reply`` (``[mqtt] chat = true``): a chat channel
  (:mod:`edge.channels.mqtt`).

Home Assistant finds the pins and sensors through MQTT discovery (:mod:`edge.mqtt.discovery`).
The modules here import the MQTT client (aiomqtt) only where they connect: the rest stay light.

The face is lazy (PEP 562): the names in ``__all__`` load from their modules when first used, so
importing any module of the package (which runs this file first) loads none of them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from edge.core.faces import lazy_face

if TYPE_CHECKING:
    from edge.mqtt.bridge import MqttBridge
    from edge.mqtt.commands import BadPayload
    from edge.mqtt.link import MqttUnavailable, round_trip

__all__ = ["BadPayload", "MqttBridge", "MqttUnavailable", "round_trip"]

_HOMES = {
    "bridge": ("MqttBridge",),
    "commands": ("BadPayload",),
    "link": ("MqttUnavailable", "round_trip"),
}
"""Each module, and the names of ``__all__`` it holds."""

__getattr__ = lazy_face(__name__, _HOMES)
