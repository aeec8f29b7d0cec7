"""Signal through a signal-cli daemon in HTTP mode (``signal-cli -a ACCOUNT daemon --http``):
messages arrive on its server-sent events stream (``GET /api/v1/events``, ``receive`` events with
an ``envelope``) and leave through JSON-RPC (``POST /api/v1/rpc``: ``send``, ``sendTyping``,
``sendReaction``). A dropped stream is reconnected by the supervisor with backoff 2 s to 60 s.
Events are checked by :func:`~edge.channels.signal_events.parse_event`: a malformed one is logged
and dropped without ending the stream.

Unknown numbers get one pairing hint (``/pair CODE`` pairs them). Approvals are answered by reply:
the request carries a short token and ``<token> approve|deny|always`` from the requester (or an
admin) answers it, the token in any case; the answer is acknowledged with a reaction.

Pictures go out as attachments: each ``[IMAGE:path]`` in a reply that the outbox lets out
(:mod:`edge.channels.outbox`) is taken out of the text and sent with it as a data URI
(``data:image/png;filename=chart.png;base64,...``, which signal-cli's ``send --attachment``
takes as well as a path), so signal-cli may run as another user or on another host. One that
may not be sent is replaced by the same refusal as on Telegram, which never says whether the
file exists.

Voice notes (audio attachments) from allowed numbers are fetched with ``getAttachment`` (its
base64 answer decoded into a file as it streams in: :mod:`edge.channels.signal_attachment`),
transcribed through ``[transcription]`` and go on as typed text, the transcript shown first
(:mod:`edge.channels.voice`); a stranger's are never fetched. signal-cli says a note's size but not
its length, so only ``max_bytes`` is checked before fetching. In groups a voice note carries no
mention, so there it is not transcribed.

A message's id is ``sender:timestamp``: Signal timestamps are milliseconds chosen by the sending
device, so two people can send at the same millisecond, and the duplicate check must tell them
apart.
"""

from __future__ import annotations

import asyncio
import base64
import itertools
import logging
import os
import re
from pathlib import Path
from typing import Any

import httpx

from edge.channels.base import Channel, ChannelMessage, SendMessage
from edge.channels.outbox import HEAD_BYTES, IMAGE_MARKER, IMAGE_REFUSED, Outbox, image_kind
from edge.channels.pairing import Pair, Strangers
from edge.channels.signal_attachment import AttachmentData
from edge.channels.signal_events import Attachment, Envelope, parse_event
from edge.channels.spec import ApprovalAnswers
from edge.channels.voice import VoiceNote, VoiceNotes, VoiceNoteUnavailable, filename_for
from edge.channels.voice_queue import VoiceNoteQueue
from edge.core.exc import EdgeError
from edge.core.files import create_private
from edge.core.httpclient import async_client
from edge.core.requester import Requester
from edge.core.sse import iter_sse

log = logging.getLogger(__name__)

APPROVAL_REPLY = re.compile(r"^\s*([0-9a-f]{6})\s+(approve|deny|always)\s*$", re.IGNORECASE)
RPC_TIMEOUT = 15.0
UNSAFE_IN_FILENAME = re.compile(r"[^\w.-]")
"""Characters a data URI's ``filename=`` may not carry as they are (``;``, ``,``, ``=``...)."""


class SignalRPCError(EdgeError):
    """signal-cli's JSON-RPC could not be reached, or answered with an error."""


class SignalChannel(Channel):
    supports_approvals = True
    name = "signal"
    reconnect_backoff = (2.0, 60.0)
    capabilities = "You are talking on Signal: plain text only, no Markdown."

    def __init__(self, http_url: str, account: str, allowed: set[str], *,
                 group_ids: list[str] | None = None, approvals: ApprovalAnswers | None = None,
                 pair: Pair | None = None, outbox: Outbox | None = None):
        self.base = http_url.rstrip("/")
        self.account = account
        self.allowed = allowed
        self.group_ids = set(group_ids or [])
        self.approvals = approvals
        self.pair = pair
        self.outbox = outbox
        """Where ``[IMAGE:path]`` files may come from; None: no image is ever sent."""
        if outbox is not None:
            self.capabilities = (
                "You are talking on Signal: plain text only, no Markdown. To send a picture "
                f"(PNG, JPEG, GIF or WebP), it must be in {outbox.directory}: put "
                f"[IMAGE:{outbox.directory}/name.png] on its own line. No other file is sent.")
        self._client = async_client(self.base, timeout=httpx.Timeout(RPC_TIMEOUT, read=None))
        self._ids = itertools.count(1)
        self.strangers = Strangers(self.name, pair)
        """Pairing guesses and replies to senders not on the allowlist, rate-limited."""
        self.connected = False
        self.voice = VoiceNotes(self.name)
        """Voice notes: answered with how to set transcription up until :meth:`hear_voice_notes`."""

    async def rpc(self, method: str, params: dict[str, Any]) -> object:
        request = {"jsonrpc": "2.0", "method": method, "params": {"account": self.account, **params},
                   "id": next(self._ids)}
        try:
            response = await self._client.post(f"{self.base}/api/v1/rpc", json=request,
                                               timeout=RPC_TIMEOUT)
            body = response.json()
        except (httpx.HTTPError, ValueError) as exc:
            raise SignalRPCError(f"signal-cli {method}: {type(exc).__name__}") from None
        if "error" in body:
            raise SignalRPCError(f"signal-cli {method}: {body['error'].get('message')}")
        return body.get("result")

    @staticmethod
    def _target(recipient: str) -> dict[str, str | list[str]]:
        if recipient.startswith("group:"):
            return {"groupId": recipient.removeprefix("group:")}
        return {"recipient": [recipient]}

    async def listen(self, bus: asyncio.Queue[ChannelMessage]) -> None:
        async with self._client.stream("GET", f"{self.base}/api/v1/events",
                                       params={"account": self.account}) as response:
            if response.status_code != 200:
                raise ConnectionError(f"signal-cli events: HTTP {response.status_code}")
            self.connected = True
            log.info("signal_connected url=%s", self.base)
            try:
                async for event in iter_sse(response.aiter_lines()):
                    if event.event == "receive":
                        await self._handle(event.data, bus)
            finally:
                self.connected = False
        raise ConnectionError("signal-cli closed the event stream")

    async def _handle(self, raw: str, bus: asyncio.Queue[ChannelMessage]) -> None:
        """One ``receive`` event's data; anything but a well-formed data message with text is
        logged and dropped by :func:`parse_event`. Whatever goes wrong while answering it (a
        failed reaction after an approval) is logged once and ends with this event, as for
        Telegram's updates: the event stream stays open."""
        envelope = parse_event(raw)
        if envelope is None:
            return
        try:
            await self._on_message(envelope, bus)
        except Exception:
            log.exception("signal_event_failed timestamp=%s", envelope.timestamp)

    async def _on_message(self, envelope: Envelope, bus: asyncio.Queue[ChannelMessage]) -> None:
        data, sender = envelope.data_message, envelope.sender
        if data is None or sender is None or not (data.message or data.voice):
            return  # parse_event returns none such
        text = data.message or ""
        group = data.group_id
        if group and group not in self.group_ids:
            return
        reply_target = f"group:{group}" if group else sender
        if sender not in self.allowed:
            await self._unknown_sender(sender, text, group)
            return
        if (match := APPROVAL_REPLY.match(text)) and self.approvals is not None:
            answer = self.approvals.answer(self.name, match.group(1), sender, match.group(2))
            try:  # the reaction only acknowledges: the answer below must go out regardless
                await self.rpc("sendReaction", {**self._target(reply_target), "emoji":
                                                "✅" if answer.startswith("Approved") else "❌",
                                                "targetAuthor": sender,
                                                "targetTimestamp": envelope.timestamp})
            except SignalRPCError as exc:
                log.warning("signal_reaction_failed reason=%s", exc)
            await self.send(SendMessage(answer, reply_target))
            return
        mentioned = any(m.number == self.account for m in data.mentions or ())
        inbound = ChannelMessage(sender, reply_target, text.replace("\ufffc", "").strip(),
                                 self.name, id=f"{sender}:{envelope.timestamp}",
                                 is_group=bool(group), mentioned=mentioned,
                                 attachments=tuple(a.id for a in data.attachments or () if a.id))
        if data.voice is not None:
            self._on_voice_note(data.voice, inbound, bus)
            return
        await bus.put(inbound)

    def _on_voice_note(self, attachment: Attachment, inbound: ChannelMessage,
                       bus: asyncio.Queue[ChannelMessage]) -> None:
        """Refuse, or fetch and transcribe, in the background; the transcript is shown, then
        goes on as the message's text (any text sent with it after it)."""
        if inbound.is_group and not inbound.mentioned:
            log.info("signal_voice_note_ignored reason=group_without_mention")
            return
        content_type = attachment.content_type or "audio/aac"
        note = VoiceNote(attachment.size, None, content_type,
                         filename_for(content_type, attachment.filename))
        attachment_id = attachment.id or ""

        async def say(text: str) -> None:
            await self.send(SendMessage(text, inbound.reply_target))

        async def deliver(text: str) -> None:
            content = f"{text}\n{inbound.content}" if inbound.content else text
            await bus.put(ChannelMessage(inbound.sender, inbound.reply_target, content, self.name,
                                         id=inbound.id, timestamp=inbound.timestamp,
                                         is_group=inbound.is_group, mentioned=inbound.mentioned))

        self.voice.receive(note, inbound.caller,
                           lambda into, limit: self._fetch(attachment_id, into, limit), say, deliver)

    async def _fetch(self, attachment_id: str, into: Path, limit: int) -> None:
        """A voice note from signal-cli (``getAttachment``: ``{"data": base64}``) into the file
        ``into``, decoded as the answer streams in, at most ``limit`` bytes."""
        request = {"jsonrpc": "2.0", "method": "getAttachment", "id": next(self._ids),
                   "params": {"account": self.account, "id": attachment_id}}
        try:
            async with self._client.stream("POST", f"{self.base}/api/v1/rpc", json=request,
                                           timeout=RPC_TIMEOUT) as response:
                with os.fdopen(create_private(into), "wb") as out:
                    data = AttachmentData(out, limit)
                    async for chunk in response.aiter_bytes():
                        await asyncio.to_thread(data.feed, chunk)
                    data.finish()
        except httpx.HTTPError as exc:
            raise VoiceNoteUnavailable(f"signal-cli getAttachment: {type(exc).__name__}") from None
        except OSError as exc:
            raise VoiceNoteUnavailable(f"it could not be written to disk ({exc.strerror})") from None

    def hear_voice_notes(self, queue: VoiceNoteQueue) -> None:
        self.voice.hear_with(queue)

    async def _unknown_sender(self, sender: str, text: str, group: str | None) -> None:
        log.info("signal_unknown_sender sender=%s", sender)
        if group:
            return
        reply = await self.strangers.answer(sender, text)
        if reply is None:
            return
        try:  # best effort: a stranger's reply never fails the event stream
            await self.send(SendMessage(reply, sender))
        except (SignalRPCError, httpx.HTTPError) as exc:
            log.info("signal_reply_failed to=%s error=%s", sender, type(exc).__name__)

    async def send(self, message: SendMessage) -> None:
        """The text, with each ``[IMAGE:path]`` the outbox lets out as an attachment of the
        same message; a marker whose file may not be sent becomes :data:`IMAGE_REFUSED`, and a
        line that held only sent pictures goes with them."""
        attachments: list[str] = []
        refused: set[str] = set()
        for written in IMAGE_MARKER.findall(message.content):
            attachment = await self._attachment(written)
            if attachment is None:
                refused.add(written)
            else:
                attachments.append(attachment)
        lines = [(line, IMAGE_MARKER.sub(lambda m: IMAGE_REFUSED if m.group(1) in refused else "",
                                         line)) for line in message.content.split("\n")]
        text = "\n".join(new for old, new in lines if new.strip() or old == new).strip()
        params: dict[str, Any] = {**self._target(message.recipient), "message": text}
        if attachments:
            params["attachments"] = attachments
        await self.rpc("send", params)

    async def _attachment(self, written: str) -> str | None:
        """The image ``written`` names as a data URI, or None when it may not be sent (checked
        again after reading: the file may have changed since the outbox looked at it)."""
        if self.outbox is None or (path := await self.outbox.image(written)) is None:
            return None
        try:
            data = await asyncio.to_thread(path.read_bytes)
        except OSError as exc:
            log.warning("image_refused reason=unreadable path=%r error=%s", written[:200],
                        type(exc).__name__)
            return None
        kind = image_kind(data[:HEAD_BYTES])
        if kind is None or not 0 < len(data) <= self.outbox.max_bytes:
            log.warning("image_refused reason=changed path=%r", written[:200])
            return None
        return (f"data:image/{kind};filename={UNSAFE_IN_FILENAME.sub('_', path.name)};base64,"
                f"{base64.b64encode(data).decode('ascii')}")

    async def start_typing(self, recipient: str) -> None:
        await self.rpc("sendTyping", self._target(recipient))

    async def request_approval(self, ctx: Requester, prompt: str, token: str,
                               always: bool = True) -> None:
        choices = (f"\"{token} approve\", \"{token} deny\" or \"{token} always\"" if always
                   else f"\"{token} approve\" or \"{token} deny\"")
        await self.send(SendMessage(f"{prompt}\nReply {choices}.", ctx.reply_target))

    async def health_check(self) -> bool:
        return self.connected

    async def aclose(self) -> None:
        await self.voice.aclose()
        await self._client.aclose()
