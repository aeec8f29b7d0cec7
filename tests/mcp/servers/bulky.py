"""An MCP server that sends too much, for the bounds tests (stdio, or streamable HTTP with
``--http PORT``; ``--json`` answers with JSON bodies rather than event streams).

- ``result(size)``: a text result of ``size`` bytes of ``x`` (50 MB is one line of JSON).
- ``wide``: an input schema of about 200 KB (a description per property).
- ``medium_a`` .. ``medium_e``: 15 KB schemas each (within the per-tool cap, five of them past
  the server's total).
- ``filler_0`` .. ``filler_79``: eighty small tools (past ``max_tools`` 64).
- ``say(text)``: writes ``text`` to stderr ``times`` times, then answers ``said``.
"""

from __future__ import annotations

import sys

from mcp.server import MCPServer
from pydantic import Field, create_model

server = MCPServer("bulky")


@server.tool()
def result(size: int) -> str:
    """A result of size bytes."""
    return "x" * size


def schema_tool(name: str, fields: int) -> None:
    model = create_model(f"{name}_args", **{  # type: ignore[call-overload]
        f"field_{i}": (str, Field(default="", description="d" * 1000)) for i in range(fields)})

    def run(args) -> str:  # noqa: ANN001 (its annotation is set below, a model made here)
        return "ok"
    run.__annotations__ = {"args": model, "return": str}
    server.tool(name=name, description=f"{fields} KB of schema")(run)


schema_tool("wide", 200)
for letter in "abcde":
    schema_tool(f"medium_{letter}", 14)


@server.tool()
def say(text: str, times: int = 1) -> str:
    """Writes text to stderr."""
    for _ in range(times):
        sys.stderr.write(text)
    sys.stderr.flush()
    return "said"


for number in range(80):
    server.tool(name=f"filler_{number}", description="A small tool.")(lambda: "filler")


if __name__ == "__main__":
    if "--http" in sys.argv:
        port = int(sys.argv[sys.argv.index("--http") + 1])
        server.run("streamable-http", host="127.0.0.1", port=port,
                   json_response="--json" in sys.argv)
    else:
        server.run()
