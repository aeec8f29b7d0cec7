"""Network checks, one cheap request each: the provider's model list, Telegram's ``getMe``,
signal-cli's ``/api/v1/check``. Secrets come from the merged raw config (file + environment)."""

from __future__ import annotations

from edge.doctor import Check

TIMEOUT_SECONDS = 10.0
TELEGRAM_API = "https://api.telegram.org"
ENV_FILE_HINT = "/etc/edge-agent/env for the service, the environment otherwise"


def _client(**kwargs):
    import httpx

    return httpx.Client(timeout=TIMEOUT_SECONDS, **kwargs)


def _describe(exc: Exception) -> str:
    return f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__


def check_provider(raw: dict, active: dict | None = None) -> Check:
    """Reach the provider and check its model; ``active`` (the running agent's ``model`` and
    ``base_url`` after ``edge-cli models use``) wins over the config's."""
    import httpx

    provider = raw.get("provider") or {}
    base_url, model = provider.get("base_url") or "", provider.get("model") or ""
    if active and active.get("model") and active.get("base_url"):
        sections = [provider, *(f for f in provider.get("fallbacks") or [] if isinstance(f, dict))]
        same = next((s for s in sections if s.get("base_url") == active["base_url"]), {})
        provider = {**provider, "api_key": same.get("api_key", provider.get("api_key"))}
        base_url, model = str(active["base_url"]), str(active["model"])
    if not (base_url and model):
        return Check("provider", "skip", "no provider configured (direct commands only)")
    url = base_url.rstrip("/") + "/models"
    headers = {"Authorization": f"Bearer {provider['api_key']}"} if provider.get("api_key") else {}
    try:
        with _client() as client:
            response = client.get(url, headers=headers)
    except httpx.HTTPError as exc:
        return Check("provider", "fail", f"cannot reach {url}: {_describe(exc)}",
                     "check [provider] base_url and the network (is the server running?)")
    if response.status_code in (401, 403):
        return Check("provider", "fail", f"{url} refused the API key (HTTP {response.status_code})",
                     f"set EDGE_PROVIDER__API_KEY in {ENV_FILE_HINT}")
    if response.status_code == 404:
        return Check("provider", "warn", f"{base_url} answers but has no /models endpoint; "
                     "the model name is not verified",
                     "check that base_url ends in /v1 for OpenAI-compatible servers")
    if response.status_code >= 400:
        return Check("provider", "fail", f"{url} answered HTTP {response.status_code}",
                     "check [provider] base_url; see the provider's status page")
    try:
        ids = {str(m.get("id")) for m in response.json().get("data", []) if isinstance(m, dict)}
    except (ValueError, AttributeError):
        ids = set()
    if ids and model not in ids:
        return Check("provider", "fail", f"{base_url} does not offer model {model!r}",
                     f"set [provider] model to one of: {', '.join(sorted(ids)[:8])}")
    return Check("provider", "ok", f"{base_url} reachable, model {model}")


def check_telegram(raw: dict) -> Check | None:
    import httpx

    table = (raw.get("channels") or {}).get("telegram")
    if not isinstance(table, dict) or table.get("enabled") is False:
        return None
    token = table.get("bot_token")
    if not token:
        return None  # the channel is enabled by its token
    base = (table.get("api_base") or TELEGRAM_API).rstrip("/")
    try:
        with _client() as client:
            response = client.get(f"{base}/bot{token}/getMe")
    except httpx.HTTPError as exc:
        return Check("telegram", "fail", f"cannot reach {base}: {_describe(exc)}",
                     "check the network, or channels.telegram.api_base")
    if response.status_code in (401, 404):
        return Check("telegram", "fail", f"the bot token was rejected (HTTP {response.status_code})",
                     "get the token again from @BotFather and set "
                     f"EDGE_CHANNELS__TELEGRAM__BOT_TOKEN in {ENV_FILE_HINT}")
    try:
        body = response.json()
    except ValueError:
        body = {}
    if response.status_code != 200 or not body.get("ok"):
        return Check("telegram", "fail", f"getMe answered HTTP {response.status_code}: "
                     f"{body.get('description', 'no description')}",
                     "check channels.telegram.api_base and try again later")
    return Check("telegram", "ok", f"token valid for @{body['result'].get('username', '?')}")


def check_signal(raw: dict) -> Check | None:
    import httpx

    table = (raw.get("channels") or {}).get("signal")
    if not isinstance(table, dict) or table.get("enabled") is False:
        return None
    url = table.get("http_url")
    if not url:
        return None  # the channel is enabled by http_url and account
    check_url = url.rstrip("/") + "/api/v1/check"
    try:
        with _client() as client:
            response = client.get(check_url)
    except httpx.HTTPError as exc:
        return Check("signal", "fail", f"cannot reach signal-cli at {url}: {_describe(exc)}",
                     "start it: signal-cli -a ACCOUNT daemon --http 127.0.0.1:8080 "
                     "(see the README's Signal section)")
    if response.status_code != 200:
        return Check("signal", "fail", f"{check_url} answered HTTP {response.status_code}",
                     "is that URL a signal-cli daemon in HTTP mode (--http)?")
    return Check("signal", "ok", f"signal-cli daemon answers at {url}")


def check_channels(raw: dict) -> list[Check]:
    found = [c for c in (check_telegram(raw), check_signal(raw)) if c is not None]
    return found or [Check("channels", "skip", "no network channel configured (telegram, signal)")]
