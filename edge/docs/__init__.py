"""The manual's reference pages, written from the code that holds what they say: the config keys
from the pydantic models and their docstrings, the CLI from argparse, the MCP tools from the
operation catalog, the MQTT topics and Home Assistant entities from the bridge, exit codes, the
JSON contract and the error tree. ``python -m edge.docs`` writes them under ``docs/reference/``;
``tests/docs/test_reference.py`` fails when a committed page is stale. A tool for the manual:
the agent never imports it.

Used by module: :mod:`~edge.docs.pages` (every page and how to write them),
:mod:`~edge.docs.config_page`, :mod:`~edge.docs.cli_page`, :mod:`~edge.docs.mqtt_page`,
:mod:`~edge.docs.contract_page` (exit codes, JSON, errors, MCP tools). The face lists them and
imports none.
"""

__all__ = ["cli_page", "config_page", "contract_page", "mqtt_page", "pages"]
