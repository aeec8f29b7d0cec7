"""A scenario file and the config it tries: ``config = "greenhouse.toml"`` beside it, unless
``--config`` names another; a file that is not TOML, or steps that are wrong, are a UsageError
(exit 2) naming the file.

The starter scenario :func:`starter` is what ``edge-cli config init`` writes beside a new
config: it presses the default ``button`` and checks the default ``led`` stays off.
"""

from __future__ import annotations

import tomllib
from pathlib import Path

from edge.config.loader import LoadedConfig, load_config
from edge.core.exc import UsageError
from edge.scenario.steps import Scenario, parse_scenario

STARTER_NAME = "scenario.toml"


def read_scenario(path: Path) -> Scenario:
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise UsageError(f"{path}: cannot read the scenario ({exc.strerror})") from None
    except tomllib.TOMLDecodeError as exc:
        raise UsageError(f"{path}: not TOML ({exc})") from None
    try:
        return parse_scenario(data)
    except UsageError as exc:
        raise UsageError(f"{path}: {exc}") from None


def scenario_config(path: Path, scenario: Scenario, config: str | None) -> LoadedConfig:
    """The config the scenario tries: ``config`` (``--config``), else its own ``config`` key
    (relative to the scenario), else the one ``edge-cli`` would find."""
    if config is None and scenario.config is not None:
        config = str((path.parent / scenario.config).resolve())
    return load_config(config)


def starter(config_name: str) -> str:
    """A first scenario for a new config (its default Pi-header ``led`` and ``button``)."""
    return f'''# Try it before you wire it: `edge-cli test {STARTER_NAME}` runs the agent of
# {config_name} on simulated boards, with a fast clock, through these steps.
config = "{config_name}"
timezone = "UTC"
start = "2026-01-05 06:00"

[[steps]]
name = "the button is pressed"
input = "button"
value = "on"

[[steps]]
name = "nothing switches the led by itself"
expect_pin = "led"
is = "off"

[[steps]]
wait = "1h"

[[steps]]
op = "gpio.write"
args = {{ pin = "led", value = "on" }}

[[steps]]
expect_pin = "led"
is = "on"
'''
