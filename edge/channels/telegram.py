"""Telegram over the Bot API: long polling, typing, streaming drafts, chunked replies, approvals.

- Long polling with ``getUpdates`` (30 s). Each batch's offset is saved before its updates are
  handled, and each update is handled in isolation: one that fails is logged once and skipped,
  never replayed (not by the next poll, not after a restart). 409 (another poller) backs off and
  is reported; 429 honours ``retry_after``; network errors back off exponentially.
- Updates are validated at the boundary (:mod:`edge.channels.telegram_updates`); malformed ones and
  kinds not handled are ignored with a log line.
- Unknown senders get one short pairing hint a day in private chats; ``/pair CODE`` adds them (see
  :mod:`edge.channels.pairing`, which also rate-limits guesses and replies). Replies to strangers
  and answers to buttons are best-effort: sent in the background, dropped on any error (403 bot
  blocked, 400 stale query, 429), never raised into the poll loop.
- Approvals are inline buttons Approve / Deny / Always; only the requester or an admin counts.
- Outbound: 4,096-character chunks (the dispatcher chunks), ``[IMAGE:path]`` sent with
  ``sendPhoto`` only from the outbox (:mod:`edge.channels.outbox`; anything else gets one
  refusal that never says whether the file exists), Markdown that Telegram rejects resent as
  plain text; typing every 4 s; drafts edited in place at a bounded rate. A 429 on a send
  holds that chat only (:class:`ChatPacing`).
- Health: the time of the last successful poll; a poller silent for longer than the poll timeout
  plus a grace period reports itself stalled, and the supervisor restarts it.
"""

from __future__ import annotations

import asyncio
import logging
import re
import time
from collections.abc import Coroutine
from pathlib import Path
from typing import Any

from edge.channels.base import Channel, ChannelMessage, SendMessage
from edge.channels.outbox import IMAGE_REFUSED, Outbox
from edge.channels.pairing import Pair, Strangers
from edge.channels.telegram_api import (
    MAX_CHAT_HOLD_SECONDS,
    ChatPacing,
    TelegramAPI,
    TelegramError,
    TelegramNetworkError,
)
from edge.channels.telegram_updates import KINDS, CallbackQuery, Message, parse_update, update_id_of
from edge.core.files import make_durable, write_atomically
from edge.core.requester import Requester
from edge.security.approvals import ApprovalGate, Decision

log = logging.getLogger(__name__)

MAX_MESSAGE_LENGTH = 4096
STALL_GRACE_SECONDS = 5.0
BACKOFF_START, BACKOFF_MAX = 1.0, 60.0
CONFLICT_BACKOFF = 10.0
FLOOD_RETRIES = 2
"""Times a send to a chat that answered 429 is retried after its ``retry_after``."""
MAX_BACKGROUND_REPLIES = 50
"""Best-effort replies in flight at once; beyond this they are dropped."""
IMAGE_MARKER = re.compile(r"\[IMAGE:([^\]]+)\]")
FINAL_ANSWERS = ("Approved.", "Denied.", "Approved, and remembered.")


class TelegramChannel(Channel):
    supports_approvals = True
    name = "telegram"
    max_message_length = MAX_MESSAGE_LENGTH
    capabilities = ("You are talking on Telegram: replies may use Markdown (*bold*, `code`). "
                    "To send a photo, put [IMAGE:/absolute/path.png] on its own line.")

    def __init__(self, api: TelegramAPI, allowed: set[str], state_dir: Path, *,
                 poll_timeout: int = 30, require_mention: bool = True,
                 approvals: ApprovalGate | None = None, pair: Pair | None = None,
                 commands: list[tuple[str, str]] | None = None, draft_interval: float = 1.0,
                 stream_drafts: bool = True, outbox: Outbox | None = None):
        self.api = api
        self.outbox = outbox
        """Where ``[IMAGE:path]`` files may come from; None: no image is ever sent."""
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
        self.pacing = ChatPacing()
        self.commands = commands or []
        self.draft_interval = draft_interval
        self.stream_drafts = stream_drafts
        self._offset_path = state_dir / "telegram" / "offset"
        self._me: dict = {}
        self._background: set[asyncio.Task] = set()
        self.last_poll: float | None = None
        self.last_ok: float | None = None
        self.failing_since: float | None = None
        """Wall-clock time of the last successful poll, for "down since"."""
        self.last_error: str | None = None
        self._last_edit: dict[str, float] = {}

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
        if not text and not message.attachments:
            return
        thread = (str(message.message_thread_id)
                  if message.is_topic_message and message.message_thread_id is not None else None)
        await bus.put(ChannelMessage(sender, chat_id, text, self.name,
                                     id=f"{chat_id}:{message.message_id}",
                                     timestamp=float(message.date), thread_id=thread,
                                     is_group=is_group, mentioned=mentioned,
                                     attachments=message.attachments))

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
            self._spawn(self._best_effort("sendMessage", {"chat_id": chat_id, "text": reply},
                                          chat_id))

    def _on_callback(self, query: CallbackQuery) -> None:
        responder = str(query.sender.id)
        parts = (query.data or "").split(":")
        if len(parts) == 3 and parts[0] == "appr" and self.approvals is not None:
            try:
                decision: Decision | None = Decision(parts[2])
            except ValueError:
                decision = None
            text = (self.approvals.answer(self.name, parts[1], responder, decision) if decision
                    else "Unknown answer.")
        else:
            text = "Unknown button."
        if responder not in self.allowed and not self.strangers.may_reply(responder):
            return
        self._spawn(self._answer_callback(query, text))

    async def _answer_callback(self, query: CallbackQuery, text: str) -> None:
        await self._best_effort("answerCallbackQuery", {"callback_query_id": query.id, "text": text})
        button = query.message
        if button is not None and text in FINAL_ANSWERS:
            chat_id = str(button.chat.id)
            await self._best_effort("editMessageText", {
                "chat_id": chat_id, "message_id": button.message_id,
                "text": f"{button.text or ''}\n{text}"[:MAX_MESSAGE_LENGTH]}, chat_id)

    # -- best-effort replies ---------------------------------------------------------------

    def _spawn(self, work: Coroutine[Any, Any, None]) -> None:
        """Run a best-effort reply in the background: the poll loop never waits for one."""
        if len(self._background) >= MAX_BACKGROUND_REPLIES:
            work.close()
            log.warning("telegram_reply_dropped reason=too_many_in_flight")
            return
        task = asyncio.create_task(work)
        self._background.add(task)
        task.add_done_callback(self._background.discard)

    async def _best_effort(self, method: str, params: dict, chat_id: str | None = None) -> None:
        """Call ``method``; any failure (403 blocked, 400 stale, 429, network) is logged only."""
        if chat_id is not None and self.pacing.remaining(chat_id):
            log.info("telegram_reply_dropped method=%s chat=%s reason=flood_wait", method, chat_id)
            return
        try:
            await self.api.call(method, params)
        except TelegramError as exc:
            if exc.not_modified:
                return
            if exc.code == 429 and chat_id is not None:
                self.pacing.hold(chat_id, exc.retry_after or 1.0)
            log.info("telegram_reply_failed method=%s chat=%s code=%d", method, chat_id, exc.code)
        except Exception as exc:
            log.info("telegram_reply_failed method=%s chat=%s error=%s", method, chat_id,
                     type(exc).__name__)

    # -- sending ---------------------------------------------------------------------------

    async def _chat_call(self, chat_id: str, method: str, params: dict,
                         files: dict[str, Path] | None = None) -> Any:
        """Call a method addressed to one chat, waiting out that chat's 429 ``retry_after``
        (up to :data:`FLOOD_RETRIES` times); other chats are not delayed."""
        for attempt in range(FLOOD_RETRIES + 1):
            held = self.pacing.remaining(chat_id)
            if held > MAX_CHAT_HOLD_SECONDS:
                raise TelegramError(method, 429, "chat is flood-limited", held)
            await self.pacing.wait(chat_id)
            try:
                return await self.api.call(method, params, files=files)
            except TelegramError as exc:
                if exc.code != 429 or attempt == FLOOD_RETRIES:
                    raise
                self.pacing.hold(chat_id, exc.retry_after or 1.0)
                log.warning("telegram_flood_wait chat=%s method=%s retry_after=%.0fs",
                            chat_id, method, exc.retry_after or 1.0)
        raise AssertionError("unreachable")

    async def _send_text(self, chat_id: str, text: str, markdown: bool = True,
                         thread_id: str | None = None, extra: dict | None = None) -> dict:
        params = {"chat_id": chat_id, "text": text, **(extra or {})}
        if thread_id:
            params["message_thread_id"] = int(thread_id)
        if markdown:
            try:
                return await self._chat_call(chat_id, "sendMessage",
                                             {**params, "parse_mode": "Markdown"})
            except TelegramError as exc:
                if not exc.markdown_rejected:
                    raise
                log.info("telegram_markdown_rejected; resending as plain text")
        return await self._chat_call(chat_id, "sendMessage", params)

    async def send(self, message: SendMessage) -> None:
        images = IMAGE_MARKER.findall(message.content)
        text = IMAGE_MARKER.sub("", message.content).strip()
        if text:
            await self._send_text(message.recipient, text, thread_id=message.thread_id)
        for written in images:
            path = await self.outbox.image(written) if self.outbox is not None else None
            if path is not None:
                await self._chat_call(message.recipient, "sendPhoto", {"chat_id": message.recipient},
                                      files={"photo": path})
            else:
                await self._send_text(message.recipient, IMAGE_REFUSED, markdown=False)

    async def start_typing(self, recipient: str) -> None:
        """Best-effort: skipped while the chat is flood-limited."""
        await self._best_effort("sendChatAction", {"chat_id": recipient, "action": "typing"},
                                recipient)

    async def send_draft(self, message: SendMessage) -> str:
        sent = await self._send_text(message.recipient, message.content or "…", markdown=False,
                                     thread_id=message.thread_id)
        return str(sent["message_id"])

    async def update_draft(self, recipient: str, message_id: str, text: str) -> None:
        """Edit the draft, at most once per ``draft_interval`` (Telegram rate-limits edits);
        best-effort: the final text comes with :meth:`finalize_draft`."""
        now = time.monotonic()
        if now - self._last_edit.get(message_id, 0.0) < self.draft_interval:
            return
        self._last_edit[message_id] = now
        await self._best_effort("editMessageText", {"chat_id": recipient, "message_id": int(message_id),
                                                    "text": text[:MAX_MESSAGE_LENGTH]}, recipient)

    async def finalize_draft(self, recipient: str, message_id: str, text: str) -> None:
        self._last_edit.pop(message_id, None)
        params = {"chat_id": recipient, "message_id": int(message_id),
                  "text": text[:MAX_MESSAGE_LENGTH]}
        try:
            await self._chat_call(recipient, "editMessageText", {**params, "parse_mode": "Markdown"})
        except TelegramError as exc:
            if exc.not_modified:  # the draft already shows the whole reply
                return
            if not exc.markdown_rejected:
                raise
            try:
                await self._chat_call(recipient, "editMessageText", params)
            except TelegramError as plain:
                if not plain.not_modified:
                    raise

    async def request_approval(self, ctx: Requester, prompt: str, token: str) -> None:
        buttons = [[{"text": label, "callback_data": f"appr:{token}:{decision.value}"}
                    for label, decision in (("Approve", Decision.APPROVE), ("Deny", Decision.DENY),
                                            ("Always", Decision.ALWAYS))]]
        await self._send_text(ctx.reply_target, prompt, markdown=False, thread_id=ctx.thread_id,
                              extra={"reply_markup": {"inline_keyboard": buttons}})

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
        for task in list(self._background):
            task.cancel()
        await asyncio.gather(*self._background, return_exceptions=True)
        await self.api.aclose()
