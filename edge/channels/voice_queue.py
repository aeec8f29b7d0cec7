"""The agent's one queue of voice notes, handed by the assembly to every channel that hears them.

A voice note is fetched into a file under ``<state>/voice/`` (mode 0600), transcribed from that
file and the file removed: no note is ever held whole in memory. The queue bounds what is in
flight, whatever the number of channels:

- at most :data:`AT_ONCE` notes are fetched and transcribed at a time, across all channels;
- one note per person at a time: a person's next note waits for their last (the first said is
  the first answered), and at most :data:`PER_PERSON` of theirs are queued;
- at most :data:`WAITING` more notes wait for their turn; beyond, the person is told to send it
  again in a minute, and nothing is fetched.

Files a killed agent left behind are removed when the queue is made (at start).

>>> import asyncio, tempfile, pathlib
>>> queue = VoiceNoteQueue(pathlib.Path(tempfile.mkdtemp()) / "voice", max_transcript_chars=3800)
>>> places = [queue.join("telegram:42") for _ in range(4)]
>>> [isinstance(place, str) for place in places]
[False, False, False, True]
>>> places[3] == ONE_AT_A_TIME
True
"""

from __future__ import annotations

import asyncio
import logging
import secrets
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

from edge.transcription import Transcriber

log = logging.getLogger(__name__)

AT_ONCE = 2
"""Voice notes fetched and transcribed at a time, across all channels."""
WAITING = 8
"""Voice notes that may wait for their turn; past that, :data:`BUSY` answers."""
PER_PERSON = 3
"""A person's voice notes in the queue (one at a time, the rest waiting); past that,
:data:`ONE_AT_A_TIME` answers."""
BUSY = "Too many voice notes at once; send that one again in a minute."
ONE_AT_A_TIME = ("One voice note at a time: your earlier ones are still being transcribed; send "
                 "that one again once they are answered.")
PART_SUFFIX = ".part"


class Place:
    """A voice note's place in the queue, held from :meth:`VoiceNoteQueue.join` until its
    ``async with`` ends; the block runs in the note's turn and gets the file to fetch it into
    (removed when the block ends, whatever happened)."""

    def __init__(self, queue: VoiceNoteQueue, person: str):
        self._queue = queue
        self.person = person
        self._left = False

    @asynccontextmanager
    async def turn(self) -> AsyncIterator[Path]:
        queue = self._queue
        try:
            async with queue.person_lock(self.person), queue.slots:
                path = queue.directory / f"{secrets.token_hex(8)}{PART_SUFFIX}"
                try:
                    yield path
                finally:
                    path.unlink(missing_ok=True)
        finally:
            self.leave()

    def leave(self) -> None:
        """Give the place up (once): a note that never takes its turn must still call it."""
        if not self._left:
            self._left = True
            self._queue.left(self.person)


class VoiceNoteQueue:
    """Where voice notes wait, the files they are fetched into, and the transcriber (None: no
    ``[transcription]``, each note is answered with how to set it up)."""

    def __init__(self, directory: Path, transcriber: Transcriber | None = None, *,
                 max_transcript_chars: int, at_once: int = AT_ONCE,
                 waiting: int = WAITING, per_person: int = PER_PERSON):
        self.directory = directory
        self.transcriber = transcriber
        self.max_transcript_chars = max_transcript_chars
        self.slots = asyncio.Semaphore(at_once)
        self._capacity = at_once + waiting
        self._per_person = per_person
        self._held: dict[str, int] = {}
        self._locks: dict[str, asyncio.Lock] = {}
        self._clean()

    def _clean(self) -> None:
        """The directory, mode 0700, without the files a killed agent left in it."""
        try:
            self.directory.mkdir(mode=0o700, parents=True, exist_ok=True)
            for leftover in self.directory.glob(f"*{PART_SUFFIX}"):
                leftover.unlink(missing_ok=True)
                log.info("voice_note_leftover_removed path=%s", leftover)
        except OSError as exc:  # a fetch into it fails later and says so to the person
            log.warning("voice_directory_unusable path=%s error=%s", self.directory, exc)

    @property
    def queued(self) -> int:
        """Notes in the queue: being handled or waiting."""
        return sum(self._held.values())

    def join(self, person: str) -> Place | str:
        """A place for ``person``'s note, or the line that refuses it (checked and taken in one
        step: nothing can join in between)."""
        if self._held.get(person, 0) >= self._per_person:
            log.warning("voice_note_refused by=%s reason=too_many_from_person", person)
            return ONE_AT_A_TIME
        if self.queued >= self._capacity:
            log.warning("voice_note_refused by=%s reason=queue_full queued=%d", person, self.queued)
            return BUSY
        self._held[person] = self._held.get(person, 0) + 1
        return Place(self, person)

    def person_lock(self, person: str) -> asyncio.Lock:
        return self._locks.setdefault(person, asyncio.Lock())

    def left(self, person: str) -> None:
        count = self._held.get(person, 0) - 1
        if count > 0:
            self._held[person] = count
        else:
            self._held.pop(person, None)
            self._locks.pop(person, None)

    def cut(self, text: str) -> str:
        """``text``, cut at :attr:`max_transcript_chars` with a word saying so: what goes to the
        chat and to the model is bounded whatever the service answered.

        >>> import tempfile, pathlib
        >>> queue = VoiceNoteQueue(pathlib.Path(tempfile.mkdtemp()), max_transcript_chars=5)
        >>> queue.cut("turn on the pump")
        'turn … (cut: the transcript has 16 characters, 5 are kept; [transcription] max_transcript_chars)'
        """
        if len(text) <= self.max_transcript_chars:
            return text
        kept = text[:self.max_transcript_chars].rstrip()
        return (f"{kept} … (cut: the transcript has {len(text)} characters, "
                f"{self.max_transcript_chars} are kept; [transcription] max_transcript_chars)")

