"""A registry of adapters: its table first, then the entry points of installed packages (here a
distribution written into a folder on the module path), loaded once when first asked; asked for
one built-in type, it imports that type's module alone. An entry point that cannot be used is
logged and kept in ``broken``, never raised; a built-in that cannot be loaded is a bug, and
raises."""

from __future__ import annotations

import logging
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

from peripherals import registry as registry_module
from peripherals.base import BoardContext, BoardSpec
from peripherals.options import Options
from peripherals.registry import Registry
from peripherals.sensors.factory import SENSORS
from tests.peripherals.recipes import ledger


@pytest.fixture
def installed(tmp_path, monkeypatch):
    """``installed(module_text, entry_points)``: a distribution ``plugin-pkg 1.2`` with one
    module and entry points in a fresh group, on the module path; returns the group."""
    def install(module: str, points: dict[str, str]) -> str:
        group, name = f"edge_agent.test_{uuid.uuid4().hex[:8]}", f"plugin_{uuid.uuid4().hex[:8]}"
        (tmp_path / f"{name}.py").write_text(module)
        info = tmp_path / "plugin_pkg-1.2.dist-info"
        info.mkdir()
        (info / "METADATA").write_text("Metadata-Version: 2.1\nName: plugin-pkg\nVersion: 1.2\n")
        (info / "entry_points.txt").write_text(
            f"[{group}]\n" + "".join(f"{key} = {name}:{target}\n" for key, target in points.items()))
        monkeypatch.syspath_prepend(str(tmp_path))
        return group
    return install


MODULE = """
from peripherals.base import BoardSpec
from tests.peripherals.recipes.ledger import LedgerOptions, build

LEDGER = BoardSpec("ledger", LedgerOptions, build)
OTHER_NAME = BoardSpec("abacus", LedgerOptions, build)
GPIO = BoardSpec("gpio", LedgerOptions, build)
NOT_A_SPEC = 42
"""


def boards(group: str) -> Registry[BoardSpec]:
    return Registry("board", group, {"gpio": "peripherals.board_types:GPIO"}, BoardSpec,
                    reserved=("virtual",))


def test_the_table_first_then_installed_packages_by_name(installed):
    group = installed(MODULE, {"ledger": "LEDGER"})
    registry = boards(group)
    assert registry.kinds == ("gpio", "ledger")
    assert (registry.origin("gpio"), registry.origin("ledger")) == ("built in", "plugin-pkg 1.2")
    board = registry.get("ledger").build("bench", ledger.LedgerOptions(path="x"), BoardContext())
    assert (board.name, board.kind) == ("bench", "ledger")
    assert registry.broken == []


def test_nothing_is_imported_until_the_registry_is_asked(installed):
    group = installed(MODULE, {"ledger": "LEDGER"})
    plugin = sys.path[0] + "/"  # the folder of the plugin's module
    registry = boards(group)
    assert not [m for m in sys.modules.values() if (getattr(m, "__file__", "") or "").startswith(plugin)]
    registry.specs()
    assert [m for m in sys.modules.values() if (getattr(m, "__file__", "") or "").startswith(plugin)]


ONE_TYPE = """
import sys
from peripherals import registry
from peripherals.factory import BOARDS
from peripherals.sensors.factory import SENSORS

BOARDS.get("gpio"), SENSORS.get("bme280")
modules = [target.partition(":")[0] for table in (BOARDS.builtin, SENSORS.builtin)
           for target in table.values()]
print(sorted({m for m in modules if m in sys.modules}))
print(registry.installed_entry_points.cache_info().currsize)
"""


def test_a_built_in_type_is_imported_on_its_own():
    """Reading a section of a built-in type costs that type's module: no other adapter's, and no
    installed package's metadata (a fresh process: this one has imported them all)."""
    done = subprocess.run([sys.executable, "-c", ONE_TYPE], capture_output=True, text=True,
                          cwd=Path(__file__).parents[2], timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split("\n")[:2] == [
        "['peripherals.board_types', 'peripherals.sensors.bme280']", "0"]


def test_only_a_name_that_is_not_built_in_reads_the_installed_packages(installed, monkeypatch):
    group = installed(MODULE, {"ledger": "LEDGER"})
    registry, read = boards(group), []
    entry_points = registry_module.installed_entry_points
    monkeypatch.setattr(registry_module, "installed_entry_points",
                        lambda path: read.append(path) or entry_points(path))
    assert registry.get("gpio").kind == "gpio" and read == []
    assert registry.get("ledger").kind == "ledger" and len(read) == 1  # found as before
    assert registry.origin("ledger") == "plugin-pkg 1.2"
    assert registry.kinds == ("gpio", "ledger") and registry.get("gpio") is registry.specs()["gpio"]
    with pytest.raises(ValueError, match="unknown board type 'abacus'; use one of: gpio, ledger, virtual"):
        registry.get("abacus")
    assert len(read) == 1  # loaded once


def test_a_built_in_that_cannot_be_loaded_is_a_bug_and_raises():
    registry = Registry("board", "edge_agent.none", {"gpio": "peripherals.no_such_module:SPEC"},
                        BoardSpec)
    with pytest.raises(ModuleNotFoundError):
        registry.specs()
    with pytest.raises(ModuleNotFoundError):
        registry.get("gpio")


@pytest.mark.parametrize("points,why", [
    ({"abacus": "LEDGER"}, "ValueError: the spec is named 'ledger', registered as 'abacus'"),
    ({"gpio": "GPIO"}, "ValueError: board type 'gpio' is taken (built in)"),
    ({"virtual": "LEDGER"}, "ValueError: board type 'virtual' is taken (reserved)"),
    ({"ledger": "NOT_A_SPEC"}, "TypeError: expected a BoardSpec, got int"),
    ({"ledger": "MISSING"}, "AttributeError: module"),
    ({"Ledger": "LEDGER"}, "ValueError: 'Ledger' is no type name"),
])
def test_an_unusable_entry_point_is_logged_and_kept_aside(installed, caplog, points, why):
    group = installed(MODULE, points)
    registry = boards(group)
    with caplog.at_level(logging.WARNING, logger="peripherals.registry"):
        assert registry.kinds == ("gpio",)  # the agent goes on without it
    (broken,) = registry.broken
    (name, target), = points.items()
    assert (broken.group, broken.name, broken.distribution) == (group, name, "plugin-pkg 1.2")
    assert broken.target.endswith(f":{target}") and broken.error.startswith(why)
    assert str(broken).startswith(f"{name} = '{broken.target}' from plugin-pkg 1.2: {why}")
    assert f"adapter_unusable group={group} name={name}" in caplog.text


def test_a_module_that_fails_to_import_is_an_unusable_entry_point(installed):
    group = installed("raise ImportError('needs the vendor SDK: pip install vendor-sdk')\n",
                      {"ledger": "SPEC"})
    registry = boards(group)
    assert registry.kinds == ("gpio",)
    assert registry.broken[0].error == "ImportError: needs the vendor SDK: pip install vendor-sdk"


def test_an_unknown_type_names_the_known_ones():
    with pytest.raises(ValueError, match=r"^unknown sensor type 'dht23'; use one of: pi, ds18b20, "
                                         r"bme280, ads1115, mcp3008, dht22, sht3x, aht20, "
                                         r"hcsr04, pulse_counter, analog$"):
        SENSORS.get("dht23")


def test_a_spec_takes_options_of_its_own_kind():
    class Loose(Options):  # not BoardOptions
        pass

    with pytest.raises(TypeError, match="'loose': options must subclass peripherals.base.BoardOptions"):
        BoardSpec("loose", Loose, ledger.build)


def test_servo_pins_are_declared_by_each_driver_and_its_spec_alike(mock_factory):
    """Config checks ask the spec (no driver imported); the driver refuses the rest at run time."""
    from edge.fleet.board import NodeBoardOptions
    from peripherals.base import Board
    from peripherals.board_types import ArduinoBoardOptions, Stm32BoardOptions
    from peripherals.factory import BOARDS

    options = {"arduino": ArduinoBoardOptions(port="/dev/ttyACM0"),
               "stm32": Stm32BoardOptions(port="socket://127.0.0.1:1"),
               "node": NodeBoardOptions(node_id="b")}
    for kind, spec in BOARDS.specs().items():
        board = spec.build("b", options[kind] if kind in options else spec.options(),
                           BoardContext(mock_factory))
        assert board.servo_pins == spec.servo_pins, kind
    assert BOARDS.get("arduino").servo_pins == {"D9", "D10"}
    assert BOARDS.get("gpio").servo_pins == {f"GPIO{n}" for n in range(28)}  # declared ones
    assert BOARDS.get("gpio").servos_declared and not BOARDS.get("arduino").servos_declared
    assert BOARDS.get("stm32").servo_pins == frozenset()
    assert Board.servo_pins == frozenset()  # a driver that says nothing drives no servo
