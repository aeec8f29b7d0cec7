"""A loopback server speaking the OpenAI chat-completions wire format, scripted per test.

It validates requests the way the real API does (model and messages present, tool messages
answering a previous assistant tool call) and records every request body for assertions.
"""

from __future__ import annotations

import contextlib
import json
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler
from typing import Any, TypeAlias

from tests.fakes.loopback import LoopbackServer, reply_json

Reply: TypeAlias = tuple[int, dict[str, Any]]
"""An HTTP status and the JSON body to answer with."""


def completion(content: str | None = None, tool_calls: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": content}
    if tool_calls:
        message["tool_calls"] = [
            {"id": c.get("id", f"call_{i}"), "type": "function",
             "function": {"name": c["name"], "arguments": json.dumps(c["arguments"])}}
            for i, c in enumerate(tool_calls)
        ]
    return {"id": "chatcmpl-test", "object": "chat.completion", "created": 0, "model": "test-model",
            "choices": [{"index": 0, "message": message,
                         "finish_reason": "tool_calls" if tool_calls else "stop"}],
            "usage": {"prompt_tokens": 11, "completion_tokens": 7, "total_tokens": 18}}


def stream_chunks(reply: dict[str, Any]) -> list[dict[str, Any]]:
    """A completion as the chunks ``stream: true`` returns: role, text in pieces, tool calls
    with their arguments split, the finish reason, then usage."""
    message = reply["choices"][0]["message"]
    base = {"id": reply["id"], "object": "chat.completion.chunk", "created": 0, "model": reply["model"]}

    def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
        return {**base, "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}

    chunks = [chunk({"role": "assistant", "content": ""})]
    text = message.get("content") or ""
    chunks += [chunk({"content": text[i:i + 8]}) for i in range(0, len(text), 8)]
    for index, call in enumerate(message.get("tool_calls") or []):
        args = call["function"]["arguments"]
        chunks.append(chunk({"tool_calls": [{"index": index, "id": call["id"], "type": "function",
                                             "function": {"name": call["function"]["name"],
                                                          "arguments": ""}}]}))
        chunks += [chunk({"tool_calls": [{"index": index, "function": {"arguments": args[i:i + 10]}}]})
                   for i in range(0, len(args), 10)]
    chunks.append(chunk({}, reply["choices"][0]["finish_reason"]))
    if reply.get("usage"):
        chunks.append({**base, "choices": [], "usage": reply["usage"]})
    return chunks


def error_body(status: int, message: str) -> Reply:
    return status, {"error": {"message": message, "type": "invalid_request_error", "code": None}}


class OpenAIServer(LoopbackServer):
    """``replies`` is a list of (status, body) consumed in order; requests are recorded. A request
    with ``"stream": true`` gets the same reply as server-sent chunks, as the real API sends."""

    def __init__(self, replies: list[Reply] | None = None, api_key: str | None = None,
                 responder: Callable[[dict[str, Any]], Reply] | None = None, *,
                 chunk_delay: float = 0.0, cut_after_chunks: int | None = None):
        """``responder(body) -> (status, reply)``, when given, answers instead of ``replies``
        (it may sleep to play a slow model). A stream waits ``chunk_delay`` seconds before each
        chunk (a model writing), and with ``cut_after_chunks`` the connection is closed after
        that many chunks, without the end of the stream. A client that hangs up is no error."""
        self.replies = list(replies or [])
        self.responder = responder
        self.chunk_delay, self.cut_after_chunks = chunk_delay, cut_after_chunks
        self.requests: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []
        self.api_key = api_key
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:
                pass

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length", 0))
                body = json.loads(self.rfile.read(length) or b"{}")
                server.requests.append(body)
                server.headers.append(dict(self.headers))
                status, reply = server.answer(self.path, dict(self.headers), body)
                with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                    if status != 200 or not body.get("stream"):
                        return reply_json(self, status, reply)
                    self.send_response(200)
                    self.send_header("Content-Type", "text/event-stream")
                    self.end_headers()
                    for count, part in enumerate(stream_chunks(reply)):
                        if count == server.cut_after_chunks:
                            self.close_connection = True
                            return
                        time.sleep(server.chunk_delay)
                        self.wfile.write(f"data: {json.dumps(part)}\n\n".encode())
                        self.wfile.flush()
                    self.wfile.write(b"data: [DONE]\n\n")

        self.serve(Handler)

    @property
    def base_url(self) -> str:
        return f"{self.root}/v1"

    def answer(self, path: str, headers: dict[str, str], body: dict[str, Any]) -> Reply:
        if path != "/v1/chat/completions":
            return error_body(404, f"unknown path {path}")
        if self.api_key and headers.get("Authorization") != f"Bearer {self.api_key}":
            return error_body(401, "Incorrect API key provided")
        if not body.get("model") or not isinstance(body.get("messages"), list):
            return error_body(400, "model and messages are required")
        called = {c["id"] for m in body["messages"] for c in m.get("tool_calls") or []}
        for m in body["messages"]:
            if m["role"] == "tool" and m.get("tool_call_id") not in called:
                return error_body(400, "messages with role 'tool' must be a response to a "
                                       "preceding message with 'tool_calls'")
        if self.responder is not None:
            return self.responder(body)
        if not self.replies:
            return error_body(500, "test server has no scripted reply left")
        return self.replies.pop(0)
