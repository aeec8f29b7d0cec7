"""A module of the runtime or the boards stays within 400 lines: a longer one is two ideas."""

from __future__ import annotations

from tests.helpers import ROOT

MAX_LINES = 400


def test_no_module_is_over_the_limit():
    sizes = {str(path.relative_to(ROOT)): len(path.read_text().splitlines())
             for top in ("edge", "peripherals") for path in (ROOT / top).rglob("*.py")}
    assert {path: lines for path, lines in sizes.items() if lines > MAX_LINES} == {}
    assert max(sizes.values()) > MAX_LINES // 2  # the walk found the modules
