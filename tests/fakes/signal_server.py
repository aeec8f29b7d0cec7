"""A loopback signal-cli daemon in HTTP mode: ``GET /api/v1/events`` streams server-sent events
(``event: receive`` with ``{"envelope": ..., "account": ...}``, keep-alive comments),
``POST /api/v1/rpc`` answers JSON-RPC 2.0 (``send``, ``sendTyping``, ``sendReaction``,
``getAttachment``: ``{"data": base64}`` of a file received, as signal-cli keeps it in its
attachment store) and ``GET /api/v1/check`` answers 200. Streams can be dropped to test reconnection.

:data:`MALFORMED` lists hostile events: shapes of a real event that signal-cli never sends, each
spoofing an allowed number's ``/gpio led on``."""

from __future__ import annotations

import base64
import json
import queue
import threading
import time
from http.server import BaseHTTPRequestHandler

from tests.fakes.loopback import LoopbackServer, reply_json

KNOWN_METHODS = {"send", "sendTyping", "sendReaction", "getAttachment"}
SPOOFED = "+4915111111111"
"""The number malformed events claim to come from (an allowed one in the channel tests)."""


def event(*, data: dict | None = None, **envelope) -> dict:
    """A ``receive`` event's data: ``SPOOFED`` sends ``/gpio led on``; ``envelope`` keys and
    ``data`` (dataMessage) keys replace the defaults, ``...`` removes one."""
    message = {"timestamp": 1_700_000_000_000, "message": "/gpio led on", "expiresInSeconds": 0}
    base = {"source": SPOOFED, "sourceNumber": SPOOFED, "sourceUuid": "uuid-spoofed",
            "sourceDevice": 1, "timestamp": 1_700_000_000_000, "dataMessage": message}
    for target, changes in ((message, data or {}), (base, envelope)):
        for key, value in changes.items():
            if value is ...:
                target.pop(key)
            else:
                target[key] = value
    return {"envelope": base, "account": "+4915100000000"}


def group(**info) -> dict:
    return {"groupInfo": {"groupId": "grp1", "type": "DELIVER", **info}}


MALFORMED: dict[str, object] = {
    "not JSON": '{"envelope": {"sourceNumber": "+4915111111111", "dataMessage": ',
    "JSON list": "[" + json.dumps(event()) + "]",
    "JSON string": json.dumps("/gpio led on"),
    "JSON null": "null",
    "JSON number": "17",
    "nested too deep": "[" * 100_000 + "]" * 100_000,
    "timestamp of 5000 digits": json.dumps(event()).replace("1700000000000", "9" * 5000),
    "envelope is a list": {"envelope": [event()["envelope"]]},
    "envelope is a string": {"envelope": "/gpio led on"},
    "dataMessage is a string": event(dataMessage="/gpio led on"),
    "dataMessage is a list": event(dataMessage=[{"message": "/gpio led on"}]),
    "message is a number": event(data={"message": 42}),
    "message is a list": event(data={"message": ["/gpio", "led", "on"]}),
    "message is a dict": event(data={"message": {"text": "/gpio led on"}}),
    "huge text": event(data={"message": "/gpio led on " + "x" * 1_000_000}),
    "groupInfo is a string": event(data={"groupInfo": "grp1"}),
    "groupInfo is a list": event(data={"groupInfo": [{"groupId": "grp1"}]}),
    "groupId is a number": event(data=group(groupId=1)),
    "groupId is a list": event(data=group(groupId=["grp1"])),
    "groupId is a dict": event(data=group(groupId={"id": "grp1"})),
    "groupId missing": event(data={"groupInfo": {"type": "DELIVER"}}),
    "groupId is empty": event(data=group(groupId="")),
    "mentions is a dict": event(data={"mentions": {"number": "+4915100000000"}}),
    "mentions is a string": event(data={"mentions": "+4915100000000"}),
    "mention is a string": event(data={"mentions": ["+4915100000000"]}),
    "mention is null": event(data={"mentions": [None]}),
    "mention number is a number": event(data={"mentions": [{"number": 4915100000000}]}),
    "attachments is a dict": event(data={"attachments": {"id": "a1"}}),
    "attachment is a string": event(data={"attachments": ["a1"]}),
    "attachment id is a number": event(data={"attachments": [{"id": 7}]}),
    "too many attachments": event(data={"attachments": [{"id": f"a{i}"} for i in range(1000)]}),
    "sourceNumber is a number": event(sourceNumber=4915111111111, source=..., sourceUuid=...),
    "sourceNumber is a list": event(sourceNumber=[SPOOFED]),
    "sourceUuid is a dict": event(sourceNumber=None, sourceUuid={"uuid": "u"}),
    "no sender at all": event(sourceNumber=..., sourceUuid=..., source=...),
    "empty senders": event(sourceNumber="", sourceUuid="", source=""),
    "timestamp is a string": event(timestamp="1700000000000"),
    "timestamp is a float": event(timestamp=1.7e12),
    "timestamp is true": event(timestamp=True),
    "timestamp is negative": event(timestamp=-1),
    "timestamp missing": event(timestamp=...),
    "timestamp is NaN": json.dumps(event()).replace("1700000000000", "NaN"),
}
"""Each must be dropped (and logged as a warning) without raising."""


class FakeSignal(LoopbackServer):
    def __init__(self, account: str = "+4915100000000"):
        self.account = account
        self.calls: list[dict] = []
        self.failing: set[str] = set()
        """RPC methods that answer with an error (as signal-cli does when a send fails)."""
        self.streams: list[queue.Queue] = []
        self.connections = 0
        self.attachments: dict[str, bytes] = {}
        """Attachment id -> its bytes (signal-cli's attachment store), for getAttachment."""
        self.lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):
                pass

            def do_GET(self):
                if self.path.startswith("/api/v1/events"):
                    server.stream(self)
                elif self.path == "/api/v1/check":
                    self.send_response(200)
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                else:
                    self.send_error(404)

            def do_POST(self):
                if self.path != "/api/v1/rpc":
                    return self.send_error(404)
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                reply_json(self, 200, server.rpc(body))

        self.serve(Handler)

    @property
    def url(self) -> str:
        return self.root

    def rpc(self, body: dict) -> dict:
        with self.lock:
            self.calls.append(body)
        if body.get("jsonrpc") != "2.0" or "id" not in body:
            return {"jsonrpc": "2.0", "error": {"code": -32600, "message": "Invalid Request"}, "id": None}
        if body["method"] not in KNOWN_METHODS:
            return {"jsonrpc": "2.0", "error": {"code": -32601, "message": "Method not found"},
                    "id": body["id"]}
        if body["method"] in self.failing:
            return {"jsonrpc": "2.0", "error": {"code": -1, "message": "Failed to send message"},
                    "id": body["id"]}
        params = body.get("params") or {}
        if params.get("account") != self.account:
            return {"jsonrpc": "2.0", "error": {"code": -1, "message": "Specified account does not exist"},
                    "id": body["id"]}
        if body["method"] == "getAttachment":
            stored = self.attachments.get(params.get("id", ""))
            if stored is None:
                return {"jsonrpc": "2.0", "error": {"code": -1, "message": "Attachment not found"},
                        "id": body["id"]}
            return {"jsonrpc": "2.0", "result": {"data": base64.b64encode(stored).decode()},
                    "id": body["id"]}
        return {"jsonrpc": "2.0", "result": {"timestamp": int(time.time() * 1000)}, "id": body["id"]}

    def stream(self, request: BaseHTTPRequestHandler) -> None:
        events: queue.Queue = queue.Queue()
        with self.lock:
            self.streams.append(events)
            self.connections += 1
        request.send_response(200)
        request.send_header("Content-Type", "text/event-stream")
        request.send_header("Cache-Control", "no-cache")
        request.end_headers()
        try:
            request.wfile.write(b":\n\n")
            request.wfile.flush()
            while True:
                try:
                    item = events.get(timeout=1.0)
                except queue.Empty:
                    request.wfile.write(b":keep-alive\n\n")
                    request.wfile.flush()
                    continue
                if item is None:  # drop the connection
                    return
                data = item if isinstance(item, str) else json.dumps(item)  # a str is sent as is
                lines = "".join(f"data: {line}\n" for line in data.split("\n"))
                request.wfile.write(f"event: receive\n{lines}\n".encode())
                request.wfile.flush()
        except (BrokenPipeError, ConnectionResetError):
            pass
        finally:
            with self.lock:
                self.streams.remove(events)
            request.close_connection = True

    def push_message(self, number: str, text: str, group: str | None = None,
                     mentions: list[dict] | None = None) -> int:
        timestamp = int(time.time() * 1000) + len(self.calls)
        data = {"timestamp": timestamp, "message": text, "expiresInSeconds": 0, "viewOnce": False}
        if group:
            data["groupInfo"] = {"groupId": group, "type": "DELIVER"}
        if mentions:
            data["mentions"] = mentions
        envelope = {"source": number, "sourceNumber": number, "sourceUuid": f"uuid-{number}",
                    "sourceName": "Someone", "sourceDevice": 1, "timestamp": timestamp,
                    "dataMessage": data}
        self._broadcast({"envelope": envelope, "account": self.account})
        return timestamp

    def push_voice(self, number: str, audio: bytes, size: int | None = None,
                   group: str | None = None) -> str:
        """A voice note (``audio/aac``, ``voiceNote``) whose file is ``audio`` in the attachment
        store; its ``size`` is the real one unless given. Returns the attachment id."""
        attachment_id = f"att{len(self.attachments) + 1}.aac"
        self.attachments[attachment_id] = audio
        timestamp = int(time.time() * 1000) + len(self.calls) + len(self.attachments)
        data: dict = {"timestamp": timestamp, "message": None, "expiresInSeconds": 0,
                      "viewOnce": False,
                      "attachments": [{"contentType": "audio/aac", "filename": None,
                                       "id": attachment_id,
                                       "size": len(audio) if size is None else size,
                                       "width": None, "height": None, "caption": None,
                                       "uploadTimestamp": timestamp, "voiceNote": True}]}
        if group:
            data["groupInfo"] = {"groupId": group, "type": "DELIVER"}
        envelope = {"source": number, "sourceNumber": number, "sourceUuid": f"uuid-{number}",
                    "sourceName": "Someone", "sourceDevice": 1, "timestamp": timestamp,
                    "dataMessage": data}
        self._broadcast({"envelope": envelope, "account": self.account})
        return attachment_id

    def push_typing(self, number: str) -> None:
        self._broadcast({"envelope": {"source": number, "sourceNumber": number, "timestamp": 1,
                                      "typingMessage": {"action": "STARTED", "timestamp": 1}},
                         "account": self.account})

    def push_raw(self, *events: object) -> None:
        """``receive`` events as given: text is sent as the event's data unchanged (not JSON, say;
        ``"null"`` for JSON null), anything else as its JSON."""
        for event in events:
            self._broadcast(event)

    def drop_streams(self) -> None:
        self._broadcast(None)

    def _broadcast(self, item) -> None:
        with self.lock:
            for events in self.streams:
                events.put(item)

    def sent(self, method: str = "send") -> list[dict]:
        with self.lock:
            return [c["params"] for c in self.calls if c.get("method") == method]

    def stop(self) -> None:
        self.drop_streams()
        super().stop()


def signal_config(server: FakeSignal, allowed: list[str], extra: str = "") -> str:
    """A config that talks to ``server`` only (no terminal channel), listening in group grp1."""
    numbers = ", ".join(f'"{n}"' for n in allowed)
    return f"""
[channels.cli]
enabled = false
[channels.signal]
http_url = "{server.url}"
account = "{server.account}"
allowed_numbers = [{numbers}]
group_ids = ["grp1"]
{extra}
"""
