"""One-time pairing codes: ``edge-cli channel pair telegram`` issues a code valid for 10 minutes;
an unknown sender who sends ``/pair CODE`` in time is added to the channel's allowlist, in the
running agent and in the config file. Codes live hashed in ``<state_dir>/pairing.json``, so the
CLI and the daemon share them without talking to each other.

:class:`Strangers` decides what an unknown sender hears: one hint a day, an answer to each
``/pair`` attempt, and silence once the sender (5 an hour) or everyone together (30 an hour per
channel) has guessed wrong too often. A current code always pairs, silenced or not: a swarm of
strangers guessing wrong must not lock out the owner's invitee. Checking a code costs a
constant-time compare against the stored hash, and a silenced sender learns nothing from a check
(a wrong code still gets no reply); guessing stays hopeless (32**8 codes, 10 minutes each).
Replies are capped per sender and per minute overall, so strangers cannot spend the bot's send
budget."""

from __future__ import annotations

import hashlib
import hmac
import json
import logging
import secrets
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from edge.core.files import write_json_atomically
from edge.core.ratelimit import SlidingWindow

log = logging.getLogger(__name__)

CODE_TTL_SECONDS = 600
CODE_ALPHABET = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789"  # no 0/O, 1/I
CODE_LENGTH = 8

WRONG_ATTEMPTS_PER_SENDER = 5
"""Wrong ``/pair`` attempts one sender may make per hour; after that, silence (no reply)."""
WRONG_ATTEMPTS_PER_CHANNEL = 30
"""Wrong attempts everyone together may make per channel and hour, so a swarm of strangers
cannot brute-force a code (30 guesses among 32**8 codes: odds about 3e-11 an hour)."""
ATTEMPT_WINDOW_SECONDS = 3600.0
HINT_WINDOW_SECONDS = 86400.0
"""An unknown sender gets the pairing hint at most once a day."""
REPLIES_PER_SENDER = WRONG_ATTEMPTS_PER_SENDER + 2
"""Replies one unknown sender may get per hour (hint, wrong codes, "paired")."""
REPLIES_PER_MINUTE = 20
"""Replies all unknown senders together may get per minute."""
PAIRED = "Paired: you can now use this bot. /help lists the commands."
WRONG_CODE = "That pairing code is wrong or has expired."
EVERYONE = "*"
"""The rate-limit key shared by all senders (sender ids are never ``*``)."""


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
    def __init__(self, path: Path, clock: Callable[[], float] = time.time):
        self.path = path
        self.clock = clock

    def _load(self) -> dict[str, Any]:
        try:
            data: dict[str, Any] = json.loads(self.path.read_text())
            return data
        except (FileNotFoundError, ValueError):
            return {}

    def _save(self, data: dict[str, Any]) -> None:
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


class Strangers:
    """What a channel answers to senders who are not on its allowlist (None: silence).

    >>> async def never(channel, sender, code): return False
    >>> desk = Strangers("telegram", never)
    >>> import asyncio
    >>> [asyncio.run(desk.answer("7", "/pair WRONG")) is None for _ in range(6)]
    [False, False, False, False, False, True]
    """

    def __init__(self, channel: str, pair: Pair | None, clock: Callable[[], float] = time.monotonic):
        self.channel = channel
        self.pair = pair
        self._wrong = SlidingWindow(ATTEMPT_WINDOW_SECONDS, clock)
        self._hinted = SlidingWindow(HINT_WINDOW_SECONDS, clock)
        self._replies = SlidingWindow(ATTEMPT_WINDOW_SECONDS, clock)
        self._replies_overall = SlidingWindow(60.0, clock)

    async def answer(self, sender: str, text: str) -> str | None:
        words = text.split()
        if words and words[0].split("@")[0] == "/pair" and self.pair is not None:
            outcome = await self._attempt(sender, words[1:])
            return outcome if outcome == PAIRED else self._reply(sender, outcome)
        if self._hinted.take(sender, limit=1):
            return self._reply(sender, pairing_hint(self.channel))
        return None

    async def _attempt(self, sender: str, args: list[str]) -> str | None:
        """The code first, then the limits: a valid code pairs whoever sends it; only wrong
        attempts are counted and, past a limit, silenced."""
        assert self.pair is not None
        if len(args) == 1 and await self.pair(self.channel, sender, args[0]):
            return PAIRED
        if self._silenced(sender):
            log.warning("pairing_silenced channel=%s sender=%s", self.channel, sender)
            return None
        self._wrong.take(sender, limit=WRONG_ATTEMPTS_PER_SENDER)
        self._wrong.take(EVERYONE, limit=WRONG_ATTEMPTS_PER_CHANNEL)
        return WRONG_CODE

    def _silenced(self, sender: str) -> bool:
        """Whether this sender, or everyone together on the channel, has guessed wrong too often."""
        return (self._wrong.count(sender) >= WRONG_ATTEMPTS_PER_SENDER
                or self._wrong.count(EVERYONE) >= WRONG_ATTEMPTS_PER_CHANNEL)

    def may_reply(self, sender: str) -> bool:
        """Take one reply from the sender's and the overall budget; False when either is spent."""
        if self._replies_overall.count(EVERYONE) >= REPLIES_PER_MINUTE:
            return False
        if not self._replies.take(sender, limit=REPLIES_PER_SENDER):
            return False
        return self._replies_overall.take(EVERYONE, limit=REPLIES_PER_MINUTE)

    def _reply(self, sender: str, text: str | None) -> str | None:
        if text is None or self.may_reply(sender):
            return text
        log.info("stranger_reply_dropped channel=%s sender=%s reason=rate_limited",
                 self.channel, sender)
        return None
