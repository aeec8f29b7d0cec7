"""A stranger's flood: COUNT unsealed ``history`` requests to a node, each with a correlation of
its own, as fast as one MQTT 5 client publishes them (QoS 0, nothing awaited), from a process of
its own as an attacker's machine would be: ``python -m tests.fleet.flood URL TOPIC COUNT``.
Prints the seconds it took to hand them all to the broker.

>>> # proc = start_flood(broker.url, "edge-agent/b/request", 20_000); ...; proc.wait()
"""

from __future__ import annotations

import secrets
import subprocess
import sys
import time

import paho.mqtt.client as paho
from paho.mqtt.enums import CallbackAPIVersion

from edge.fleet.envelope import reply_topic, request_properties
from tests.helpers import ROOT

PAYLOAD = b'{"op": "history", "args": {}}'


def flood(url: str, topic: str, count: int) -> float:
    """Publish ``count`` requests to ``topic``; the seconds until the broker had them all."""
    host, port = url.removeprefix("mqtt://").split(":")
    client = paho.Client(CallbackAPIVersion.VERSION2, client_id=f"flood-{secrets.token_hex(4)}",
                         protocol=paho.MQTTv5)
    client.connect(host, int(port))
    client.loop_start()
    try:
        began = time.perf_counter()
        last = None
        for _ in range(count):
            props = request_properties(None, topic=topic, reply_to=reply_topic("house"),
                                       correlation=secrets.token_bytes(16), caller="house",
                                       via="agent", expiry=5, payload=PAYLOAD)
            last = client.publish(topic, PAYLOAD, qos=0, properties=props)
        if last is not None:
            last.wait_for_publish(60)
        return time.perf_counter() - began
    finally:
        client.disconnect()
        client.loop_stop()


def start_flood(url: str, topic: str, count: int) -> subprocess.Popen[str]:
    """The flood in a process of its own (its output: the seconds it took)."""
    return subprocess.Popen([sys.executable, "-m", "tests.fleet.flood", url, topic, str(count)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT)


if __name__ == "__main__":
    print(f"{flood(sys.argv[1], sys.argv[2], int(sys.argv[3])):.3f}")
