"""The local control socket: one-shot CLI commands go through the running daemon.

Used by module: :mod:`~edge.control.client` (blocking and light, for the CLI),
:mod:`~edge.control.server` (the daemon's side) and :mod:`~edge.control.ops` (the operations, run
by the daemon or, with none running, by the CLI itself). The face lists them and imports none, so
the light client loads nothing it does not need.
"""

__all__ = ["client", "ops", "server"]
