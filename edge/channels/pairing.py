"""One-time pairing codes: ``edge-cli channel pair telegram`` issues a code valid for 10 minutes;
an unknown sender who sends ``/pair CODE`` in time is added to the channel's allowlist, in the
running agent and in the config file. Codes live hashed in ``<state_dir>/pairing.json``, so the
CLI and the daemon share them without talking to each other."""

from __future__ import annotations

import hashlib
import hmac
import json
import secrets
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

from edge.files import write_json_atomically

CODE_TTL_SECONDS = 600
CODE_ALPHABET = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789"  # no 0/O, 1/I
CODE_LENGTH = 8


Pair = Callable[[str, str, str], Awaitable[bool]]
"""(channel, sender, code) -> paired. On success the runtime has added the sender to the
channel's allowlist (the set the channel shares, and the config file)."""


def pairing_hint(channel: str) -> str:
    """The one reply an unknown sender gets."""
    return (f"This is a private edge-agent. Ask its owner to run `edge-cli channel pair {channel}` "
            "and send me /pair CODE.")


def _digest(code: str) -> str:
    return hashlib.sha256(code.strip().upper().encode()).hexdigest()


class PairingCodes:
    def __init__(self, path: Path, clock=time.time):
        self.path = path
        self.clock = clock

    def _load(self) -> dict:
        try:
            return json.loads(self.path.read_text())
        except (FileNotFoundError, ValueError):
            return {}

    def _save(self, data: dict) -> None:
        write_json_atomically(self.path, data)

    def issue(self, channel: str) -> tuple[str, float]:
        """A new code for ``channel`` (replacing any earlier one) and its expiry time."""
        code = "".join(secrets.choice(CODE_ALPHABET) for _ in range(CODE_LENGTH))
        expires = self.clock() + CODE_TTL_SECONDS
        data = self._load()
        data[channel] = {"digest": _digest(code), "expires": expires}
        self._save(data)
        return code, expires

    def redeem(self, channel: str, code: str) -> bool:
        """True once for a valid, unexpired code; the code is then used up."""
        data = self._load()
        entry = data.get(channel)
        if not entry or entry["expires"] < self.clock():
            return False
        if not hmac.compare_digest(entry["digest"], _digest(code)):
            return False
        del data[channel]
        self._save(data)
        return True
