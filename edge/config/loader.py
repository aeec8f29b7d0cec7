"""Load and validate the configuration; errors name the file, the key path and what was expected.

>>> cfg = load_config(env={})          # no file found: built-in defaults
>>> sorted(cfg.config.boards)
['gpio']
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from pydantic import ValidationError
from pydantic_core import ErrorDetails

from edge.config.locate import load_raw
from edge.config.model import BOARD_TYPES, Config
from edge.exc import ConfigError
from edge.paths import control_socket, state_dir


@dataclass
class LoadedConfig:
    config: Config
    path: Path | None

    @property
    def source(self) -> str:
        return str(self.path) if self.path else "built-in defaults"

    @property
    def state_dir(self) -> Path:
        return state_dir(self.config.paths.state_dir)

    @property
    def control_socket(self) -> Path:
        return control_socket(self.config.paths.state_dir)


def _describe(error: ErrorDetails) -> str:
    got = error.get("input")
    if error["type"] == "extra_forbidden":
        return "unknown key (check the spelling; `edge-cli config init` writes every key)"
    if error["type"] == "missing":
        return "required key is missing"
    shown = f" (got {got!r})" if not isinstance(got, dict | list) else ""
    return f"{error['msg']}{shown}"


def format_validation_error(exc: ValidationError, origin: str,
                            env_keys: Mapping[tuple[str, ...], str]) -> str:
    lines = [f"{origin}: invalid configuration"]
    for error in exc.errors():
        loc = tuple(str(part) for part in error["loc"])
        if loc[:1] == ("boards",) and len(loc) > 2 and loc[2] in BOARD_TYPES:
            loc = loc[:2] + loc[3:]  # drop the union tag pydantic puts after the board name
        where = ".".join(loc) or "(top level)"
        var = next((name for keys, name in env_keys.items() if loc[: len(keys)] == keys), None)
        suffix = f"  [from {var}]" if var else ""
        lines.append(f"  {where}: {_describe(error)}{suffix}")
    return "\n".join(lines)


def load_config(explicit: str | None = None, env: Mapping[str, str] = os.environ) -> LoadedConfig:
    raw = load_raw(explicit, env)
    try:
        config = Config.model_validate(raw.data)
    except ValidationError as exc:
        origin = str(raw.path) if raw.path else "configuration (built-in defaults + environment)"
        raise ConfigError(format_validation_error(exc, origin, raw.env_keys)) from None
    return LoadedConfig(config, raw.path)
