"""The local control socket: one-shot CLI commands go through the running daemon."""
