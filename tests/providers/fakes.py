"""Loopback fakes of the three APIs: they check requests as the real services do (answering with
their error bodies when something is wrong) and answer with their real JSON and SSE shapes.

Each fake plays a script of turns: ``Say(text)``, ``Call(name, args)``, ``Fail(status, message)``
or ``Cut(text, events)`` (a stream whose connection drops after ``events`` events).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

from tests.providers.loopback import Reply, Request


@dataclass
class Say:
    text: str


@dataclass
class Call:
    name: str
    args: dict
    text: str = ""


@dataclass
class Fail:
    status: int
    message: str = "failed"
    retry_after: str | None = None


@dataclass
class Cut:
    text: str
    events: int


def pieces(text: str, size: int = 4) -> list[str]:
    return [text[i:i + size] for i in range(0, len(text), size)] or [""]


@dataclass
class Fake:
    script: list = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    """Request checks that failed; each also produced the API's 400 error body."""
    default: object = field(default_factory=lambda: Say("ok"))

    def next_turn(self):
        return self.script.pop(0) if self.script else self.default

    async def __call__(self, request: Request) -> Reply:
        try:
            body = request.json
        except ValueError:
            body = None
        problem = self.check(request, body) if isinstance(body, dict) else "body is not JSON"
        if problem:
            self.problems.append(problem)
            return Reply(400, self.error_body(400, problem))
        turn = self.next_turn()
        if isinstance(turn, Fail):
            headers = {"Retry-After": turn.retry_after} if turn.retry_after else {}
            return Reply(turn.status, self.error_body(turn.status, turn.message), headers)
        if self.wants_stream(request, body):
            events = self.stream_events(turn, body)
            return Reply(sse=events, cut_after=turn.events if isinstance(turn, Cut) else None)
        return Reply(200, self.reply_body(turn, body))

    def check(self, request: Request, body: dict) -> str | None: ...
    def error_body(self, status: int, message: str) -> dict: ...
    def wants_stream(self, request: Request, body: dict) -> bool: ...
    def reply_body(self, turn, body: dict) -> dict: ...
    def stream_events(self, turn, body: dict) -> list[str]: ...


def data_event(payload, name: str | None = None) -> str:
    text = payload if isinstance(payload, str) else json.dumps(payload)
    return (f"event: {name}\n" if name else "") + f"data: {text}\n\n"


@dataclass
class OpenAIFake(Fake):
    keys: tuple[str, ...] = ("sk-test",)
    auth_header: str = "authorization"
    rejects_tools: bool = False

    def check(self, request, body):
        if request.method != "POST" or request.path != "/v1/chat/completions":
            return f"unknown route {request.method} {request.path}"
        prefix = "Bearer " if self.auth_header == "authorization" else ""
        if request.headers.get(self.auth_header) not in {prefix + k for k in self.keys}:
            return "Incorrect API key provided"
        if not isinstance(body.get("model"), str) or not body.get("messages"):
            return "model and messages are required"
        open_calls: set[str] = set()
        for message in body["messages"]:
            role = message.get("role")
            if role not in ("system", "user", "assistant", "tool"):
                return f"invalid role {role!r}"
            if role == "assistant":
                open_calls = {c["id"] for c in message.get("tool_calls") or []}
            if role == "tool" and message.get("tool_call_id") not in open_calls:
                return "messages with role 'tool' must be a response to a preceding 'tool_calls'"
        if "tools" in body:
            if self.rejects_tools:
                return f"registry.ollama.ai/library/{body['model']} does not support tools"
            for tool in body["tools"]:
                if tool.get("type") != "function" or "name" not in tool.get("function", {}):
                    return "tools[].function.name is required"
        return None

    def error_body(self, status, message):
        kind = {429: "rate_limit_exceeded", 401: "invalid_api_key"}.get(status, "invalid_request_error"
                                                                       if status < 500 else "server_error")
        return {"error": {"message": message, "type": kind, "param": None, "code": None}}

    def wants_stream(self, request, body):
        return bool(body.get("stream"))

    def reply_body(self, turn, body):
        message: dict = {"role": "assistant", "content": turn.text or None}
        if isinstance(turn, Call):
            message["tool_calls"] = [{"id": "call_abc123", "type": "function", "function": {
                "name": turn.name, "arguments": json.dumps(turn.args)}}]
        return {"id": "chatcmpl-1", "object": "chat.completion", "created": 1700000000,
                "model": body["model"], "choices": [{
                    "index": 0, "message": message, "logprobs": None,
                    "finish_reason": "tool_calls" if isinstance(turn, Call) else "stop"}],
                "usage": {"prompt_tokens": 21, "completion_tokens": 7, "total_tokens": 28}}

    def stream_events(self, turn, body):
        def chunk(delta, finish=None):
            return data_event({"id": "chatcmpl-1", "object": "chat.completion.chunk",
                               "created": 1700000000, "model": body["model"],
                               "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]})
        events = [chunk({"role": "assistant", "content": ""})]
        events += [chunk({"content": p}) for p in pieces(turn.text) if p]
        if isinstance(turn, Call):
            events.append(chunk({"tool_calls": [{"index": 0, "id": "call_abc123", "type": "function",
                                                 "function": {"name": turn.name, "arguments": ""}}]}))
            events += [chunk({"tool_calls": [{"index": 0, "function": {"arguments": p}}]})
                       for p in pieces(json.dumps(turn.args), 7)]
        events.append(chunk({}, "tool_calls" if isinstance(turn, Call) else "stop"))
        if (body.get("stream_options") or {}).get("include_usage"):
            events.append(data_event({"id": "chatcmpl-1", "object": "chat.completion.chunk",
                                      "model": body["model"], "choices": [],
                                      "usage": {"prompt_tokens": 21, "completion_tokens": 7,
                                                "total_tokens": 28}}))
        events.append(data_event("[DONE]"))
        return events


@dataclass
class AnthropicFake(Fake):
    key: str = "sk-ant-test"

    def check(self, request, body):
        if request.method != "POST" or request.path != "/v1/messages":
            return f"unknown route {request.method} {request.path}"
        if request.headers.get("x-api-key") != self.key:
            return "invalid x-api-key"
        if request.headers.get("anthropic-version") != "2023-06-01":
            return "anthropic-version header is required"
        if not isinstance(body.get("max_tokens"), int) or body["max_tokens"] < 1:
            return "max_tokens: Field required"
        messages = body.get("messages") or []
        if not messages or messages[0].get("role") != "user":
            return "messages: first message must use the \"user\" role"
        for before, message in zip([None, *messages], messages, strict=False):  # each after the one before
            if before and before["role"] == message["role"]:
                return "messages: roles must alternate between \"user\" and \"assistant\""
            if message["role"] not in ("user", "assistant"):
                return f"messages: unexpected role {message['role']!r}"
            blocks = message["content"] if isinstance(message["content"], list) else []
            uses = {b["id"] for b in (before or {}).get("content", []) if isinstance(b, dict)
                    and b.get("type") == "tool_use"}
            for block in blocks:
                if block.get("type") == "tool_result" and block.get("tool_use_id") not in uses:
                    return "tool_result block(s) provided when previous message has no matching tool_use"
        system = body.get("system")
        if system is not None and not isinstance(system, (str, list)):
            return "system: Input should be a valid string or list"
        for tool in body.get("tools") or []:
            if not tool.get("name") or (tool.get("input_schema") or {}).get("type") != "object":
                return "tools.0.input_schema.type: Field required"
        return None

    def error_body(self, status, message):
        kind = {429: "rate_limit_error", 401: "authentication_error", 529: "overloaded_error",
                500: "api_error"}.get(status, "invalid_request_error")
        return {"type": "error", "error": {"type": kind, "message": message}}

    def wants_stream(self, request, body):
        return bool(body.get("stream"))

    def content(self, turn) -> list[dict]:
        blocks = [{"type": "thinking", "thinking": "The user wants something.", "signature": "sig1"}]
        if turn.text:
            blocks.append({"type": "text", "text": turn.text})
        if isinstance(turn, Call):
            blocks.append({"type": "tool_use", "id": "toolu_01A", "name": turn.name,
                           "input": turn.args})
        return blocks

    def reply_body(self, turn, body):
        return {"id": "msg_01", "type": "message", "role": "assistant", "model": body["model"],
                "content": self.content(turn), "stop_sequence": None,
                "stop_reason": "tool_use" if isinstance(turn, Call) else "end_turn",
                "usage": {"input_tokens": 30, "output_tokens": 9}}

    def stream_events(self, turn, body):
        start = {"type": "message_start", "message": {
            "id": "msg_01", "type": "message", "role": "assistant", "content": [],
            "model": body["model"], "stop_reason": None, "stop_sequence": None,
            "usage": {"input_tokens": 30, "output_tokens": 1}}}
        events = [data_event(start, "message_start")]
        for index, block in enumerate(self.content(turn)):
            empty = {"thinking": {"type": "thinking", "thinking": ""},
                     "text": {"type": "text", "text": ""},
                     "tool_use": {"type": "tool_use", "id": block.get("id"),
                                  "name": block.get("name"), "input": {}}}[block["type"]]
            events.append(data_event({"type": "content_block_start", "index": index,
                                      "content_block": empty}, "content_block_start"))
            if index == 0:
                events.append(data_event({"type": "ping"}, "ping"))
            if block["type"] == "thinking":
                deltas = [{"type": "thinking_delta", "thinking": block["thinking"]},
                          {"type": "signature_delta", "signature": block["signature"]}]
            elif block["type"] == "text":
                deltas = [{"type": "text_delta", "text": p} for p in pieces(block["text"])]
            else:
                deltas = [{"type": "input_json_delta", "partial_json": p}
                          for p in pieces(json.dumps(block["input"]), 6)]
            events += [data_event({"type": "content_block_delta", "index": index, "delta": d},
                                  "content_block_delta") for d in deltas]
            events.append(data_event({"type": "content_block_stop", "index": index},
                                     "content_block_stop"))
        events.append(data_event({"type": "message_delta", "delta": {
            "stop_reason": "tool_use" if isinstance(turn, Call) else "end_turn",
            "stop_sequence": None}, "usage": {"output_tokens": 9}}, "message_delta"))
        events.append(data_event({"type": "message_stop"}, "message_stop"))
        return events


GEMINI_SCHEMA_KEYS = {"type", "format", "description", "nullable", "enum", "properties",
                      "required", "items", "minItems", "maxItems", "minimum", "maximum"}


def gemini_schema_problem(schema, where: str) -> str | None:
    if not isinstance(schema, dict):
        return None
    for key, value in schema.items():
        if key not in GEMINI_SCHEMA_KEYS:
            return f"Invalid JSON payload received. Unknown name \"{key}\" at '{where}': Cannot find field."
        children = value.values() if key == "properties" else [value] if key == "items" else []
        for child in children:
            if problem := gemini_schema_problem(child, f"{where}.{key}"):
                return problem
    return None


@dataclass
class GeminiFake(Fake):
    """Like a thinking model (Gemini 3): function calls carry a ``thoughtSignature`` that must
    come back with them for the rest of the turn (since the last user text)."""

    key: str = "AIza-test"
    issued: list[str] = field(default_factory=list)

    def signature_problem(self, contents: list) -> str | None:
        users = [i for i, c in enumerate(contents) if c.get("role") == "user"
                 and any("text" in p for p in c.get("parts", []))]
        for content in contents[(users[-1] if users else -1) + 1:]:
            calls = [p for p in content.get("parts", []) if "functionCall" in p]
            if calls and calls[0].get("thoughtSignature") not in self.issued:
                return ("Function call is missing a thought_signature in functionCall parts. "
                        "This is required for tools to work correctly")
        return None

    def check(self, request, body):
        model, _, method = request.path.removeprefix("/v1beta/models/").partition(":")
        if request.method != "POST" or method not in ("generateContent", "streamGenerateContent"):
            return f"unknown route {request.method} {request.path}"
        if request.query.get("key") != self.key:
            return "API key not valid. Please pass a valid API key."
        if method == "streamGenerateContent" and request.query.get("alt") != "sse":
            return "this fake streams only with alt=sse"
        called: set[str] = set()
        for content in body.get("contents") or [None]:
            if not content or content.get("role") not in ("user", "model") or not content.get("parts"):
                return "contents[]: role must be user or model, with parts"
            for part in content["parts"]:
                if "functionResponse" in part and part["functionResponse"].get("name") not in called:
                    return "function response turn must come right after a function call turn"
            called = {p["functionCall"]["name"] for p in content["parts"] if "functionCall" in p}
        if problem := self.signature_problem(body.get("contents") or []):
            return problem
        for tools in body.get("tools") or []:
            for index, declaration in enumerate(tools.get("functionDeclarations") or []):
                problem = gemini_schema_problem(declaration.get("parameters"),
                                                f"tools[0].function_declarations[{index}].parameters")
                if problem:
                    return problem
        return None

    def error_body(self, status, message):
        state = {400: "INVALID_ARGUMENT", 429: "RESOURCE_EXHAUSTED", 500: "INTERNAL",
                 503: "UNAVAILABLE"}.get(status, "UNKNOWN")
        return {"error": {"code": status, "message": message, "status": state}}

    def wants_stream(self, request, body):
        return request.path.endswith(":streamGenerateContent")

    def parts(self, turn) -> list[dict]:
        parts = [{"text": "thinking it over", "thought": True}]
        if turn.text:
            parts.append({"text": turn.text})
        if isinstance(turn, Call):
            parts.append(self.signed_call(turn))
        return parts

    def signed_call(self, turn) -> dict:
        self.issued.append(f"sig-{len(self.issued) + 1}")
        return {"functionCall": {"name": turn.name, "args": turn.args},
                "thoughtSignature": self.issued[-1]}

    def chunk(self, parts, finish: bool, model: str) -> dict:
        candidate = {"content": {"parts": parts, "role": "model"}, "index": 0}
        out = {"candidates": [candidate], "modelVersion": model}
        if finish:
            candidate["finishReason"] = "STOP"
            out["usageMetadata"] = {"promptTokenCount": 14, "candidatesTokenCount": 6,
                                    "totalTokenCount": 20}
        return out

    def reply_body(self, turn, body):
        return self.chunk(self.parts(turn), True, "gemini-test-001")

    def stream_events(self, turn, body):
        text_parts = [{"text": p} for p in pieces(turn.text)] if turn.text else []
        chunks = [[{"text": "thinking", "thought": True}], *([p] for p in text_parts)]
        if isinstance(turn, Call):
            chunks.append([self.signed_call(turn)])
        return [data_event(self.chunk(parts, i == len(chunks) - 1, "gemini-test-001"))
                for i, parts in enumerate(chunks)]
