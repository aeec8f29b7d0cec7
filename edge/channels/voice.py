"""What a chat channel does with a voice note from someone on its allowlist (strangers get the
pairing hint and nothing else: their notes are never fetched).

1. Refuse it in one line, fetching nothing, when ``[transcription]`` is not configured (the line
   says how to set it up) or the note is over its size or duration limit (the line says the
   limit). The channel knows size and duration from the message itself, before any download.
2. Otherwise it joins the agent's one queue (:mod:`edge.channels.voice_queue`: two notes at a
   time across all channels, one per person, a bounded wait; beyond it, a line says to send it
   again). In its turn it is fetched into a file (the channel's own download, bounded by
   ``max_bytes``), transcribed from that file, and the file removed.
3. The transcript, cut at ``max_transcript_chars``, is shown to the person (``🎤 turn on the
   pump``) before anything else is said, then goes to the agent as the text of the message,
   exactly as if it had been typed: the allowlist, the mention rule, the rate limit, direct
   commands and approvals apply.

Each voice note is handled in the background: a transcription that takes seconds never holds up
the channel's poll loop or event stream (an approval button pressed meanwhile is answered at
once).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path

from edge.channels.voice_queue import Place, VoiceNoteQueue
from edge.core.exc import EdgeError
from edge.transcription import TranscriptionError

log = logging.getLogger(__name__)

SETUP_LINE = ('Voice notes need [transcription] in the config: preset = "groq" (with GROQ_API_KEY) '
              'or preset = "openai" (with OPENAI_API_KEY), or base_url = "http://127.0.0.1:8000/v1" '
              'and model for a local whisper server.')
"""The answer to a voice note when no transcription is configured."""
NOTHING_HEARD = "🎤 (I heard nothing in that voice note.)"
HEARD = "🎤 {text}"
MAX_ANSWERS = 64
"""Refusals being sent at once per channel (a flood of notes over a limit); past it, dropped."""


class VoiceNoteUnavailable(EdgeError):
    """The channel could not fetch a voice note (the chat service's error, in words)."""


EXTENSIONS = {"audio/ogg": ".ogg", "audio/opus": ".ogg", "audio/mpeg": ".mp3", "audio/mp3": ".mp3",
              "audio/mp4": ".m4a", "audio/m4a": ".m4a", "audio/x-m4a": ".m4a", "audio/wav": ".wav",
              "audio/x-wav": ".wav", "audio/wave": ".wav", "audio/flac": ".flac",
              "audio/x-flac": ".flac", "audio/webm": ".webm", "audio/aac": ".aac"}
"""The file name's extension by content type: OpenAI-compatible services tell the format by it
(Telegram's ``.oga`` voice files are refused under that name and taken as ``.ogg``)."""


def filename_for(content_type: str, given: str | None = None) -> str:
    """The name a voice note is uploaded under: the sender's file name when it has an
    extension the services know, else ``voice`` and the content type's extension.

    >>> filename_for("audio/ogg"), filename_for("audio/mpeg", "song.mp3"), filename_for("audio/aac")
    ('voice.ogg', 'song.mp3', 'voice.aac')
    """
    if given and "." in given and "." + given.rsplit(".", 1)[1].lower() in EXTENSIONS.values():
        return given
    return "voice" + EXTENSIONS.get(content_type.split(";")[0].strip().lower(), ".ogg")


@dataclass(frozen=True)
class VoiceNote:
    """A voice note as the message describes it, before anything is downloaded."""

    size: int | None
    """Bytes, if the message says."""
    seconds: float | None
    """Duration, if the message says (Telegram does; signal-cli does not)."""
    content_type: str = "audio/ogg"
    filename: str = "voice.ogg"


@dataclass(frozen=True)
class Heard:
    """What became of a voice note: its transcript, or the one line to answer instead."""

    text: str | None = None
    answer: str | None = None


Fetch = Callable[[Path, int], Awaitable[None]]
"""Download the note into the new file at the path, at most the given number of bytes (more:
:class:`VoiceNoteUnavailable`, the file left for the queue to remove)."""
Say = Callable[[str], Awaitable[None]]


class VoiceNotes:
    """A channel's voice notes: the agent's queue (None until :meth:`hear_with`; then its
    transcriber None: not configured) and the background work."""

    def __init__(self, channel: str):
        self.channel = channel
        self.queue: VoiceNoteQueue | None = None
        self._work: set[asyncio.Task[None]] = set()

    def hear_with(self, queue: VoiceNoteQueue) -> None:
        self.queue = queue

    def refusal(self, note: VoiceNote) -> str | None:
        """The line that answers ``note`` without fetching it, or None to go on."""
        if self.queue is None or self.queue.transcriber is None:
            return SETUP_LINE
        return self.queue.transcriber.over_limits(note.size, note.seconds)

    def receive(self, note: VoiceNote, caller: str, fetch: Fetch, say: Say,
                deliver: Callable[[str], Awaitable[None]],
                started: Callable[[], Awaitable[None]] | None = None) -> None:
        """Handle ``note`` from ``caller`` in the background: refused (``say`` the line), or
        queued, fetched and transcribed in its turn (``started`` then: a typing indicator),
        the transcript shown with ``say`` and passed on with ``deliver``. Whatever fails is
        logged once and ends with that note."""
        refusal = self.refusal(note)
        if refusal is None and self.queue is not None:
            place = self.queue.join(caller)
            if isinstance(place, Place):
                self._spawn(self._hear(note, place, fetch, say, deliver, started))
                return
            refusal = place
        else:
            log.info("voice_note_refused by=%s size=%s seconds=%s", caller, note.size, note.seconds)
        if len(self._work) < MAX_ANSWERS:
            self._spawn(say(refusal or SETUP_LINE))

    async def _hear(self, note: VoiceNote, place: Place, fetch: Fetch, say: Say,
                    deliver: Callable[[str], Awaitable[None]],
                    started: Callable[[], Awaitable[None]] | None) -> None:
        try:
            heard = await self.hear(note, place, fetch, started)
        finally:
            place.leave()  # the next note's turn while this one is answered
        if heard.text is None:
            await say(heard.answer or "")
            return
        await say(HEARD.format(text=heard.text))
        await deliver(heard.text)

    async def hear(self, note: VoiceNote, place: Place, fetch: Fetch,
                   started: Callable[[], Awaitable[None]] | None = None) -> Heard:
        """In ``place``'s turn, fetch and transcribe ``note``; never raises for what the person
        can be told (a refused key, a timeout, a file the chat service will not hand over)."""
        queue = self.queue
        if queue is None or queue.transcriber is None:
            return Heard(answer=SETUP_LINE)
        async with place.turn() as path:
            if started is not None:
                await started()
            try:
                await fetch(path, queue.transcriber.max_bytes)
                text = await queue.transcriber.transcribe(path, note.filename, note.content_type)
            except VoiceNoteUnavailable as exc:
                log.warning("voice_note_not_fetched by=%s error=%s", place.person, exc)
                return Heard(answer=f"I could not fetch that voice note: {exc}")
            except TranscriptionError as exc:
                log.warning("voice_note_not_transcribed by=%s error=%s", place.person, exc)
                return Heard(answer=str(exc))
        if not text:
            return Heard(answer=NOTHING_HEARD)
        return Heard(text=queue.cut(text))

    def _spawn(self, work: Awaitable[None]) -> None:
        task = asyncio.ensure_future(self._isolated(work))
        self._work.add(task)
        task.add_done_callback(self._work.discard)

    async def _isolated(self, work: Awaitable[None]) -> None:
        try:
            await work
        except asyncio.CancelledError:
            raise
        except Exception:
            log.exception("voice_note_failed channel=%s", self.channel)

    async def aclose(self) -> None:
        """Cancel the voice notes still being handled (at shutdown)."""
        for task in list(self._work):
            task.cancel()
        await asyncio.gather(*self._work, return_exceptions=True)
