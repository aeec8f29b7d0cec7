"""``[mcp] listen``: the agent serves MCP over streamable HTTP (the SDK's transport, at ``/mcp``),
in-process, asking the same control operations as the socket (one door).

What a request meets, in order, each before any work of the next:

1. the connection bounds (:mod:`edge.mcp.server_connections`): how many are open, per address
   and in all, and how long a request head may take;
2. :class:`RequestGate`: the ``Host`` and ``Origin`` headers (:class:`HostRule`, the MCP
   specification's defence against DNS rebinding, for every listen address: 421 and 403), then
   the bearer token (401). A refused request never reaches the SDK: no session, no body read;
3. the SDK's session manager, with its cap on sessions (``max_sessions``: 503 beyond it) and their
   idle time (``session_idle_seconds``).

Refusals at 1 and 2 are counted and logged as one summary line per interval (``mcp_http_refused
count=... reasons=...``). Named bearer tokens (``[mcp.tokens]``): a request must carry
``Authorization: Bearer <secret>`` of one of them, compared in constant time, and the caller is
then ``mcp:<token name>``, verified as ``token:<name>`` (what an admin's *Always* is remembered
for). Off loopback a token is required (the config check refuses ``listen`` there without one,
exit 2); on loopback with no tokens the caller is the MCP client's own name (``clientInfo.name``),
which verifies nothing: it is never offered *Always*. The audit trail's "why" is ``http``.

The server runs as a supervised task (``mcp-http`` in ``edge-cli status``): a port in use fails
the task, which is logged and retried with backoff; the rest of the agent runs on.
"""

from __future__ import annotations

import hmac
import json
import logging
from typing import TYPE_CHECKING, Any

from mcp.server.mcpserver import Context
from mcp.server.transport_security import TransportSecuritySettings
from starlette.datastructures import Headers

from edge.control.ops import OpResult, mcp_requester, run_op
from edge.mcp.server import CallerOf, Door, McpCaller, catalog_server, client_caller, session_caller
from edge.mcp.server_connections import ConnectionGuard, RefusalLog
from edge.mcp.server_elicitation import client_ask
from edge.mcp.server_hosts import HostRule
from edge.mcp.server_uvicorn import bind, serve

if TYPE_CHECKING:
    from pydantic import SecretStr
    from starlette.types import ASGIApp, Receive, Scope, Send

    from edge.config.mcp import McpConfig
    from edge.control.ops import OpTarget
    from edge.security.approvals import ApprovalGate

log = logging.getLogger(__name__)

PATH = "/mcp"
UNNAMED = McpCaller("mcp:http")
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


class RequestGate:
    """ASGI middleware in front of the SDK: a request whose ``Host`` or ``Origin`` is not this
    agent's (421, 403), or that carries no token of ``[mcp.tokens]`` when there are some (401),
    is answered here and counted in the refusal log; the SDK never sees it."""

    def __init__(self, app: ASGIApp, hosts: HostRule, tokens: TokenTable, refusals: RefusalLog):
        self.app = app
        self.hosts = hosts
        self.tokens = tokens
        self.refusals = refusals

    def refusal(self, headers: Headers) -> tuple[str, int, str] | None:
        """(reason, status, what to do) for a request that may not pass; None when it may."""
        host, origin = headers.get("host"), headers.get("origin")
        if not self.hosts.host_ok(host):
            return ("host", 421, "this Host is not the agent's own: a name that reaches it on "
                    "purpose goes in [mcp] allowed_hosts")
        if not self.hosts.origin_ok(origin, host):
            return ("origin", 403, "a web page from this Origin may not call the agent: a page "
                    "that should goes in [mcp] allowed_origins")
        if self.tokens:
            authorization = headers.get("authorization")
            if self.tokens.name_of(authorization) is None:
                return ("wrong_bearer" if authorization else "no_bearer", 401,
                        "a bearer token from [mcp.tokens] is required")
        return None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        refused = self.refusal(Headers(scope=scope)) if scope["type"] == "http" else None
        if refused is None:
            await self.app(scope, receive, send)
            return
        reason, status, message = refused
        self.refusals.refuse(reason, (scope.get("client") or ("?", 0))[0])
        headers = [(b"content-type", b"application/json"), (b"connection", b"close")]
        if status == 401:
            headers.append((b"www-authenticate", b'Bearer realm="edge-agent"'))
        await send({"type": "http.response.start", "status": status, "headers": headers})
        await send({"type": "http.response.body", "body": json.dumps({"error": message}).encode()})


def agent_door(target: OpTarget, approvals: ApprovalGate) -> Door:
    """The running agent's operations, in-process, as the MCP server's door; a caller whose
    client can be asked has its approvals asked there (``approvals.asking_client``)."""
    async def door(op: str, args: dict[str, Any], caller: McpCaller) -> OpResult:
        requester = mcp_requester(caller.name, "http", caller.identity)
        with approvals.asking_client(requester, caller.ask):
            result = await run_op(target, op, args, requester)
        data = json.loads(json.dumps(result.data, default=str))  # as the socket would carry it
        return OpResult(result.ok, result.message, data, result.exit_code)
    return door


def http_caller(tokens: TokenTable, ask_at_client: bool = False) -> CallerOf:
    """Who calls: ``mcp:<token name>`` (verified as ``token:<name>``) with tokens, else the
    client's own name (verified as nothing); with ``ask_at_client``, how to ask the person at
    a client that declared elicitation."""
    def caller_of(ctx: Context | None) -> McpCaller:
        if ctx is None:
            return UNNAMED
        ask = client_ask(ctx) if ask_at_client else None
        if tokens:
            name = tokens.name_of((ctx.headers or {}).get("authorization"))
            return McpCaller(client_caller(name), f"token:{name}", ask) if name else UNNAMED
        return McpCaller(session_caller(ctx), ask=ask)
    return caller_of


class McpHttpServer:
    def __init__(self, config: McpConfig, target: OpTarget, approvals: ApprovalGate):
        self.config = config
        self.target = target
        self.approvals = approvals
        self.tokens = TokenTable(config.tokens)
        self.refusals = RefusalLog()
        self.connections = ConnectionGuard(config, self.refusals)

    def app(self) -> ASGIApp:
        cfg = self.config
        server = catalog_server(agent_door(self.target, self.approvals),
                                http_caller(self.tokens, cfg.ask_at_client))
        sdk = server.streamable_http_app(
            streamable_http_path=PATH, host=cfg.host, max_sessions=cfg.max_sessions,
            session_idle_timeout=cfg.session_idle_seconds,
            # the gate has checked Host and Origin, for this listen address whatever it is (the
            # SDK's own check knows only 127.0.0.1, localhost and ::1, and runs after a session
            # is admitted, logging each refusal)
            transport_security=TransportSecuritySettings(enable_dns_rebinding_protection=False))
        return RequestGate(sdk, HostRule(cfg), self.tokens, self.refusals)

    async def serve(self) -> None:
        """Serve until cancelled (the agent stopping); a failure to bind or start raises."""
        app = self.app()
        sock = bind(self.config)
        log.info("mcp_http_listening url=http://%s%s tokens=%d", self.config.listen, PATH,
                 len(self.config.tokens))
        await serve(sock, app, idle_timeout=self.config.idle_timeout_seconds,
                    max_connections=self.config.max_connections, connections=self.connections,
                    refusals=self.refusals, lifespan="on", what="MCP HTTP server")
