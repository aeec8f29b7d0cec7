"""A signal-cli ``getAttachment`` answer decoded into a file as it streams in: the same bytes
whatever the chunks (an escaped slash cut in two included), stopped past the limit, and
signal-cli's error said when the answer holds no data."""

from __future__ import annotations

import base64
import io
import json

import pytest

from edge.channels.signal_attachment import HEAD_LIMIT, AttachmentData
from edge.channels.voice import VoiceNoteUnavailable

AUDIO = bytes(range(256)) * 5 + b"\xff\xfe"  # base64 with "/" and "+", and padding


def answer(data: bytes, escape_slashes: bool = False) -> bytes:
    text = json.dumps({"jsonrpc": "2.0", "result": {"data": base64.b64encode(data).decode()},
                       "id": 7})
    return (text.replace("/", "\\/") if escape_slashes else text).encode()


def decoded(body: bytes, chunk: int, limit: int = 10_000) -> bytes:
    out = io.BytesIO()
    data = AttachmentData(out, limit)
    for at in range(0, len(body), chunk):
        data.feed(body[at:at + chunk])
    assert data.finish() == len(out.getvalue())
    return out.getvalue()


@pytest.mark.parametrize("escape", [False, True])
def test_the_same_bytes_whatever_the_chunks(escape):
    body = answer(AUDIO, escape)
    for chunk in (1, 2, 3, 5, 7, 64, len(body)):
        assert decoded(body, chunk) == AUDIO, chunk


def test_past_the_limit_it_stops_with_the_limit_in_words():
    with pytest.raises(VoiceNoteUnavailable, match="larger than 1000 bytes"):
        decoded(answer(AUDIO), 64, limit=1000)


def test_signal_clis_error_is_said():
    body = json.dumps({"jsonrpc": "2.0", "error": {"code": -1, "message": "Attachment not found"},
                       "id": 3}).encode()
    with pytest.raises(VoiceNoteUnavailable, match="getAttachment: Attachment not found"):
        decoded(body, 5)


@pytest.mark.parametrize("body, words", [
    (b'{"result": {"data": "T2dn!Uw=="}}', "not base64"),
    (b'{"result": {"data": "T2dn\\u0041"}}', "not base64"),
    (b'{"result": {"data": "T2dnUw==', "ended inside"),
    (b'{"result": {}}', "no attachment data"),
    (b"[" * (HEAD_LIMIT + 10), "no attachment data"),
])
def test_what_is_not_an_attachment_is_refused(body, words):
    with pytest.raises(VoiceNoteUnavailable, match=words):
        decoded(body, 4096)
