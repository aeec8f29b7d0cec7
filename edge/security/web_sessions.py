"""The browsers paired with the web page: named sessions and one-time pairing codes, kept in
``<state_dir>/web-sessions.json`` (mode 0600), hashed (a stolen file opens no session).

A code is issued by ``edge-cli web pair`` (the control socket's ``web.pair``, the local
operator's) or an admin's ``/web`` in chat, for a role and a session name; it is valid for 10
minutes and pairs one browser. The browser then holds a random token in an HttpOnly cookie; the
page's state changes also carry the session's CSRF token, which only a page of the agent's own
origin can read.

>>> import tempfile, pathlib
>>> store = WebSessions(pathlib.Path(tempfile.mkdtemp()) / "web-sessions.json")
>>> issued = store.issue("operator", "phone")
>>> session, token = store.redeem(issued.code)
>>> (session.name, session.role), store.session_of(token).name, store.redeem(issued.code)
(('phone', 'operator'), 'phone', None)
>>> store.revoke("phone"), store.session_of(token)
(True, None)
"""

from __future__ import annotations

import hashlib
import hmac
import re
import secrets
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from edge.core.files import write_json_atomically

SESSIONS_FILE = "web-sessions.json"
CODE_TTL_SECONDS = 600
CODE_ALPHABET = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789"
CODE_LENGTH = 8
CODES_KEPT = 3
ROLES = ("viewer", "operator", "admin")
"""Each may do what the one before it may: view; switch outputs; approve and make outputs safe."""
SESSION_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_-]{0,31}")
TOUCH_SECONDS = 3600.0
"""A session's ``last_seen`` is written to the file at most this often."""


def digest(secret: str) -> str:
    return hashlib.sha256(secret.encode()).hexdigest()


@dataclass
class WebSession:
    name: str
    role: str
    token_hash: str
    csrf: str
    created: float
    last_seen: float

    def may(self, role: str) -> bool:
        """True when this session's role is ``role`` or above it."""
        return ROLES.index(self.role) >= ROLES.index(role)

    def row(self) -> dict[str, Any]:
        return {"name": self.name, "role": self.role, "created": self.created,
                "last_seen": self.last_seen}


@dataclass
class IssuedCode:
    code: str
    name: str
    role: str
    expires: float


class WebSessions:
    def __init__(self, path: Path, max_sessions: int = 32, session_days: float = 90.0):
        self.path = path
        self.max_sessions = max_sessions
        self.max_age = session_days * 86400
        self._codes: list[dict[str, Any]] = []
        self._sessions: dict[str, WebSession] = {}
        self._seen: tuple[int, int] | None = None

    @classmethod
    def in_state_dir(cls, state_dir: Path, max_sessions: int = 32,
                     session_days: float = 90.0) -> WebSessions:
        return cls(state_dir / SESSIONS_FILE, max_sessions, session_days)

    # the file: read again whenever another process (the CLI with no agent) has written it -----

    def _load(self) -> None:
        try:
            stat = self.path.stat()
        except FileNotFoundError:
            self._codes, self._sessions, self._seen = [], {}, None
            return
        if self._seen == (stat.st_mtime_ns, stat.st_size):
            return
        import json

        try:
            data = json.loads(self.path.read_text())
            self._codes = [c for c in data.get("codes", []) if isinstance(c, dict)]
            self._sessions = {s["name"]: WebSession(**s) for s in data.get("sessions", [])}
        except (ValueError, TypeError, KeyError):
            self._codes, self._sessions = [], {}  # a damaged file pairs nobody; a new code mends it
        self._seen = (stat.st_mtime_ns, stat.st_size)

    def _save(self) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        write_json_atomically(self.path, {"codes": self._codes,
                                          "sessions": [asdict(s) for s in self._sessions.values()]})
        stat = self.path.stat()
        self._seen = (stat.st_mtime_ns, stat.st_size)

    def _prune(self, now: float) -> None:
        self._codes = [c for c in self._codes if c.get("expires", 0) > now]
        self._sessions = {n: s for n, s in self._sessions.items() if now - s.last_seen < self.max_age}

    # pairing --------------------------------------------------------------------------------------

    def issue(self, role: str, name: str | None = None) -> IssuedCode:
        """A one-time code pairing one browser as ``role``, named ``name`` (``browser-N`` when
        None). A ValueError for an unknown role or a name that is not a word."""
        if role not in ROLES:
            raise ValueError(f"role must be one of {', '.join(ROLES)}, not {role!r}")
        if name is not None and not SESSION_NAME.fullmatch(name):
            raise ValueError(f"session name {name!r}: a letter, then up to 31 letters, digits, "
                             "'_' or '-'")
        now = time.time()
        self._load()
        self._prune(now)
        taken = set(self._sessions) | {c["name"] for c in self._codes}
        if name is None:
            name = next(f"browser-{n}" for n in range(1, len(taken) + 2) if f"browser-{n}" not in taken)
        code = "".join(secrets.choice(CODE_ALPHABET) for _ in range(CODE_LENGTH))
        issued = IssuedCode(code, name, role, now + CODE_TTL_SECONDS)
        self._codes = [c for c in self._codes if c["name"] != name][-(CODES_KEPT - 1):]
        self._codes.append({"hash": digest(code), "name": name, "role": role, "expires": issued.expires})
        self._save()
        return issued

    def redeem(self, code: str) -> tuple[WebSession, str] | None:
        """The new session and its token for a current code (which is then spent); None for any
        other. Each stored code is compared in constant time."""
        now = time.time()
        self._load()
        self._prune(now)
        offered = digest(code.strip().upper()).encode()
        match = None
        for entry in self._codes:
            if hmac.compare_digest(offered, str(entry.get("hash", "")).encode()):
                match = entry
        if match is None:
            return None
        self._codes.remove(match)
        token = secrets.token_urlsafe(32)
        session = WebSession(match["name"], match["role"], digest(token), secrets.token_urlsafe(24),
                             now, now)
        self._sessions[session.name] = session
        while len(self._sessions) > self.max_sessions:
            oldest = min(self._sessions.values(), key=lambda s: s.last_seen)
            del self._sessions[oldest.name]
        self._save()
        return session, token

    # sessions -------------------------------------------------------------------------------------

    def session_of(self, token: str) -> WebSession | None:
        """The session a cookie's token opens, or None."""
        self._load()
        offered = digest(token).encode()
        found = None
        for session in self._sessions.values():
            if hmac.compare_digest(offered, session.token_hash.encode()):
                found = session
        now = time.time()
        if found is None or now - found.last_seen >= self.max_age:
            return None
        if now - found.last_seen >= TOUCH_SECONDS:
            found.last_seen = now
            self._save()
        return found

    def session_of_name(self, name: str) -> WebSession | None:
        """The session ``name`` while it is paired (an open stream ends once it is not)."""
        self._load()
        return self._sessions.get(name)

    def sessions(self) -> list[WebSession]:
        self._load()
        self._prune(time.time())
        return sorted(self._sessions.values(), key=lambda s: s.created)

    def revoke(self, name: str) -> bool:
        """Forget the session ``name`` (its browser is refused from its next request)."""
        self._load()
        if self._sessions.pop(name, None) is None:
            return False
        self._save()
        return True


