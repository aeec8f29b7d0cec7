"""``docs/reference/operations.md`` is written from the catalog (:mod:`edge.ops.reference`): the
committed page is what the code says now, or this fails with the command that rewrites it."""

from __future__ import annotations

from edge.ops.catalog import CATALOG
from edge.ops.reference import COMMAND, markdown
from tests.helpers import ROOT

PAGE = ROOT / "docs" / "reference" / "operations.md"


def test_the_committed_reference_is_current():
    assert PAGE.read_text() == markdown(), f"docs/reference/operations.md is stale: run `{COMMAND}`"


def test_the_reference_names_every_operation_its_doors_and_arguments():
    page = markdown()
    for name, op in CATALOG.items():
        assert f"\n## {name}\n\n{op.description}\n" in page
        for mcp in op.mcp_names:
            assert f"`{mcp}`" in page
    assert "| `duty` | number (>= 0.0, <= 1.0) | required | Duty cycle from 0.0 (off) to 1.0" in page
    assert "hold_seconds" not in page  # what callers are not offered is not documented as theirs
