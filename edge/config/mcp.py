"""``[mcp]``: the Model Context Protocol, both ways.

The agent as an MCP server over streamable HTTP (``listen``, with named bearer ``tokens``; over
stdio it is ``edge-cli mcp``, which needs no config), and other MCP servers whose tools the model
may use (``[[mcp.servers]]``).

>>> cfg = McpConfig(listen="127.0.0.1:8765")
>>> cfg.enabled, cfg.host, cfg.port, cfg.loopback
(True, '127.0.0.1', 8765, True)
>>> McpConfig(listen="0.0.0.0:8765")  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
pydantic_core._pydantic_core.ValidationError: 1 validation error for McpConfig
  Value error, listen 0.0.0.0:8765 is not a loopback address: set a token in [mcp.tokens] ...
"""

from __future__ import annotations

import ipaddress
import os
import re
from typing import Annotated, Self, TypeVar
from urllib.parse import urlsplit

from pydantic import AfterValidator, Field, SecretStr, model_validator

from edge.config.section import Seconds, Section
from edge.core import wheels

_Used = TypeVar("_Used", str, list["McpServerConfig"])
SERVER_NAME = re.compile(r"^[a-z0-9][a-z0-9_-]*$")
"""An MCP server's name: its tools reach the model as ``name.tool``."""
TOKEN_NAME = re.compile(r"^[A-Za-z][A-Za-z0-9_-]{0,63}$")
"""A token's name: the caller ``mcp:<name>`` in the audit trail."""
HOST_NAME = re.compile(r"[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?(\.[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?)*")
"""A DNS name (``pi.example.com``), as ``allowed_hosts`` lists it."""


def sdk_unavailable() -> str | None:
    """Why the MCP SDK cannot be used here (:func:`edge.core.wheels.mcp_sdk_unavailable`)."""
    return wheels.mcp_sdk_unavailable()


def _sdk_installed(value: _Used) -> _Used:
    if value and (reason := sdk_unavailable()):
        raise ValueError(reason)
    return value


def _split_listen(value: str) -> tuple[str, int]:
    host, sep, port = value.rpartition(":")
    host = host.strip("[]")
    if not sep or not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise ValueError(f"listen must be HOST:PORT (such as 127.0.0.1:8765), not {value!r}")
    return host, int(port)


def _known_listen(value: str) -> str:
    if value:
        _split_listen(value)
    return value


def _token_names(value: dict[str, SecretStr]) -> dict[str, SecretStr]:
    for name, secret in value.items():
        if not TOKEN_NAME.match(name):
            raise ValueError(f"token name {name!r}: use letters, digits, '_' and '-', starting "
                             "with a letter "
                             "(it names the caller, mcp:<name>)")
        if len(secret.get_secret_value()) < 16:
            raise ValueError(f"token {name!r} is too short: use at least 16 characters "
                             "(python -c 'import secrets; print(secrets.token_urlsafe())')")
    return value


def _host_names(value: list[str]) -> list[str]:
    for name in value:
        if not HOST_NAME.fullmatch(name):
            raise ValueError(f"allowed_hosts: {name!r} is not a host name (such as pi.example.com; "
                             "without a port or a scheme)")
    return [name.lower() for name in value]


def _origins(value: list[str]) -> list[str]:
    for origin in value:
        parts = urlsplit(origin)
        if parts.scheme not in ("http", "https") or not parts.hostname or parts.path not in ("", "/"):
            raise ValueError(f"allowed_origins: {origin!r} is not an origin (such as "
                             "http://pi.lan:6274: a scheme, a host and maybe a port)")
    return [origin.rstrip("/").lower() for origin in value]


def _absolute_paths(value: list[str]) -> list[str]:
    """Absolute paths; whether each exists is the server's start's to say (a USB stick not
    mounted yet stops that server, with why, never the agent or ``config check`` elsewhere)."""
    for path in value:
        if not os.path.isabs(path):
            raise ValueError(f"{path!r} is not an absolute path (such as /srv/data)")
    return [os.path.normpath(path) for path in value]


def is_loopback(host: str) -> bool:
    """True for ``localhost`` and loopback addresses (``127.0.0.1``, ``::1``).

    >>> is_loopback("localhost"), is_loopback("::1"), is_loopback("192.168.1.2")
    (True, True, False)
    """
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


class ListenAddress:
    """What a section's ``listen`` (``host:port``, empty: off) says: whether it serves, on which
    host and port, and whether only this machine can reach it; the MCP server's and the web
    page's alike."""

    listen: str

    @property
    def enabled(self) -> bool:
        return bool(self.listen)

    @property
    def host(self) -> str:
        return _split_listen(self.listen)[0]

    @property
    def port(self) -> int:
        return _split_listen(self.listen)[1]

    @property
    def loopback(self) -> bool:
        return is_loopback(self.host)



class McpServerConfig(Section):
    """One ``[[mcp.servers]]``: another MCP server whose allowed tools the model may use.

    >>> McpServerConfig(name="ha", url="http://ha.lan:8123/mcp_server/sse", allow=["HassTurnOn"]).transport
    'http'
    """

    name: str
    """Its tools reach the model as ``<name>.<tool>``: lowercase letters, digits, '_' and '-'."""
    command: str | None = None
    """A stdio server: the command to run (with ``args`` and ``env``)."""
    args: list[str] = []
    env: dict[str, str] = {}
    url: str | None = None
    """A streamable HTTP server: its http:// or https:// url (with ``headers``)."""
    headers: dict[str, SecretStr] = {}
    """Sent with every request (``Authorization = "Bearer ..."``); kept out of logs as secrets."""
    allow: list[str] = []
    """The tools given to the model (by the server's names for them); empty: none."""
    actuates: list[str] = []
    """Tools that act on the world: they go through the approval gate and the rate limit."""
    timeout_seconds: Seconds = Field(default=30.0, gt=0)
    """How long a call may take before the turn gives up on it."""
    sandbox: bool = True
    """A command server runs in a bubblewrap sandbox: its own scratch directory as home and
    working directory, the system's directories read-only, its command's directory, the
    ``paths`` listed here, and only ``env`` (never the agent's config, state, control socket
    or secrets). Without a usable ``bwrap`` it does not start; ``false`` runs it as the agent's
    user with the agent's view of the files (``doctor`` warns)."""
    network: bool = True
    """The sandboxed server shares the network (most servers call web APIs); ``false`` gives it
    none."""
    paths: Annotated[list[str], AfterValidator(_absolute_paths)] = []
    """More directories or files the sandboxed server may read (absolute; a missing one stops
    the server from starting, saying which)."""
    writable_paths: Annotated[list[str], AfterValidator(_absolute_paths)] = []
    """Directories or files the sandboxed server may also write (absolute; a missing one stops
    the server from starting, saying which)."""
    max_result_bytes: int = Field(default=262144, ge=1024)
    """A tool's result is cut to this many bytes for the model, saying how much was cut."""
    max_message_bytes: int = Field(default=1048576, ge=4096)
    """The longest message the server may send (a result before it is cut, a page of its tool
    list): a longer one is refused without being kept, and the call says so."""
    max_schema_bytes: int = Field(default=16384, ge=256)
    """An allowed tool whose input schema is longer (as JSON) is left out, with a warning."""
    max_schema_total_bytes: int = Field(default=65536, ge=256)
    """The allowed tools' input schemas together: those past it are left out, with a warning
    (every model request carries them, whether the turn uses them or not)."""
    max_tools: int = Field(default=64, ge=1)
    """At most this many of the server's tools are read; the rest are left out, with a warning."""

    @property
    def transport(self) -> str:
        return "stdio" if self.command is not None else "http"

    @model_validator(mode="after")
    def _check(self) -> Self:
        if not SERVER_NAME.match(self.name):
            raise ValueError(f"name {self.name!r}: use lowercase letters, digits, '_' and '-', "
                             "starting with a letter or digit")
        if (self.command is None) == (self.url is None):
            raise ValueError(f"server {self.name!r}: set exactly one of command (a stdio server) "
                             "or url (a streamable HTTP server)")
        if self.url is not None:
            parts = urlsplit(self.url)
            if parts.scheme not in ("http", "https") or not parts.hostname:
                raise ValueError(f"server {self.name!r}: url must be http://... or https://...")
        elif not self.command:
            raise ValueError(f"server {self.name!r}: command must not be empty")
        if self.command is not None and self.headers:
            raise ValueError(f"server {self.name!r}: headers are for a url server; a command "
                             "server takes env")
        if self.url is not None and (self.args or self.env):
            raise ValueError(f"server {self.name!r}: args and env are for a command server; a url "
                             "server takes headers")
        if self.url is not None and (not self.sandbox or not self.network or self.paths
                                     or self.writable_paths):
            raise ValueError(f"server {self.name!r}: sandbox, network, paths and writable_paths "
                             "are for a command server; a url server runs elsewhere")
        if self.max_result_bytes > self.max_message_bytes:
            raise ValueError(f"server {self.name!r}: max_result_bytes must not exceed "
                             "max_message_bytes")
        return self


class McpConfig(ListenAddress, Section):
    listen: Annotated[str, AfterValidator(_known_listen), AfterValidator(_sdk_installed)] = ""
    """``127.0.0.1:8765``: the agent serves MCP over streamable HTTP at ``/mcp``; empty: off."""
    tokens: Annotated[dict[str, SecretStr], AfterValidator(_token_names)] = {}
    """Name -> bearer token (``claude = "..."``, or ``EDGE_MCP__TOKENS__CLAUDE``); the caller is
    ``mcp:<name>``. Required off loopback; once any is set, loopback needs one too."""
    trust: dict[str, list[str]] = {}
    """Token name -> what its caller may actuate without an approval under ``supervised``:
    pins as ``board:PIN`` (``claude = ["gpio:GPIO17"]``, as ``edge-cli pins`` names them), or
    ``["*"]`` for every allowlisted pin. Others still ask."""
    ask_at_client: bool = False
    """true: an MCP client over HTTP that declared the ``elicitation`` capability is asked to
    approve its own actuations under ``supervised`` (the person at Claude Desktop answers), with
    the approval timeout; a client without it is asked through the chat admins, as always."""
    servers: Annotated[list[McpServerConfig], AfterValidator(_sdk_installed)] = []
    max_connections: int = Field(default=64, ge=1)
    """At most this many HTTP connections open at once (each holds one of the agent's file
    descriptors). A newcomer beyond it closes the connection that has waited longest for its
    next request; when every open one is busy answering, the newcomer is closed at once."""
    max_connections_per_peer: int = Field(default=16, ge=1)
    """At most this many from one address: beyond it a newcomer from there displaces only that
    address's own waiting connections, so one stranger cannot crowd everybody else out. Behind a
    reverse proxy every client has the proxy's address: raise it to ``max_connections``."""
    header_timeout_seconds: Seconds = Field(default=10.0, gt=0)
    """How long a connection may take to send a whole request head, from connecting (or from
    the first byte of its next request); then it is closed. The token is in the head, so this
    is as long as a stranger holds a connection."""
    idle_timeout_seconds: Seconds = Field(default=30.0, ge=1)
    """How long a kept-alive connection may wait, silent, for its next request (rounded up to a
    whole second)."""
    max_sessions: int = Field(default=32, ge=1)
    """At most this many MCP sessions at once (one per connected client): beyond it a new
    session is answered 503 until one ends or idles out."""
    session_idle_seconds: Seconds = Field(default=600.0, gt=0)
    """A session with no request in flight and no open stream for this long is closed and
    forgotten; its client has to initialize again."""
    allowed_hosts: Annotated[list[str], AfterValidator(_host_names)] = []
    """Host names a request's ``Host`` header may carry besides an IP address, ``localhost`` and
    this machine's own name (``raspberrypi``, ``raspberrypi.local``): a reverse proxy's name
    (``pi.example.com``). Any other is answered 421, for every listen address: the MCP
    specification's defence against DNS rebinding (a web page whose name now points here)."""
    allowed_origins: Annotated[list[str], AfterValidator(_origins)] = []
    """Web pages that may call (``http://pi.lan:6274``), as a browser writes its ``Origin``. A
    request from any other page is answered 403, unless the page is on this machine
    (``localhost``, a loopback address) or on the host it calls. Clients other than browsers send
    no ``Origin``."""

    @model_validator(mode="after")
    def _check(self) -> Self:
        if self.listen and not self.loopback and not self.tokens:
            raise ValueError(f"listen {self.listen} is not a loopback address: set a token in "
                             "[mcp.tokens] (name = \"secret\", or EDGE_MCP__TOKENS__<NAME>) so "
                             "that only callers holding it get in")
        if unknown := sorted(set(self.trust) - set(self.tokens)):
            raise ValueError(f"trust: {', '.join(map(repr, unknown))} is not a token in "
                             "[mcp.tokens]; trust names a token, whose caller it lets through")
        names = [s.name for s in self.servers]
        if duplicate := sorted({n for n in names if names.count(n) > 1}):
            raise ValueError(f"servers: names must be unique; {', '.join(map(repr, duplicate))} "
                             "appears more than once")
        return self
