"""The broker: what the running agent says of its connection, or (no agent) a round trip made
here with the config's settings."""

from __future__ import annotations

from edge.doctor import Check

FIX = ("check that the broker runs and that [mqtt] url, username, EDGE_MQTT__PASSWORD and "
       "ca_file are right; `edge-cli mqtt test` tries it from here")


def running_mqtt(loaded) -> dict | None:
    """The running agent's ``mqtt`` status section, or None when no agent answers."""
    from edge.doctor.agent import agent_status
    from edge.exc import EdgeError

    try:
        mqtt = agent_status(loaded).get("mqtt")
    except EdgeError:
        return None
    return mqtt if isinstance(mqtt, dict) else None


def check_mqtt(loaded) -> Check:
    if loaded is None or not loaded.config.mqtt.enabled:
        return Check("mqtt", "skip", "not configured ([mqtt] url)")
    from edge.status import mqtt_line

    cfg = loaded.config.mqtt
    running = running_mqtt(loaded)
    if running is not None and running.get("enabled"):
        line = mqtt_line(running).removeprefix("mqtt: ")
        if running.get("connected"):
            return Check("mqtt", "ok", f"the running agent is {line}")
        return Check("mqtt", "fail", f"the running agent is {line}", FIX)
    import asyncio

    from edge.mqtt.link import MqttUnavailable, round_trip

    try:
        timing = asyncio.run(round_trip(cfg))
    except MqttUnavailable as exc:
        return Check("mqtt", "fail", str(exc), FIX)
    where = "no agent running" if running is None else "the running agent does not use it yet"
    return Check("mqtt", "ok", f"{cfg.url} answers: a message came back in "
                 f"{timing['round_trip_ms']:.1f} ms ({where})")
