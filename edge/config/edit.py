"""Edit the user's config file in place, keeping its comments and layout (tomlkit), written
atomically. Used when pairing adds a user to a channel's allowlist."""

from __future__ import annotations

from importlib import resources
from pathlib import Path

from edge.config.locate import user_config_path
from edge.core.files import write_atomically

CONFIG_MODE = 0o640
"""A new config file: readable by the edge group (the service), not by others (secrets)."""


def example_text() -> str:
    """The commented example config (``edge-cli config init``)."""
    return resources.files("edge.config").joinpath("example.toml").read_text()


def writable_config_path(current: Path | None) -> Path:
    """The file to edit: the one in use, else the user's config (created from the example)."""
    if current is not None:
        return current
    path = user_config_path()
    if not path.exists():
        write_atomically(path, example_text(), CONFIG_MODE)
    return path


def _as_number(value: str) -> int | None:
    """``value`` as a TOML integer when it is one written plainly (``"999"``), else None
    (``"+4915..."``, a UUID, ``"007"``: a leading zero would be lost)."""
    if value.isascii() and value.isdigit() and (value == "0" or not value.startswith("0")):
        return int(value)
    return None


def list_entry(items: list[object], value: str) -> str | int:
    """``value`` in the list's own type: integers stay integers (``[111]`` gets ``999``),
    strings stay strings (``["111"]`` gets ``"999"``). An empty or mixed list follows the value:
    a plain number is an integer, as Telegram's numeric user ids are written in the example
    config; Signal's ``+number`` and UUIDs stay strings.

    >>> list_entry([111], "999"), list_entry(["111"], "999"), list_entry([], "999")
    (999, '999', 999)
    >>> list_entry([], "+4915112345678"), list_entry([111], "+4915112345678")
    ('+4915112345678', '+4915112345678')
    """
    number = _as_number(value)
    if items and all(isinstance(item, str) for item in items):
        return value
    return value if number is None else number


def add_to_list(path: Path, keys: tuple[str, ...], value: str) -> bool:
    """Append ``value`` to the list at ``keys`` (tables created as needed), in the list's own
    type (:func:`list_entry`); False if present."""
    import tomlkit  # only pairing edits configs: keep it off every other command's path

    document = tomlkit.parse(path.read_text())
    table = document
    for key in keys[:-1]:
        if key not in table:
            table[key] = tomlkit.table()
        table = table[key]
    items = table.setdefault(keys[-1], tomlkit.array())
    if value in [str(v) for v in items]:
        return False
    items.append(list_entry(list(items.unwrap()), value))
    write_atomically(path, tomlkit.dumps(document), mode=path.stat().st_mode & 0o777)
    return True
