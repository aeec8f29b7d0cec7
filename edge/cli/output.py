"""Printing results for people (text) and scripts (``--json``), and the exit code that goes with them."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from typing import Any

from edge.control.ops import OpResult


def emit(result: OpResult, as_json: bool, *, via: str | None = None,
         render: Callable[[dict[str, Any]], str] | None = None) -> int:
    """Print ``result`` and return its exit code: with ``as_json`` one JSON object (``ok``,
    ``error``, ``exit_code``, ``data``, and ``via``); else its message on stdout, or its error
    on stderr. ``render`` words the data instead, whenever there is some (``status`` with no
    agent running still prints the status, and exits 3)."""
    if as_json:
        payload = result.as_dict()
        if via:
            payload["via"] = via
        print(json.dumps(payload, indent=2, sort_keys=True))
    elif render and result.data:
        print(render(result.data))
    elif result.ok:
        if result.message:
            print(result.message)
    else:
        print(f"edge-cli: {result.message}", file=sys.stderr)
    return result.exit_code
