"""Speech to text over an OpenAI-compatible ``POST {base_url}/audio/transcriptions`` endpoint
(OpenAI, Groq, a local whisper server), configured by ``[transcription]``.

The request is the API's multipart form: ``file``, ``model``, ``response_format=json`` and, when
configured, ``language``; the answer is ``{"text": ...}``. The file is uploaded from disk as it
is read, never held whole in memory. Whatever goes wrong becomes one
:class:`TranscriptionError` whose message a person can act on (a refused key, a file too large,
a service too slow) and never carries the key.

>>> from edge.config.transcription import TranscriptionConfig
>>> groq = Transcriber.from_config(TranscriptionConfig(preset="groq"), env={})
>>> groq.over_limits(size=30_000_000, seconds=12)
'That voice note is 30 MB; voice notes of up to 10 MB are transcribed ([transcription] max_bytes).'
>>> groq.over_limits(size=None, seconds=600) is not None, groq.over_limits(size=1000, seconds=5)
(True, None)
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Mapping
from pathlib import Path

import httpx

from edge.config.transcription import TranscriptionConfig
from edge.core.exc import EdgeError
from edge.core.httpclient import async_client, normalise_base_url

log = logging.getLogger(__name__)

ERROR_TEXT_LIMIT = 200
"""Characters of a service's own error message kept in ours."""


class TranscriptionError(EdgeError):
    """A voice note could not be transcribed; the message says why and what to do."""


def _megabytes(size: int) -> str:
    return f"{size / 1_000_000:.3g} MB"


def _seconds(seconds: float) -> str:
    return f"{seconds / 60:.3g} minutes" if seconds >= 120 else f"{seconds:.0f} s"


class Transcriber:
    """One transcription endpoint and its limits. A client per transcription (voice notes are
    rare; the TLS trust it needs is built once per process), so nothing needs closing."""

    def __init__(self, base_url: str, model: str, api_key: str | None = None, *,
                 language: str | None = None, max_bytes: int = 10_000_000,
                 max_seconds: float = 300.0, timeout: float = 60.0,
                 transport: httpx.AsyncBaseTransport | None = None):
        self.base_url = normalise_base_url(base_url)
        self.model = model
        self.language = language
        self.max_bytes = max_bytes
        self.max_seconds = max_seconds
        self.timeout = timeout
        self._api_key = api_key
        self._transport = transport

    @classmethod
    def from_config(cls, config: TranscriptionConfig,
                    env: Mapping[str, str] = os.environ) -> Transcriber:
        """The section's endpoint, model and limits; the key is ``api_key`` or else the
        preset's environment variable (never the model's key: that is another service's)."""
        key = config.api_key.get_secret_value() if config.api_key else ""
        if not key and config.key_variable:
            key = env.get(config.key_variable, "").strip()
        return cls(config.endpoint, config.resolved_model, key or None, language=config.language,
                   max_bytes=config.max_bytes, max_seconds=config.max_seconds,
                   timeout=config.timeout_seconds)

    def over_limits(self, size: int | None, seconds: float | None) -> str | None:
        """The one line that refuses a voice note of ``size`` bytes lasting ``seconds`` (either
        unknown: None), or None when it is within the limits."""
        if size is not None and size > self.max_bytes:
            return (f"That voice note is {_megabytes(size)}; voice notes of up to "
                    f"{_megabytes(self.max_bytes)} are transcribed ([transcription] max_bytes).")
        if seconds is not None and seconds > self.max_seconds:
            return (f"That voice note lasts {_seconds(seconds)}; voice notes of up to "
                    f"{_seconds(self.max_seconds)} are transcribed ([transcription] max_seconds).")
        return None

    async def transcribe(self, audio: Path, filename: str, content_type: str) -> str:
        """The text spoken in the file ``audio`` (stripped; empty when nothing was said),
        uploaded under ``filename``."""
        form = {"model": self.model, "response_format": "json"}
        if self.language:
            form["language"] = self.language
        headers = {"Authorization": f"Bearer {self._api_key}"} if self._api_key else {}
        started = time.monotonic()
        try:
            # httpx reads an open file in 64 KiB chunks as it sends them (a few reads from the
            # page cache: not worth a thread each)
            with audio.open("rb") as upload:
                size = os.fstat(upload.fileno()).st_size
                async with async_client(self.base_url, timeout=self.timeout,
                                        transport=self._transport) as client:
                    response = await client.post(f"{self.base_url}/audio/transcriptions",
                                                 data=form, headers=headers,
                                                 files={"file": (filename, upload, content_type)})
        except OSError as exc:
            raise TranscriptionError(f"The voice note's file could not be read ({exc.strerror}); "
                                     "check the state directory's voice/ folder.") from None
        except httpx.TimeoutException:
            raise TranscriptionError(
                f"The transcription service did not answer within {self.timeout:g} s; try again, "
                "or raise [transcription] timeout_seconds.") from None
        except httpx.HTTPError as exc:
            raise TranscriptionError(
                f"The transcription service at {self.base_url} could not be reached "
                f"({type(exc).__name__}); check [transcription] base_url.") from None
        if response.status_code != 200:
            raise TranscriptionError(self._refusal(response))
        try:
            body = response.json()
            text = body["text"]
        except (ValueError, KeyError, TypeError):
            raise TranscriptionError("The transcription service answered without a transcript "
                                     "(no JSON \"text\"); is base_url an OpenAI-compatible "
                                     "/audio/transcriptions endpoint?") from None
        if not isinstance(text, str):
            raise TranscriptionError("The transcription service's \"text\" is not text.")
        log.info("transcribed bytes=%d chars=%d seconds=%.2f model=%s", size, len(text),
                 time.monotonic() - started, self.model)
        return text.strip()

    def _refusal(self, response: httpx.Response) -> str:
        """What a non-200 answer means for the person who sent the voice note."""
        code = response.status_code
        if code in (401, 403):
            return (f"The transcription service refused the key ({code}); check [transcription] "
                    "api_key (or the preset's GROQ_API_KEY / OPENAI_API_KEY).")
        if code == 413:
            return (f"The transcription service found the voice note too large ({code}); lower "
                    "[transcription] max_bytes to what it takes.")
        if code == 429:
            return (f"The transcription service is rate-limiting us ({code}); try again in a "
                    "minute.")
        return f"The transcription service answered {code}: {self._service_words(response)}"

    def _service_words(self, response: httpx.Response) -> str:
        """The service's own error message (OpenAI's ``error.message``), short, without the key."""
        try:
            body = response.json()
            error = body.get("error") if isinstance(body, dict) else None
            words = str(error.get("message") if isinstance(error, dict) else error or body)
        except ValueError:
            words = response.text
        words = " ".join(words.split())[:ERROR_TEXT_LIMIT] or response.reason_phrase
        return words.replace(self._api_key, "***") if self._api_key else words
