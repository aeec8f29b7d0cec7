"""A signal-cli attachment written to a file as its ``getAttachment`` answer streams in.

signal-cli's JSON-RPC answers ``getAttachment`` with the whole file as base64 in one JSON string
(``{"jsonrpc": "2.0", "result": {"data": "T2dnUw..."}, "id": 1}``): a 25 MB voice note is a
33 MB answer. :class:`AttachmentData` finds the ``"data"`` string in the body as it arrives and
decodes it into the file four characters at a time, so neither the answer nor the file is ever
held whole in memory; past ``limit`` decoded bytes it stops. An answer without ``"data"`` is
small (an error): its first :data:`HEAD_LIMIT` bytes are kept to say what it was.

>>> import io
>>> out = io.BytesIO()
>>> data = AttachmentData(out, limit=100)
>>> for chunk in (b'{"jsonrpc":"2.0","result":{"da', b'ta": "T2dn', b'Uw=="},"id":1}'):
...     data.feed(chunk)
>>> data.finish(), out.getvalue()
(4, b'OggS')
"""

from __future__ import annotations

import base64
import binascii
import json
import re
from typing import BinaryIO

from edge.channels.voice import VoiceNoteUnavailable

HEAD_LIMIT = 65_536
"""Bytes of an answer kept while looking for ``"data"`` (an error answer is far shorter)."""
DATA_KEY = re.compile(rb'"data"\s*:\s*"')


class AttachmentData:
    """Feed the answer's chunks, then :meth:`finish`; decoded bytes go to ``out``. What is not
    an attachment within the limit raises :class:`VoiceNoteUnavailable` saying what it was."""

    def __init__(self, out: BinaryIO, limit: int):
        self.out = out
        self.limit = limit
        self.size = 0
        self._head = b""
        self._pending = b""
        self._state = "key"  # then "value", then "after"

    def feed(self, chunk: bytes) -> None:
        if self._state == "key":
            self._head += chunk
            found = DATA_KEY.search(self._head)
            if found is None:
                if len(self._head) > HEAD_LIMIT:
                    raise VoiceNoteUnavailable("signal-cli sent no attachment data")
                return
            self._state, chunk = "value", self._head[found.end():]
            self._head = self._head[:found.start()]
        if self._state == "value":
            self._value(chunk)

    def _value(self, chunk: bytes) -> None:
        end = chunk.find(b'"')
        text = self._pending + (chunk if end < 0 else chunk[:end])
        if text.endswith(b"\\"):  # an escape cut by the chunk's end: finish it with the next
            text, tail = text[:-1], b"\\"
        else:
            tail = b""
        text = text.replace(b"\\/", b"/")  # JSON may escape the slash; base64 has no other escape
        if b"\\" in text:
            raise VoiceNoteUnavailable("signal-cli sent attachment data that is not base64")
        whole = len(text) // 4 * 4 if end < 0 else len(text)
        self._write(text[:whole])
        self._pending = text[whole:] + tail
        if end >= 0:
            self._state = "after"

    def _write(self, encoded: bytes) -> None:
        try:
            decoded = base64.b64decode(encoded, validate=True)
        except (binascii.Error, ValueError):
            raise VoiceNoteUnavailable("signal-cli sent attachment data that is not base64") from None
        self.size += len(decoded)
        if self.size > self.limit:
            raise VoiceNoteUnavailable(f"it is larger than {self.limit} bytes ([transcription] "
                                    "max_bytes)")
        self.out.write(decoded)

    def finish(self) -> int:
        """The bytes written; an answer without data raises with signal-cli's own error."""
        if self._state == "after":
            return self.size
        if self._state == "value":
            raise VoiceNoteUnavailable("signal-cli's answer ended inside the attachment data")
        try:
            body = json.loads(self._head)
        except ValueError:
            body = None
        error = body.get("error") if isinstance(body, dict) else None
        if isinstance(error, dict):
            raise VoiceNoteUnavailable(f"signal-cli getAttachment: {error.get('message')}")
        raise VoiceNoteUnavailable("signal-cli sent no attachment data")
