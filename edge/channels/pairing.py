"""One-time pairing codes: ``edge-cli channel pair telegram`` issues a code valid for 10 minutes;
an unknown sender who sends ``/pair CODE`` in time is added to the channel's allowlist, in the
running agent and in the config file. A new code leaves the channel's earlier ones valid, up to
three at once (the oldest is then dropped, and the command says so). Codes live hashed in the
agent's ``<state_dir>/pairing.json``. With an agent running, the code is issued inside it (the
control socket's ``channel.pair``): under systemd its state directory (``/var/lib/edge-agent``,
mode 0750) is not the operator's, who could neither write there nor make a file the agent reads.
With none running, the CLI writes its own state directory, which the agent started with it reads.

:class:`Strangers` decides what an unknown sender hears: one hint a day, an answer to each
``/pair`` attempt, and silence once the sender (5 an hour) or everyone together (30 an hour per
channel) has guessed wrong too often. A current code always pairs, silenced or not: a swarm of
strangers guessing wrong must not lock out the owner's invitee. Checking a code costs a
constant-time compare against each stored hash, and a silenced sender learns nothing from a check
(a wrong code still gets no reply); guessing stays hopeless (three codes among 32**8, 10 minutes
each).
Replies are capped per sender and per minute overall, so strangers cannot spend the bot's send
budget."""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import hmac
import json
import logging
import os
import secrets
import time
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from edge.core.files import write_json_atomically
from edge.core.ratelimit import SlidingWindow

log = logging.getLogger(__name__)

CODE_TTL_SECONDS = 600
CODE_ALPHABET = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789"  # no 0/O, 1/I
CODE_LENGTH = 8
CODES_PER_CHANNEL = 3
"""Codes that may be outstanding for one channel at once; a new one past this drops the oldest.
Each extra code makes a guess likelier by one more target: 3 in 32**8 is still hopeless."""

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


SETUP = {
    "telegram": "set bot_token in [channels.telegram] (or EDGE_CHANNELS__TELEGRAM__BOT_TOKEN; "
                "a token comes from @BotFather)",
    "signal": 'set http_url and account in [channels.signal] (a signal-cli daemon: '
              '`signal-cli -a ACCOUNT daemon --http 127.0.0.1:8080`)',
}
"""What a pairable channel needs before anyone can pair with it."""


def setup_hint(channel: str) -> str:
    """What to set so that ``channel`` runs (and a code for it can pair anyone)."""
    return SETUP.get(channel, f"enable [channels.{channel}]")


def _digest(code: str) -> str:
    return hashlib.sha256(code.strip().upper().encode()).hexdigest()


@dataclass(frozen=True)
class IssuedCode:
    """A new pairing code, its expiry, and what became of the channel's earlier codes."""

    code: str
    expires: float
    outstanding: int
    """Codes of the channel that are valid now, this one included."""
    dropped: int
    """Earlier, still valid codes that this one replaced (the oldest, past the limit)."""


def describe_issued(channel: str, issued: IssuedCode) -> str:
    """What the operator reads: the code, until when it works, and what became of earlier ones.

    >>> print(describe_issued("telegram", IssuedCode("ABCD2345", 0.0, 2, 0)).splitlines()[-1])
    1 earlier code still works until used or expired.
    """
    until = time.strftime("%H:%M", time.localtime(issued.expires))
    lines = [f"Pairing code for {channel}: {issued.code}",
             f"Send  /pair {issued.code}  to the bot before {until} "
             f"({CODE_TTL_SECONDS // 60} minutes)."]
    earlier = issued.outstanding - 1
    codes, works = ("code", "works") if earlier == 1 else ("codes", "work")
    if issued.dropped:
        lines.append(f"The oldest earlier code no longer works (at most {issued.outstanding} "
                     f"at once); {earlier} earlier {codes} still {works}.")
    elif earlier:
        lines.append(f"{earlier} earlier {codes} still {works} until used or expired.")
    return "\n".join(lines)


def issued_data(channel: str, issued: IssuedCode) -> dict[str, Any]:
    """The ``data`` of ``channel pair --json``."""
    return {"channel": channel, "code": issued.code, "expires": issued.expires,
            "outstanding": issued.outstanding, "dropped": issued.dropped}


class PairingCodes:
    """The channel's outstanding codes, hashed, in one JSON file shared by the CLI and the daemon.

    A new code leaves the earlier ones valid (two people can be invited in the same ten minutes),
    up to :data:`CODES_PER_CHANNEL`; past that the oldest is dropped, and :meth:`issue` says so.
    Redeeming compares the code against every outstanding one in constant time, whichever matches.
    Each read-and-write holds a lock on the file's directory, so the CLI issuing a code while the
    agent redeems another can neither lose the new code nor bring back the used one.
    """

    def __init__(self, path: Path, clock: Callable[[], float] = time.time):
        self.path = path
        self.clock = clock

    def _load(self) -> dict[str, Any]:
        try:
            data: dict[str, Any] = json.loads(self.path.read_text())
            return data if isinstance(data, dict) else {}
        except (FileNotFoundError, ValueError):
            return {}

    def _save(self, data: dict[str, Any]) -> None:
        write_json_atomically(self.path, data)

    @contextlib.contextmanager
    def _locked(self) -> Iterator[None]:
        """An exclusive lock on the directory (it exists: the state directory), which needs no
        write access, so the CLI and the agent's user can both take it."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.path.parent, os.O_RDONLY | os.O_DIRECTORY)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            yield
        finally:
            os.close(fd)  # closing lets the lock go

    def _current(self, data: dict[str, Any], channel: str) -> list[dict[str, Any]]:
        """The channel's unexpired codes, oldest first (a file from before several codes per
        channel holds one entry, not a list)."""
        entries = data.get(channel) or []
        if isinstance(entries, dict):
            entries = [entries]
        now = self.clock()
        return [entry for entry in entries if isinstance(entry, dict)
                and isinstance(entry.get("digest"), str)
                and isinstance(entry.get("expires"), int | float) and entry["expires"] >= now]

    def outstanding(self, channel: str) -> int:
        """How many codes for ``channel`` are valid now."""
        if not self.path.parent.is_dir():
            return 0
        with self._locked():
            return len(self._current(self._load(), channel))

    def issue(self, channel: str) -> IssuedCode:
        """A new code for ``channel``; earlier codes stay valid, the oldest beyond
        :data:`CODES_PER_CHANNEL` is dropped."""
        code = "".join(secrets.choice(CODE_ALPHABET) for _ in range(CODE_LENGTH))
        expires = self.clock() + CODE_TTL_SECONDS
        with self._locked():
            data = self._load()
            entries = self._current(data, channel) + [{"digest": _digest(code), "expires": expires}]
            dropped = max(0, len(entries) - CODES_PER_CHANNEL)
            data[channel] = entries[dropped:]
            self._save(data)
        return IssuedCode(code, expires, len(data[channel]), dropped)

    def redeem(self, channel: str, code: str) -> bool:
        """True once for a valid, unexpired code; that code is then used up, the others stay."""
        if not self.path.parent.is_dir():
            return False
        digest = _digest(code)
        with self._locked():
            data = self._load()
            entries = self._current(data, channel)
            matched = None
            for entry in entries:  # compare with every code: the time taken says nothing of which
                if hmac.compare_digest(entry["digest"], digest) and matched is None:
                    matched = entry
            if matched is None:
                return False
            entries.remove(matched)
            if entries:
                data[channel] = entries
            else:
                data.pop(channel, None)
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
