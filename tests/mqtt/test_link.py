"""The connection to the broker: ``TCP_NODELAY`` is set on the agent's socket (read back from
the live connection, plaintext and TLS, and again after the broker comes back), so a state echo
is not held back by Nagle's algorithm."""

from __future__ import annotations

import socket

from edge.config.mqtt import MqttConfig
from edge.mqtt.link import client_socket, make_client
from tests.fakes.mosquitto import Mosquitto


def nodelay(sock: socket.socket | None) -> int:
    assert sock is not None, "the client has no socket"
    return sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY)


async def test_the_agents_socket_sends_without_delay(broker):
    cfg = MqttConfig(url=broker.url, node_id="quick")
    async with make_client(cfg, "edge-agent-quick-test") as client:
        assert nodelay(client_socket(client)) != 0
        await client.publish("edge-agent/quick/probe", b"x", qos=1)  # the link works as before
    plain = socket.create_connection(("127.0.0.1", broker.port))  # what the OS gives by default
    try:
        assert plain.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY) == 0
    finally:
        plain.close()


async def test_over_tls_too(tmp_path):
    with Mosquitto(tmp_path / "secure", tls=True) as broker:
        cfg = MqttConfig(url=broker.url, node_id="quick", ca_file=str(broker.ca))
        async with make_client(cfg, "edge-agent-quick-tls") as client:
            assert nodelay(client_socket(client)) != 0


async def test_a_new_connection_of_the_same_client_is_set_again(broker):
    cfg = MqttConfig(url=broker.url, node_id="quick")
    client = make_client(cfg, "edge-agent-quick-again")
    for _ in range(2):
        async with client:
            assert nodelay(client_socket(client)) != 0
