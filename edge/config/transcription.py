"""``[transcription]``: where voice notes are turned into text. Any OpenAI-compatible
``POST {base_url}/audio/transcriptions`` endpoint: a preset (``openai``, ``groq``) or a local
whisper server through ``base_url`` (faster-whisper-server, whisper.cpp's server, LocalAI).
Unset (no preset, no base_url), voice notes get a one-line answer saying how to set it up.

>>> TranscriptionConfig().enabled
False
>>> groq = TranscriptionConfig(preset="groq")
>>> groq.endpoint, groq.resolved_model, groq.key_variable
('https://api.groq.com/openai/v1', 'whisper-large-v3-turbo', 'GROQ_API_KEY')
>>> TranscriptionConfig(base_url="http://127.0.0.1:8000/v1", model="Systran/faster-whisper-small").enabled
True
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Literal, Self

from pydantic import AfterValidator, Field, SecretStr, model_validator

from edge.config.section import Seconds, Section
from edge.config.urls import http_url


@dataclass(frozen=True)
class TranscriptionPreset:
    base_url: str
    model: str
    key_variable: str
    """The environment variable the key is read from when ``api_key`` is not set."""


TRANSCRIPTION_PRESETS: dict[str, TranscriptionPreset] = {
    "openai": TranscriptionPreset("https://api.openai.com/v1", "whisper-1", "OPENAI_API_KEY"),
    "groq": TranscriptionPreset("https://api.groq.com/openai/v1", "whisper-large-v3-turbo",
                                "GROQ_API_KEY"),
}

TELEGRAM_DOWNLOAD_LIMIT = 20_000_000
"""Telegram bots download files of at most 20 MB (``getFile``)."""
UPLOAD_LIMIT = 25_000_000
"""OpenAI and Groq take uploads of at most 25 MB."""


class TranscriptionConfig(Section):
    """Speech to text for voice notes (Telegram voice and audio messages, Signal voice
    attachments)."""

    preset: Literal["openai", "groq"] | None = None
    """Fills base_url, model and the key's environment variable (OPENAI_API_KEY, GROQ_API_KEY)."""
    base_url: Annotated[str, AfterValidator(http_url)] = ""
    """``http://`` or ``https://``; empty: the preset's. A local whisper server:
    ``http://127.0.0.1:8000/v1``."""
    model: str = ""
    """Empty: the preset's (whisper-1, whisper-large-v3-turbo); required without a preset."""
    api_key: SecretStr | None = None
    """Empty: the preset's environment variable; a local server usually needs none."""
    language: Annotated[str, Field(pattern=r"^[A-Za-z]{2,3}$")] | None = None
    """The spoken language as ISO-639-1 (``de``, ``en``): more accurate and faster; unset: the
    service guesses."""
    max_bytes: int = Field(default=10_000_000, ge=1, le=UPLOAD_LIMIT)
    """Larger voice notes are refused without being downloaded (Telegram lets a bot download
    at most 20 MB; OpenAI and Groq take at most 25 MB)."""
    max_seconds: Seconds = Field(default=300.0, gt=0)
    """Longer voice notes are refused without being downloaded (where the chat says how long
    a note is before it is fetched: Telegram does, signal-cli does not)."""
    timeout_seconds: Seconds = Field(default=60.0, gt=0)
    """How long one transcription may take, upload included."""
    max_transcript_chars: int = Field(default=3800, ge=100, le=100_000)
    """A longer transcript is cut here, with a word saying so, before it is shown in the chat
    and given to the model (the default leaves room in one Telegram message, 4,096 characters,
    for the 🎤 and that word). Some 3 minutes of speech."""

    @model_validator(mode="after")
    def check(self) -> Self:
        if self.base_url and self.preset is None and not self.model.strip():
            raise ValueError("base_url names a transcription server but model is empty; set "
                             "model = \"...\" (its name there, e.g. \"Systran/faster-whisper-small\""
                             " on faster-whisper-server, anything on whisper.cpp's server)")
        return self

    @property
    def enabled(self) -> bool:
        """A preset or a base_url is set: voice notes are transcribed."""
        return bool(self.preset or self.base_url)

    @property
    def endpoint(self) -> str:
        """``base_url``, else the preset's (empty when neither is set)."""
        preset = TRANSCRIPTION_PRESETS.get(self.preset or "")
        return self.base_url or (preset.base_url if preset else "")

    @property
    def resolved_model(self) -> str:
        preset = TRANSCRIPTION_PRESETS.get(self.preset or "")
        return self.model.strip() or (preset.model if preset else "")

    @property
    def key_variable(self) -> str | None:
        preset = TRANSCRIPTION_PRESETS.get(self.preset or "")
        return preset.key_variable if preset else None
