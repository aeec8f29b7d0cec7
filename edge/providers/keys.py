"""API key resolution and round-robin rotation.

Order: keys given explicitly in config (``api_key``, then ``api_keys``), the provider's own
environment variable (``OPENAI_API_KEY``, ``ANTHROPIC_API_KEY``...), then ``EDGE_API_KEY``.

>>> resolve_api_keys(["k1"], "OPENAI_API_KEY", env={"OPENAI_API_KEY": "k2"})
['k1']
>>> resolve_api_keys([], "OPENAI_API_KEY", env={"EDGE_API_KEY": "k3"})
['k3']
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping

GENERIC_KEY_VARIABLE = "EDGE_API_KEY"


def resolve_api_keys(explicit: Iterable[str | None], env_variable: str | None,
                     env: Mapping[str, str] = os.environ) -> list[str]:
    """The keys to use, in rotation order; empty when none is set anywhere."""
    keys = [k for k in dict.fromkeys(explicit) if k]
    if keys:
        return keys
    for variable in (env_variable, GENERIC_KEY_VARIABLE):
        value = env.get(variable, "").strip() if variable else ""
        if value:
            return [value]
    return []


class KeyRing:
    """The keys of one endpoint; :meth:`rotate` moves to the next (on 429), round-robin."""

    def __init__(self, keys: Iterable[str] = ()):
        self.keys = list(keys)
        self._index = 0

    @property
    def current(self) -> str | None:
        return self.keys[self._index] if self.keys else None

    def rotate(self) -> bool:
        """Move to the next key; False when there is no other key to move to."""
        if len(self.keys) < 2:
            return False
        self._index = (self._index + 1) % len(self.keys)
        return True

    def redact(self, text: str) -> str:
        """``text`` with every key replaced, for error messages and logs."""
        for key in self.keys:
            if key:
                text = text.replace(key, "***")
        return text
