"""What the Telegram channel sends: replies, images, drafts, approval buttons, best-effort answers.

- Outbound: 4,096-character chunks (the dispatcher chunks), ``[IMAGE:path]`` sent with
  ``sendPhoto`` only from the outbox (:mod:`edge.channels.outbox`; anything else gets one
  refusal that never says whether the file exists) with the reply's text as the first
  picture's caption (1,024 characters; the rest follows it), Markdown that Telegram rejects resent as
  plain text; typing every 4 s; drafts edited in place at a bounded rate. A 429 on a send
  holds that chat only (:class:`ChatPacing`).
- Replies to strangers and answers to buttons are best-effort: sent in the background, dropped on
  any error (403 bot blocked, 400 stale query, 429), never raised into the poll loop.
- Approvals are inline buttons Approve / Deny / Always (no Always for a requester nobody
  verified); the answer edits the prompt's message and
  removes the buttons, and so does an approval that expires unanswered (:meth:`approval_expired`).
- No edit repeats what a message shows already (Telegram refuses it with 400 "message is not
  modified", and each call counts against the bot's limits): a draft that already shows the
  whole reply is not edited again, unless the reply's Markdown would render differently.

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
from edge.channels.outbox import IMAGE_MARKER, IMAGE_REFUSED, Outbox
from edge.channels.telegram_api import MAX_CHAT_HOLD_SECONDS, ChatPacing, TelegramAPI, TelegramError
from edge.channels.telegram_updates import CallbackQuery
from edge.core.requester import Requester

log = logging.getLogger(__name__)

MAX_MESSAGE_LENGTH = 4096
MAX_CAPTION_LENGTH = 1024
"""A picture's caption, at most (Telegram's limit)."""
FLOOD_RETRIES = 2
"""Times a send to a chat that answered 429 is retried after its ``retry_after``."""
MAX_BACKGROUND_REPLIES = 50
"""Best-effort replies in flight at once; beyond this they are dropped."""
FINAL_ANSWERS = ("Approved.", "Denied.", "Approved, and remembered.")
MAX_OPEN_PROMPTS = 100
"""Approval prompts remembered for :meth:`TelegramSender.approval_expired` at once."""
EXPIRED = "Expired: nobody answered in time, so it was denied."
NO_BUTTONS: dict[str, list[Any]] = {"inline_keyboard": []}
"""``reply_markup`` that removes a message's inline keyboard."""
MARKDOWN_MARKS = re.compile(r"[*_`\[]")
"""Characters that make Telegram's (legacy) Markdown render a text differently from plain text."""


class TelegramSender:
    """Sends to Telegram chats over ``api``, keeping each chat's flood limit to that chat."""

    def __init__(self, api: TelegramAPI, *, outbox: Outbox | None = None,
                 draft_interval: float = 1.0):
        self.api = api
        self.outbox = outbox
        """Where ``[IMAGE:path]`` files may come from; None: no image is ever sent."""
        self.pacing = ChatPacing()
        self.draft_interval = draft_interval
        self._background: set[asyncio.Task[object]] = set()
        self._last_edit: dict[str, float] = {}
        self._shown: dict[str, str] = {}
        """Draft message id -> the text it shows now (sent as plain text)."""
        self._prompts: dict[str, tuple[str, int, str]] = {}
        """Approval token -> (chat, message id, prompt) while it waits for an answer."""

    # -- best-effort replies ---------------------------------------------------------------

    def spawn(self, work: Coroutine[Any, Any, object]) -> None:
        """Run a best-effort reply in the background: the poll loop never waits for one."""
        if len(self._background) >= MAX_BACKGROUND_REPLIES:
            work.close()
            log.warning("telegram_reply_dropped reason=too_many_in_flight")
            return
        task = asyncio.create_task(work)
        self._background.add(task)
        task.add_done_callback(self._background.discard)

    async def best_effort(self, method: str, params: dict[str, Any], chat_id: str | None = None) -> bool:
        """Call ``method``; any failure (403 blocked, 400 stale, 429, network) is logged only.
        True when the message now says what was asked (done, or it said so already)."""
        if chat_id is not None and self.pacing.remaining(chat_id):
            log.info("telegram_reply_dropped method=%s chat=%s reason=flood_wait", method, chat_id)
            return False
        try:
            await self.api.call(method, params)
            return True
        except TelegramError as exc:
            if exc.not_modified:
                return True
            if exc.code == 429 and chat_id is not None:
                self.pacing.hold(chat_id, exc.retry_after or 1.0)
            log.info("telegram_reply_failed method=%s chat=%s code=%d", method, chat_id, exc.code)
        except Exception as exc:
            log.info("telegram_reply_failed method=%s chat=%s error=%s", method, chat_id,
                     type(exc).__name__)
        return False

    async def answer_button(self, query: CallbackQuery, text: str) -> None:
        """Answer a pressed button; a final approval answer is also added to the prompt, whose
        buttons go."""
        await self.best_effort("answerCallbackQuery", {"callback_query_id": query.id, "text": text})
        button = query.message
        if button is not None and text in FINAL_ANSWERS:
            chat_id = str(button.chat.id)
            await self.best_effort("editMessageText", {
                "chat_id": chat_id, "message_id": button.message_id,
                "text": f"{button.text or ''}\n{text}"[:MAX_MESSAGE_LENGTH],
                "reply_markup": NO_BUTTONS}, chat_id)

    def approval_answered(self, token: str) -> None:
        """The approval ``token`` has its answer: it will not expire (the answer edits it)."""
        self._prompts.pop(token, None)

    async def approval_expired(self, token: str) -> None:
        """Nobody answered the approval ``token`` in time: its prompt says so, without buttons."""
        prompt = self._prompts.pop(token, None)
        if prompt is None:
            return
        chat_id, message_id, text = prompt
        await self.best_effort("editMessageText", {
            "chat_id": chat_id, "message_id": message_id,
            "text": f"{text}\n{EXPIRED}"[:MAX_MESSAGE_LENGTH], "reply_markup": NO_BUTTONS}, chat_id)

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
        """The text, as the caption of the first picture the outbox lets out (what does not fit
        in :data:`MAX_CAPTION_LENGTH` follows it as a message), else as a message; each marker
        whose file may not be sent becomes :data:`IMAGE_REFUSED`."""
        chat, thread = message.recipient, message.thread_id
        text = IMAGE_MARKER.sub("", message.content).strip()
        photos: list[Path] = []
        refused = 0
        for written in IMAGE_MARKER.findall(message.content):
            path = await self.outbox.image(written) if self.outbox is not None else None
            if path is None:
                refused += 1
            else:
                photos.append(path)
        caption, rest = split_caption(text) if photos else ("", text)
        if rest and not photos:
            await self.send_text(chat, rest, thread_id=thread)
        for index, path in enumerate(photos):
            await self.send_photo(chat, path, caption if index == 0 else "", thread)
        if rest and photos:
            await self.send_text(chat, rest, thread_id=thread)
        for _ in range(refused):
            await self.send_text(chat, IMAGE_REFUSED, markdown=False)

    async def send_photo(self, chat_id: str, path: Path, caption: str = "",
                         thread_id: str | None = None) -> None:
        """``sendPhoto`` with its caption in Markdown, resent plain when Telegram rejects it."""
        params: dict[str, Any] = {"chat_id": chat_id}
        if thread_id:
            params["message_thread_id"] = int(thread_id)
        if caption:
            params["caption"] = caption
            try:
                await self.chat_call(chat_id, "sendPhoto", {**params, "parse_mode": "Markdown"},
                                     files={"photo": path})
                return
            except TelegramError as exc:
                if not exc.markdown_rejected:
                    raise
                log.info("telegram_markdown_rejected method=sendPhoto; resending as plain text")
        await self.chat_call(chat_id, "sendPhoto", params, files={"photo": path})

    async def start_typing(self, recipient: str) -> None:
        """Best-effort: skipped while the chat is flood-limited."""
        await self.best_effort("sendChatAction", {"chat_id": recipient, "action": "typing"},
                               recipient)

    async def send_draft(self, message: SendMessage) -> str:
        text = (message.content or "…")[:MAX_MESSAGE_LENGTH]
        sent = await self.send_text(message.recipient, text, markdown=False,
                                    thread_id=message.thread_id)
        message_id = str(sent["message_id"])
        self._shown[message_id] = text
        return message_id

    async def update_draft(self, recipient: str, message_id: str, text: str) -> None:
        """Edit the draft, at most once per ``draft_interval`` (Telegram rate-limits edits) and
        never to the text it shows; best-effort: the final text comes with :meth:`finalize_draft`."""
        text = text[:MAX_MESSAGE_LENGTH]
        now = time.monotonic()
        if (now - self._last_edit.get(message_id, 0.0) < self.draft_interval
                or self._shown.get(message_id) == text):
            return
        self._last_edit[message_id] = now
        if await self.best_effort("editMessageText", {"chat_id": recipient, "message_id": int(message_id),
                                                      "text": text}, recipient):
            self._shown[message_id] = text

    async def finalize_draft(self, recipient: str, message_id: str, text: str) -> None:
        """The reply in full, with Markdown. No call when the draft shows it already and its
        Markdown would change nothing; a draft showing it whose Markdown Telegram rejects stays."""
        self._last_edit.pop(message_id, None)
        text = text[:MAX_MESSAGE_LENGTH]
        shown = self._shown.pop(message_id, None) == text
        if shown and not MARKDOWN_MARKS.search(text):
            return
        params = {"chat_id": recipient, "message_id": int(message_id), "text": text}
        try:
            await self.chat_call(recipient, "editMessageText", {**params, "parse_mode": "Markdown"})
        except TelegramError as exc:
            if exc.not_modified or (shown and exc.markdown_rejected):  # it says this already
                return
            if not exc.markdown_rejected:
                raise
            try:
                await self.chat_call(recipient, "editMessageText", params)
            except TelegramError as plain:
                if not plain.not_modified:
                    raise

    async def request_approval(self, ctx: Requester, prompt: str, token: str,
                               always: bool = True) -> None:
        labels = ("Approve", "Deny", "Always") if always else ("Approve", "Deny")
        buttons = [[{"text": label, "callback_data": f"appr:{token}:{label.lower()}"}
                    for label in labels]]
        sent = await self.send_text(ctx.reply_target, prompt, markdown=False, thread_id=ctx.thread_id,
                                    extra={"reply_markup": {"inline_keyboard": buttons}})
        self._prompts[token] = (ctx.reply_target, int(sent["message_id"]), prompt)
        while len(self._prompts) > MAX_OPEN_PROMPTS:  # answered or expired without a word to us
            self._prompts.pop(next(iter(self._prompts)))

    async def aclose(self) -> None:
        """Cancel the best-effort replies still in flight; the API client is the channel's."""
        for task in list(self._background):
            task.cancel()
        await asyncio.gather(*self._background, return_exceptions=True)


def split_caption(text: str, limit: int = MAX_CAPTION_LENGTH) -> tuple[str, str]:
    """``text`` as a picture's caption and what follows it as a message: cut at the last line
    break (else space) that fits, whole when it fits.

    >>> split_caption("short")
    ('short', '')
    >>> split_caption("first line\\nsecond line", limit=15)
    ('first line', 'second line')
    """
    if len(text) <= limit:
        return text, ""
    cut = text.rfind("\n", 0, limit + 1)
    if cut <= 0:
        cut = text.rfind(" ", 0, limit + 1)
    if cut <= 0:
        cut = limit
    return text[:cut].rstrip(), text[cut:].strip()
