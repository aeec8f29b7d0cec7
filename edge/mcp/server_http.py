"""``[mcp] listen``: the agent serves MCP over streamable HTTP (the SDK's transport, at ``/mcp``),
in-process, asking the same control operations as the socket (one door).

Named bearer tokens (``[mcp.tokens]``): a request must carry ``Authorization: Bearer <secret>``
of one of them, compared in constant time, and the caller is then ``mcp:<token name>``; a missing
or wrong token is answered 401 and logged. Off loopback a token is required (the config check
refuses ``listen`` there without one, exit 2); on loopback with no tokens the caller is the MCP
client's own name (``clientInfo.name``). The audit trail's "why" is ``http``.

The server runs as a supervised task (``mcp-http`` in ``edge-cli status``): a port in use fails
the task, which is logged and retried with backoff; the rest of the agent runs on.
"""

from __future__ import annotations

import asyncio
import contextlib
import hmac
import json
import logging
import socket
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import uvicorn
from mcp.server.mcpserver import Context

from edge.control.ops import OpResult, mcp_requester, run_op
from edge.mcp.server import CallerOf, Door, build_server, client_caller, session_caller

if TYPE_CHECKING:
    from pydantic import SecretStr
    from starlette.types import ASGIApp, Receive, Scope, Send

    from edge.config.mcp import McpConfig
    from edge.control.ops import OpTarget

log = logging.getLogger(__name__)

PATH = "/mcp"
SHUTDOWN_SECONDS = 2
"""How long open streams get to finish when the agent stops."""
UNNAMED = "mcp:http"
"""The caller of a static resource read (the SDK gives its handler no request to name one by):
a read, which the policy allows whoever asks and the audit trail does not record."""


class TokenTable:
    """The named bearer tokens of ``[mcp.tokens]``.

    >>> from pydantic import SecretStr
    >>> table = TokenTable({"claude": SecretStr("s3cret-s3cret-s3cret")})
    >>> table.name_of("Bearer s3cret-s3cret-s3cret"), table.name_of("Bearer nope"), table.name_of(None)
    ('claude', None, None)
    """

    def __init__(self, tokens: dict[str, SecretStr]):
        self._tokens = [(name, secret.get_secret_value().encode()) for name, secret in tokens.items()]

    def __bool__(self) -> bool:
        return bool(self._tokens)

    def name_of(self, authorization: str | None) -> str | None:
        """The name of the token an ``Authorization`` header carries, or None. Every token is
        compared, in constant time, whichever matches."""
        scheme, _, given = (authorization or "").partition(" ")
        offered = given.strip().encode()
        found = None
        for name, secret in self._tokens:
            if hmac.compare_digest(offered, secret) and scheme.lower() == "bearer":
                found = name
        return found


class BearerGate:
    """ASGI middleware: with tokens configured, only a request carrying one gets through."""

    def __init__(self, app: ASGIApp, tokens: TokenTable):
        self.app = app
        self.tokens = tokens

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or not self.tokens:
            await self.app(scope, receive, send)
            return
        headers = dict(scope.get("headers") or [])
        raw = headers.get(b"authorization")
        if self.tokens.name_of(raw.decode("latin-1") if raw else None) is None:
            client = scope.get("client") or ("?", 0)
            log.warning("mcp_http_refused reason=%s peer=%s path=%s",
                        "wrong_token" if raw else "no_token", client[0], scope.get("path"))
            body = json.dumps({"error": "a bearer token from [mcp.tokens] is required"}).encode()
            await send({"type": "http.response.start", "status": 401,
                        "headers": [(b"content-type", b"application/json"),
                                    (b"www-authenticate", b'Bearer realm="edge-agent"')]})
            await send({"type": "http.response.body", "body": body})
            return
        await self.app(scope, receive, send)


def agent_door(target: OpTarget) -> Door:
    """The running agent's operations, in-process, as the MCP server's door."""
    async def door(op: str, args: dict[str, Any], caller: str) -> OpResult:
        result = await run_op(target, op, args, mcp_requester(caller, "http"))
        data = json.loads(json.dumps(result.data, default=str))  # as the socket would carry it
        return OpResult(result.ok, result.message, data, result.exit_code)
    return door


def http_caller(tokens: TokenTable) -> CallerOf:
    """Who calls: ``mcp:<token name>`` with tokens, else the client's own name."""
    def caller_of(ctx: Context | None) -> str:
        if ctx is None:
            return UNNAMED
        if tokens:
            name = tokens.name_of((ctx.headers or {}).get("authorization"))
            return client_caller(name) if name else UNNAMED
        return session_caller(ctx)
    return caller_of


class _AgentsUvicorn(uvicorn.Server):
    """uvicorn inside the agent: the agent owns the signals (it stops the server itself)."""

    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        yield


class McpHttpServer:
    def __init__(self, config: McpConfig, target: OpTarget):
        self.config = config
        self.target = target
        self.tokens = TokenTable(config.tokens)

    def app(self) -> ASGIApp:
        server = build_server(agent_door(self.target), http_caller(self.tokens))
        return BearerGate(server.streamable_http_app(streamable_http_path=PATH,
                                                     host=self.config.host), self.tokens)

    def _bind(self) -> socket.socket:
        host, port = self.config.host, self.config.port
        family = socket.AF_INET6 if ":" in host else socket.AF_INET
        return socket.create_server((host, port), family=family)

    async def serve(self) -> None:
        """Serve until cancelled (the agent stopping); a failure to bind or start raises."""
        sock = self._bind()
        config = uvicorn.Config(self.app(), log_config=None, access_log=False, lifespan="on",
                                timeout_graceful_shutdown=SHUTDOWN_SECONDS)
        server = _AgentsUvicorn(config)
        log.info("mcp_http_listening url=http://%s%s tokens=%d", self.config.listen, PATH,
                 len(self.config.tokens))
        serving = asyncio.ensure_future(server.serve(sockets=[sock]))
        try:
            await asyncio.shield(serving)
        except asyncio.CancelledError:
            server.should_exit = True
            with contextlib.suppress(Exception, asyncio.CancelledError):
                await asyncio.wait_for(serving, SHUTDOWN_SECONDS * 2)
            raise
        except SystemExit:  # uvicorn's answer to a failed start; a task failure here instead
            raise RuntimeError("the MCP HTTP server did not start (see the log)") from None
        finally:
            sock.close()
        raise RuntimeError("the MCP HTTP server stopped")
