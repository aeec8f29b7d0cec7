"""The web page's HTTP application (plain ASGI, served by uvicorn: no framework, no MCP SDK).

Routes: the page's own files (``/``, and each file of ``edge/web/page`` by its name: a table
made once at start, so no request path ever reaches the file system); ``POST /api/pair`` (a
one-time code for a session cookie); ``GET /api/session`` (who this browser is, and its CSRF
token); ``POST /api/op`` (an operation of the catalog, by role: :mod:`edge.web.door`);
``POST /api/safe-state`` (an admin's); ``GET /api/approvals`` (waiting now) and
``POST /api/approve`` (an admin's: approve or deny); ``POST /api/chat`` (a message to the
agent: :mod:`edge.channels.web`);
``POST /api/logout``; ``GET /api/events`` (server-sent
events: every output change and board report, as it happens: :mod:`edge.web.events`).

Every answer carries a Content-Security-Policy without inline script, and the API's are never
cached. A refusal is counted in the server's :class:`~edge.mcp.server_connections.RefusalLog`.
"""

from __future__ import annotations

import asyncio
import gzip
import json
import logging
from importlib import resources
from typing import TYPE_CHECKING, Any

from edge.security.web_sessions import WebSession
from edge.web import door
from edge.web.gate import COOKIE, Refusal, WebGate, header_map, refused

if TYPE_CHECKING:
    from collections.abc import Mapping

    from starlette.types import Receive, Scope, Send

    from edge.mcp.server_connections import RefusalLog
    from edge.ops.result import OpTarget
    from edge.security.approvals import ApprovalGate
    from edge.web.events import EventStreams

log = logging.getLogger(__name__)

MAX_BODY = 16384
MAX_CHAT = 4000
CSP = ("default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
       "connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'")
SECURITY_HEADERS = [(b"content-security-policy", CSP.encode()),
                    (b"x-content-type-options", b"nosniff"), (b"referrer-policy", b"no-referrer"),
                    (b"x-frame-options", b"DENY"), (b"cross-origin-opener-policy", b"same-origin"),
                    (b"cross-origin-resource-policy", b"same-origin")]
TYPES = {".html": "text/html; charset=utf-8", ".js": "text/javascript; charset=utf-8",
         ".css": "text/css; charset=utf-8", ".svg": "image/svg+xml", ".png": "image/png"}


class PageFiles:
    """The page's files, read once: path -> (content type, bytes, gzipped bytes)."""

    def __init__(self) -> None:
        self.files: dict[str, tuple[str, bytes, bytes]] = {}
        for item in resources.files("edge.web").joinpath("page").iterdir():
            suffix = "." + item.name.rpartition(".")[2]
            if item.is_file() and suffix in TYPES:
                body = item.read_bytes()
                self.files[f"/{item.name}"] = (TYPES[suffix], body, gzip.compress(body, 9, mtime=0))
        self.files["/"] = self.files["/index.html"]


class WebApp:
    def __init__(self, target: OpTarget, gate: WebGate, streams: EventStreams, refusals: RefusalLog,
                 approvals: ApprovalGate, chat: asyncio.Queue[tuple[str, str]] | None,
                 secure_cookie: bool = False):
        self.target = target
        self.chat = chat
        self.approvals = approvals
        self.gate = gate
        self.streams = streams
        self.refusals = refusals
        self.secure = secure_cookie
        self.page = PageFiles()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await self._lifespan(receive, send)
            return
        if scope["type"] != "http":
            return
        headers = header_map(scope["headers"])
        peer = (scope.get("client") or ("?", 0))[0]
        method, path = scope["method"], scope["path"]
        refusal = self.gate.request(headers, scope.get("query_string", b""))
        if refusal is None:
            refusal = await self._route(method, path, headers, peer, receive, send)
        if refusal is not None:
            self.refusals.refuse(refusal.reason, peer)
            await respond(send, refusal.status, {"error": refusal.message})

    async def _route(self, method: str, path: str, headers: Mapping[str, str], peer: str,
                     receive: Receive, send: Send) -> Refusal | None:
        if not path.startswith("/api/"):
            if method not in ("GET", "HEAD"):
                return refused("method", 405, "the page's files are read with GET")
            return await self._file(path, headers, send)
        if path == "/api/pair" and method == "POST":
            return await self._pair(headers, peer, receive, send)
        found = self.gate.session(headers, peer)
        if isinstance(found, Refusal):
            return found
        session = found
        if path == "/api/session" and method == "GET":
            await respond(send, 200, {"name": session.name, "role": session.role, "csrf": session.csrf,
                                      "chat": self.chat is not None})
            return None
        if path == "/api/approvals" and method == "GET":
            await respond(send, 200, {"approvals": self.approvals.waiting()})
            return None
        if path == "/api/events" and method == "GET":
            return await self.streams.serve(session, send, receive)
        if method != "POST":
            return refused("method", 405 if path in API_POSTS else 404, "no such request")
        if not self.gate.csrf_ok(headers, session):
            return refused("csrf", 403, "a state change needs the page's CSRF token: reload the page")
        body = await read_json(receive)
        if body is None:
            return refused("bad_body", 400, "the body must be a JSON object of at most 16 KB")
        return await self._post(path, session, body, send)

    async def _post(self, path: str, session: WebSession, body: dict[str, Any], send: Send) -> Refusal | None:
        if path == "/api/op":
            op, args = body.get("op"), body.get("args", {})
            if not isinstance(op, str) or not isinstance(args, dict):
                return refused("bad_body", 400, 'the body is {"op": NAME, "args": {...}}')
            result = await door.ask(self.target, session, op, args)
        elif path == "/api/safe-state":
            if not session.may("admin"):
                return refused("role", 403, "safe state is an admin's (edge-cli web pair --admin)")
            result = await door.safe_state(self.target, session)
        elif path == "/api/chat" and self.chat is not None:
            text = body.get("text")
            if not isinstance(text, str) or not text.strip() or len(text) > MAX_CHAT:
                return refused("bad_body", 400, f'the body is {{"text": "..."}}, at most {MAX_CHAT} characters')
            try:
                self.chat.put_nowait((session.name, text))
            except asyncio.QueueFull:
                return refused("busy", 503, "the agent has too many messages waiting: try again soon")
            await respond(send, 202, {"ok": True})
            return None
        elif path == "/api/approve":
            if not session.may("admin"):
                return refused("role", 403, "approving is an admin's (edge-cli web pair --admin)")
            token, decision = body.get("token"), body.get("decision")
            if not isinstance(token, str) or not isinstance(decision, str):
                return refused("bad_body", 400, 'the body is {"token": ..., "decision": "approve"}')
            said = self.approvals.decide(token, decision, f"web:{session.name}")
            await respond(send, 200, {"ok": said in ("Approved.", "Denied."), "message": said})
            return None
        elif path == "/api/logout":
            self.gate.sessions.revoke(session.name)
            await respond(send, 200, {"ok": True}, cookie=self._cookie("", 0))
            return None
        else:
            return refused("path", 404, "no such request")
        await respond(send, 200, result.as_dict())
        return None

    async def _pair(self, headers: Mapping[str, str], peer: str, receive: Receive,
                    send: Send) -> Refusal | None:
        if limit := self.gate.limited(peer):
            return limit
        self.gate.attempt(peer)
        body = await read_json(receive)
        code = body.get("code") if body else None
        if not isinstance(code, str) or len(code) > 64:
            return refused("bad_body", 400, 'the body is {"code": "THE-CODE"}')
        redeemed = self.gate.sessions.redeem(code)
        if redeemed is None:
            return refused("wrong_code", 401, "that code is wrong, spent or expired: run `edge-cli "
                           "web pair` for a new one")
        session, token = redeemed
        log.info("web_paired name=%s role=%s peer=%s", session.name, session.role, peer)
        await respond(send, 200, {"name": session.name, "role": session.role, "csrf": session.csrf,
                                  "chat": self.chat is not None}, cookie=self._cookie(token, 400 * 86400))
        return None

    def _cookie(self, token: str, max_age: int) -> bytes:
        secure = "; Secure" if self.secure else ""
        return (f"{COOKIE}={token}; Path=/; Max-Age={max_age}; HttpOnly; SameSite=Strict"
                f"{secure}").encode()

    async def _file(self, path: str, headers: Mapping[str, str], send: Send) -> Refusal | None:
        found = self.page.files.get(path)
        if found is None:
            return refused("path", 404, "no such page")
        kind, body, zipped = found
        extra = [(b"content-type", kind.encode()), (b"cache-control", b"no-cache")]
        if "gzip" in headers.get("accept-encoding", ""):
            body = zipped
            extra.append((b"content-encoding", b"gzip"))
        extra.append((b"vary", b"accept-encoding"))
        await send({"type": "http.response.start", "status": 200,
                    "headers": [*SECURITY_HEADERS, *extra, (b"content-length", str(len(body)).encode())]})
        await send({"type": "http.response.body", "body": body})
        return None

    async def _lifespan(self, receive: Receive, send: Send) -> None:
        while True:
            message = await receive()
            if message["type"] == "lifespan.startup":
                await send({"type": "lifespan.startup.complete"})
            elif message["type"] == "lifespan.shutdown":
                self.streams.close_all()
                await send({"type": "lifespan.shutdown.complete"})
                return


API_POSTS = ("/api/op", "/api/safe-state", "/api/chat", "/api/approve", "/api/logout", "/api/pair")


async def read_json(receive: Receive) -> dict[str, Any] | None:
    """The request's body as a JSON object; None when it is longer than MAX_BODY or not one."""
    chunks: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            return None
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > MAX_BODY:
            return None
        chunks.append(chunk)
        if not message.get("more_body"):
            break
    try:
        data = json.loads(b"".join(chunks) or b"null")
    except ValueError:
        return None
    return data if isinstance(data, dict) else None


async def respond(send: Send, status: int, data: dict[str, Any], cookie: bytes | None = None) -> None:
    body = json.dumps(data).encode()
    headers = [*SECURITY_HEADERS, (b"content-type", b"application/json"),
               (b"cache-control", b"no-store"), (b"content-length", str(len(body)).encode())]
    if cookie is not None:
        headers.append((b"set-cookie", cookie))
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})
