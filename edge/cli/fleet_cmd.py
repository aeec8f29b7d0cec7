"""``edge-cli fleet [--json]``: every edge-agent node on the broker, from what each keeps there
(retained): online, or offline and since when it was last heard of; version, uptime, boards,
pins, sensors and the last error.

    $ edge-cli fleet
    kitchen  online, up 3 h 12 min, 0.9.0  (home/kitchen)
      boards   gpio (connected)
      pins     led (gpio:GPIO17 output)
    shed     offline since 4 min ago (its last health), 0.9.0  (edge-agent/shed)
      boards   gpio
      pins     pump (gpio:GPIO22 output), fan (gpio:GPIO18 pwm)
    2 nodes on mqtt://broker.lan:1883: 1 online, 1 offline

Exit codes: 0 listed (also when there are none); 1 the broker could not be reached (and why);
2 no ``[mqtt]`` configured (and what to set).
"""

from __future__ import annotations

import argparse
import sys
import time
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, TypeVar

from edge.cli import fleet_keys_cmd

if TYPE_CHECKING:
    from collections.abc import Callable, Coroutine

    import aiomqtt

    from edge.config.mqtt import MqttConfig
    from edge.fleet.remote import NodeSeen

T = TypeVar("T")
NOT_CONFIGURED = ("MQTT is not configured: set [mqtt] url = \"mqtt://HOST:1883\" (mqtts:// for "
                  "TLS, with ca_file), and username with the password in EDGE_MQTT__PASSWORD "
                  "if the broker asks for one")


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser],
             common: argparse.ArgumentParser) -> None:
    parser = sub.add_parser(
        "fleet", parents=[common], help="the edge-agent nodes on the broker",
        description="Every node on the [mqtt] broker, from its retained topics: online or since "
        "when offline, version, uptime, boards, pins, sensors and its last error. "
        "`edge-cli --node NAME status|pins|gpio|sensors|history` runs a command on one of them, "
        "once this machine and NAME are paired (`edge-cli fleet pair NAME`).")
    parser.set_defaults(handler=run)
    fleet_keys_cmd.register(parser, common)


def on_broker(args: argparse.Namespace,
              work: Callable[[MqttConfig, Callable[[], aiomqtt.Client]], Coroutine[Any, Any, T]]
              ) -> T:
    """``work`` with a maker of clients of the config's ``[mqtt]`` broker, in its own event
    loop: a usage error (exit 2) without ``[mqtt]``, MqttUnavailable (exit 1, saying what
    to check) when the broker cannot be reached."""
    import asyncio
    import secrets

    import aiomqtt

    from edge.config.loader import load_config
    from edge.core.exc import UsageError
    from edge.mqtt.link import MqttUnavailable, explain, make_client

    cfg = load_config(args.config).config.mqtt
    if not cfg.enabled:
        raise UsageError(NOT_CONFIGURED)
    try:
        return asyncio.run(work(cfg, lambda: make_client(cfg, f"edge-cli-{secrets.token_hex(8)}")))
    except (aiomqtt.MqttError, OSError) as exc:
        raise MqttUnavailable(f"{cfg.url}: {explain(exc, cfg)}") from None


def run(args: argparse.Namespace) -> int:
    from edge.cli.output import emit
    from edge.control.ops import OpResult
    from edge.fleet.remote import survey

    tell = not args.json and sys.stderr.isatty()

    async def listing(cfg: MqttConfig, connect: Callable[[], aiomqtt.Client]) -> OpResult:
        def slow() -> None:
            print(f"edge-cli: listening for nodes on {cfg.url}...", file=sys.stderr, flush=True)

        nodes = await survey(connect, on_slow=slow if tell else None)
        rows = [node_row(node) for _, node in sorted(nodes.items())]
        return OpResult(True, fleet_text(rows, cfg.url), {"nodes": rows})

    return emit(on_broker(args, listing), args.json)


def _when(epoch: float | None) -> str | None:
    return None if epoch is None else datetime.fromtimestamp(epoch, UTC).isoformat(
        timespec="seconds")


def last_seen(health: dict[str, Any]) -> float | None:
    """When the node's last health was published (epoch seconds), when it says."""
    for key in ("time", "published_at"):
        value = health.get(key)
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return float(value)
        if isinstance(value, str):
            try:
                return datetime.fromisoformat(value).timestamp()
            except ValueError:
                continue
    return None


def _boards(node: NodeSeen) -> list[dict[str, Any]]:
    """Each board, its kind (from the description) and whether it is connected (the health
    is refreshed more often than the description, so its word wins; None while the node is
    offline: nobody is there to say)."""
    described = {str(b.get("name")): b for b in node.description.get("boards") or []
                 if isinstance(b, dict)}
    health = node.health.get("boards")
    connected = health if isinstance(health, dict) else {}
    names = list(dict.fromkeys([*described, *connected]))
    return [{"name": name, "kind": described.get(name, {}).get("kind"),
             "connected": bool(connected.get(name, described.get(name, {}).get("connected")))
             if node.online else None}
            for name in names]


def node_row(node: NodeSeen) -> dict[str, Any]:
    """One node for ``--json``."""
    health, description = node.health, node.description
    uptime = health.get("uptime_seconds")
    return {"node_id": node.name, "base_topic": node.base, "online": node.online,
            "availability": node.availability,
            "last_seen": _when(last_seen(health)),
            "version": health.get("version") or description.get("version"),
            "uptime_seconds": uptime if isinstance(uptime, (int, float)) else None,
            "boards": _boards(node),
            "pins": [p for p in description.get("pins") or [] if isinstance(p, dict)],
            "sensors": [s for s in description.get("sensors") or [] if isinstance(s, dict)],
            "connects": health.get("connects"), "last_error": health.get("last_error")}


def _state(row: dict[str, Any]) -> str:
    from edge.status_lines import ago, span

    seen, uptime = row["last_seen"], row["uptime_seconds"]
    age = None if seen is None else max(0.0, time.time() - datetime.fromisoformat(seen).timestamp())
    if row["online"]:
        if uptime is None:
            return "online"
        if age is None:  # the health does not say when: its uptime then
            return f"online, up {span(uptime)} at its last health"
        return f"online, up {span(uptime + age)}"
    if age is not None:
        return f"offline since {ago(age)} (its last health)"
    return "offline" if row["availability"] == "offline" else "availability unknown"


def _pin(pin: dict[str, Any]) -> str:
    return f"{pin.get('name')} ({pin.get('pin')} {pin.get('mode')})"


def _sensor(sensor: dict[str, Any]) -> str:
    units = sensor.get("quantities") or {}
    said = ", ".join(f"{q} {u}".strip() for q, u in units.items()) if isinstance(units, dict) else ""
    return f"{sensor.get('name')} ({said})" if said else str(sensor.get("name"))


def fleet_text(rows: list[dict[str, Any]], url: str) -> str:
    """The nodes as people read them: a head line each, then its boards, pins and sensors."""
    if not rows:
        return (f"no edge-agent nodes on {url} (a node shows here once it has connected with "
                "[mqtt] configured)")
    width = max(len(row["node_id"]) for row in rows)
    lines = []
    for row in rows:
        version = f", {row['version']}" if row["version"] else ""
        lines.append(f"{row['node_id']:<{width}}  {_state(row)}{version}  ({row['base_topic']})")
        boards = ", ".join(b["name"] if b["connected"] is None else
                           f"{b['name']} ({'connected' if b['connected'] else 'down'})"
                           for b in row["boards"])
        for label, text in (("boards", boards), ("pins", ", ".join(map(_pin, row["pins"]))),
                            ("sensors", ", ".join(map(_sensor, row["sensors"]))),
                            ("error", row["last_error"] or "")):
            if text:
                lines.append(f"  {label:<8} {text}")
    online = sum(row["online"] for row in rows)
    lines.append(f"{len(rows)} node{'s' if len(rows) != 1 else ''} on {url}: {online} online, "
                 f"{len(rows) - online} offline")
    return "\n".join(lines)
