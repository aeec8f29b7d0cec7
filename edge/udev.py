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

from edge.exc import ConfigError

SAFE_SERIAL = re.compile(r"[A-Za-z0-9._:-]{1,64}$")
SAFE_NAME = re.compile(r"[A-Za-z0-9_-]{1,32}$")
SAFE_PATH = re.compile(r"[A-Za-z0-9._:+-]{1,200}$")
GPIO_RULE = 'SUBSYSTEM=="gpio", KERNEL=="gpiochip*", GROUP="gpio", MODE="0660"'


def board_serials(data: dict) -> dict[str, str]:
    """Board name -> USB serial number for boards that set ``serial_number``."""
    boards = data.get("boards") or {}
    found: dict[str, str] = {}
    for name, table in boards.items():
        serial = table.get("serial_number") if isinstance(table, dict) else None
        if serial is None:
            continue
        serial = str(serial)
        if not SAFE_NAME.match(name):
            raise ConfigError(f"boards.{name}: a board with serial_number needs a name of letters, "
                              "digits, '-' or '_' (it becomes /dev/edge-<name>)")
        if not SAFE_SERIAL.match(serial):
            raise ConfigError(f"boards.{name}.serial_number: {serial!r} is not a USB serial number "
                              "(letters, digits, '.', ':', '-', '_'); copy it from "
                              "`udevadm info -q property -n /dev/ttyACM0 | grep ID_SERIAL_SHORT`")
        found[name] = serial
    return found


def board_usb_paths(data: dict) -> dict[str, str]:
    """Board name -> udev ID_PATH for boards without a serial number that set ``usb_path``."""
    found: dict[str, str] = {}
    for name, table in (data.get("boards") or {}).items():
        path = table.get("usb_path") if isinstance(table, dict) else None
        if path is None or table.get("serial_number") is not None:
            continue
        path = str(path)
        if not SAFE_NAME.match(name):
            raise ConfigError(f"boards.{name}: a board with usb_path needs a name of letters, "
                              "digits, '-' or '_' (it becomes /dev/edge-<name>)")
        if not SAFE_PATH.match(path):
            raise ConfigError(f"boards.{name}.usb_path: {path!r} is not a udev ID_PATH; copy it "
                              "from `edge-cli boards discover` or `udevadm info -q property -n "
                              "/dev/ttyUSB0 | grep ID_PATH=`")
        found[name] = path
    return found


def render_rules(data: dict, source: str = "the config") -> str:
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
