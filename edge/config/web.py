"""``[web]``: the greenhouse in a browser (:mod:`edge.web`), served by the agent.

Off by default. ``listen`` on loopback or a LAN address; every browser is paired with a one-time
code (``edge-cli web pair``) whatever the address, and gets a named session in a cookie.

>>> cfg = WebConfig(listen="0.0.0.0:8080")
>>> cfg.enabled, cfg.host, cfg.port
(True, '0.0.0.0', 8080)
>>> WebConfig().enabled
False
"""

from __future__ import annotations

from typing import Annotated

from pydantic import AfterValidator, Field

from edge.config.mcp import ListenAddress, _host_names, _known_listen, _origins
from edge.config.section import Seconds, Section


class WebConfig(ListenAddress, Section):
    listen: Annotated[str, AfterValidator(_known_listen)] = ""
    """``192.168.1.20:8080`` (or ``0.0.0.0:8080``, ``127.0.0.1:8080``): the agent serves its web
    page there; empty: off. Must differ from ``[mcp] listen``."""
    secure_cookie: bool = False
    """Mark the session cookie ``Secure``: set it when a TLS reverse proxy serves the page
    (``https://``); a plain-HTTP page would then never send it."""
    session_days: float = Field(default=90.0, gt=0)
    """A session unused for this long is forgotten; its browser has to pair again."""
    max_sessions: int = Field(default=32, ge=1)
    """Paired browsers kept at once; pairing one more forgets the one unused longest."""
    max_streams: int = Field(default=16, ge=1)
    """Open live streams (one per open page) at once; one more is answered 503."""
    pair_attempts_per_minute: int = Field(default=5, ge=1)
    """Pairing attempts and refused sessions one address may make per minute (all addresses
    together: four times this); beyond it 429 until the minute has passed."""
    chat: bool = True
    """The page's chat with the agent (a channel, through the same pipeline as Telegram); off,
    the page has no Chat tab, and an agent without other channels builds no chat pipeline."""
    chat_rate_limit_per_minute: int = Field(default=20, ge=1)
    """Chat messages one paired browser may send the agent per minute."""
    max_connections: int = Field(default=64, ge=1)
    """At most this many HTTP connections open at once (as ``[mcp] max_connections``)."""
    max_connections_per_peer: int = Field(default=16, ge=1)
    """At most this many from one address."""
    header_timeout_seconds: Seconds = Field(default=10.0, gt=0)
    """How long a connection may take to send a whole request head."""
    idle_timeout_seconds: Seconds = Field(default=30.0, ge=1)
    """How long a kept-alive connection may wait, silent, for its next request."""
    allowed_hosts: Annotated[list[str], AfterValidator(_host_names)] = []
    """Host names the ``Host`` header may carry besides an IP address, ``localhost`` and this
    machine's own name (a reverse proxy's name); any other is answered 421 (DNS rebinding)."""
    allowed_origins: Annotated[list[str], AfterValidator(_origins)] = []
    """Other origins a page may call from (a reverse proxy's ``https://pi.example.com``); any
    other cross-origin request is answered 403."""
