"""A loopback OpenAI-compatible speech-to-text server: ``POST /v1/audio/transcriptions`` with a
``multipart/form-data`` body (``file``, ``model``, optional ``language``, ``response_format``),
parsed with the standard library's MIME parser as a real server parses it. It checks what the
real API checks (a ``file`` part with a file name, a ``model``, the bearer key when it has one)
and answers ``{"text": ...}`` or the API's error shape ``{"error": {"message", "type"}}``.

Scripted per test: ``transcripts`` maps audio bytes to their text (anything else is heard as
``default``), ``failures`` holds the next answers' failures (an HTTP status, a status and the
error message to say, or ``("hang", seconds)``), and ``requests`` records each request's form fields and file.

With ``keep_audio=False`` (uploads of tens of MB) the body is read in 1 MiB pieces and the file
part counted, not kept: every note is heard as ``default``; ``most_at_once`` is the most uploads
it was receiving at the same time.
"""

from __future__ import annotations

import io
import re
import threading
import time
from dataclasses import dataclass
from email.message import Message
from email.parser import BytesParser
from email.policy import HTTP
from http.server import BaseHTTPRequestHandler
from typing import IO, Any, Literal, TypeAlias

from tests.fakes.loopback import LoopbackServer, reply_json

Failure: TypeAlias = int | tuple[int, str] | tuple[Literal["hang"], float]


@dataclass(frozen=True)
class Upload:
    """One request as the server understood it."""

    fields: dict[str, str]
    """The form's text fields (model, language, response_format)."""
    filename: str | None
    content_type: str | None
    audio: bytes
    authorization: str | None
    size: int = 0
    """The file's bytes (``audio`` is empty when they were not kept)."""


def parse_multipart(content_type: str, body: bytes) -> tuple[dict[str, str], dict[str, Message]]:
    """The text fields and the file parts of a ``multipart/form-data`` body."""
    message = BytesParser(policy=HTTP).parsebytes(
        f"Content-Type: {content_type}\r\nMIME-Version: 1.0\r\n\r\n".encode() + body)
    if not message.is_multipart():
        raise ValueError("not multipart")
    fields: dict[str, str] = {}
    files: dict[str, Message] = {}
    for part in message.iter_parts():
        name = part.get_param("name", header="content-disposition")
        if not isinstance(name, str):
            raise ValueError("a part without a name")
        if part.get_filename() is not None:
            files[name] = part
        else:
            payload = part.get_payload(decode=True)
            fields[name] = payload.decode() if isinstance(payload, bytes) else ""
    return fields, files


class FakeTranscription(LoopbackServer):
    def __init__(self, api_key: str | None = None, default: str = "hello there",
                 keep_audio: bool = True):
        self.api_key = api_key
        self.default = default
        self.keep_audio = keep_audio
        self.most_at_once = 0
        self._receiving = 0
        self._count = threading.Lock()
        self.transcripts: dict[bytes, str] = {}
        self.failures: list[Failure] = []
        self.requests: list[Upload] = []
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:
                pass

            def do_POST(self) -> None:
                server.handle(self)

        self.serve(Handler)

    @property
    def base_url(self) -> str:
        return f"{self.root}/v1"

    @staticmethod
    def error(status: int, message: str, kind: str = "invalid_request_error") -> tuple[int, dict[str, Any]]:
        return status, {"error": {"message": message, "type": kind, "param": None, "code": None}}

    def handle(self, request: BaseHTTPRequestHandler) -> None:
        with self._count:
            self._receiving += 1
            self.most_at_once = max(self.most_at_once, self._receiving)
        try:
            length = int(request.headers.get("Content-Length", 0))
            headers = dict(request.headers.items())
            if self.keep_audio:
                body = request.rfile.read(length)
            else:
                body, size = counted_file_part(headers.get("Content-Type", ""), request.rfile, length)
        finally:
            with self._count:
                self._receiving -= 1
        if self.keep_audio:
            reply_json(request, *self.answer(request.path, headers, body))
            return
        status, answer = self.answer(request.path, headers, body)
        if status == 200:
            self.requests[-1] = Upload(**{**vars(self.requests[-1]), "size": size})
            answer = {"text": self.default}
        reply_json(request, status, answer)

    def answer(self, path: str, headers: dict[str, str], body: bytes) -> tuple[int, dict[str, Any]]:
        if path != "/v1/audio/transcriptions":
            return self.error(404, f"Unknown request URL: POST {path}.")
        authorization = headers.get("Authorization")
        try:
            fields, files = parse_multipart(headers.get("Content-Type", ""), body)
        except ValueError as exc:
            return self.error(400, f"Could not parse multipart form: {exc}")
        part = files.get("file")
        audio = part.get_payload(decode=True) if part is not None else None
        audio = audio if isinstance(audio, bytes) else b""
        self.requests.append(Upload(fields, part.get_filename() if part is not None else None,
                                    part.get_content_type() if part is not None else None,
                                    audio, authorization, len(audio)))
        if self.api_key is not None and authorization != f"Bearer {self.api_key}":
            return self.error(401, "Incorrect API key provided.", "invalid_api_key")
        if self.failures:
            match self.failures.pop(0):
                case ("hang", seconds):
                    time.sleep(seconds)
                case int(status):
                    return self.error(status, f"failure {status} as scripted", "server_error")
                case (int(status), str(words)):
                    return self.error(status, words, "server_error")
        if part is None or not audio:
            return self.error(400, "Missing required parameter: 'file'.")
        if not fields.get("model"):
            return self.error(400, "Missing required parameter: 'model'.")
        if fields.get("response_format", "json") != "json":
            return self.error(400, "this fake answers response_format=json only")
        assert isinstance(audio, bytes)
        return 200, {"text": self.transcripts.get(audio, self.default)}


PIECE = 1 << 20


def counted_file_part(content_type: str, body: IO[bytes] | io.BufferedIOBase, length: int) -> tuple[bytes, int]:
    """A multipart body read in pieces, its last part (the file, where clients put it) counted:
    the body with the file's content cut to one byte (the rest parses as usual), and the file's
    size."""
    found = re.search(r'boundary="?([^";]+)"?', content_type)
    closing = b"\r\n--" + (found.group(1).encode() if found else b"") + b"--\r\n"
    head, size, tail, left = b"", -1, b"", length
    while left > 0:
        piece = body.read(min(PIECE, left))
        if not piece:
            break
        left -= len(piece)
        if size < 0:
            head += piece
            start = head.find(b"\r\n\r\n", max(0, head.find(b'name="file"')))
            if b'name="file"' not in head or start < 0:
                continue
            piece, head, size = head[start + 4:], head[:start + 4], 0
        size += len(piece)
        tail = (tail + piece)[-len(closing):]
    if size < 0 or tail != closing:
        return head, 0
    return head + b"x" + closing, size - len(closing)
