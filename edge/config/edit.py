"""Edit the user's config file in place, keeping its comments and layout (tomlkit), written
atomically. Used when pairing adds a user to a channel's allowlist."""

from __future__ import annotations

from pathlib import Path

from edge.config.locate import user_config_path


def writable_config_path(current: Path | None) -> Path:
    """The file to edit: the one in use, else the user's config (created from the example)."""
    if current is not None:
        return current
    path = user_config_path()
    if not path.exists():
        from edge.cli.config_cmd import example_text, write_atomically

        write_atomically(path, example_text())
    return path


def add_to_list(path: Path, keys: tuple[str, ...], value: str) -> bool:
    """Append ``value`` to the list at ``keys`` (tables created as needed); False if present."""
    import tomlkit

    from edge.cli.config_cmd import write_atomically

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
