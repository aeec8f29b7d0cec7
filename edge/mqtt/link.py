"""The connection to the broker: an aiomqtt client from ``[mqtt]`` (TLS, credentials, last
will), its client id, the reconnect backoff, and the round trip ``edge-cli mqtt test`` and
doctor run.

aiomqtt (over paho-mqtt 2) is the client: asyncio-native and maintained; we speak MQTT 5 with
it. With its imports it adds under 3 MB to an idle agent (``python -m bench mqtt``).
"""

from __future__ import annotations

import asyncio
import logging
import re
import secrets
import socket
import ssl
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import aiomqtt
from paho.mqtt.packettypes import PacketTypes
from paho.mqtt.properties import Properties

from edge.config.mqtt import MqttConfig
from edge.core.exc import EdgeError
from edge.core.files import write_atomically

log = logging.getLogger(__name__)

BACKOFF_START_SECONDS = 0.5
TOPIC_ALLOWANCE_BYTES = 64 * 1024
"""Room for the topic and headers on top of ``max_payload_bytes`` in the largest packet we
take."""
CONNECT_TIMEOUT_SECONDS = 10.0
CLIENT_SUFFIX_FILE = "mqtt-client-id"
CLIENT_SUFFIX = re.compile(r"[0-9a-f]{16}")


class MqttUnavailable(EdgeError):
    """The broker cannot be reached or refused us; the message says what to check."""


def tls_context(cfg: MqttConfig) -> ssl.SSLContext | None:
    if not cfg.tls:
        return None
    context = ssl.create_default_context(cafile=cfg.ca_file or None)
    if cfg.cert_file:
        context.load_cert_chain(cfg.cert_file, cfg.key_file or None)
    return context


Intercept = Callable[[str, bytes, Any, bool], bool]
"""Takes an arriving message (topic, payload, properties, retained) before aiomqtt queues it:
True when it took it (nothing is queued), False to let it through."""


def make_client(cfg: MqttConfig, identifier: str, *, will: aiomqtt.Will | None = None,
                timeout: float = CONNECT_TIMEOUT_SECONDS,
                intercept: Intercept | None = None) -> aiomqtt.Client:
    """MQTT 5, so that the broker learns the largest packet we take (``max_payload_bytes`` plus
    room for the topic) and drops bigger ones before they reach the Pi's memory; payloads between
    the two are refused by the bridge, and said so on ``<base>/refused``. ``intercept``: see
    :func:`_intercepted`."""
    password = cfg.password.get_secret_value() if cfg.password else None
    # paho-mqtt's Properties.__init__ carries no annotations
    connect = Properties(PacketTypes.CONNECT)  # type: ignore[no-untyped-call]
    connect.MaximumPacketSize = cfg.max_payload_bytes + TOPIC_ALLOWANCE_BYTES
    client = aiomqtt.Client(cfg.host, cfg.port, username=cfg.username or None, password=password,
                            identifier=identifier, will=will, tls_context=tls_context(cfg),
                            keepalive=cfg.keepalive_seconds, timeout=timeout,
                            protocol=aiomqtt.ProtocolVersion.V5, properties=connect,
                            max_queued_incoming_messages=1000)
    _send_without_delay(client)
    if intercept is not None:
        _intercepted(client, intercept)
    return client


def _intercepted(client: aiomqtt.Client, intercept: Intercept) -> None:
    """Offer each arriving message to ``intercept`` before aiomqtt makes it a message object,
    a task and a queue entry: a flood a cheap check drops (a stranger's unsealed fleet requests)
    then costs none of those, and never fills the queue that the agent's own traffic needs
    (aiomqtt drops what arrives while it is full). paho's ``on_message`` (aiomqtt's) is wrapped,
    as :func:`_send_without_delay` wraps ``on_socket_open``; both run on the event loop."""
    paho = client._client  # noqa: SLF001 (aiomqtt keeps its paho client here, and no hook)
    queue = paho.on_message

    def arrived(paho_client: Any, userdata: Any, message: Any) -> None:
        try:
            taken = intercept(message.topic, message.payload, message.properties,
                              bool(message.retain))
        except Exception:  # a bug in the check must not stop the connection's reading
            log.exception("mqtt_intercept_failed topic=%r", message.topic)
            taken = False
        if not taken and queue is not None:
            queue(paho_client, userdata, message)

    paho.on_message = arrived


def _send_without_delay(client: aiomqtt.Client) -> None:
    """Set ``TCP_NODELAY`` on the client's socket as soon as it is opened (and on each
    reconnect's new socket). Without it Nagle's algorithm holds each small packet (a state
    echo, an acknowledgement) until the broker's delayed ACK of the previous one, about 40 ms:
    a switch from Home Assistant took 48 ms to show its new state, 4.7 ms with both ends set
    (the broker's own side is mosquitto's ``set_tcp_nodelay true``).

    aiomqtt offers no hook for the socket, so paho's ``on_socket_open`` (which aiomqtt sets to
    watch the socket) is wrapped: ours runs first, then aiomqtt's."""
    paho = client._client  # noqa: SLF001 (aiomqtt keeps its paho client here, and no hook)
    watch = paho.on_socket_open

    def opened(paho_client: Any, userdata: Any, sock: Any) -> None:
        if isinstance(sock, socket.socket) and sock.family in (socket.AF_INET, socket.AF_INET6):
            try:
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            except OSError as exc:  # not fatal: the link works, only slower
                log.warning("mqtt_nodelay_not_set error=%r", str(exc))
        if watch is not None:
            watch(paho_client, userdata, sock)

    paho.on_socket_open = opened


def client_socket(client: aiomqtt.Client) -> socket.socket | None:
    """The connected client's socket (None before it connects): what ``TCP_NODELAY`` is set
    on."""
    sock = client._client.socket()  # noqa: SLF001
    return sock if isinstance(sock, socket.socket) else None


def client_identifier(node_id: str, state_dir: Path | None) -> str:
    """``edge-agent-<node_id>-<random>``: a broker disconnects a client when another connects
    with its id, so an id anyone can work out from the node id would let any client push the
    agent off the broker. The random part is made once and kept in the state directory (a
    0600 file), so the id stays the same across restarts; without one, it lasts this process.

    >>> import tempfile, pathlib
    >>> state = pathlib.Path(tempfile.mkdtemp())
    >>> first = client_identifier("kitchen", state)
    >>> first.startswith("edge-agent-kitchen-"), first == client_identifier("kitchen", state)
    (True, True)
    """
    suffix = None
    path = state_dir / CLIENT_SUFFIX_FILE if state_dir is not None else None
    if path is not None and path.is_file():
        kept = path.read_text(errors="replace").strip()
        suffix = kept if CLIENT_SUFFIX.fullmatch(kept) else None
    if suffix is None:
        suffix = secrets.token_hex(8)
        if path is not None:
            try:
                write_atomically(path, suffix + "\n", 0o600)
            except OSError as exc:
                log.warning("mqtt_client_id_not_kept path=%s error=%r", path, str(exc))
    return f"edge-agent-{node_id}-{suffix}"


def explain(exc: BaseException, cfg: MqttConfig) -> str:
    """A connection failure as one line that says what to check."""
    text = str(exc) or type(exc).__name__
    cause = exc.__cause__  # aiomqtt's "Disconnected during message iteration" carries the why
    if cause is not None and str(cause) and str(cause) not in text:
        text = f"{text}: {cause}"
    lowered = text.lower()
    if "not authori" in lowered or "bad user" in lowered:
        hint = "check [mqtt] username and the password (EDGE_MQTT__PASSWORD)"
    elif "certificate" in lowered or "ssl" in lowered:
        hint = "check [mqtt] ca_file (the CA that signed the broker's certificate) and the host name"
    elif "disconnected" in lowered:
        hint = ("the broker went away or closed the connection (if it keeps happening: does "
                f"another client use this agent's client id, a copy of {CLIENT_SUFFIX_FILE} "
                "from its state directory?)")
    elif "refused" in lowered or "timed out" in lowered or "unreachable" in lowered:
        hint = f"is the broker running and listening on {cfg.host}:{cfg.port}?"
    else:
        hint = f"check [mqtt] url ({cfg.url}) and the broker's log"
    return f"{text}; {hint}"


class Backoff:
    """0.5 s, 1 s, 2 s ... up to ``ceiling``; :meth:`reset` after a good connection."""

    def __init__(self, ceiling: float, start: float = BACKOFF_START_SECONDS):
        self.ceiling, self.start, self.attempt = ceiling, start, 0

    def next_delay(self) -> float:
        delay = min(self.ceiling, self.start * 2.0 ** self.attempt)
        self.attempt = min(self.attempt + 1, 32)
        return delay

    def reset(self) -> None:
        self.attempt = 0


async def round_trip(cfg: MqttConfig, timeout: float = CONNECT_TIMEOUT_SECONDS) -> dict[str, float]:
    """Connect as a test client, subscribe to a fresh topic under the node's base, publish one
    message and wait for it to come back: ``{"connect_ms", "round_trip_ms"}``. Raises
    MqttUnavailable saying what went wrong."""
    tag = secrets.token_hex(4)
    topic = f"{cfg.topic_base}/test/{tag}"
    started = time.perf_counter()
    try:
        async with asyncio.timeout(timeout):
            async with make_client(cfg, f"edge-cli-test-{cfg.node_id}-{tag}", timeout=timeout) as client:
                connected = time.perf_counter()
                await client.subscribe(topic, qos=1)
                sent = time.perf_counter()
                await client.publish(topic, tag.encode(), qos=1)
                async for message in client.messages:
                    if message.payload == tag.encode():
                        break
                back = time.perf_counter()
    except TimeoutError:
        raise MqttUnavailable(f"no answer from {cfg.url} within {timeout:g} s; is the broker "
                              "running, and does it let this user subscribe and publish under "
                              f"{cfg.topic_base}/#?") from None
    except (aiomqtt.MqttError, OSError, ssl.SSLError) as exc:
        raise MqttUnavailable(f"{cfg.url}: {explain(exc, cfg)}") from None
    return {"connect_ms": round((connected - started) * 1000, 2),
            "round_trip_ms": round((back - sent) * 1000, 2)}
