"""udev rules that give configured USB boards stable names: ``/dev/edge-<board>``.

A board table with a ``serial_number`` key (the USB serial, as ``udevadm info`` or
``edge-cli boards discover`` shows it) gets a symlink, so its config can say
``port = "/dev/edge-arduino"`` whichever ttyACM number it enumerates as. Clones without a
(unique) serial number name the USB socket instead: ``usb_path`` (udev's ``ID_PATH``). GPIO character devices go to
the ``gpio`` group, which plain Debian (unlike Raspberry Pi OS) does not do. The config is read
generically (raw TOML), so any board type with ``serial_number`` takes part.

``deploy/install.sh`` runs ``python -m edge.udev /etc/edge-agent/config.toml`` and installs the
output as ``/etc/udev/rules.d/99-edge-agent.rules``.

>>> print(render_rules({"boards": {"uno": {"serial_number": "8573531"}}}).splitlines()[-1])
SUBSYSTEM=="tty", ATTRS{serial}=="8573531", SYMLINK+="edge-uno", GROUP="dialout", MODE="0660"
"""

from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import Any

from edge.core.exc import ConfigError

SAFE_SERIAL = re.compile(r"[A-Za-z0-9._:-]{1,64}$")
SAFE_NAME = re.compile(r"[A-Za-z0-9_-]{1,32}$")
SAFE_PATH = re.compile(r"[A-Za-z0-9._:+-]{1,200}$")
GPIO_RULE = 'SUBSYSTEM=="gpio", KERNEL=="gpiochip*", GROUP="gpio", MODE="0660"'


def _board_names(data: dict[str, Any], key: str, pattern: re.Pattern[str], fix: str) -> dict[str, str]:
    """Board name -> the value of ``key`` for boards that set it, each checked against
    ``pattern`` (they are written into udev rules: nothing may break out of the quotes)."""
    found: dict[str, str] = {}
    for name, table in (data.get("boards") or {}).items():
        value = table.get(key) if isinstance(table, dict) else None
        if value is None:
            continue
        value = str(value)
        if not SAFE_NAME.match(name):
            raise ConfigError(f"boards.{name}: a board with {key} needs a name of letters, "
                              "digits, '-' or '_' (it becomes /dev/edge-<name>)")
        if not pattern.match(value):
            raise ConfigError(f"boards.{name}.{key}: {value!r} {fix}")
        found[name] = value
    return found


def board_serials(data: dict[str, Any]) -> dict[str, str]:
    """Board name -> USB serial number for boards that set ``serial_number``."""
    return _board_names(data, "serial_number", SAFE_SERIAL,
                        "is not a USB serial number (letters, digits, '.', ':', '-', '_'); copy it "
                        "from `udevadm info -q property -n /dev/ttyACM0 | grep ID_SERIAL_SHORT`")


def board_usb_paths(data: dict[str, Any]) -> dict[str, str]:
    """Board name -> udev ID_PATH for boards without a serial number that set ``usb_path``."""
    serials = board_serials(data)
    paths = _board_names(data, "usb_path", SAFE_PATH,
                         "is not a udev ID_PATH; copy it from `edge-cli boards discover` or "
                         "`udevadm info -q property -n /dev/ttyUSB0 | grep ID_PATH=`")
    return {name: path for name, path in paths.items() if name not in serials}


def render_rules(data: dict[str, Any], source: str = "the config") -> str:
    lines = [f"# edge-agent: stable device names, generated from {source} by install.sh.",
             "# Regenerate after changing boards: sudo edge-cli service install", GPIO_RULE]
    for name, serial in board_serials(data).items():
        lines.append(f'SUBSYSTEM=="tty", ATTRS{{serial}}=="{serial}", SYMLINK+="edge-{name}", '
                     'GROUP="dialout", MODE="0660"')
    for name, path in board_usb_paths(data).items():  # by the socket it is plugged into
        lines.append(f'SUBSYSTEM=="tty", ENV{{ID_PATH}}=="{path}", SYMLINK+="edge-{name}", '
                     'GROUP="dialout", MODE="0660"')
    return "\n".join(lines)


def main(argv: list[str]) -> int:
    from edge.config.locate import read_toml

    if len(argv) != 1:
        print("usage: python -m edge.udev CONFIG.toml", file=sys.stderr)
        return 2
    path = Path(argv[0])
    try:
        print(render_rules(read_toml(path) if path.is_file() else {}, str(path)))
    except ConfigError as exc:
        print(f"edge.udev: {exc}", file=sys.stderr)
        return exc.exit_code
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
