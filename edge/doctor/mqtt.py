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


def check_fleet(loaded: LoadedConfig | None) -> Check:
    """The running agent's fleet: node boards it has no key for, a node whose clock is further
    from this one's than a request's expiry allows, and answers or requests it dropped."""
    from edge.fleet.envelope import SKEW_SECONDS

    if loaded is None or not loaded.config.mqtt.enabled:
        return Check("fleet", "skip", "no [mqtt]")
    running = running_mqtt(loaded)
    fleet = (running or {}).get("fleet")
    if not isinstance(fleet, dict):
        return Check("fleet", "skip", "no agent running")
    nodes = fleet.get("nodes") or {}
    unpaired = [name for name, node in nodes.items() if not node.get("paired", True)]
    apart = [f"{name} ({node['clock_offset_ms'] / 1000:+.1f} s)" for name, node in nodes.items()
             if node.get("clock_warning")]
    if unpaired:
        return Check("fleet", "fail", f"no key shared with node {', '.join(unpaired)}: nothing "
                     "is asked of it", f"on each, run `edge-cli fleet pair "
                     f"{loaded.config.mqtt.node_id}` and here the command it prints")
    if apart:
        return Check("fleet", "warn", f"clocks apart by more than {SKEW_SECONDS:g} s: "
                     f"{', '.join(apart)}; requests to them may be refused as expired",
                     "synchronise the clocks (`timedatectl`; systemd-timesyncd or chrony)")
    paired = (fleet.get("requests") or {}).get("paired") or []
    return Check("fleet", "ok", f"paired with {', '.join(paired) or 'no agent'}")


def _running_check(running: dict[str, Any]) -> Check:
    from edge.status_lines import mqtt_line

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
