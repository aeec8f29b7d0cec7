"""Telegram over the Bot API (seed 002 Channels; seed 004 typing and drafts; seed 003 chunking).

- Long polling with ``getUpdates`` (30 s); the offset is saved after every batch so a restart
  neither replays nor loses updates. 409 (another poller) backs off and is reported; 429 honours
  ``retry_after``; network errors back off exponentially.
- Unknown senders get one short pairing hint in private chats and nothing else; ``/pair CODE``
  adds them (see :mod:`edge.channels.pairing`).
- Approvals are inline buttons Approve / Deny / Always; only the requester or an admin counts.
- Outbound: 4,096-character chunks (the dispatcher chunks), ``[IMAGE:path]`` sent with
  ``sendPhoto``, Markdown that Telegram rejects resent as plain text; typing every 4 s; drafts
  edited in place at a bounded rate.
- Health: the time of the last successful poll; a poller silent for longer than the poll timeout
  plus a grace period reports itself stalled, and the supervisor restarts it.
"""

from __future__ import annotations

import asyncio
import logging
import re
import time
from pathlib import Path

from edge.channels.base import Channel, ChannelMessage, SendMessage
from edge.channels.pairing import Pair, pairing_hint
from edge.channels.telegram_api import TelegramAPI, TelegramError, TelegramNetworkError
from edge.security.approvals import ApprovalGate, Decision, RequestContext

log = logging.getLogger(__name__)

MAX_MESSAGE_LENGTH = 4096
STALL_GRACE_SECONDS = 30.0
BACKOFF_START, BACKOFF_MAX = 1.0, 60.0
CONFLICT_BACKOFF = 10.0
IMAGE_MARKER = re.compile(r"\[IMAGE:([^\]]+)\]")


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
                 stream_drafts: bool = True):
        self.api = api
        self.allowed = allowed
        self.poll_timeout = poll_timeout
        self.require_mention = require_mention
        self.approvals = approvals
        self.pair = pair
        self.commands = commands or []
        self.draft_interval = draft_interval
        self.stream_drafts = stream_drafts
        self._offset_path = state_dir / "telegram" / "offset"
        self._hinted: set[str] = set()
        self._me: dict | None = None
        self.last_poll: float | None = None
        self.last_ok: float | None = None
        """Wall-clock time of the last successful poll, for "down since"."""
        self.last_error: str | None = None
        self._last_edit: dict[str, float] = {}

    # -- receiving -------------------------------------------------------------------------

    def _load_offset(self) -> int | None:
        try:
            return int(self._offset_path.read_text())
        except (FileNotFoundError, ValueError):
            return None

    def _save_offset(self, offset: int) -> None:
        from edge.cli.config_cmd import write_atomically

        write_atomically(self._offset_path, str(offset), mode=0o600)

    async def _start(self) -> None:
        self._me = await self.api.call("getMe")
        if self.commands:
            await self.api.call("setMyCommands", {"commands": [
                {"command": name, "description": text} for name, text in self.commands]})
        log.info("telegram_ready bot=@%s", self._me.get("username"))

    async def listen(self, bus: asyncio.Queue[ChannelMessage]) -> None:
        await self._start()
        offset = self._load_offset()
        backoff = BACKOFF_START
        while True:
            params = {"timeout": self.poll_timeout, "allowed_updates": ["message", "callback_query"]}
            if offset is not None:
                params["offset"] = offset
            try:
                updates = await self.api.call("getUpdates", params, timeout=self.poll_timeout + 15)
            except TelegramError as exc:
                self.last_error = str(exc)
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
                log.warning("telegram_poll_failed error=%s retry_in=%.0fs", exc, backoff)
                await asyncio.sleep(backoff)
                backoff = min(backoff * 2, BACKOFF_MAX)
                continue
            self.last_poll, self.last_ok = time.monotonic(), time.time()
            backoff = BACKOFF_START
            for update in updates:
                await self._handle_update(update, bus)
                offset = update["update_id"] + 1
            if updates:
                self._save_offset(offset)

    async def _handle_update(self, update: dict, bus: asyncio.Queue[ChannelMessage]) -> None:
        if "callback_query" in update:
            await self._handle_callback(update["callback_query"])
            return
        message = update.get("message")
        if not message or "from" not in message:
            return
        text = message.get("text") or message.get("caption") or ""
        sender = str(message["from"]["id"])
        chat = message["chat"]
        is_group = chat.get("type") in ("group", "supergroup")
        if sender not in self.allowed:
            await self._unknown_sender(sender, chat, text, is_group)
            return
        mentioned, text = self._mention(message, text)
        attachments = tuple(k for k in ("photo", "document", "voice", "video") if k in message)
        if not text and not attachments:
            return
        thread = str(message["message_thread_id"]) if message.get("is_topic_message") else None
        await bus.put(ChannelMessage(sender, str(chat["id"]), text, self.name,
                                     id=f"{chat['id']}:{message['message_id']}",
                                     timestamp=float(message.get("date", time.time())),
                                     thread_id=thread, is_group=is_group, mentioned=mentioned,
                                     attachments=attachments))

    def _mention(self, message: dict, text: str) -> tuple[bool, str]:
        """Whether the bot was addressed, and the text without ``@botname``."""
        username = (self._me or {}).get("username", "")
        handle = f"@{username}" if username else None
        replied = ((message.get("reply_to_message") or {}).get("from") or {}).get("id")
        mentioned = bool(handle and handle.lower() in text.lower()) or (
            self._me is not None and replied == self._me.get("id"))
        if handle:
            text = re.sub(re.escape(handle), "", text, flags=re.IGNORECASE).strip()
        return mentioned, text

    async def _unknown_sender(self, sender: str, chat: dict, text: str, is_group: bool) -> None:
        log.info("telegram_unknown_sender sender=%s chat=%s", sender, chat["id"])
        if is_group:
            return
        words = text.split()
        if words and words[0].split("@")[0] == "/pair" and self.pair is not None:
            paired = len(words) == 2 and await self.pair(self.name, sender, words[1])
            reply = ("Paired: you can now use this bot. /help lists the commands." if paired
                     else "That pairing code is wrong or has expired.")
            await self._send_text(str(chat["id"]), reply, markdown=False)
            return
        if sender not in self._hinted:
            self._hinted.add(sender)
            await self._send_text(str(chat["id"]), pairing_hint(self.name), markdown=False)

    async def _handle_callback(self, query: dict) -> None:
        data = query.get("data") or ""
        responder = str(query["from"]["id"])
        parts = data.split(":")
        if len(parts) == 3 and parts[0] == "appr" and self.approvals is not None:
            try:
                decision = Decision(parts[2])
            except ValueError:
                decision = None
            text = (self.approvals.answer(self.name, parts[1], responder, decision) if decision
                    else "Unknown answer.")
        else:
            text = "Unknown button."
        await self.api.call("answerCallbackQuery", {"callback_query_id": query["id"], "text": text})
        message = query.get("message")
        if message and text in ("Approved.", "Denied.", "Approved, and remembered."):
            await self.api.call("editMessageText", {
                "chat_id": message["chat"]["id"], "message_id": message["message_id"],
                "text": f"{message.get('text', '')}\n{text}"})

    # -- sending ---------------------------------------------------------------------------

    async def _send_text(self, chat_id: str, text: str, markdown: bool = True,
                         thread_id: str | None = None, extra: dict | None = None) -> dict:
        params = {"chat_id": chat_id, "text": text, **(extra or {})}
        if thread_id:
            params["message_thread_id"] = int(thread_id)
        if markdown:
            try:
                return await self.api.call("sendMessage", {**params, "parse_mode": "Markdown"})
            except TelegramError as exc:
                if not exc.markdown_rejected:
                    raise
                log.info("telegram_markdown_rejected; resending as plain text")
        return await self.api.call("sendMessage", params)

    async def send(self, message: SendMessage) -> None:
        images = [Path(p.strip()) for p in IMAGE_MARKER.findall(message.content)]
        text = IMAGE_MARKER.sub("", message.content).strip()
        if text:
            await self._send_text(message.recipient, text, thread_id=message.thread_id)
        for path in images:
            if path.is_file():
                await self.api.call("sendPhoto", {"chat_id": message.recipient},
                                    files={"photo": path})
            else:
                await self._send_text(message.recipient, f"(image not found: {path})", markdown=False)

    async def start_typing(self, recipient: str) -> None:
        await self.api.call("sendChatAction", {"chat_id": recipient, "action": "typing"})

    async def send_draft(self, message: SendMessage) -> str:
        sent = await self._send_text(message.recipient, message.content or "…", markdown=False,
                                     thread_id=message.thread_id)
        return str(sent["message_id"])

    async def update_draft(self, recipient: str, message_id: str, text: str) -> None:
        """Edit the draft, at most once per ``draft_interval`` (Telegram rate-limits edits)."""
        now = time.monotonic()
        if now - self._last_edit.get(message_id, 0.0) < self.draft_interval:
            return
        self._last_edit[message_id] = now
        await self.api.call("editMessageText", {"chat_id": recipient, "message_id": int(message_id),
                                                "text": text[:MAX_MESSAGE_LENGTH]})

    async def finalize_draft(self, recipient: str, message_id: str, text: str) -> None:
        self._last_edit.pop(message_id, None)
        try:
            await self.api.call("editMessageText", {
                "chat_id": recipient, "message_id": int(message_id),
                "text": text[:MAX_MESSAGE_LENGTH], "parse_mode": "Markdown"})
        except TelegramError as exc:
            if not exc.markdown_rejected:
                raise
            await self.api.call("editMessageText", {"chat_id": recipient, "message_id": int(message_id),
                                                    "text": text[:MAX_MESSAGE_LENGTH]})

    async def request_approval(self, ctx: RequestContext, prompt: str, token: str) -> None:
        buttons = [[{"text": label, "callback_data": f"appr:{token}:{decision.value}"}
                    for label, decision in (("Approve", Decision.APPROVE), ("Deny", Decision.DENY),
                                            ("Always", Decision.ALWAYS))]]
        await self._send_text(ctx.reply_target, prompt, markdown=False, thread_id=ctx.thread_id,
                              extra={"reply_markup": {"inline_keyboard": buttons}})

    # -- health ----------------------------------------------------------------------------

    def stalled(self) -> bool:
        """Started polling but no successful poll for longer than the timeout plus grace."""
        return (self.last_poll is not None
                and time.monotonic() - self.last_poll > self.poll_timeout + STALL_GRACE_SECONDS)

    async def health_check(self) -> bool:
        return self.last_poll is not None and not self.stalled()

    async def aclose(self) -> None:
        await self.api.aclose()
