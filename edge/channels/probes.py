"""``edge-cli doctor``'s one cheap request to the service each network channel talks to:
Telegram's ``getMe``, signal-cli's ``/api/v1/check``. Each reads the channel's raw table (the file
and the environment merged, so secrets from either) and returns None when the table does not
enable the channel. httpx loads on the first request.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from edge.channels.spec import ServiceCheck

TIMEOUT_SECONDS = 10.0
TELEGRAM_API = "https://api.telegram.org"
ENV_FILE_HINT = "/etc/edge-agent/env for the service, the environment otherwise"


def _describe(exc: Exception) -> str:
    return f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__


def check_telegram(table: Mapping[str, Any]) -> ServiceCheck | None:
    import httpx

    if table.get("enabled") is False:
        return None
    token = table.get("bot_token")
    if not token:
        return None  # the channel is enabled by its token
    base = (table.get("api_base") or TELEGRAM_API).rstrip("/")
    try:
        with httpx.Client(timeout=TIMEOUT_SECONDS) as client:
            response = client.get(f"{base}/bot{token}/getMe")
    except httpx.HTTPError as exc:
        return ServiceCheck("fail", f"cannot reach {base}: {_describe(exc)}",
                            "check the network, or channels.telegram.api_base")
    if response.status_code in (401, 404):
        return ServiceCheck("fail", f"the bot token was rejected (HTTP {response.status_code})",
                            "get the token again from @BotFather and set "
                            f"EDGE_CHANNELS__TELEGRAM__BOT_TOKEN in {ENV_FILE_HINT}")
    try:
        body = response.json()
    except ValueError:
        body = {}
    if response.status_code != 200 or not body.get("ok"):
        return ServiceCheck("fail", f"getMe answered HTTP {response.status_code}: "
                            f"{body.get('description', 'no description')}",
                            "check channels.telegram.api_base and try again later")
    return ServiceCheck("ok", f"token valid for @{body['result'].get('username', '?')}")


def check_signal(table: Mapping[str, Any]) -> ServiceCheck | None:
    import httpx

    if table.get("enabled") is False:
        return None
    url = table.get("http_url")
    if not url:
        return None  # the channel is enabled by http_url and account
    check_url = url.rstrip("/") + "/api/v1/check"
    try:
        with httpx.Client(timeout=TIMEOUT_SECONDS) as client:
            response = client.get(check_url)
    except httpx.HTTPError as exc:
        return ServiceCheck("fail", f"cannot reach signal-cli at {url}: {_describe(exc)}",
                            "start it: signal-cli -a ACCOUNT daemon --http 127.0.0.1:8080 "
                            "(see the manual's docs/how-to/channels.md)")
    if response.status_code != 200:
        return ServiceCheck("fail", f"{check_url} answered HTTP {response.status_code}",
                            "is that URL a signal-cli daemon in HTTP mode (--http)?")
    return ServiceCheck("ok", f"signal-cli daemon answers at {url}")
