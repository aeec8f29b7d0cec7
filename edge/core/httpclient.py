"""httpx clients made one way. TLS trust (the CA bundle, ~60 ms to load on every
``httpx.AsyncClient()``) is built once per process and shared; a client for a plain-HTTP
endpoint (Ollama on the LAN, signal-cli on 127.0.0.1) gets none, since it never negotiates TLS
(redirects are not followed, so it cannot be sent to an https URL)."""

from __future__ import annotations

import functools
import ssl
from typing import Any
from urllib.parse import urlsplit

import httpx


@functools.cache
def shared_tls_context() -> ssl.SSLContext:
    return httpx.create_ssl_context()


def async_client(endpoint: str, **kwargs: Any) -> httpx.AsyncClient:
    """An AsyncClient for talking to ``endpoint`` (a URL); other arguments go to httpx."""
    plain = endpoint.lower().startswith("http://")
    return httpx.AsyncClient(verify=False if plain else shared_tls_context(), **kwargs)


def normalise_base_url(base_url: str) -> str:
    """An OpenAI-compatible base URL as the API paths expect it: no trailing slash, and ``/v1``
    when it names only a host (``http://127.0.0.1:11434`` -> ``http://127.0.0.1:11434/v1``)."""
    url = base_url.rstrip("/")
    if urlsplit(url).path in ("", "/"):
        url += "/v1"
    return url
