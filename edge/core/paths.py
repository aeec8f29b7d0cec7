"""Where state and the control socket live (no config schema: used by the fast CLI paths).

State directory: ``EDGE_STATE_DIR``, ``[paths] state_dir``, ``$STATE_DIRECTORY`` (systemd, i.e.
``/var/lib/edge-agent``), else ``~/.local/state/edge-agent``. The control socket lives in
``$RUNTIME_DIRECTORY`` under systemd and in the state directory otherwise. What is kept only to
be quicker (:mod:`edge.core.code_cache`) lives in ``$CACHE_DIRECTORY`` (systemd, i.e.
``/var/cache/edge-agent``), else ``$XDG_CACHE_HOME/edge-agent``, else ``~/.cache/edge-agent``.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

SOCKET_NAME = "control.sock"
SERVICE_RUNTIME_DIR = Path("/run/edge-agent")


def _service_dir(env: Mapping[str, str], variable: str) -> str:
    """The first directory systemd names in ``variable`` (``StateDirectory=`` gives
    ``$STATE_DIRECTORY``, and so on), or '' outside a unit that asks for one."""
    return env.get(variable, "").split(":")[0]


def _user_dir(env: Mapping[str, str], variable: str, *default: str) -> Path:
    """``edge-agent`` in the XDG base directory ``variable``, else in ``~/<default>``."""
    base = env.get(variable) or os.path.join(os.path.expanduser("~"), *default)
    return Path(base) / "edge-agent"


def state_dir(configured: str | None = None, env: Mapping[str, str] = os.environ) -> Path:
    chosen = env.get("EDGE_STATE_DIR") or configured or _service_dir(env, "STATE_DIRECTORY")
    if chosen:
        return Path(chosen).expanduser()
    return _user_dir(env, "XDG_STATE_HOME", ".local", "state")


def cache_dir(env: Mapping[str, str] = os.environ) -> Path:
    """Where what is kept only to be quicker lives (the module's docstring)."""
    chosen = _service_dir(env, "CACHE_DIRECTORY")
    return Path(chosen) if chosen else _user_dir(env, "XDG_CACHE_HOME", ".cache")


def control_socket(configured_state_dir: str | None = None, env: Mapping[str, str] = os.environ) -> Path:
    """The socket the daemon binds."""
    runtime = _service_dir(env, "RUNTIME_DIRECTORY")
    if runtime:
        return Path(runtime) / SOCKET_NAME
    return state_dir(configured_state_dir, env) / SOCKET_NAME


def lock_candidates(configured_state_dir: str | None = None,
                    env: Mapping[str, str] = os.environ) -> list[Path]:
    """Where a running agent's lock file is: next to each candidate socket."""
    return [path.parent / "agent.lock" for path in socket_candidates(configured_state_dir, env)]


def socket_candidates(configured_state_dir: str | None = None,
                      env: Mapping[str, str] = os.environ) -> list[Path]:
    """Where a client looks for a running daemon: its own layout, then the system service's."""
    candidates = [control_socket(configured_state_dir, env), SERVICE_RUNTIME_DIR / SOCKET_NAME]
    return list(dict.fromkeys(candidates))
