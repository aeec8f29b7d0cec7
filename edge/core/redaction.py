"""Keep secrets out of logs and status: the configured secret values, and anything shaped like a
credential. The logs' :class:`edge.core.logsetup.RedactionFilter` applies it to every record; this
module imports no logging, so ``edge-cli status`` stays light (about 6 ms).

>>> Redactor(["hunter2-token"]).redact("login token=abc123 with hunter2-token")
'login token=*** with ***'
"""

from __future__ import annotations

import re
from collections.abc import Iterable

MASK = "***"
MIN_SECRET_LENGTH = 4
"""Shorter configured values are not masked: they would blank out ordinary words."""

CREDENTIAL_PATTERNS = (
    # api_key=..., "token": "...", password: ..., authorization=...
    re.compile(r"""(?i)(\b[\w-]*(?:api[_-]?key|token|secret|password|passwd|authorization)["']?"""
               r"""\s*[=:]\s*["']?)(?!\*\*\*)(?:Bearer\s+)?[^\s"',;&)]+"""),
    re.compile(r"(?i)(\bBearer\s+)[A-Za-z0-9._~+/=-]+"),
    re.compile(r"(/bot)\d+:[A-Za-z0-9_-]+"),           # Telegram Bot API URLs carry the token
    re.compile(r"()\bsk-[A-Za-z0-9_-]{16,}"),           # OpenAI-style keys
)


def secret_values(model: object) -> list[str]:
    """Every SecretStr value inside a pydantic model (nested models, dicts and lists too)."""
    from pydantic import BaseModel, SecretStr

    found: list[str] = []

    def walk(node: object) -> None:
        if isinstance(node, SecretStr):
            found.append(node.get_secret_value())
        elif isinstance(node, BaseModel):
            for name in type(node).model_fields:
                walk(getattr(node, name))
        elif isinstance(node, dict):
            for value in node.values():
                walk(value)
        elif isinstance(node, list | tuple):
            for value in node:
                walk(value)

    walk(model)
    return found


class Redactor:
    def __init__(self, secrets: Iterable[str] = ()):
        # longest first, so a secret that contains another is masked whole
        self.secrets = sorted({s for s in secrets if s and len(s) >= MIN_SECRET_LENGTH},
                              key=len, reverse=True)

    def redact(self, text: str) -> str:
        for secret in self.secrets:
            text = text.replace(secret, MASK)
        for pattern in CREDENTIAL_PATTERNS:
            text = pattern.sub(lambda m: m[1] + MASK, text)
        return text
