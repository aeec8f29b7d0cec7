"""A loopback signal-cli daemon in HTTP mode: ``GET /api/v1/events`` streams server-sent events
(``event: receive`` with ``{"envelope": ..., "account": ...}``, keep-alive comments),
``POST /api/v1/rpc`` answers JSON-RPC 2.0 (``send``, ``sendTyping``, ``sendReaction``) and
``GET /api/v1/check`` answers 200. Streams can be dropped to test reconnection."""

from __future__ import annotations

import json
import queue
import threading
import time
from http.server import BaseHTTPRequestHandler

from tests.fakes.loopback import LoopbackServer, reply_json

KNOWN_METHODS = {"send", "sendTyping", "sendReaction"}


class FakeSignal(LoopbackServer):
    def __init__(self, account: str = "+4915100000000"):
        self.account = account
        self.calls: list[dict] = []
        self.streams: list[queue.Queue] = []
        self.connections = 0
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
        params = body.get("params") or {}
        if params.get("account") != self.account:
            return {"jsonrpc": "2.0", "error": {"code": -1, "message": "Specified account does not exist"},
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
                request.wfile.write(f"event: receive\ndata: {json.dumps(item)}\n\n".encode())
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

    def push_typing(self, number: str) -> None:
        self._broadcast({"envelope": {"source": number, "sourceNumber": number, "timestamp": 1,
                                      "typingMessage": {"action": "STARTED", "timestamp": 1}},
                         "account": self.account})

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
