"""Printing results for people (text) and scripts (``--json``), and the exit code that goes with them."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from typing import Any

from edge.control.ops import OpResult


def emit(result: OpResult, as_json: bool, *, via: str | None = None,
         render: Callable[[dict[str, Any]], str] | None = None) -> int:
    if as_json:
        payload = result.as_dict()
        if via:
            payload["via"] = via
        print(json.dumps(payload, indent=2, sort_keys=True))
    elif result.ok:
        text = render(result.data) if render else result.message
        if text:
            print(text)
    else:
        print(f"edge-cli: {result.message}", file=sys.stderr)
    return result.exit_code
