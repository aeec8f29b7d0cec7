"""Telegram over the Bot API: the channel, its long-polling receiver and its health.

- Long polling with ``getUpdates`` (30 s). Each batch's offset is saved before its updates are
  handled, and each update is handled in isolation: one that fails is logged once and skipped,
  never replayed (not by the next poll, not after a restart). 409 (another poller) backs off and
  is reported; 429 honours ``retry_after``; network errors back off exponentially.
- Updates are validated at the boundary (:mod:`edge.channels.telegram_updates`); malformed ones and
  kinds not handled are ignored with a log line.
- Unknown senders get one short pairing hint a day in private chats; ``/pair CODE`` adds them (see
  :mod:`edge.channels.pairing`, which also rate-limits guesses and replies).
- Voice and audio messages from allowed senders are transcribed through ``[transcription]`` and
  go on as typed text, the transcript shown first (:mod:`edge.channels.voice`); a stranger's are
  never downloaded. Size and duration come from the update, so a note over a limit is refused
  before ``getFile``; a note is downloaded into a file, as it streams in.
- Approvals are inline buttons Approve / Deny / Always; only the requester or an admin counts.
- Sending (replies, images, drafts, approval prompts, best-effort answers) is
  :class:`~edge.channels.telegram_send.TelegramSender`'s, in :mod:`edge.channels.telegram_send`.
- Health: the time of the last successful poll; a poller silent for longer than the poll timeout
  plus a grace period reports itself stalled, and the supervisor restarts it.
"""

from __future__ import annotations

import asyncio
import logging
import re
import time
from pathlib import Path
from typing import Any

from edge.channels.base import Channel, ChannelMessage, SendMessage
from edge.channels.outbox import Outbox
from edge.channels.pairing import Pair, Strangers
from edge.channels.spec import ApprovalAnswers
from edge.channels.telegram_api import TelegramAPI, TelegramError, TelegramNetworkError
from edge.channels.telegram_send import FINAL_ANSWERS, MAX_MESSAGE_LENGTH, TelegramSender
from edge.channels.telegram_updates import (
    KINDS,
    AudioFile,
    CallbackQuery,
    Message,
    parse_update,
    update_id_of,
)
from edge.channels.voice import VoiceNote, VoiceNotes, VoiceNoteUnavailable, filename_for
from edge.channels.voice_queue import VoiceNoteQueue
from edge.core.files import make_durable, write_atomically
from edge.core.requester import Requester

log = logging.getLogger(__name__)

STALL_GRACE_SECONDS = 5.0
BACKOFF_START, BACKOFF_MAX = 1.0, 60.0
CONFLICT_BACKOFF = 10.0


class TelegramChannel(Channel):
    supports_approvals = True
    name = "telegram"
    max_message_length = MAX_MESSAGE_LENGTH
    capabilities = ("You are talking on Telegram: replies may use Markdown (*bold*, `code`). "
                    "To send a photo, put [IMAGE:/absolute/path.png] on its own line.")

    def __init__(self, api: TelegramAPI, allowed: set[str], state_dir: Path, *,
                 poll_timeout: int = 30, require_mention: bool = True,
                 approvals: ApprovalAnswers | None = None, pair: Pair | None = None,
                 commands: list[tuple[str, str]] | None = None, draft_interval: float = 1.0,
                 stream_drafts: bool = True, outbox: Outbox | None = None):
        self.api = api
        self.sender = TelegramSender(api, outbox=outbox, draft_interval=draft_interval)
        """Everything this channel sends goes through it."""
        if outbox is not None:
            self.capabilities = (
                "You are talking on Telegram: replies may use Markdown (*bold*, `code`). To send "
                f"a photo (PNG, JPEG, GIF or WebP), it must be in {outbox.directory}: put "
                f"[IMAGE:{outbox.directory}/name.png] on its own line. No other file is sent.")
        self.allowed = allowed
        self.poll_timeout = poll_timeout
        self.require_mention = require_mention
        self.approvals = approvals
        self.strangers = Strangers(self.name, pair)
        self.commands = commands or []
        self.stream_drafts = stream_drafts
        self.voice = VoiceNotes(self.name)
        """Voice notes: answered with how to set transcription up until :meth:`hear_voice_notes`."""
        self._offset_path = state_dir / "telegram" / "offset"
        self._me: dict[str, Any] = {}
        self.last_poll: float | None = None
        self.last_ok: float | None = None
        self.failing_since: float | None = None
        """Wall-clock time of the last successful poll, for "down since"."""
        self.last_error: str | None = None

    # -- receiving -------------------------------------------------------------------------

    def _load_offset(self) -> int | None:
        try:
            return int(self._offset_path.read_text())
        except (FileNotFoundError, ValueError):
            return None

    def _save_offset(self, offset: int) -> asyncio.Future[None] | None:
        """Write the offset before the batch is handled, so a crash while handling it never
        replays it; the fsync that makes it survive a power cut runs in a thread meanwhile (an
        SD card takes milliseconds, which a command would otherwise wait for) and is awaited
        before the next poll acknowledges the batch to Telegram."""
        try:
            write_atomically(self._offset_path, str(offset), mode=0o600, durable=False)
        except OSError as exc:  # the in-memory offset still moves on: nothing is replayed
            log.error("telegram_offset_not_saved offset=%d error=%r", offset, exc)
            return None
        return asyncio.ensure_future(asyncio.to_thread(make_durable, self._offset_path))

    async def _offset_durable(self, syncing: asyncio.Future[None] | None) -> None:
        if syncing is None:
            return
        try:
            await syncing
        except OSError as exc:
            log.error("telegram_offset_not_durable error=%r", exc)

    async def _start(self) -> None:
        me = await self.api.call("getMe")
        if not isinstance(me, dict):
            raise TelegramError("getMe", 0, "result is not a user")
        self._me = me
        if self.commands:
            try:
                await self.api.call("setMyCommands", {"commands": [
                    {"command": name, "description": text} for name, text in self.commands]})
            except (TelegramError, TelegramNetworkError) as exc:
                log.warning("telegram_commands_not_set error=%s", exc)
        log.info("telegram_ready bot=@%s", self._me.get("username"))

    async def listen(self, bus: asyncio.Queue[ChannelMessage]) -> None:
        await self._start()
        offset = self._load_offset()
        backoff = BACKOFF_START
        while True:
            params: dict[str, Any] = {"timeout": self.poll_timeout, "allowed_updates": list(KINDS)}
            if offset is not None:
                params["offset"] = offset
            try:
                updates = await self.api.call("getUpdates", params,
                                              timeout=self.poll_timeout + STALL_GRACE_SECONDS)
            except TelegramError as exc:
                self.last_error = str(exc)
                self._failing()
                if exc.code == 409:
                    log.error("telegram_conflict another poller uses this bot token; backing off")
                    await asyncio.sleep(CONFLICT_BACKOFF)
                elif exc.code == 429:
                    await asyncio.sleep(exc.retry_after or backoff)
                elif exc.code in (401, 404):
                    raise  # bad token: the supervisor restarts with backoff, health shows it
                else:
                    await asyncio.sleep(backoff)
                    backoff = min(backoff * 2, BACKOFF_MAX)
                continue
            except TelegramNetworkError as exc:
                self.last_error = str(exc)
                self._failing()
                log.warning("telegram_poll_failed error=%s retry_in=%.0fs", exc, backoff)
                await asyncio.sleep(backoff)
                backoff = min(backoff * 2, BACKOFF_MAX)
                continue
            self.last_poll, self.last_ok = time.monotonic(), time.time()
            self.failing_since = None
            backoff = BACKOFF_START
            if not isinstance(updates, list):
                log.warning("telegram_poll_ignored reason=result_not_a_list")
                continue
            ids = [i for i in map(update_id_of, updates) if i is not None]
            syncing = None
            if ids and (offset is None or max(ids) >= offset):
                offset = max(ids) + 1
                syncing = self._save_offset(offset)  # before handling: never replayed
            for raw in updates:
                await self._handle_isolated(raw, bus)
            await self._offset_durable(syncing)

    async def _handle_isolated(self, raw: object, bus: asyncio.Queue[ChannelMessage]) -> None:
        """Handle one update; whatever goes wrong is logged once and ends with this update."""
        try:
            update = parse_update(raw)
            if update is None:
                return
            if update.callback_query is not None:
                self._on_callback(update.callback_query)
            elif update.message is not None:
                await self._on_message(update.message, bus)
        except Exception:
            log.exception("telegram_update_failed update_id=%s", update_id_of(raw))

    async def _on_message(self, message: Message, bus: asyncio.Queue[ChannelMessage]) -> None:
        text = message.text or message.caption or ""
        sender, chat_id = str(message.sender.id), str(message.chat.id)
        is_group = message.chat.type in ("group", "supergroup")
        if sender not in self.allowed:
            await self._unknown_sender(sender, chat_id, text, is_group)
            return
        mentioned, text = self._mention(message, text)
        if message.spoken is not None:
            self._on_voice_note(message, message.spoken, text, mentioned, bus)
            return
        if not text and not message.attachments:
            return
        await bus.put(self._inbound(message, text, mentioned, message.attachments))

    def _inbound(self, message: Message, text: str, mentioned: bool,
                 attachments: tuple[str, ...]) -> ChannelMessage:
        chat_id = str(message.chat.id)
        return ChannelMessage(str(message.sender.id), chat_id, text, self.name,
                              id=f"{chat_id}:{message.message_id}",
                              timestamp=float(message.date), thread_id=self._thread(message),
                              is_group=message.chat.type in ("group", "supergroup"),
                              mentioned=mentioned, attachments=attachments)

    @staticmethod
    def _thread(message: Message) -> str | None:
        return (str(message.message_thread_id)
                if message.is_topic_message and message.message_thread_id is not None else None)

    def _on_voice_note(self, message: Message, audio: AudioFile, caption: str, mentioned: bool,
                       bus: asyncio.Queue[ChannelMessage]) -> None:
        """Refuse, or fetch and transcribe, in the background; the transcript is shown, then
        goes on as the message's text (the caption, if any, after it)."""
        chat_id, thread = str(message.chat.id), self._thread(message)
        if message.chat.type in ("group", "supergroup") and self.require_mention and not mentioned:
            log.info("telegram_voice_note_ignored chat=%s reason=group_without_mention", chat_id)
            return
        content_type = audio.mime_type or "audio/ogg"
        note = VoiceNote(audio.file_size, float(audio.duration), content_type,
                         filename_for(content_type, audio.file_name))

        async def say(text: str) -> None:
            await self.sender.send_text(chat_id, text, markdown=False, thread_id=thread)

        async def deliver(text: str) -> None:
            content = f"{text}\n{caption}" if caption else text
            await bus.put(self._inbound(message, content, mentioned, ()))

        self.voice.receive(note, f"{self.name}:{message.sender.id}",
                           lambda into, limit: self._fetch(audio.file_id, into, limit), say,
                           deliver, started=lambda: self.start_typing(chat_id))

    async def _fetch(self, file_id: str, into: Path, limit: int) -> None:
        """A voice note into the file ``into``: ``getFile``, then the download, at most
        ``limit`` bytes."""
        try:
            file = await self.api.call("getFile", {"file_id": file_id})
            path = file.get("file_path") if isinstance(file, dict) else None
            if not isinstance(path, str) or not path:
                raise VoiceNoteUnavailable("Telegram named no file to download")
            await self.api.download(path, into, limit)
        except TelegramError as exc:
            if exc.code == 413:
                raise VoiceNoteUnavailable(f"it is larger than {limit} bytes ([transcription] "
                                           "max_bytes)") from None
            raise VoiceNoteUnavailable(f"Telegram answered {exc.code} {exc.description}") from None
        except TelegramNetworkError:
            raise VoiceNoteUnavailable("Telegram could not be reached") from None
        except OSError as exc:
            raise VoiceNoteUnavailable(f"it could not be written to disk ({exc.strerror})") from None

    def hear_voice_notes(self, queue: VoiceNoteQueue) -> None:
        self.voice.hear_with(queue)

    def _mention(self, message: Message, text: str) -> tuple[bool, str]:
        """Whether the bot was addressed, and the text without ``@botname``."""
        username = self._me.get("username")
        handle = f"@{username}" if isinstance(username, str) and username else None
        reply = message.reply_to_message
        replied = reply.sender.id if reply is not None and reply.sender is not None else None
        mentioned = bool(handle and handle.lower() in text.lower()) or (
            replied is not None and replied == self._me.get("id"))
        if handle:
            text = re.sub(re.escape(handle), "", text, flags=re.IGNORECASE).strip()
        return mentioned, text

    async def _unknown_sender(self, sender: str, chat_id: str, text: str, is_group: bool) -> None:
        log.info("telegram_unknown_sender sender=%s chat=%s", sender, chat_id)
        if is_group:
            return
        reply = await self.strangers.answer(sender, text)
        if reply is not None:
            self.sender.spawn(self.sender.best_effort(
                "sendMessage", {"chat_id": chat_id, "text": reply}, chat_id))

    def _on_callback(self, query: CallbackQuery) -> None:
        responder = str(query.sender.id)
        parts = (query.data or "").split(":")
        if len(parts) == 3 and parts[0] == "appr" and self.approvals is not None:
            text = self.approvals.answer(self.name, parts[1], responder, parts[2])
            if text in FINAL_ANSWERS:
                self.sender.approval_answered(parts[1])
        else:
            text = "Unknown button."
        if responder not in self.allowed and not self.strangers.may_reply(responder):
            return
        self.sender.spawn(self.sender.answer_button(query, text))

    # -- sending (see edge.channels.telegram_send) ----------------------------------------

    async def send(self, message: SendMessage) -> None:
        await self.sender.send(message)

    async def start_typing(self, recipient: str) -> None:
        await self.sender.start_typing(recipient)

    async def send_draft(self, message: SendMessage) -> str:
        return await self.sender.send_draft(message)

    async def update_draft(self, recipient: str, message_id: str, text: str) -> None:
        await self.sender.update_draft(recipient, message_id, text)

    async def finalize_draft(self, recipient: str, message_id: str, text: str) -> None:
        await self.sender.finalize_draft(recipient, message_id, text)

    async def request_approval(self, ctx: Requester, prompt: str, token: str,
                               always: bool = True) -> None:
        await self.sender.request_approval(ctx, prompt, token, always)

    async def approval_expired(self, ctx: Requester, token: str) -> None:
        """The approval ``token`` timed out unanswered: its prompt says so and loses its buttons."""
        await self.sender.approval_expired(token)

    # -- health ----------------------------------------------------------------------------

    def _failing(self) -> None:
        if self.failing_since is None:
            self.failing_since = time.time()

    def stalled(self) -> bool:
        """Started polling but no successful poll for longer than the timeout plus grace."""
        return (self.last_poll is not None
                and time.monotonic() - self.last_poll > self.poll_timeout + STALL_GRACE_SECONDS)

    async def health_check(self) -> bool:
        return self.last_poll is not None and not self.stalled()

    async def aclose(self) -> None:
        await self.voice.aclose()
        await self.sender.aclose()
        await self.api.aclose()
