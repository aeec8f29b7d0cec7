"""Find and read the raw configuration, without checking it (and without importing the schema).

Lookup order: ``--config PATH``, ``$EDGE_CONFIG``, ``/etc/edge-agent/config.toml``,
``~/.config/edge-agent/config.toml``; with none found, built-in defaults. Environment variables
``EDGE_<SECTION>__<KEY>`` override keys (``EDGE_PROVIDER__API_KEY``,
``EDGE_CHANNELS__TELEGRAM__BOT_TOKEN``); ``EDGE_STATE_DIR`` overrides ``[paths] state_dir``.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any, NamedTuple

from edge.core.exc import ConfigError

SYSTEM_CONFIG = Path("/etc/edge-agent/config.toml")
ENV_PREFIX = "EDGE_"
ENV_SEPARATOR = "__"
MAX_NESTING = 32
"""Tables and arrays nest at most this deep; the schema needs 5."""


def user_config_path(env: Mapping[str, str] = os.environ) -> Path:
    base = env.get("XDG_CONFIG_HOME") or os.path.join(os.path.expanduser("~"), ".config")
    return Path(base) / "edge-agent" / "config.toml"


def find_config_file(explicit: str | None = None, env: Mapping[str, str] = os.environ) -> Path | None:
    """The config file to use, or None for built-in defaults. An explicit path must exist."""
    for chosen, origin in ((explicit, "--config"), (env.get("EDGE_CONFIG"), "EDGE_CONFIG")):
        if chosen:
            path = Path(chosen).expanduser()
            if not path.is_file():
                raise ConfigError(f"{path}: config file not found (from {origin}); "
                                  "create one with `edge-cli config init`")
            return path
    for path in (SYSTEM_CONFIG, user_config_path(env)):
        if path.is_file():
            return path
    return None


def nesting_depth(value: object) -> int:
    """How deeply tables and arrays nest in ``value`` (iterative: no recursion to exhaust).

    >>> nesting_depth({"a": [[1], {"b": {}}]})
    4
    """
    deepest, stack = 0, [(value, 1)]
    while stack:
        node, depth = stack.pop()
        if isinstance(node, dict | list):
            deepest = max(deepest, depth)
            stack.extend((child, depth + 1)
                         for child in (node.values() if isinstance(node, dict) else node))
    return deepest


def _too_deep(origin: str) -> ConfigError:
    return ConfigError(f"{origin}: tables or arrays nested more than {MAX_NESTING} levels deep; "
                       "the configuration needs far fewer (see `edge-cli config init -`)")


def read_toml(path: Path) -> dict[str, Any]:
    import tomllib  # here: `edge-cli status` on built-in defaults reads no file (about 5 ms)

    try:
        with path.open("rb") as fh:
            data = tomllib.load(fh)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: not valid TOML: {exc}") from None
    except RecursionError:
        raise _too_deep(str(path)) from None
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read config: {exc.strerror}") from None
    if nesting_depth(data) > MAX_NESTING:
        raise _too_deep(str(path))
    return data


def _env_value(text: str) -> object:
    """Environment values are strings; JSON lists and objects are decoded (allowed_users=[1,2])."""
    if text[:1] in "[{":
        try:
            value = json.loads(text)
        except (json.JSONDecodeError, RecursionError):
            return text
        if nesting_depth(value) <= MAX_NESTING:
            return value
    return text


def env_overrides(env: Mapping[str, str] = os.environ) -> dict[tuple[str, ...], tuple[str, object]]:
    """Key path -> (variable name, value) for every ``EDGE_A__B`` variable."""
    found: dict[tuple[str, ...], tuple[str, object]] = {}
    for name, value in env.items():
        if name.startswith(ENV_PREFIX) and ENV_SEPARATOR in name:
            keys = tuple(k.lower() for k in name[len(ENV_PREFIX):].split(ENV_SEPARATOR))
            if all(keys):
                found[keys] = (name, _env_value(value))
    if env.get("EDGE_STATE_DIR"):
        found[("paths", "state_dir")] = ("EDGE_STATE_DIR", env["EDGE_STATE_DIR"])
    return found


def apply_overrides(data: dict[str, Any], overrides: dict[tuple[str, ...], tuple[str, object]]) -> dict[str, Any]:
    for keys, (name, value) in overrides.items():
        node = data
        for key in keys[:-1]:
            child = node.setdefault(key, {})
            if not isinstance(child, dict):
                raise ConfigError(f"{name}: cannot set {'.'.join(keys)}: "
                                  f"{key} is a value, not a section")
            node = child
        node[keys[-1]] = value
    return data


class RawConfig(NamedTuple):
    data: dict[str, Any]
    """The file's tables with the environment's overrides applied."""
    path: Path | None
    env_keys: dict[tuple[str, ...], str]
    """Key path -> the variable that set it, for error messages."""


def load_raw(explicit: str | None = None, env: Mapping[str, str] = os.environ) -> RawConfig:
    path = find_config_file(explicit, env)
    data = read_toml(path) if path else {}
    overrides = env_overrides(env)
    apply_overrides(data, overrides)
    return RawConfig(data, path, {keys: name for keys, (name, _) in overrides.items()})
