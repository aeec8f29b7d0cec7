"""The ``node`` board type: registered from edge through the ``edge_agent.boards`` entry point,
its section checked like any board's, its pins only those its section allowlists."""

from __future__ import annotations

from typing import Any

import pytest

from edge.config.loader import load_config
from edge.hardware import build_hardware
from peripherals.exc import BoardUnavailable, UnknownPin
from peripherals.factory import BOARDS

SHED = """
[mqtt]
url = "mqtt://127.0.0.1:1"
node_id = "house"
[boards.gpio]
type = "gpio"
[boards.gpio.pins]
GPIO17 = {mode = "output"}
[boards.shed]
type = "node"
node_id = "shed"
[boards.shed.aliases]
water = "pump"
[boards.shed.pins]
pump = {mode = "output"}
"""


def test_the_node_type_comes_from_the_entry_point_of_this_project() -> None:
    assert "node" in BOARDS.kinds
    assert BOARDS.origin("node").startswith("edge-agent-pi ")
    assert BOARDS.get("node").options.__name__ == "NodeBoardOptions"


async def test_its_pins_are_the_allowlisted_ones_and_it_is_down_until_the_broker_says_online(
        write_config: Any, isolated_env: dict[str, str], mock_factory: Any) -> None:
    config = load_config(str(write_config(SHED)), env=isolated_env).config
    hardware = build_hardware(config, resident=True, pin_factory=mock_factory)
    assert hardware.locate("water") == ("shed", "pump")
    assert hardware.locate("GPIO17") == ("gpio", "GPIO17")  # not taken for a pin of the node
    with pytest.raises(UnknownPin, match="is not a pin of board shed"):
        hardware.locate("shed:heater")
    board = hardware.boards["shed"]
    with pytest.raises(BoardUnavailable, match=r"a node board needs \[mqtt\] url"):
        await board.connect()
    (status,) = [s for s in hardware.status() if s.name == "shed"]
    assert not status.connected and status.info["node_id"] == "shed"


def test_a_node_id_that_is_no_node_id_stops_the_config(write_config: Any,
                                                       isolated_env: dict[str, str]) -> None:
    from edge.core.exc import ConfigError

    with pytest.raises(ConfigError, match="boards.shed.node_id"):
        load_config(str(write_config(SHED.replace('node_id = "shed"', 'node_id = "a/b"'))),
                    env=isolated_env)


@pytest.mark.parametrize("command", [("config", "check"), ("run",)])
def test_a_node_board_without_a_broker_stops_config_check_and_run(
        command: tuple[str, ...], write_config: Any, isolated_env: dict[str, str]) -> None:
    from tests.helpers import cli

    text = "[boards.shed]\ntype = \"node\"\nnode_id = \"shed\"\n"
    out = cli(*command, env=dict(isolated_env, EDGE_CONFIG=str(write_config(text))), stdin="")
    assert out.returncode == 2, out.stderr
    assert "boards.shed.type: a node board reaches its agent through the broker; set [mqtt] url" \
        in out.stderr
