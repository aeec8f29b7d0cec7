"""Every generated page of the manual and the function that writes it; :func:`write` puts them
under ``docs/reference/``, :func:`stale` names the committed pages that differ from the code.

    python -m edge.docs          # rewrite every page
    python -m edge.docs --check  # exit 1 naming each stale page
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from edge.docs import cli_page, config_page, contract_page, mqtt_page
from edge.ops import reference

COMMAND = "python -m edge.docs"
REFERENCE = Path("docs") / "reference"

PAGES: dict[str, Callable[[], str]] = {
    "configuration.md": config_page.markdown,
    "cli.md": cli_page.markdown,
    "operations.md": reference.markdown,
    "mcp-tools.md": contract_page.mcp_tools,
    "mqtt.md": mqtt_page.markdown,
    "exit-codes.md": contract_page.exit_codes,
    "errors.md": contract_page.errors,
}
"""File name under ``docs/reference/`` -> the function that writes it."""


def write(root: Path) -> list[Path]:
    """Write every page under ``root``; the paths written."""
    folder = root / REFERENCE
    folder.mkdir(parents=True, exist_ok=True)
    written = []
    for name, page in PAGES.items():
        path = folder / name
        path.write_text(page())
        written.append(path)
    return written


def stale(root: Path) -> list[str]:
    """The pages under ``root`` that are missing or differ from what the code says now."""
    folder = root / REFERENCE
    return [name for name, page in PAGES.items()
            if not (folder / name).is_file() or (folder / name).read_text() != page()]
