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


def add_to_list(path: Path, keys: tuple[str, ...], value: str) -> bool:
    """Append ``value`` to the list at ``keys`` (tables created as needed); False if present."""
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
    items.append(value)
    write_atomically(path, tomlkit.dumps(document), mode=path.stat().st_mode & 0o777)
    return True
