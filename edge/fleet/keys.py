"""The fleet's keys: one shared secret per pair of agents, filed on each side under the other's
``node_id``, and the MAC every request and answer carries (HMAC-SHA256, :mod:`hmac`).

A key never crosses the broker. Pairing shows it once, as a code a person types on the other
machine (``edge-cli fleet pair shed`` on the node prints the code and the command to run on the
controller, ``edge-cli fleet pair kitchen --code ...`` there): 160 random bits in base32,
``XXXX-XXXX-...``. Keys live in ``<state>/fleet-keys.json`` (mode 0600), which the running agent
reads again when it changes, and may also be given as ``[mqtt.fleet_keys] NAME = "CODE"`` (or
``EDGE_MQTT__FLEET_KEYS__NAME``); neither is ever printed.

What a MAC covers (:func:`seal`): the kind (request or answer, so one is never taken for the
other), the topic it was published on (so the target node), where the answer goes, the
correlation, who sends it (the key's name), on whose behalf (``via``: the agent, or
``cli:user@host``), the absolute send time and the expiry, and the payload as sent (operation
and arguments, or the result).

>>> key = decode_code(new_code())
>>> sealed = seal(key, Seal("request", "edge-agent/_fleet/shed/request", "r", b"c", "kitchen", "agent",
...                         1_700_000_000_000, 5), b'{"op": "status"}')
>>> verify(key, Seal("request", "edge-agent/_fleet/shed/request", "r", b"c", "kitchen", "agent",
...                  1_700_000_000_000, 5), b'{"op": "status"}', sealed)
True
>>> verify(key, Seal("request", "edge-agent/_fleet/shed/request", "r", b"c", "house", "agent",
...                  1_700_000_000_000, 5), b'{"op": "status"}', sealed)
False
"""

from __future__ import annotations

import hashlib
import hmac
import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from pydantic import SecretStr

from edge.config.mqtt import NODE_ID
from edge.core.files import write_atomically
from edge.core.keycodes import PairingCodeError, decode_code, new_code

__all__ = ["KEY_FILE", "FleetKeys", "PairingCodeError", "Seal", "decode_code",
           "new_code", "seal", "verify"]

KEY_FILE = "fleet-keys.json"
PROTOCOL = b"edge-fleet-v1"


@dataclass(frozen=True)
class Seal:
    """What a MAC binds: everything about a message but its payload."""

    kind: str
    """``request`` or ``answer``."""
    topic: str
    reply_to: str
    correlation: bytes
    sender: str
    """The name the receiver files the key under: the sender's node_id."""
    via: str
    """On whose behalf: ``agent``, or ``cli:user@host`` (as the key's holder says)."""
    sent_ms: int
    expiry: int


def _message(fields: Seal, payload: bytes) -> bytes:
    head = [PROTOCOL, fields.kind.encode(), fields.topic.encode(), fields.reply_to.encode(),
            fields.correlation.hex().encode(), fields.sender.encode(), fields.via.encode(),
            str(fields.sent_ms).encode(), str(fields.expiry).encode()]
    return b"\n".join(head) + b"\n" + payload


def seal(key: bytes, fields: Seal, payload: bytes) -> str:
    """The MAC of a message (hex)."""
    return hmac.new(key, _message(fields, payload), hashlib.sha256).hexdigest()


def verify(key: bytes, fields: Seal, payload: bytes, mac: str) -> bool:
    """Whether ``mac`` is this message's under ``key`` (compared in constant time)."""
    return hmac.compare_digest(seal(key, fields, payload), mac)


class FleetKeys:
    """The keys this agent shares with others, by their node_id: the state directory's file
    (read again when it changes) and the config's ``[mqtt.fleet_keys]``."""

    def __init__(self, state_dir: Path | None, configured: Mapping[str, str] | None = None):
        self.path = state_dir / KEY_FILE if state_dir is not None else None
        self._configured = {name: decode_code(code) for name, code in (configured or {}).items()}
        self._stamp: tuple[int, int] | None = None
        self._filed: dict[str, bytes] = {}

    @classmethod
    def of(cls, configured: Mapping[str, SecretStr], state_dir: Path | None) -> FleetKeys:
        """The keys of ``[mqtt.fleet_keys]`` (``configured``) and those ``state_dir`` keeps."""
        return cls(state_dir, {name: code.get_secret_value() for name, code in configured.items()})

    def get(self, name: str) -> bytes | None:
        """The key shared with ``name``, or None (not paired)."""
        self._reload()
        return self._configured.get(name) or self._filed.get(name)

    def names(self) -> list[str]:
        self._reload()
        return sorted({*self._configured, *self._filed})

    def __bool__(self) -> bool:
        return bool(self.names())

    def _reload(self) -> None:
        if self.path is None:
            return
        try:
            info = self.path.stat()
        except OSError:
            self._stamp, self._filed = None, {}
            return
        stamp = (info.st_mtime_ns, info.st_size)
        if stamp == self._stamp:
            return
        self._stamp = stamp
        try:
            raw = json.loads(self.path.read_text())
            self._filed = {str(name): decode_code(str(code)) for name, code in raw.items()}
        except (OSError, ValueError, AttributeError):
            self._filed = {}

    def file(self, name: str, code: str) -> None:
        """Keep ``code``'s key for ``name`` in the state directory (0600), replacing any."""
        if not NODE_ID.match(name):
            raise ValueError(f"{name!r} is not a node id (letters, digits, '_' and '-')")
        decode_code(code)
        assert self.path is not None
        codes = self._codes()
        codes[name] = code.strip().upper()
        write_atomically(self.path, json.dumps(codes, indent=1, sort_keys=True), 0o600)

    def forget(self, name: str) -> bool:
        """Drop the key filed for ``name``; False when there was none."""
        assert self.path is not None
        codes = self._codes()
        if codes.pop(name, None) is None:
            return False
        write_atomically(self.path, json.dumps(codes, indent=1, sort_keys=True), 0o600)
        return True

    def _codes(self) -> dict[str, str]:
        assert self.path is not None
        try:
            raw = json.loads(self.path.read_text())
        except FileNotFoundError:
            return {}
        if not isinstance(raw, dict):
            raise ValueError(f"{self.path} is not a table of keys; move it away and pair again")
        return {str(k): str(v) for k, v in raw.items()}

