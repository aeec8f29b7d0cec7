"""A thin async client for the Telegram Bot API (``POST {api_base}/bot<token>/<method>``).

Errors keep the API's own fields: ``error_code``, ``description`` and ``parameters.retry_after``.
The token never appears in messages or logs. :class:`ChatPacing` keeps Telegram's per-chat flood
limit (429 ``retry_after``) to the chat that hit it.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import quote

import httpx

from edge.core.exc import EdgeError
from edge.core.files import create_private
from edge.core.httpclient import async_client

log = logging.getLogger(__name__)


class TelegramError(EdgeError):
    def __init__(self, method: str, code: int, description: str, retry_after: float | None = None):
        super().__init__(f"telegram {method}: {code} {description}")
        self.method = method
        self.code = code
        self.description = description
        self.retry_after = retry_after

    @property
    def markdown_rejected(self) -> bool:
        return self.code == 400 and "can't parse entities" in self.description.lower()

    @property
    def not_modified(self) -> bool:
        """An edit to the text the message already has: the message says what it should."""
        return self.code == 400 and "message is not modified" in self.description.lower()


class TelegramNetworkError(EdgeError):
    """The Bot API could not be reached (connection, timeout, a dropped long poll)."""


class TelegramAPI:
    def __init__(self, token: str, api_base: str = "https://api.telegram.org",
                 timeout: float = 15.0):
        self._base = f"{api_base.rstrip('/')}/bot{token}/"
        self._files = f"{api_base.rstrip('/')}/file/bot{token}/"
        self._client = async_client(api_base, timeout=timeout)

    async def call(self, method: str, params: dict[str, Any] | None = None, *, timeout: float | None = None,
                   files: dict[str, Path] | None = None) -> object:
        try:
            if files:
                data = {k: v if isinstance(v, str) else json.dumps(v) for k, v in (params or {}).items()}
                handles = {name: (path.name, path.read_bytes()) for name, path in files.items()}
                response = await self._client.post(self._base + method, data=data, files=handles,
                                                   timeout=timeout or httpx.USE_CLIENT_DEFAULT)
            else:
                response = await self._client.post(self._base + method, json=params or {},
                                                   timeout=timeout or httpx.USE_CLIENT_DEFAULT)
        except httpx.HTTPError as exc:
            raise TelegramNetworkError(f"telegram {method}: {type(exc).__name__}") from None
        try:
            body = response.json()
        except ValueError:
            raise TelegramError(method, response.status_code, "response is not JSON") from None
        if not isinstance(body, dict):
            raise TelegramError(method, response.status_code, "response is not an object")
        if not body.get("ok"):
            parameters = body.get("parameters")
            retry = parameters.get("retry_after") if isinstance(parameters, dict) else None
            code = body.get("error_code")
            raise TelegramError(method, code if isinstance(code, int) else response.status_code,
                                str(body.get("description", ""))[:200],
                                float(retry) if isinstance(retry, (int, float)) else None)
        return body.get("result")

    async def download(self, file_path: str, into: Path, max_bytes: int) -> None:
        """The file ``getFile`` answered with ``file_path`` for
        (``{api_base}/file/bot<token>/<file_path>``), written as it streams in to the new file
        ``into`` (mode 0600), up to ``max_bytes``: a larger one is a :class:`TelegramError` 413,
        and the rest of it is not read (the part written stays for the caller to remove)."""
        size = 0
        try:
            async with self._client.stream("GET", self._files + quote(file_path, safe="/")) as response:
                if response.status_code != 200:
                    raise TelegramError("download", response.status_code, "the file was not served")
                with os.fdopen(create_private(into), "wb") as out:
                    async for chunk in response.aiter_bytes():
                        size += len(chunk)
                        if size > max_bytes:
                            raise TelegramError("download", 413,
                                                f"the file is larger than {max_bytes} bytes")
                        await asyncio.to_thread(out.write, chunk)
        except httpx.HTTPError as exc:
            raise TelegramNetworkError(f"telegram download: {type(exc).__name__}") from None

    async def aclose(self) -> None:
        await self._client.aclose()


MAX_CHAT_HOLD_SECONDS = 60.0
"""A ``retry_after`` longer than this is not waited out inside one send: the send fails."""


class ChatPacing:
    """Per-chat holds after a 429 ``retry_after``: sends to that chat wait (or, when they are
    best-effort, are dropped); other chats and the poll loop are not delayed.

    >>> now = [0.0]
    >>> pacing = ChatPacing(clock=lambda: now[0])
    >>> pacing.hold("7", 3); pacing.remaining("7"), pacing.remaining("42")
    (3.0, 0.0)
    >>> now[0] = 5.0; pacing.remaining("7")
    0.0
    """

    def __init__(self, clock: Callable[[], float] = time.monotonic):
        self._clock = clock
        self._until: dict[str, float] = {}

    def hold(self, chat_id: str, seconds: float) -> None:
        now = self._clock()
        for chat in [c for c, until in self._until.items() if until <= now]:
            del self._until[chat]  # forget expired holds: strangers cannot grow this
        self._until[chat_id] = max(self._until.get(chat_id, 0.0), now + max(seconds, 0.0))

    def remaining(self, chat_id: str) -> float:
        return max(0.0, self._until.get(chat_id, 0.0) - self._clock())

    async def wait(self, chat_id: str) -> None:
        while (delay := self.remaining(chat_id)) > 0:
            await asyncio.sleep(delay)
