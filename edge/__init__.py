"""edge-agent: a compact AI agent runtime for Raspberry Pi hardware."""

import sys

__version__ = "0.1.0"

# httpx imports its command-line client on import, and with it click and pygments wherever they
# happen to be installed (pytest brings pygments): 2 MB and 15 ms the agent never uses. Marking
# the module absent makes httpx fall back to its stub ``httpx.main``.
sys.modules.setdefault("httpx._main", None)
