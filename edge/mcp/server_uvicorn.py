"""uvicorn inside the agent, for the MCP HTTP server and the web page alike: a socket bound to a
section's ``listen``, and uvicorn serving an application on it with the connection guard's
protocol (:mod:`edge.mcp.server_connections`) until the agent stops it. The agent owns the
signals; uvicorn's failure to start, which it says as ``SystemExit``, is an error of the task."""

from __future__ import annotations

import asyncio
import contextlib
import math
import socket
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any, Literal, NoReturn

import uvicorn

if TYPE_CHECKING:
    from edge.config.mcp import ListenAddress
    from edge.mcp.server_connections import ConnectionGuard, RefusalLog

SHUTDOWN_SECONDS = 2
"""How long open requests and streams get to finish when the agent stops."""


class AgentsUvicorn(uvicorn.Server):
    """uvicorn inside the agent: the agent owns the signals (it stops the server itself)."""

    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        yield


def bind(address: ListenAddress) -> socket.socket:
    """A listening socket on ``address``'s host and port (IPv6 when the host is one)."""
    host, port = address.host, address.port
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    return socket.create_server((host, port), family=family)


async def serve(sock: socket.socket, app: Any, *, idle_timeout: float, max_connections: int,
                connections: ConnectionGuard, refusals: RefusalLog, lifespan: Literal["on", "off"], what: str,
                on_stop: Callable[[], None] | None = None) -> NoReturn:
    """Serve ``app`` on ``sock`` until cancelled (``on_stop`` runs as uvicorn is told to stop);
    a failure to start, or uvicorn ending by itself, raises a RuntimeError naming ``what``."""
    config = uvicorn.Config(app, log_config=None, access_log=False, lifespan=lifespan,
                            timeout_graceful_shutdown=SHUTDOWN_SECONDS,
                            http=connections.protocol(), ws="none",
                            timeout_keep_alive=math.ceil(idle_timeout),
                            # asyncio accepts up to `backlog` sockets at once before any is seen
                            # by the guard: a flood is taken in that many at a time
                            backlog=max_connections,
                            proxy_headers=False)  # a peer is its socket's address
    server = AgentsUvicorn(config)
    serving = asyncio.ensure_future(server.serve(sockets=[sock]))
    try:
        await asyncio.shield(serving)
    except asyncio.CancelledError:
        server.should_exit = True
        if on_stop is not None:
            on_stop()
        with contextlib.suppress(Exception, asyncio.CancelledError):
            await asyncio.wait_for(serving, SHUTDOWN_SECONDS * 2)
        raise
    except SystemExit:  # uvicorn's answer to a failed start; a task failure here instead
        raise RuntimeError(f"the {what} did not start (see the log)") from None
    finally:
        sock.close()
        refusals.flush()
    raise RuntimeError(f"the {what} stopped")
