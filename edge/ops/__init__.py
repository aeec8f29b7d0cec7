"""The catalog of operations: each thing the agent does (switch a pin, read a sensor's history,
add a schedule) declared once, and its doors (model tool, control socket, MCP, fleet, chat, the
reference page) derived from it. See ``edge/ops/README.md`` for adding one.

Used by module: :mod:`~edge.ops.operation` (what an operation is), :mod:`~edge.ops.catalog`
(every operation, and the sets derived from them), :mod:`~edge.ops.result` (what an operation
answers; light, for the CLI client), :mod:`~edge.ops.handlers`, :mod:`~edge.ops.chat` and
:mod:`~edge.ops.reference`. The face lists them and imports none.
"""

__all__ = ["catalog", "chat", "handlers", "operation", "reference", "result"]
