"""A thin async client for the Telegram Bot API (``POST {api_base}/bot<token>/<method>``).

Errors keep the API's own fields: ``error_code``, ``description`` and ``parameters.retry_after``.
The token never appears in messages or logs.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path

import httpx

from edge.httpclient import async_client

log = logging.getLogger(__name__)


class TelegramError(Exception):
    def __init__(self, method: str, code: int, description: str, retry_after: float | None = None):
        super().__init__(f"telegram {method}: {code} {description}")
        self.method = method
        self.code = code
        self.description = description
        self.retry_after = retry_after

    @property
    def markdown_rejected(self) -> bool:
        return self.code == 400 and "can't parse entities" in self.description.lower()


class TelegramNetworkError(Exception):
    """The Bot API could not be reached (connection, timeout, a dropped long poll)."""


class TelegramAPI:
    def __init__(self, token: str, api_base: str = "https://api.telegram.org",
                 timeout: float = 15.0):
        self._base = f"{api_base.rstrip('/')}/bot{token}/"
        self._client = async_client(api_base, timeout=timeout)

    async def call(self, method: str, params: dict | None = None, *, timeout: float | None = None,
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
        if not body.get("ok"):
            retry = (body.get("parameters") or {}).get("retry_after")
            raise TelegramError(method, int(body.get("error_code", response.status_code)),
                                str(body.get("description", "")), retry)
        return body.get("result")

    async def aclose(self) -> None:
        await self._client.aclose()
