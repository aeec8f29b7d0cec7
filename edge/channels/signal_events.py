"""The signal-cli events the Signal channel reads, validated at the boundary.

signal-cli's HTTP daemon streams ``receive`` events whose data is JSON: ``{"envelope": {...},
"account": ...}``. Only the parts the channel uses are modelled (the sender, the timestamp, and a
data message's text, group, mentions and attachments); anything else is ignored. Types are
strict (a timestamp is an int, a group id is text), so a malformed event is dropped here, with
one log line, instead of raising in the listener and restarting the channel.

>>> envelope = parse_event('{"envelope": {"sourceNumber": "+491", "timestamp": 5, '
...                        '"dataMessage": {"message": "hi"}}}')
>>> envelope.sender, envelope.timestamp, envelope.data_message.message
('+491', 5, 'hi')
>>> parse_event('{"envelope": {"sourceNumber": "+491", "timestamp": "5", '
...             '"dataMessage": {"message": "hi"}}}') is None
True
>>> parse_event('{"envelope": {"sourceNumber": "+491", "timestamp": 5, '
...             '"typingMessage": {"action": "STARTED"}}}') is None
True
"""

from __future__ import annotations

import json
import logging
from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from edge.core.validation import where_of

log = logging.getLogger(__name__)

MAX_TEXT_CHARS = 8192
"""Signal carries at most 2,000 bytes of text in a message body (longer text travels as a
``text/x-signal-plain`` attachment); anything longer is not Signal. The same bound as Telegram's."""
MAX_ID_CHARS = 256
"""Phone numbers, UUIDs, group ids (base64 of 32 bytes) and attachment ids are far shorter."""
MAX_MENTIONS = 1000
"""A mention takes at least one character of the text; a Signal group has at most 1,000 members."""
MAX_ATTACHMENTS = 64
"""Signal clients send at most 32 attachments with a message."""

Id = Annotated[str, Field(min_length=1, max_length=MAX_ID_CHARS)]
Text = Annotated[str, Field(max_length=MAX_TEXT_CHARS)]


class _Model(BaseModel):
    """Strict: an int is never text or a bool, text is never a number; other keys are ignored.
    Subclasses repeat ``frozen=True``: type checkers take it per class, as for dataclasses. Built
    at the first event (``defer_build``): an agent without Signal never pays for them."""

    model_config = ConfigDict(extra="ignore", frozen=True, strict=True, validate_by_name=True,
                              defer_build=True)

    def __setattr__(self, name: str, value: object) -> None:
        """Read-only as a frozen dataclass is (pydantic's own refusal is a ValidationError)."""
        raise AttributeError(f"{type(self).__name__} is read-only")


class GroupInfo(_Model, frozen=True):
    group_id: Id = Field(alias="groupId")
    """Required: a group message without its group must not be answered as a direct one."""


class Mention(_Model, frozen=True):
    number: Annotated[str, Field(max_length=MAX_ID_CHARS)] | None = None
    """The mentioned account's number (signal-cli leaves it out when only the UUID is known)."""


class Attachment(_Model, frozen=True):
    id: Id | None = None
    """signal-cli may leave it out; the message's text still counts."""
    content_type: Annotated[str, Field(max_length=MAX_ID_CHARS)] | None = Field(
        default=None, alias="contentType")
    size: Annotated[int, Field(ge=0)] | None = None
    """Bytes, as the sender declared them."""
    filename: Annotated[str, Field(max_length=MAX_ID_CHARS)] | None = None
    voice_note: bool = Field(default=False, alias="voiceNote")
    """Recorded in the app (newer signal-cli says so; older ones only give ``audio/*``)."""

    @property
    def audio(self) -> bool:
        return self.voice_note or (self.content_type or "").lower().startswith("audio/")


class DataMessage(_Model, frozen=True):
    message: Text | None = None
    group_info: GroupInfo | None = Field(default=None, alias="groupInfo")
    mentions: Annotated[list[Mention], Field(max_length=MAX_MENTIONS)] | None = None
    attachments: Annotated[list[Attachment], Field(max_length=MAX_ATTACHMENTS)] | None = None

    @property
    def group_id(self) -> str | None:
        return self.group_info.group_id if self.group_info is not None else None

    @property
    def voice(self) -> Attachment | None:
        """The first audio attachment that signal-cli can hand over (it has an id), if any."""
        return next((a for a in self.attachments or () if a.audio and a.id), None)


class Envelope(_Model, frozen=True):
    source_number: Annotated[str, Field(max_length=MAX_ID_CHARS)] | None = Field(
        default=None, alias="sourceNumber")
    source_uuid: Annotated[str, Field(max_length=MAX_ID_CHARS)] | None = Field(
        default=None, alias="sourceUuid")
    source: Annotated[str, Field(max_length=MAX_ID_CHARS)] | None = None
    timestamp: Annotated[int, Field(ge=0)]
    """Milliseconds, chosen by the sending device."""
    data_message: DataMessage | None = Field(default=None, alias="dataMessage")

    @property
    def sender(self) -> str | None:
        """The number if known, else the UUID, else the legacy ``source``."""
        return self.source_number or self.source_uuid or self.source or None


class Event(_Model, frozen=True):
    envelope: Envelope


def _timestamp_of(event: object) -> int | None:
    """The envelope's timestamp if it has a usable one, whatever else is wrong with the event."""
    envelope = event.get("envelope") if isinstance(event, dict) else None
    value = envelope.get("timestamp") if isinstance(envelope, dict) else None
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def parse_event(raw: str) -> Envelope | None:
    """The envelope of a data message with text or a voice note from a ``receive`` event's
    data, or None
    (logged, never with the text) for other kinds (typing, receipts, sync, reactions) and for
    malformed events."""
    try:
        event = json.loads(raw)
    except (ValueError, RecursionError):  # not JSON, an int past 4,300 digits, nested too deep
        log.warning("signal_event_ignored timestamp=None reason=not_json chars=%d", len(raw))
        return None
    timestamp = _timestamp_of(event)
    envelope = event.get("envelope") if isinstance(event, dict) else None
    if isinstance(event, dict) and (envelope is None or isinstance(envelope, dict)
                                    and envelope.get("dataMessage") is None):
        keys = sorted(str(k)[:32] for k in (envelope if envelope is not None else event))[:8]
        log.info("signal_event_ignored timestamp=%s reason=unhandled_kind keys=%s",
                 timestamp, keys)
        return None
    try:
        parsed = Event.model_validate(event).envelope
    except ValidationError as exc:
        fields = sorted({where_of(error) or "event" for error in exc.errors(include_url=False)})[:5]
        log.warning("signal_event_ignored timestamp=%s reason=malformed fields=%s",
                    timestamp, ",".join(fields))
        return None
    data = parsed.data_message
    if data is None or not (data.message or data.voice):  # a picture alone, a reaction, a group update
        log.info("signal_event_ignored timestamp=%s reason=no_text", timestamp)
        return None
    if parsed.sender is None:
        log.warning("signal_event_ignored timestamp=%s reason=malformed fields=envelope.sourceNumber",
                    timestamp)
        return None
    return parsed
