"""The Model Context Protocol: the agent's pins as an MCP server (``edge-cli mcp`` over stdio,
``[mcp] listen`` over streamable HTTP) and other servers' tools for the model (``[[mcp.servers]]``).

Nothing here imports the ``mcp`` SDK at import time: it loads only in ``edge-cli mcp`` and when
``[mcp]`` asks for it, so the agent without MCP, ``edge-cli status`` and ``--version`` stay light.

The server side: :mod:`edge.mcp.server` (the tools and resources, over any door to the agent),
:mod:`edge.mcp.server_stdio` (``edge-cli mcp``: a client of the running agent's control socket),
:mod:`edge.mcp.server_http` (in the agent, behind named bearer tokens and the connection bounds
of :mod:`edge.mcp.server_connections`) and
:mod:`edge.mcp.server_approvals` (an MCP client's actuation, approved by an admin on the chat
channels). The client side: :mod:`edge.mcp.client`, :mod:`edge.mcp.client_servers`,
:mod:`edge.mcp.remote_tools` (their status line is drawn by :mod:`edge.status`). The face
lists the modules and imports none.
"""

__all__ = ["client", "client_servers", "remote_tools", "server",
           "server_approvals", "server_connections", "server_hosts", "server_http", "server_stdio"]
