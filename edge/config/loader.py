"""Load and validate the configuration; errors name the file, the key path and what was expected.

>>> cfg = load_config(env={})          # no file found: built-in defaults
>>> sorted(cfg.config.boards)
['gpio']
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError

from edge.config.locate import load_raw
from edge.config.model import DEFAULT_ORIGIN, Config
from edge.core.exc import ConfigError
from edge.core.logsetup import log_file_path, under_systemd
from edge.core.paths import control_socket, state_dir

if TYPE_CHECKING:
    from edge.core.validation import Problem


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

    def prepare_dirs(self, env: Mapping[str, str] = os.environ) -> None:
        """Create the state directory and the log file's directory (the log file is not used
        under systemd); a ConfigError (exit 2) naming the directory and the setting when one
        cannot be created or written, before anything else starts."""
        _writable_dir(self.state_dir, "the state directory ([paths] state_dir or EDGE_STATE_DIR)")
        log_file = log_file_path(self.config.logging.file, self.state_dir)
        if log_file is None or under_systemd(env):
            return
        _writable_dir(log_file.parent, "the log file's directory ([logging] file)")
        if log_file.is_dir() or (log_file.exists() and not os.access(log_file, os.W_OK)):
            raise ConfigError(f"{log_file}: the log file ([logging] file) is not a writable file; "
                              'set [logging] file to another path, or "" to log to stderr only')


def _writable_dir(path: Path, what: str) -> None:
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ConfigError(f"{path}: cannot create {what}: {exc.strerror}; choose a directory the "
                          "agent's user may write, or create this one for it") from None
    if not os.access(path, os.W_OK | os.X_OK):
        raise ConfigError(f"{path}: {what} is not writable by this user; choose another "
                          f"directory, or give it to the agent's user (sudo chown)")


SECRET_KEY = re.compile(r"(?i)(?:^|_)(?:keys?|token|secret|password|passwd)$")
"""Keys whose values are never echoed, whatever their type (``api_key = 12345`` too)."""


def _describe(problem: Problem) -> str:
    if problem.kind == "unknown":
        if problem.message.endswith("unknown key"):  # after the entry's name, if it has one
            return f"{problem.message} (check the spelling; `edge-cli config init` writes every key)"
        return problem.message
    if problem.kind != "type" or not any(isinstance(part, str) and SECRET_KEY.search(part)
                                         for part in problem.loc):
        return problem.message
    expected = problem.message.split(" (")[0]
    return f"{expected} (value not shown: it is a secret; write it as a quoted string)"


def format_invalid(exc: ValidationError, origin: str, env_keys: Mapping[tuple[str, ...], str],
                   data: Mapping[str, Any] | None = None) -> str:
    """Every problem on a line of its own: the full key, what is wrong, and the variable that
    set it when it came from the environment."""
    return format_problems(validation_problems(exc, data or {}), origin, env_keys)


NAMED_ENTRIES = {"schedules": "schedule", "rules": "rule", "interlocks": "interlock"}
"""The config's lists whose entries have a ``name``: a problem in one says which it is."""


def validation_problems(exc: ValidationError, data: Mapping[str, Any]) -> list[Problem]:
    """pydantic's problems in our words (:func:`edge.core.validation.problems`); one inside a
    ``[[schedules]]``, ``[[rules]]`` or ``[[interlocks]]`` entry names the entry as the checks
    across sections do (``schedules.0.every: schedule 'pump': must be at least 1s``), by the name
    in ``data``, the raw tables."""
    from edge.core.validation import Problem, problems  # here: only a wrong config needs them

    found = []
    for problem in problems(exc, Config):
        loc, name = problem.loc, None
        if len(loc) >= 2 and loc[0] in NAMED_ENTRIES and isinstance(loc[1], int):
            entries = data.get(str(loc[0]))
            entry = entries[loc[1]] if isinstance(entries, list) and loc[1] < len(entries) else None
            name = entry.get("name") if isinstance(entry, dict) else None
        said = f"{NAMED_ENTRIES[str(loc[0])]} {name!r}: " if isinstance(name, str) else ""
        if said and not problem.message.startswith(said):
            problem = Problem(loc, problem.kind, said + problem.message)
        found.append(problem)
    return found


def format_problems(found: Iterable[Problem], origin: str,
                    env_keys: Mapping[tuple[str, ...], str] | None = None) -> str:
    """The problems of one config, under its origin, one a line, each at its dotted key: the
    words of every config error, whether pydantic found it or a check across sections (the
    rules and schedules against the pins, :mod:`edge.automation`).

    >>> from edge.core.validation import Problem
    >>> print(format_problems([Problem(("rules", 0, "when"), "value", "no pin 'x'")], "config.toml"))
    config.toml: invalid configuration
      rules.0.when: no pin 'x'
    """
    return "\n".join([f"{origin}: invalid configuration",
                      *(f"  {where}: {what}" for where, what in
                        (problem_words(problem, env_keys) for problem in found))])


def problem_words(problem: Problem, env_keys: Mapping[tuple[str, ...], str] | None = None
                  ) -> tuple[str, str]:
    """(where, what) of one problem as :func:`format_problems` words it: the dotted key, and
    what is wrong with the variable that set it when it came from the environment."""
    loc = tuple(str(part) for part in problem.loc)
    var = next((name for keys, name in (env_keys or {}).items() if loc[: len(keys)] == keys),
               None)
    return problem.where or "(top level)", _describe(problem) + (f"  [from {var}]" if var else "")


def invalid_config(found: Iterable[Problem], origin: str) -> ConfigError:
    """A ConfigError (exit 2) naming every problem at once, as :func:`format_problems` words it
    (and holding them, ``problems``)."""
    found = tuple(found)
    error = ConfigError(format_problems(found, origin))
    error.problems = found
    return error


def load_config(explicit: str | None = None, env: Mapping[str, str] = os.environ) -> LoadedConfig:
    raw = load_raw(explicit, env)
    try:
        config = Config.model_validate(raw.data)
    except ValidationError as exc:
        origin = str(raw.path) if raw.path else DEFAULT_ORIGIN
        raise ConfigError(format_invalid(exc, origin, raw.env_keys, raw.data)) from None
    if raw.path:
        config.read_from(str(raw.path))
    return LoadedConfig(config, raw.path)
