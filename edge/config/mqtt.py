"""``[mqtt]``: the agent as a node on an MQTT broker (and in Home Assistant). Off without ``url``.

>>> cfg = MqttConfig(url="mqtts://broker.lan", node_id="kitchen")
>>> cfg.enabled, cfg.host, cfg.port, cfg.tls, cfg.topic_base
(True, 'broker.lan', 8883, True, 'edge-agent/kitchen')
"""

from __future__ import annotations

import re
import socket
from typing import Annotated, Literal, Self
from urllib.parse import urlsplit

from pydantic import AfterValidator, Field, SecretStr, field_validator, model_validator

from edge.config.section import Seconds, Section
from edge.core.keycodes import decode_code

NODE_ID = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
"""Home Assistant's node_id and object_id alphabet; also safe in any MQTT topic."""
SCHEMES = {"mqtt": 1883, "mqtts": 8883}
EXPOSURE_FIX = ("use an mqtts:// url with a username (the password in EDGE_MQTT__PASSWORD) on a "
                "broker that refuses anonymous clients, or set [mqtt] allow_commands = false")


def default_node_id() -> str:
    """The hostname, made topic-safe (``pi.local`` becomes ``pi-local``)."""
    name = re.sub(r"[^A-Za-z0-9_-]+", "-", socket.gethostname()).strip("-")
    return name[:64] or "edge-agent"


def _topic_safe(value: str, what: str) -> str:
    """A topic prefix the agent publishes and subscribes under: no wildcards (``+``, ``#``: a
    subscription under it would match other nodes' topics), no ``$`` first (the broker's own
    ``$SYS``, ``$share``), no empty levels (``a//b``, a leading or trailing ``/``)."""
    if any(c in value for c in "#+\0") or value.startswith("/") or value.endswith("/"):
        raise ValueError(f"{what} must not contain '#', '+' or NUL, nor begin or end with '/'")
    if value.startswith("$"):
        raise ValueError(f"{what} must not begin with '$' (the broker's own topics, such as "
                         "$SYS, begin with it)")
    if "//" in value:
        raise ValueError(f"{what} must not have an empty level ('//')")
    return value


def _known_url(value: str) -> str:
    if not value:
        return value
    parts = urlsplit(value)
    if parts.scheme not in SCHEMES or not parts.hostname:
        raise ValueError("url must be mqtt://HOST[:PORT] or mqtts://HOST[:PORT]")
    if parts.username or parts.password:
        raise ValueError("put the user in username and the password in EDGE_MQTT__PASSWORD, "
                         "not in the url")
    parts.port  # noqa: B018 (raises ValueError for a port out of range)
    return value


def _safe_node_id(value: str) -> str:
    if not NODE_ID.match(value):
        raise ValueError("node_id may hold only letters, digits, '_' and '-' (at most 64)")
    return value


def _safe_topic(value: str) -> str:
    return _topic_safe(value, "a topic")


BINARY_SENSOR_CLASSES = (
    "battery", "battery_charging", "carbon_monoxide", "cold", "connectivity", "door",
    "garage_door", "gas", "heat", "light", "lock", "moisture", "motion", "moving", "occupancy",
    "opening", "plug", "power", "presence", "problem", "running", "safety", "smoke", "sound",
    "tamper", "update", "vibration", "window")
"""Home Assistant's binary_sensor device classes (BinarySensorDeviceClass): what on and off mean."""


class InputPresentation(Section):
    """How an input pin is shown to Home Assistant: ``[mqtt.inputs.NAME]`` (a pin name or alias).

    An input is published as its logical state, as everywhere else: ``ON`` while it is on (its
    switch closed: the line low with ``pull = "up"``, high with ``pull = "down"``; its
    ``active`` level without a pull). A door's reed contact closed while the door is shut, which
    Home Assistant's ``door`` should show ``OFF``, is an input on while its switch is open:
    ``active = "high"`` on the pulled-up pin in ``[boards.NAME.pins]``, so that the agent's own
    views, rules and interlocks say the same as Home Assistant.

    >>> InputPresentation(device_class="door").device_class
    'door'
    """

    device_class: str | None = None
    """Any Home Assistant binary_sensor device class (``door``, ``motion``, ``problem``...)."""
    invert: bool | None = Field(default=None, exclude=True)
    """Gone: refused with what to write instead (the pin's ``active``)."""

    @field_validator("invert")
    @classmethod
    def _no_invert(cls, value: bool | None) -> None:
        if value is not None:
            raise ValueError('invert is gone: an input means the same on and off everywhere, so '
                             'say it on the pin: in [boards.NAME.pins] give it active = "high" '
                             '(with pull = "up": on while its switch is open) or active = "low" '
                             '(with pull = "down"), and remove invert here')
        return None

    @field_validator("device_class")
    @classmethod
    def _known_class(cls, value: str | None) -> str | None:
        if value is not None and value not in BINARY_SENSOR_CLASSES:
            raise ValueError(f"{value!r} is not a Home Assistant binary_sensor device class; "
                             f"use one of {', '.join(BINARY_SENSOR_CLASSES)}")
        return value


class MqttConfig(Section):
    url: Annotated[str, AfterValidator(_known_url)] = ""
    """``mqtt://host:1883`` or ``mqtts://host:8883`` (TLS); empty: MQTT is off."""
    username: str = ""
    password: SecretStr | None = None
    """Better in the environment than in the file: ``EDGE_MQTT__PASSWORD``."""
    ca_file: str | None = None
    """mqtts: the CA that signed the broker's certificate (default: the system's CAs)."""
    cert_file: str | None = None
    key_file: str | None = None
    """mqtts: a client certificate and its key, for brokers that ask for one."""
    node_id: Annotated[str, AfterValidator(_safe_node_id)] = Field(default_factory=default_node_id)
    """This agent on the broker and in Home Assistant: letters, digits, '_' and '-'."""
    base_topic: Annotated[str, AfterValidator(_safe_topic)] = ""
    """Default ``edge-agent/<node_id>``."""
    discovery: bool = True
    """Announce pins and sensors to Home Assistant (MQTT discovery, retained)."""
    discovery_prefix: Annotated[str, AfterValidator(_safe_topic)] = "homeassistant"
    qos: Literal[0, 1, 2] = 1
    retain: bool = True
    """Keep pin states and readings on the broker for subscribers that come later."""
    allow_commands: bool = True
    """false: publish only; ``<base>/<pin>/set`` is not even subscribed."""
    fleet_keys: dict[str, SecretStr] = {}
    """``[mqtt.fleet_keys] NAME = "CODE"``: the key shared with the agent whose node_id is NAME
    (a pairing code, :mod:`edge.fleet.keys`); better in the environment
    (``EDGE_MQTT__FLEET_KEYS__SHED``) or made by ``edge-cli fleet pair``, which keeps it in the
    state directory. Every fleet request and answer is sealed with it."""
    allow_unauthenticated: bool = False
    """true: a node also runs requests that carry no seal (as ``mqtt:unverified:<name they
    give>``, never status or history), and a controller takes an unsealed answer from a node it
    has no key for, saying so in its receipts: only for a private broker; ``doctor`` and
    ``config check`` warn."""
    chat: bool = False
    """Also take prompts on ``<base>/chat`` (answers on ``<base>/chat/reply``), as a chat channel
    whose person is ``mqtt:<base>/chat``: whoever the broker lets publish there. Needs
    allow_commands. Under supervised autonomy the model's actuations from it are refused (nobody
    there can approve them)."""
    chat_rate_limit_per_minute: int = Field(default=20, ge=1)
    chat_receipts: bool | None = None
    """End chat replies that touched a pin with the agent's receipt; unset: ``[agent] receipts``."""
    accept_retained_commands: bool = False
    """A retained ``/set`` (left on the broker, perhaps from before a restart) is ignored unless
    this is true: a stale command must not switch a pin when the agent (re)connects."""
    servos: list[str] = []
    """PWM pins (names or aliases) that drive hobby servos: their ``/set`` takes an angle and
    Home Assistant shows them as a number 0..180 instead of a dimmable light."""
    inputs: dict[str, InputPresentation] = {}
    """``[mqtt.inputs.NAME]``: how an input pin (a pin name or alias) is shown: its
    ``device_class``. Names that are not input pins stop ``config check``."""
    analog_interval_seconds: Seconds = Field(default=5.0, ge=0.1)
    """How often the analog pins are read for the broker; a value is published when it moved
    by more than ``analog_deadband`` since the last one published, so at most once per
    interval."""
    analog_deadband: float = Field(default=0.01, ge=0, le=1)
    """The smallest change of an analog pin (a fraction of its reference: 0.01 is 1 %) worth
    publishing."""
    max_payload_bytes: int = Field(default=1024, ge=16, le=1_048_576)
    """Longer command payloads are refused (and reported on ``<base>/refused``)."""
    keepalive_seconds: int = Field(default=30, ge=5, le=3600)
    """Also how long the broker waits before it publishes ``offline`` for a vanished agent
    (about 1.5 times this)."""
    reconnect_max_seconds: float = Field(default=30.0, ge=0.5, le=3600)
    """Reconnect backoff doubles from 0.5 s up to this."""
    health_interval_seconds: Seconds = Field(default=60.0, ge=1)
    """The retained ``<base>/health`` is published this often (on its own timer, whatever else
    is published), and when a board goes down or comes back."""

    @field_validator("fleet_keys")
    @classmethod
    def _pairing_codes(cls, value: dict[str, SecretStr]) -> dict[str, SecretStr]:
        for name, code in value.items():
            if not NODE_ID.match(name):
                raise ValueError(f"{name!r} is not a node id (letters, digits, '_' and '-')")
            try:
                decode_code(code.get_secret_value())
            except ValueError as exc:
                raise ValueError(f"{name}: {exc}") from None
        return value

    @model_validator(mode="after")
    def check(self) -> Self:
        if (self.ca_file or self.cert_file or self.key_file) and not self.tls:
            raise ValueError("ca_file, cert_file and key_file need an mqtts:// url")
        if bool(self.cert_file) != bool(self.key_file):
            raise ValueError("cert_file and key_file go together")
        return self

    @property
    def enabled(self) -> bool:
        return bool(self.url)

    @property
    def tls(self) -> bool:
        return self.url.startswith("mqtts://")

    @property
    def host(self) -> str:
        return urlsplit(self.url).hostname or ""

    @property
    def port(self) -> int:
        parts = urlsplit(self.url)
        return parts.port or SCHEMES.get(parts.scheme, 1883)

    @property
    def topic_base(self) -> str:
        return self.base_topic or f"edge-agent/{self.node_id}"

    @property
    def exposure(self) -> str | None:
        """Why anyone the broker admits can switch this node's outputs, or None: commands are
        taken over a plaintext connection without credentials (a broker that admits anonymous
        clients, on a network anyone can read and write). :data:`EXPOSURE_FIX` says what to do."""
        if not (self.enabled and self.allow_commands) or self.tls or self.username:
            return None
        return ("commands are taken over a plaintext connection without credentials: anyone the "
                "broker admits (often anyone on the LAN) can switch the allowlisted outputs"
                + (" and prompt the agent on the chat topic" if self.chat else ""))
