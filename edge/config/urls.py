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
