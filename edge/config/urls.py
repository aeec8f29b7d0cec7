"""Checks of the URLs a config names, on a floor below every section that names one (the model
endpoints, ``[transcription]``), so each reuses the one check and says the same words.

>>> http_url("http://127.0.0.1:8000/v1")
'http://127.0.0.1:8000/v1'
>>> try:
...     http_url("127.0.0.1:8000")
... except ValueError as exc:
...     print(str(exc).split(";")[0])
must start with http:// or https:// (got '127.0.0.1:8000')
"""

from __future__ import annotations

import ipaddress
from urllib.parse import urlsplit


def http_url(value: str) -> str:
    """A base URL httpx can open: ``http://`` or ``https://`` and a host (empty: not set)."""
    if not value:
        return value
    parts = urlsplit(value.strip())
    if parts.scheme.lower() not in ("http", "https"):
        bare = value.strip().split("://", 1)[-1]
        raise ValueError(f"must start with http:// or https:// (got {value!r}); write "
                         f"\"http://{bare}\" for a server on your network, https:// for a service")
    if not parts.hostname:
        raise ValueError(f"names no host (got {value!r}); write it as \"http://HOST:PORT/v1\"")
    return value


def on_local_network(url: str) -> bool:
    """Whether ``url``'s host is this machine or the LAN (loopback, a private or link-local
    address, ``localhost``, a ``.local`` or ``.lan`` name): a model served nearby.

    >>> [on_local_network(u) for u in ("http://127.0.0.1:8080/v1", "http://192.168.1.20:11434",
    ...  "http://pi5.local:8080", "https://api.openai.com/v1")]
    [True, True, True, False]
    """
    host = (urlsplit(url).hostname or "").lower()
    if host == "localhost" or host.endswith((".local", ".lan", ".home.arpa")):
        return True
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return False
    return address.is_loopback or address.is_private or address.is_link_local
