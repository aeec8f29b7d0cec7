"""The broker: what the running agent says of its connection, or (no agent) a round trip made
here with the config's settings. A broker that answers is still a warning when commands are
taken over plaintext without credentials (anyone the broker admits can switch the outputs)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from edge.doctor import Check

if TYPE_CHECKING:
    from edge.config.loader import LoadedConfig
    from edge.config.mqtt import MqttConfig

FIX = ("check that the broker runs and that [mqtt] url, username, EDGE_MQTT__PASSWORD and "
       "ca_file are right; `edge-cli mqtt test` tries it from here")


def running_mqtt(loaded: LoadedConfig) -> dict[str, Any] | None:
    """The running agent's ``mqtt`` status section, or None when no agent answers."""
    from edge.core.exc import EdgeError
    from edge.doctor.agent import agent_status

    try:
        mqtt = agent_status(loaded).get("mqtt")
    except EdgeError:
        return None
    return mqtt if isinstance(mqtt, dict) else None


def _open(check: Check, cfg: MqttConfig) -> Check:
    """``check``, made a warning when the broker works but anyone it admits can switch pins."""
    from edge.config.mqtt import EXPOSURE_FIX

    if check.status != "ok" or not cfg.exposure:
        return check
    return Check("mqtt", "warn", f"{check.detail}; but {cfg.exposure}", EXPOSURE_FIX)


def check_mqtt(loaded: LoadedConfig | None) -> Check:
    if loaded is None or not loaded.config.mqtt.enabled:
        return Check("mqtt", "skip", "not configured ([mqtt] url)")
    cfg = loaded.config.mqtt
    running = running_mqtt(loaded)
    if running is not None and running.get("enabled"):
        return _open(_running_check(running), cfg)
    return _open(_round_trip_check(cfg, running), cfg)


def _running_check(running: dict[str, Any]) -> Check:
    from edge.status import mqtt_line

    line = mqtt_line(running).removeprefix("mqtt: ")
    if running.get("connected"):
        return Check("mqtt", "ok", f"the running agent is {line}")
    return Check("mqtt", "fail", f"the running agent is {line}", FIX)


def _round_trip_check(cfg: MqttConfig, running: dict[str, Any] | None) -> Check:
    import asyncio

    from edge.mqtt.link import MqttUnavailable, round_trip

    try:
        timing = asyncio.run(round_trip(cfg))
    except MqttUnavailable as exc:
        return Check("mqtt", "fail", str(exc), FIX)
    where = "no agent running" if running is None else "the running agent does not use it yet"
    return Check("mqtt", "ok", f"{cfg.url} answers: a message came back in "
                 f"{timing['round_trip_ms']:.1f} ms ({where})")
