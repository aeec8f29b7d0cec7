"""Network checks, one cheap request each: the provider's model list, and each network channel's
service as its spec checks it (Telegram's ``getMe``, signal-cli's ``/api/v1/check``). Secrets
come from the merged raw config (file + environment)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from edge.doctor import Check

if TYPE_CHECKING:
    import httpx

TIMEOUT_SECONDS = 10.0
ENV_FILE_HINT = "/etc/edge-agent/env for the service, the environment otherwise"


def _client(**kwargs: Any) -> httpx.Client:
    import httpx

    return httpx.Client(timeout=TIMEOUT_SECONDS, **kwargs)


def _describe(exc: Exception) -> str:
    return f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__


def check_provider(raw: dict[str, Any], active: dict[str, Any] | None = None) -> Check:
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


def check_channels(raw: dict[str, Any]) -> list[Check]:
    """Each network channel's service, as its spec checks it (:mod:`edge.channels.probes`)."""
    from edge.channels.registry import CHANNELS

    tables = raw.get("channels") or {}
    found = []
    for spec in CHANNELS.values():
        table = tables.get(spec.name)
        if spec.check is None or not isinstance(table, dict):
            continue
        if (result := spec.check(table)) is not None:
            found.append(Check(spec.name, result.status, result.detail, result.fix))
    checked = ", ".join(spec.name for spec in CHANNELS.values() if spec.check is not None)
    return found or [Check("channels", "skip", f"no network channel configured ({checked})")]
