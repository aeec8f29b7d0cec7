"""The READMEs' recipes hold: a board type (peripherals/README.md) and a sensor driver
(peripherals/sensors/README.md) are each one module and one line. In a copy of the tree,
``tests/peripherals/recipes/ledger.py`` becomes ``peripherals/ledger.py`` and ``tally.py``
``peripherals/sensors/tally.py``, each registry's table gets its line, and nothing else changes;
edge-cli run from the copy then takes ``type = "ledger"`` and ``type = "tally"`` sections like
the built-in ones: checked with their keys' paths, the ledger's pins driven through the one door
(its allowlist refuses the others), the tally read, doctor listing both."""

from __future__ import annotations

import difflib
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers import ROOT

RECIPES = Path(__file__).parent / "recipes"
MODULES = {"peripherals/ledger.py": RECIPES / "ledger.py",
           "peripherals/sensors/tally.py": RECIPES / "tally.py"}
LINES = {  # table: (the last built-in line, the recipe's line after it)
    "peripherals/factory.py": ('    "stm32": "peripherals.board_types:STM32",\n',
                               '    "ledger": "peripherals.ledger:SPEC",\n'),
    "peripherals/sensors/factory.py": ('    "pulse_counter": "peripherals.sensors.pulse_counter:SPEC",\n',
                                       '    "tally": "peripherals.sensors.tally:SPEC",\n'),
}
PACKAGES = ("edge", "peripherals")

CONFIG = """
[memory]
backend = "none"
[channels.cli]
enabled = false

[boards.bench]
type = "ledger"
path = "{ledger}"
aliases = {{ lamp = "L3" }}
[boards.bench.pins]
lamp = {{ mode = "output", safe = "off" }}
L5 = {{ mode = "input" }}

[sensors.clicks]
type = "tally"
scale = 2
quantity = "clicks"
unit = ""
"""


def sources(root: Path) -> dict[str, str]:
    return {str(path.relative_to(root)): path.read_bytes().decode(errors="replace") for package in PACKAGES
            for path in (root / package).rglob("*") if path.is_file() and "__pycache__" not in path.parts}


@pytest.fixture(scope="module")
def tree(tmp_path_factory) -> Path:
    """A copy of the tree with both recipes followed."""
    root = tmp_path_factory.mktemp("tree")
    for package in PACKAGES:
        shutil.copytree(ROOT / package, root / package, ignore=shutil.ignore_patterns("__pycache__"))
    for target, module in MODULES.items():
        shutil.copy(module, root / target)
    for table, (last, line) in LINES.items():
        text = (root / table).read_text()
        assert text.count(last) == 1, f"{table} no longer ends its table with {last!r}"
        (root / table).write_text(text.replace(last, last + line))
    return root


def edge_cli(tree: Path, env: dict, *args: str) -> subprocess.CompletedProcess[str]:
    """``edge-cli ARGS`` from the copy (its folder comes first on the module path)."""
    return subprocess.run([sys.executable, "-m", "edge", *args], cwd=tree, env=env,
                          capture_output=True, text=True, timeout=60)


@pytest.fixture
def env(tree, tmp_path, isolated_env) -> dict:
    config = tmp_path / "config.toml"
    config.write_text(CONFIG.format(ledger=tmp_path / "ledger.json"))
    return dict(isolated_env, EDGE_CONFIG=str(config))


def test_the_copy_differs_by_the_two_modules_and_the_two_lines(tree):
    ours, theirs = sources(ROOT), sources(tree)
    assert set(theirs) - set(ours) == set(MODULES)
    changed = {name: [line for line in difflib.unified_diff(ours[name].splitlines(True),
                                                             theirs[name].splitlines(True), n=0)
                      if line[:1] in "+-" and line[:3] not in ("+++", "---")]
               for name in ours if ours[name] != theirs.get(name)}
    assert changed == {table: ["+" + line] for table, (_, line) in LINES.items()}


def test_the_new_types_work_like_the_built_in_ones(tree, env, tmp_path):
    assert edge_cli(tree, env, "config", "check").returncode == 0

    on = edge_cli(tree, env, "gpio", "write", "lamp", "on")
    assert on.returncode == 0, on.stdout + on.stderr
    ledger = tmp_path / "ledger.json"
    assert json.loads(ledger.read_text())["L3"] == 1.0  # firmware-like: it holds the level

    refused = edge_cli(tree, env, "gpio", "write", "L4", "on")
    assert refused.returncode == 1 and "bench:L4 is not in the allowlist" in refused.stderr
    assert "L4" not in json.loads(ledger.read_text())  # the allowlist held for the new board

    pins = json.loads(edge_cli(tree, env, "pins", "--json").stdout)["data"]
    assert {(row["board"], row["pin"]) for row in pins["pins"]} >= {("bench", "L3"), ("bench", "L5")}

    (row,) = json.loads(edge_cli(tree, env, "sensors", "--json").stdout)["data"]["sensors"]
    assert (row["name"], row["kind"], row["readings"]) == (
        "clicks", "tally", {"clicks": {"value": 2.0, "unit": ""}})

    report = json.loads(edge_cli(tree, env, "doctor", "--json").stdout)
    (adapters,) = [check for check in report["data"]["checks"] if check["name"] == "adapters"]
    assert adapters["status"] == "ok"
    # this project's own node board (edge.fleet) registers through the same entry point group
    assert "board types: gpio, arduino, stm32, ledger, node (from edge-agent-pi " in adapters["detail"]
    assert adapters["detail"].endswith("sensor types: pi, ds18b20, bme280, ads1115, mcp3008, dht22, "
                                       "sht3x, aht20, hcsr04, pulse_counter, tally")


@pytest.mark.parametrize("change,expected", [
    (("path = ", 'size = 0\npath = '), "boards.bench.size: must be at least 1 (got 0)"),
    (("L5 = ", "L9 = "), "boards.bench.pins.L9: 'L9' is not a pin of ledger bench: use L0..L7"),
    (('type = "ledger"', 'type = "ledgr"'),
     "boards.bench.type: unknown type 'ledgr'; use one of: gpio, arduino, stm32, ledger"),
    (("scale = 2", "start = -1"), "sensors.clicks.start: must be at least 0 (got -1)"),
    (("scale = 2", "scael = 2"), "sensors.clicks.scael: unknown key (did you mean 'scale'?)"),
])
def test_their_sections_are_checked_with_the_keys_path(tree, env, change, expected):
    config = Path(env["EDGE_CONFIG"])
    config.write_text(config.read_text().replace(*change, 1))
    done = edge_cli(tree, env, "config", "check")
    assert done.returncode == 2 and expected in done.stderr, done.stderr
