"""Pairing codes: a random key as a person reads and types it (base32, eight groups of four),
for the fleet's keys (:mod:`edge.fleet.keys`) and the config that may hold one
(``[mqtt.fleet_keys]``).

>>> len(decode_code(new_code()))
20
"""

from __future__ import annotations

import base64
import re
import secrets

from edge.core.exc import UsageError

KEY_BYTES = 20
"""160 bits: 32 base32 characters, typed as eight groups of four."""


class PairingCodeError(UsageError, ValueError):
    """A pairing code that is not one (a typo): the message says what one looks like."""


def new_code() -> str:
    """A fresh pairing code: ``ABCD-EFGH-...`` (eight groups of four, base32)."""
    text = base64.b32encode(secrets.token_bytes(KEY_BYTES)).decode()
    return "-".join(text[i:i + 4] for i in range(0, len(text), 4))


def decode_code(code: str) -> bytes:
    """The key a pairing code carries; a PairingCodeError for anything else.

    >>> decode_code("abcd-efgh")
    Traceback (most recent call last):
    ...
    edge.core.keycodes.PairingCodeError: a pairing code is eight groups of four letters and digits \
(2-7), as `edge-cli fleet pair` printed it; this one has 8 of 32 characters
    """
    text = re.sub(r"[\s-]+", "", code).upper()
    try:
        key = base64.b32decode(text) if len(text) == 32 else b""
    except ValueError:
        key = b""
    if len(key) != KEY_BYTES:
        raise PairingCodeError("a pairing code is eight groups of four letters and digits (2-7), "
                               "as `edge-cli fleet pair` printed it; this one has "
                               f"{len(text)} of 32 characters")
    return key
