"""``python -m edge.docs [--check] [ROOT]``: write the manual's reference pages (or, with
``--check``, exit 1 naming the stale ones) under ROOT (default: the working directory)."""

from __future__ import annotations

import sys
from pathlib import Path

from edge.docs.pages import COMMAND, stale, write


def main(argv: list[str]) -> int:
    check = "--check" in argv
    rest = [a for a in argv if a != "--check"]
    root = Path(rest[0]) if rest else Path.cwd()
    if check:
        names = stale(root)
        for name in names:
            print(f"docs/reference/{name} is stale: run `{COMMAND}`", file=sys.stderr)
        return 1 if names else 0
    for path in write(root):
        print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
