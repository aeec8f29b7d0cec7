"""The runtime's error hierarchy; every message says what to do next.

Exit codes follow the CLI contract: 1 for a refused or failed action, 2 for bad usage or config.
"""


class EdgeError(Exception):
    exit_code = 1


class ConfigError(EdgeError):
    """The configuration file or environment is wrong; the message names file and key."""

    exit_code = 2


class UsageError(EdgeError):
    exit_code = 2


class PolicyDenied(EdgeError):
    """The security policy refused an action."""


class DaemonUnavailable(EdgeError):
    """No running agent answered on the control socket."""
