"""Who a request to the web page is, and whether it may pass: the ``Host`` and ``Origin`` headers
(:class:`edge.mcp.server_hosts.HostRule`: DNS rebinding, other sites' pages), no credential in
a URL (a request with a query string is refused: the page never makes one), the session cookie
(strictly one well-formed ``edge_session`` token; an ``Authorization`` header of any kind, empty
or not, is refused: the page never sends one), the CSRF token on every state change, and the
rate limit on pairing attempts and refused sessions (per address, and for all together).

>>> session_token("edge_session=" + "a" * 43), session_token("edge_session="), session_token(None)
('aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa', None, None)
>>> session_token("edge_session=x; edge_session=y"), session_token("other=1; edge_session=" + "b" * 43)
(None, 'bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb')
"""

from __future__ import annotations

import hmac
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from edge.core.ratelimit import SlidingWindow

if TYPE_CHECKING:
    from edge.mcp.server_hosts import HostRule
    from edge.security.web_sessions import WebSession, WebSessions

COOKIE = "edge_session"
TOKEN = re.compile(r"[A-Za-z0-9_-]{43}")
"""A session token as :func:`secrets.token_urlsafe` (32 bytes) writes it."""
EVERYONE = "*"
ALL_PEERS_FACTOR = 4
"""All addresses together may make this many times one address's attempts."""


def header_map(raw: list[tuple[bytes, bytes]]) -> dict[str, str]:
    """An ASGI request's headers by lowercase name; a repeated one joined with ``,`` (a second
    ``Host`` is then no host, and refused).

    >>> header_map([(b"Host", b"a"), (b"host", b"b"), (b"x-a", b"1")])
    {'host': 'a,b', 'x-a': '1'}
    """
    headers: dict[str, str] = {}
    for name, value in raw:
        key, text = name.decode("latin-1").lower(), value.decode("latin-1")
        headers[key] = f"{headers[key]},{text}" if key in headers else text
    return headers


def session_token(cookie: str | None) -> str | None:
    """The one well-formed session token in a ``Cookie`` header; None when there is none, it is
    malformed, or there are two."""
    if not cookie:
        return None
    found = [part.strip()[len(COOKIE) + 1:] for part in cookie.split(";")
             if part.strip().startswith(f"{COOKIE}=")]
    if len(found) != 1 or not TOKEN.fullmatch(found[0]):
        return None
    return found[0]


@dataclass(frozen=True)
class Refusal:
    reason: str
    """As counted in the ``web_refused`` summary line."""
    status: int
    message: str


def refused(reason: str, status: int, message: str) -> Refusal:
    return Refusal(reason, status, message)


class WebGate:
    def __init__(self, hosts: HostRule, sessions: WebSessions, attempts_per_minute: int):
        self.hosts = hosts
        self.sessions = sessions
        self.limit = attempts_per_minute
        self.attempts = SlidingWindow(60.0)

    def request(self, headers: Mapping[str, str], query: bytes) -> Refusal | None:
        """Refusals any request meets before its path is looked at."""
        host, origin = headers.get("host"), headers.get("origin")
        if not self.hosts.host_ok(host):
            return refused("host", 421, "this Host is not the agent's own: a name that reaches it "
                           "on purpose goes in [web] allowed_hosts")
        if not self.hosts.origin_ok(origin, host):
            return refused("origin", 403, "a page from this Origin may not call the agent: one "
                           "that should goes in [web] allowed_origins")
        if query:
            return refused("query", 400, "the page takes nothing in its URL (never a credential)")
        if "authorization" in headers:
            return refused("authorization", 401, "the page's sessions are cookies: pair this "
                           "browser (edge-cli web pair); an Authorization header is never accepted")
        return None

    def limited(self, peer: str) -> Refusal | None:
        """429 once ``peer`` (or everyone) has used its pairing attempts and refused sessions."""
        if (self.attempts.count(peer) >= self.limit
                or self.attempts.count(EVERYONE) >= self.limit * ALL_PEERS_FACTOR):
            wait = max(self.attempts.wait(peer, self.limit), 1.0)
            return refused("rate", 429, f"too many attempts: try again in {wait:.0f} s")
        return None

    def attempt(self, peer: str) -> None:
        """Count a pairing attempt or a refused session of ``peer``."""
        self.attempts.take(peer, None)
        self.attempts.take(EVERYONE, None)

    def session(self, headers: Mapping[str, str], peer: str) -> WebSession | Refusal:
        """The session the cookie opens, or why not (each refusal counts as an attempt)."""
        cookie = headers.get("cookie")
        token = session_token(cookie)
        session = self.sessions.session_of(token) if token else None
        if session is not None:  # a paired browser is never locked out by strangers' guesses
            return session
        if limit := self.limited(peer):
            return limit
        if cookie is not None and COOKIE in cookie:
            self.attempt(peer)
            return refused("bad_session", 401, "this session is not (or no longer) paired: pair "
                           "the browser again (edge-cli web pair)")
        return refused("no_session", 401, "pair this browser first: run `edge-cli web pair` on "
                       "the agent's machine and enter the code")

    @staticmethod
    def csrf_ok(headers: Mapping[str, str], session: WebSession) -> bool:
        given = headers.get("x-csrf-token") or ""
        return hmac.compare_digest(given.encode(), session.csrf.encode())
