"""What the Telegram channel sends: replies, images, drafts, approval buttons, best-effort answers.

- Outbound: 4,096-character chunks (the dispatcher chunks), ``[IMAGE:path]`` sent with
  ``sendPhoto`` only from the outbox (:mod:`edge.channels.outbox`; anything else gets one
  refusal that never says whether the file exists), Markdown that Telegram rejects resent as
  plain text; typing every 4 s; drafts edited in place at a bounded rate. A 429 on a send
  holds that chat only (:class:`ChatPacing`).
- Replies to strangers and answers to buttons are best-effort: sent in the background, dropped on
  any error (403 bot blocked, 400 stale query, 429), never raised into the poll loop.
- Approvals are inline buttons Approve / Deny / Always; the answer edits the prompt's message.

:class:`TelegramSender` is the channel's sending half; :mod:`edge.channels.telegram` receives.
"""

from __future__ import annotations

import asyncio
import logging
import re
import time
from collections.abc import Coroutine
from pathlib import Path
from typing import Any

from edge.channels.base import SendMessage
from edge.channels.outbox import IMAGE_REFUSED, Outbox
from edge.channels.telegram_api import MAX_CHAT_HOLD_SECONDS, ChatPacing, TelegramAPI, TelegramError
from edge.channels.telegram_updates import CallbackQuery
from edge.core.requester import Requester

log = logging.getLogger(__name__)

MAX_MESSAGE_LENGTH = 4096
FLOOD_RETRIES = 2
"""Times a send to a chat that answered 429 is retried after its ``retry_after``."""
MAX_BACKGROUND_REPLIES = 50
"""Best-effort replies in flight at once; beyond this they are dropped."""
IMAGE_MARKER = re.compile(r"\[IMAGE:([^\]]+)\]")
FINAL_ANSWERS = ("Approved.", "Denied.", "Approved, and remembered.")


class TelegramSender:
    """Sends to Telegram chats over ``api``, keeping each chat's flood limit to that chat."""

    def __init__(self, api: TelegramAPI, *, outbox: Outbox | None = None,
                 draft_interval: float = 1.0):
        self.api = api
        self.outbox = outbox
        """Where ``[IMAGE:path]`` files may come from; None: no image is ever sent."""
        self.pacing = ChatPacing()
        self.draft_interval = draft_interval
        self._background: set[asyncio.Task[None]] = set()
        self._last_edit: dict[str, float] = {}

    # -- best-effort replies ---------------------------------------------------------------

    def spawn(self, work: Coroutine[Any, Any, None]) -> None:
        """Run a best-effort reply in the background: the poll loop never waits for one."""
        if len(self._background) >= MAX_BACKGROUND_REPLIES:
            work.close()
            log.warning("telegram_reply_dropped reason=too_many_in_flight")
            return
        task = asyncio.create_task(work)
        self._background.add(task)
        task.add_done_callback(self._background.discard)

    async def best_effort(self, method: str, params: dict[str, Any], chat_id: str | None = None) -> None:
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

    async def answer_button(self, query: CallbackQuery, text: str) -> None:
        """Answer a pressed button; a final approval answer is also added to the prompt."""
        await self.best_effort("answerCallbackQuery", {"callback_query_id": query.id, "text": text})
        button = query.message
        if button is not None and text in FINAL_ANSWERS:
            chat_id = str(button.chat.id)
            await self.best_effort("editMessageText", {
                "chat_id": chat_id, "message_id": button.message_id,
                "text": f"{button.text or ''}\n{text}"[:MAX_MESSAGE_LENGTH]}, chat_id)

    # -- sending ---------------------------------------------------------------------------

    async def chat_call(self, chat_id: str, method: str, params: dict[str, Any],
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

    async def send_text(self, chat_id: str, text: str, markdown: bool = True,
                        thread_id: str | None = None, extra: dict[str, Any] | None = None) -> dict[str, Any]:
        params = {"chat_id": chat_id, "text": text, **(extra or {})}
        if thread_id:
            params["message_thread_id"] = int(thread_id)
        if markdown:
            try:
                sent: dict[str, Any] = await self.chat_call(chat_id, "sendMessage",
                                                            {**params, "parse_mode": "Markdown"})
                return sent
            except TelegramError as exc:
                if not exc.markdown_rejected:
                    raise
                log.info("telegram_markdown_rejected; resending as plain text")
        sent = await self.chat_call(chat_id, "sendMessage", params)
        return sent

    async def send(self, message: SendMessage) -> None:
        images = IMAGE_MARKER.findall(message.content)
        text = IMAGE_MARKER.sub("", message.content).strip()
        if text:
            await self.send_text(message.recipient, text, thread_id=message.thread_id)
        for written in images:
            path = await self.outbox.image(written) if self.outbox is not None else None
            if path is not None:
                await self.chat_call(message.recipient, "sendPhoto", {"chat_id": message.recipient},
                                     files={"photo": path})
            else:
                await self.send_text(message.recipient, IMAGE_REFUSED, markdown=False)

    async def start_typing(self, recipient: str) -> None:
        """Best-effort: skipped while the chat is flood-limited."""
        await self.best_effort("sendChatAction", {"chat_id": recipient, "action": "typing"},
                               recipient)

    async def send_draft(self, message: SendMessage) -> str:
        sent = await self.send_text(message.recipient, message.content or "…", markdown=False,
                                    thread_id=message.thread_id)
        return str(sent["message_id"])

    async def update_draft(self, recipient: str, message_id: str, text: str) -> None:
        """Edit the draft, at most once per ``draft_interval`` (Telegram rate-limits edits);
        best-effort: the final text comes with :meth:`finalize_draft`."""
        now = time.monotonic()
        if now - self._last_edit.get(message_id, 0.0) < self.draft_interval:
            return
        self._last_edit[message_id] = now
        await self.best_effort("editMessageText", {"chat_id": recipient, "message_id": int(message_id),
                                                   "text": text[:MAX_MESSAGE_LENGTH]}, recipient)

    async def finalize_draft(self, recipient: str, message_id: str, text: str) -> None:
        self._last_edit.pop(message_id, None)
        params = {"chat_id": recipient, "message_id": int(message_id),
                  "text": text[:MAX_MESSAGE_LENGTH]}
        try:
            await self.chat_call(recipient, "editMessageText", {**params, "parse_mode": "Markdown"})
        except TelegramError as exc:
            if exc.not_modified:  # the draft already shows the whole reply
                return
            if not exc.markdown_rejected:
                raise
            try:
                await self.chat_call(recipient, "editMessageText", params)
            except TelegramError as plain:
                if not plain.not_modified:
                    raise

    async def request_approval(self, ctx: Requester, prompt: str, token: str) -> None:
        buttons = [[{"text": label, "callback_data": f"appr:{token}:{label.lower()}"}
                    for label in ("Approve", "Deny", "Always")]]
        await self.send_text(ctx.reply_target, prompt, markdown=False, thread_id=ctx.thread_id,
                             extra={"reply_markup": {"inline_keyboard": buttons}})

    async def aclose(self) -> None:
        """Cancel the best-effort replies still in flight; the API client is the channel's."""
        for task in list(self._background):
            task.cancel()
        await asyncio.gather(*self._background, return_exceptions=True)
