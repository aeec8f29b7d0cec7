"""``edge-cli run --simulate`` (and every scenario, :mod:`edge.scenario`): the config as written,
with every board and sensor switched to its simulated form (``simulate = true``), so a config
written for the real plant runs unchanged on a laptop.

>>> from edge.config.model import Config
>>> config = simulated(Config.model_validate({"boards": {"uno": {"type": "arduino",
...     "port": "/dev/ttyACM0"}}}))
>>> config.boards["uno"].simulate
True
"""

from __future__ import annotations

import dataclasses

from edge.config.loader import LoadedConfig
from edge.config.model import Config


def simulated(config: Config) -> Config:
    """``config`` with ``simulate = true`` on each board and sensor whose type has the key (a
    board type from another package without a simulated form keeps its own)."""
    boards = {name: section.model_copy(update={"simulate": True})
              if "simulate" in type(section).model_fields else section
              for name, section in config.boards.items()}
    sensors = {name: section.model_copy(update={"simulate": True})
               for name, section in config.sensors.items()}
    return config.model_copy(update={"boards": boards, "sensors": sensors})


def simulated_loaded(loaded: LoadedConfig) -> LoadedConfig:
    """The loaded config, every board and sensor simulated; where it came from unchanged."""
    return dataclasses.replace(loaded, config=simulated(loaded.config))
