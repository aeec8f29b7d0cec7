"""Which ``Host`` and ``Origin`` headers a request to one of the agent's HTTP servers may carry
(the MCP server, :mod:`edge.mcp.server_http`, and the web page, :mod:`edge.web.server`): the
defence against DNS rebinding and against pages of other sites. No SDK is imported here.
"""

from __future__ import annotations

import ipaddress
import re
import socket
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from edge.config.mcp import is_loopback

if TYPE_CHECKING:
    from edge.config.mcp import McpConfig
    from edge.config.web import WebConfig

NOT_IN_A_HOST = re.compile(r"[@/?#\\\s]")


def host_name(value: str | None) -> str | None:
    """The name in a ``Host`` header (or an origin's host), lowercase, without port or brackets;
    None when there is none.

    >>> host_name("Pi.Local:8765"), host_name("[::1]:8765"), host_name("bad:port"), host_name("")
    ('pi.local', '::1', None, None)
    >>> host_name("evil.example@127.0.0.1")  # no user, path or query: a host and a port only
    """
    if not value or NOT_IN_A_HOST.search(value):
        return None
    try:
        parts = urlsplit(f"//{value}")
        parts.port  # noqa: B018 (a port that is no number is no host)
    except ValueError:
        return None
    return parts.hostname or None


def is_address(name: str) -> bool:
    try:
        ipaddress.ip_address(name)
    except ValueError:
        return False
    return True


class HostRule:
    """Which ``Host`` and ``Origin`` headers a request may carry, for every listen address.

    DNS rebinding is a web page whose own name (``evil.example``) is made to point at this
    agent: the browser then sends ``Host: evil.example``. So a ``Host`` is accepted when it is an
    IP address (no name, nothing to rebind), ``localhost``, this machine's own name, the name
    ``listen`` gives, or one of its section's ``allowed_hosts``. An ``Origin`` (sent by browsers only) is
    accepted when the page is on this machine (``localhost``, a loopback address), on the host it
    calls, or one of its ``allowed_origins``.

    >>> from edge.config.mcp import McpConfig
    >>> rule = HostRule(McpConfig(listen="127.0.0.2:8765"), machine="pi")
    >>> [rule.host_ok(h) for h in ("127.0.0.2:8765", "localhost:8765", "pi.local", "evil.example:8765")]
    [True, True, True, False]
    >>> [rule.origin_ok(o, "127.0.0.2:8765") for o in (None, "http://localhost:6274",
    ...                                                 "http://127.0.0.2:8765", "http://evil.example", "null")]
    [True, True, True, False, False]
    """

    def __init__(self, config: McpConfig | WebConfig, machine: str | None = None, *,
                 local_pages: bool = True):
        self.local_pages = local_pages
        """Pages on this machine may call (an MCP inspector on localhost); the web page's server
        says False: only its own origin, and ``allowed_origins``."""
        machine = (machine if machine is not None else socket.gethostname()).lower()
        self.names = {"localhost", machine, f"{machine}.local", *config.allowed_hosts}
        if config.listen:
            self.names.add(config.host.lower())  # a name given as the listen address
        self.origins = frozenset(config.allowed_origins)

    def host_ok(self, host: str | None) -> bool:
        name = host_name(host)
        return name is not None and (name in self.names or is_address(name))

    def origin_ok(self, origin: str | None, host: str | None) -> bool:
        if origin is None:
            return True  # not a browser
        parts = urlsplit(origin)
        name = host_name(parts.netloc)
        if parts.scheme not in ("http", "https") or name is None:
            return False  # "null": a sandboxed frame or a file
        return (origin.rstrip("/").lower() in self.origins or (self.local_pages and is_loopback(name))
                or (host is not None and parts.netloc.lower() == host.lower()))
