"""``edge-cli``: run the agent and operate it over SSH.

The program is :mod:`edge.cli.main` (``entry`` is what the ``edge-cli`` script runs,
``main(argv)`` returns the exit code); each ``*_cmd`` module registers one command with it and is
not for other users. The face lists that one module and imports nothing, so
``edge-cli --version`` stays quick.
"""

__all__ = ["main"]
