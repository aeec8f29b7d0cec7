"""The Telegram updates the channel reads, validated at the boundary.

Only the fields the channel uses are modelled; anything else in an update is ignored. Types are
strict (a user id is an int, never ``"42"`` or ``true``), so a forged or malformed update is
rejected here, with one log line, instead of failing three calls deeper in the poll loop.

>>> parse_update({"update_id": 5, "message": {"message_id": 1, "date": 0, "text": "hi",
...     "from": {"id": 42}, "chat": {"id": 42, "type": "private"}}}).message.text
'hi'
>>> parse_update({"update_id": 6, "message": {"message_id": 2, "date": "today",
...     "from": {"id": 42}, "chat": {"id": 42}}}) is None
True
>>> parse_update({"update_id": 7, "edited_message": {}}) is None
True
"""

from __future__ import annotations

import logging
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from edge.core.validation import where_of

log = logging.getLogger(__name__)

MAX_TEXT_CHARS = 8192
"""Telegram caps text at 4,096 characters (captions 1,024); anything longer is not Telegram."""
MAX_CALLBACK_DATA = 64
"""Telegram caps ``callback_data`` at 64 bytes."""

UserId = Annotated[int, Field(gt=0)]
Text = Annotated[str, Field(max_length=MAX_TEXT_CHARS)]


class _Model(BaseModel):
    """Strict: an int is never text or a bool, text is never a number; other keys are ignored.
    Subclasses repeat ``frozen=True``: type checkers take it per class, as for dataclasses. Built
    at the first update (``defer_build``): an agent without Telegram never pays for them."""

    model_config = ConfigDict(extra="ignore", frozen=True, strict=True, validate_by_name=True,
                              defer_build=True)

    def __setattr__(self, name: str, value: object) -> None:
        """Read-only as a frozen dataclass is (pydantic's own refusal is a ValidationError)."""
        raise AttributeError(f"{type(self).__name__} is read-only")


class User(_Model, frozen=True):
    id: UserId
    is_bot: bool = False
    username: str | None = None


class Chat(_Model, frozen=True):
    id: int
    """Negative for groups and channels."""
    type: str = "private"


class RepliedMessage(_Model, frozen=True):
    """The message a message replies to: only its author matters (a reply to the bot is a
    mention)."""
    sender: User | None = Field(default=None, alias="from")


class AudioFile(_Model, frozen=True):
    """A voice message (``voice``: recorded in the app, OGG/Opus) or an audio file (``audio``),
    as much as is known before downloading it."""
    file_id: Annotated[str, Field(min_length=1, max_length=256)]
    duration: Annotated[int, Field(ge=0)]
    """Seconds, as the sender's app measured them."""
    mime_type: Annotated[str, Field(max_length=128)] | None = None
    file_size: Annotated[int, Field(ge=0)] | None = None
    """Bytes; Telegram may leave it out (``getFile`` says it then)."""
    file_name: Annotated[str, Field(max_length=256)] | None = None


class Message(_Model, frozen=True):
    message_id: int
    date: int
    chat: Chat
    sender: User = Field(alias="from")
    text: Text | None = None
    caption: Text | None = None
    message_thread_id: int | None = None
    is_topic_message: bool = False
    reply_to_message: RepliedMessage | None = None
    photo: list[Any] | None = None
    document: dict[str, Any] | None = None
    voice: AudioFile | None = None
    audio: AudioFile | None = None
    video: dict[str, Any] | None = None

    @property
    def attachments(self) -> tuple[str, ...]:
        return tuple(kind for kind in ("photo", "document", "voice", "audio", "video")
                     if getattr(self, kind) is not None)

    @property
    def spoken(self) -> AudioFile | None:
        """The voice message or audio file to transcribe, if the message is one."""
        return self.voice or self.audio


class ButtonMessage(_Model, frozen=True):
    """The message carrying an inline keyboard, as a callback query reports it."""
    message_id: int
    chat: Chat
    text: Text | None = None


class CallbackQuery(_Model, frozen=True):
    id: Annotated[str, Field(min_length=1, max_length=256)]
    sender: User = Field(alias="from")
    data: Annotated[str, Field(max_length=MAX_CALLBACK_DATA)] | None = None
    message: ButtonMessage | None = None


class Update(_Model, frozen=True):
    update_id: int
    message: Message | None = None
    callback_query: CallbackQuery | None = None


KINDS = ("message", "callback_query")
"""The update kinds the channel asks for (``allowed_updates``) and handles."""


def update_id_of(raw: object) -> int | None:
    """The update's id if it has a usable one, whatever else is wrong with it."""
    if isinstance(raw, dict):
        value = raw.get("update_id")
        if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
            return value
    return None


def parse_update(raw: object) -> Update | None:
    """The update as a model, or None (logged) when it is malformed or of a kind not handled."""
    update_id = update_id_of(raw)
    if not isinstance(raw, dict) or not any(raw.get(kind) is not None for kind in KINDS):
        keys = sorted(str(k)[:32] for k in raw)[:8] if isinstance(raw, dict) else type(raw).__name__
        log.info("telegram_update_ignored update_id=%s reason=unhandled_kind keys=%s",
                 update_id, keys)
        return None
    try:
        return Update.model_validate(raw)
    except ValidationError as exc:
        fields = sorted({where_of(error) for error in exc.errors(include_url=False)})[:5]
        log.warning("telegram_update_ignored update_id=%s reason=malformed fields=%s",
                    update_id, ",".join(fields))
        return None
