"""One verdict on a config file, for ``edge-cli config check`` and ``edge-cli doctor`` alike:
every problem at once, and whether the file shows a secret to everyone.

The checks run in stages: the file's keys and values (pydantic), then the boards and their pins,
then the sensors, interlocks, rules and schedules against them (:class:`Automation`). A stage
runs whenever what it reads is valid: a ``[[schedules]]``, ``[[rules]]`` or ``[[interlocks]]``
entry with a bad value is left out of the later stages (nothing else refers to them), so a bad
cron does not hide two bad rules; a bad board or sensor ends the checks with its stage.

>>> verdict = judge_config(None, env={})   # no file: built-in defaults
>>> verdict.problems, verdict.exposed_secret
([], None)
"""

from __future__ import annotations

import os
import stat
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from edge.config.loader import (
    NAMED_ENTRIES,
    LoadedConfig,
    format_problems,
    problem_words,
    validation_problems,
)
from edge.config.locate import load_raw
from edge.config.model import DEFAULT_ORIGIN, Config
from edge.core.exc import ConfigError
from edge.core.validation import Problem

if TYPE_CHECKING:
    from edge.automation.assembly import Automation


@dataclass
class ConfigVerdict:
    origin: str
    """The file, or what stood in for one."""
    loaded: LoadedConfig | None = None
    """The config, when it is valid."""
    automation: Automation | None = None
    """Its automation, built (not started), when it is valid."""
    problems: list[Problem] = field(default_factory=list)
    """Every problem of every stage that could run, in the order of the file's stages."""
    env_keys: Mapping[tuple[str, ...], str] = field(default_factory=dict)
    exposed_secret: tuple[str, str] | None = None
    """(what, fix) when the file holds a secret and anyone may read it (:func:`exposed_secret`)."""

    @property
    def ok(self) -> bool:
        return not self.problems and self.exposed_secret is None

    def problems_text(self) -> str:
        """The problems, one a line under the origin, as every config error words them."""
        return format_problems(self.problems, self.origin, self.env_keys)

    def lines(self) -> list[dict[str, str]]:
        """Each problem, then the exposed secret, as ``key`` and ``message`` (``--json``)."""
        rows = [{"key": problem.where, "message": problem_words(problem, self.env_keys)[1]}
                for problem in self.problems]
        if self.exposed_secret:
            rows.append({"key": "", "message": "; ".join(self.exposed_secret)})
        return rows


def exposed_secret(path: Path, config: Config) -> tuple[str, str] | None:
    """(what, fix) when ``path`` holds one of ``config``'s secrets (not one from the
    environment) and others may read it; the one test doctor and ``config check`` both use."""
    from edge.core.redaction import secret_values

    text = path.read_text(errors="replace")
    if not path.stat().st_mode & stat.S_IROTH or not any(s and s in text
                                                         for s in secret_values(config)):
        return None
    return (f"{path} holds a secret and is world-readable",
            f"sudo chmod o-rwx {path}, or move the secret to /etc/edge-agent/env")


def judge_config(explicit: str | None, env: Mapping[str, str] = os.environ) -> ConfigVerdict:
    """Every problem of the config at ``explicit`` (or the one the lookup finds). A file that
    cannot be found or read as TOML is a ConfigError: nothing further can be checked."""
    raw = load_raw(explicit, env)
    origin = str(raw.path) if raw.path else DEFAULT_ORIGIN
    verdict = ConfigVerdict(origin, env_keys=raw.env_keys)
    config, kept = _validated(raw.data, verdict.problems)
    if config is None:
        return verdict
    if raw.path:
        config.read_from(str(raw.path))
    later = _semantic_problems(config, verdict)
    verdict.problems.extend(_renumbered(later, kept))
    if not verdict.problems:
        verdict.loaded = LoadedConfig(config, raw.path)
    if raw.path:
        verdict.exposed_secret = exposed_secret(raw.path, config)
    return verdict


def _validated(data: dict[str, Any], found: list[Problem]) -> tuple[Config | None, dict[str, list[int]]]:
    """The config, with each named entry that has a problem left out (its problems go to
    ``found``), and the original place of each entry kept; None when a problem lies elsewhere."""
    from pydantic import ValidationError

    try:
        return Config.model_validate(data), {}
    except ValidationError as exc:
        found.extend(validation_problems(exc, data))
    if not all(len(p.loc) >= 2 and p.loc[0] in NAMED_ENTRIES and isinstance(p.loc[1], int)
               for p in found):  # a problem outside the named entries: the later stages need it
        return None, {}
    bad = {(str(p.loc[0]), p.loc[1]) for p in found}
    kept = {section: [i for i in range(len(data.get(section) or [])) if (section, i) not in bad]
            for section in NAMED_ENTRIES}
    pruned = {**data, **{section: [data[section][i] for i in places]
                         for section, places in kept.items() if section in data}}
    try:
        return Config.model_validate(pruned), kept
    except ValidationError:  # the entries left meet only together (unique names): say what was
        return None, {}


def _semantic_problems(config: Config, verdict: ConfigVerdict) -> list[Problem]:
    """The boards' and pins' problems; when there are none, the automation's."""
    from edge.automation.assembly import Automation
    from edge.hardware import build_hardware

    try:
        hardware = build_hardware(config, resident=False)  # resolves every pin and alias
        verdict.automation = Automation(config, hardware)  # every sensor, rule and schedule
    except ConfigError as exc:
        return list(exc.problems) or [Problem((), "value", str(exc))]
    return []


def _renumbered(found: list[Problem], kept: dict[str, list[int]]) -> list[Problem]:
    """``found`` at the places the entries have in the file (the checks saw them renumbered)."""
    return [Problem((p.loc[0], kept[p.loc[0]][p.loc[1]], *p.loc[2:]), p.kind, p.message)
            if len(p.loc) >= 2 and isinstance(p.loc[0], str) and p.loc[0] in kept
            and isinstance(p.loc[1], int) else p for p in found]
