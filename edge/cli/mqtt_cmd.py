"""``edge-cli mqtt status|test``: the running agent's broker connection; a round trip through the
broker with the config's settings (connect, subscribe, publish, receive the message back).

Exit codes: 0 connected (status) or the message came back (test); 1 not connected, no agent
running, MQTT not configured or the broker unreachable, each with what to do; 2 bad config.
"""

from __future__ import annotations

import argparse

from edge.cli.arguments import positive_seconds

NOT_CONFIGURED = ("MQTT is not configured; set [mqtt] url = \"mqtt://HOST:1883\" (and node_id) in "
                  "the config, then restart the agent")


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser], common: argparse.ArgumentParser) -> None:
    mqtt = sub.add_parser("mqtt", parents=[common], help="the MQTT broker connection")
    msub = mqtt.add_subparsers(dest="action", metavar="ACTION", required=True)
    msub.add_parser("status", parents=[common],
                    help="whether the running agent is connected to the broker, since when"
                    ).set_defaults(handler=status)
    test = msub.add_parser("test", parents=[common],
                           help="connect with the config's settings, publish a message and "
                                "receive it back")
    test.add_argument("--timeout", type=positive_seconds, default=10.0, metavar="SECONDS",
                      help="how long to wait for the broker (default 10)")
    test.set_defaults(handler=round_trip)


def status(args: argparse.Namespace) -> int:
    from edge.cli.output import emit
    from edge.config.locate import load_raw
    from edge.control import client
    from edge.control.ops import OpResult
    from edge.core.exc import DaemonUnavailable
    from edge.core.paths import socket_candidates
    from edge.status_lines import mqtt_line

    raw = load_raw(args.config)
    state_dir = (raw.data.get("paths") or {}).get("state_dir")
    try:
        reply = client.request(socket_candidates(state_dir if isinstance(state_dir, str) else None),
                               "status")
    except DaemonUnavailable:
        return emit(OpResult(False, "no agent is running, so nothing is connected to the broker; "
                             "start it (`edge-cli run` or `sudo systemctl start edge-agent`), or "
                             "try the broker with `edge-cli mqtt test`"), args.json)
    mqtt = (reply.get("data") or {}).get("mqtt") or {}
    if not mqtt.get("enabled"):
        return emit(OpResult(False, f"the running agent does not use MQTT: {NOT_CONFIGURED}",
                             {"mqtt": mqtt}), args.json, via="daemon")
    line = mqtt_line(mqtt)
    if mqtt.get("connected"):
        warning = f"\nwarning: {mqtt['warning']}" if mqtt.get("warning") else ""
        return emit(OpResult(True, line + warning, {"mqtt": mqtt}), args.json, via="daemon")
    return emit(OpResult(False, f"{line}; it keeps retrying. `edge-cli mqtt test` tries the "
                         "broker from here; `edge-cli logs` shows each attempt", {"mqtt": mqtt}),
                args.json, via="daemon")


def round_trip(args: argparse.Namespace) -> int:
    import asyncio

    from edge.cli.output import emit
    from edge.config.loader import load_config
    from edge.control.ops import OpResult
    from edge.mqtt.link import MqttUnavailable, round_trip

    cfg = load_config(args.config).config.mqtt
    if not cfg.enabled:
        return emit(OpResult(False, NOT_CONFIGURED), args.json)
    try:
        timing = asyncio.run(round_trip(cfg, timeout=args.timeout))
    except MqttUnavailable as exc:
        return emit(OpResult(False, str(exc), {"url": cfg.url}), args.json)
    message = (f"{cfg.url}: connected in {timing['connect_ms']:.1f} ms; a message under "
               f"{cfg.topic_base}/test came back in {timing['round_trip_ms']:.1f} ms")
    return emit(OpResult(True, message, {"url": cfg.url, "node_id": cfg.node_id, **timing}),
                args.json)
