"""A loopback Telegram Bot API server: ``POST /bot<token>/<method>`` with JSON or multipart,
answers shaped like the real API (``{"ok": true, "result": ...}`` or ``{"ok": false,
"error_code", "description", "parameters"}``), long-polling ``getUpdates`` with offsets, and
scripted failures (409, 429 with retry_after, 5xx, a dropped poll, a poll that hangs). Files
sent to the bot (voice notes) are served as the real API serves them: ``getFile`` answers a
``file_path`` (400 "file is too big" past 20 MB) and ``GET /file/bot<token>/<file_path>`` the
bytes; ``downloads`` records each download.

Hostile conditions, as Telegram produces them: a per-chat flood limit (``flood_limit``: 429 with
``retry_after``, and a record of sends made while a chat was told to wait), chats that blocked
the bot (403), callback queries that are stale (400 on ``answerCallbackQuery``), and raw updates
of any shape (``push_raw``)."""

from __future__ import annotations

import io
import json
import math
import re
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler
from typing import TYPE_CHECKING, Any, Literal, TypeAlias, TypeVar

from tests.fakes.loopback import LoopbackServer, reply_json

if TYPE_CHECKING:
    from PIL import Image

BOT = {"id": 999, "is_bot": True, "first_name": "Edge", "username": "edge_test_bot"}

Reply: TypeAlias = tuple[int, dict[str, Any]]
"""An HTTP status and the JSON body to answer with."""
Failure: TypeAlias = Literal["drop"] | tuple[Literal["hang"], float] | tuple[int, str, float | None]
T = TypeVar("T")


class FakeTelegram(LoopbackServer):
    def __init__(self, token: str = "123:TEST"):
        self.token = token
        self.updates: list[dict[str, Any]] = []
        self.calls: list[tuple[str, dict[str, Any]]] = []
        self.failures: list[Failure] = []
        """Next getUpdates outcomes: an (error_code, description, retry_after) tuple, "drop" or
        ("hang", seconds)."""
        self.reject_markdown = False
        self.photos: list[dict[str, Any]] = []
        """Each picture taken (``sendPhoto`` answered ok): its fields and its multipart body."""
        self.next_update_id = 100
        self.next_message_id = 1
        self.texts: dict[int, str] = {}
        """Each sent message's current text (an edit to the same text is refused, as by Telegram)."""
        self.markups: dict[int, dict[str, Any] | None] = {}
        """Each sent message's current inline keyboard (None: none). An edit of the text without
        ``reply_markup`` removes it, as Telegram does."""
        self.flood_limit: tuple[int, float] | None = None
        """(messages, seconds): more sends than this to one chat within the window get 429."""
        self.blocked: set[int] = set()
        """Chats whose user blocked the bot: sends there get 403."""
        self.flood_violations: list[tuple[str, object]] = []
        """(method, chat_id) of sends made while that chat was told to retry later."""
        self._chat_sends: dict[str, list[float]] = {}
        self._chat_hold: dict[str, float] = {}
        self._callbacks: set[str] = set()
        self._lock = threading.Lock()
        self.handed_out: dict[int, float] = {}
        """update_id -> when (time.perf_counter) a getUpdates answer first carried it."""
        self.delivered: list[dict[str, Any]] = []
        """sendMessage calls that succeeded (``sent()`` also lists refused attempts)."""
        self.files: dict[str, bytes] = {}
        """file_id -> the file's bytes, for getFile and downloads."""
        self.downloads: list[str] = []
        """The file paths downloaded, in order."""
        self.cond = threading.Condition()
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:
                pass

            def do_POST(self) -> None:
                server.handle(self)

            def do_GET(self) -> None:
                server.serve_file(self)

        self.serve(Handler)

    @property
    def api_base(self) -> str:
        return self.root

    # -- scripting -------------------------------------------------------------------------

    def push_message(self, user_id: int, text: str, chat_id: int | None = None,
                     chat_type: str = "private", **extra: Any) -> None:
        message = {"message_id": self.next_message_id, "date": int(time.time()), "text": text,
                   "from": {"id": user_id, "is_bot": False, "first_name": f"u{user_id}"},
                   "chat": {"id": chat_id or user_id, "type": chat_type}, **extra}
        self.next_message_id += 1
        self._push({"message": message})

    def push_voice(self, user_id: int, audio: bytes, duration: int = 3, kind: str = "voice",
                   file_size: int | None = None, chat_id: int | None = None,
                   chat_type: str = "private", **extra: Any) -> str:
        """A voice message (``kind="audio"``: an audio file) whose file is ``audio``; its
        ``file_size`` is the real one unless given. Returns the file_id."""
        file_id = f"file{len(self.files) + 1}"
        self.files[file_id] = audio
        media: dict[str, Any] = {"file_id": file_id, "file_unique_id": f"u{file_id}",
                                 "duration": duration,
                                 "mime_type": "audio/ogg" if kind == "voice" else "audio/mpeg",
                                 "file_size": len(audio) if file_size is None else file_size}
        message = {"message_id": self.next_message_id, "date": int(time.time()),
                   "from": {"id": user_id, "is_bot": False, "first_name": f"u{user_id}"},
                   "chat": {"id": chat_id or user_id, "type": chat_type}, kind: media, **extra}
        self.next_message_id += 1
        self._push({"message": message})
        return file_id

    def push_callback(self, user_id: int, data: str, message: dict[str, Any], stale: bool = False) -> None:
        """A button press; a ``stale`` one (older than Telegram keeps queries) cannot be answered."""
        query_id = f"cb{self.next_update_id}"
        if not stale:
            self._callbacks.add(query_id)
        self._push({"callback_query": {"id": query_id, "data": data,
                                       "from": {"id": user_id, "is_bot": False, "first_name": "x"},
                                       "message": message, "chat_instance": "1"}})

    def push_raw(self, *updates: dict[str, Any]) -> list[int]:
        """Updates of any shape, delivered in one batch; each gets an ``update_id`` unless it
        already has a key of that name. Returns the ids given."""
        with self.cond:
            ids = [self._append(update) for update in updates]
            self.cond.notify_all()
        return ids

    def _push(self, update: dict[str, Any]) -> None:
        self.push_raw(update)

    def _append(self, update: dict[str, Any]) -> int:
        update_id = self.next_update_id
        self.next_update_id += 1
        update.setdefault("update_id", update_id)
        self.updates.append({"update": update, "id": update_id})
        return update_id

    def sent(self, method: str = "sendMessage") -> list[dict[str, Any]]:
        return [params for name, params in self.calls if name == method]

    def wait_for(self, predicate: Callable[[], T], timeout: float = 10.0) -> T:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            result = predicate()
            if result:
                return result
            time.sleep(0.02)
        raise AssertionError("condition not met in time")

    # -- serving ---------------------------------------------------------------------------

    def handle(self, request: BaseHTTPRequestHandler) -> None:
        prefix = f"/bot{self.token}/"
        if not request.path.startswith(prefix):
            return reply_json(request, 401, {"ok": False, "error_code": 401,
                                             "description": "Unauthorized"})
        method = request.path[len(prefix):]
        length = int(request.headers.get("Content-Length", 0))
        raw = request.rfile.read(length)
        ctype = request.headers.get("Content-Type", "")
        params = json.loads(raw or b"{}") if "json" in ctype else {
            **_form_fields(raw), "multipart": True, "size": len(raw), "body": raw}
        if method != "getUpdates":
            self.calls.append((method, params))
        handler = getattr(self, f"m_{method}", None)
        if handler is None:
            return reply_json(request, 404, {"ok": False, "error_code": 404, "description": "Not Found"})
        outcome = handler(params)
        if outcome == "drop":
            request.close_connection = True
            request.connection.close()
            return None
        return reply_json(request, *outcome)

    @staticmethod
    def ok(result: object) -> Reply:
        return 200, {"ok": True, "result": result}

    def m_getMe(self, params: dict[str, Any]) -> Reply:
        return self.ok(BOT)

    def m_setMyCommands(self, params: dict[str, Any]) -> Reply:
        return self.ok(True)

    def m_getUpdates(self, params: dict[str, Any]) -> Reply | Literal["drop"]:
        if self.failures:
            match self.failures.pop(0):
                case "drop":
                    return "drop"
                case ("hang", seconds):
                    time.sleep(seconds)
                    return self.ok([])
                case (code, description, retry):
                    return self.error(code, description, retry)
        offset = params.get("offset", 0)
        deadline = time.monotonic() + min(params.get("timeout", 0), 5)
        with self.cond:
            self.updates = [u for u in self.updates if u["id"] >= offset]
            while not self.updates and time.monotonic() < deadline:
                self.cond.wait(deadline - time.monotonic())
            now = time.perf_counter()
            for update in self.updates:
                self.handed_out.setdefault(update["id"], now)
            return self.ok([u["update"] for u in self.updates])

    @staticmethod
    def error(code: int, description: str, retry_after: float | None = None) -> Reply:
        body: dict[str, Any] = {"ok": False, "error_code": code, "description": description}
        if retry_after is not None:
            body["parameters"] = {"retry_after": retry_after}
        return code, body

    def _refused(self, method: str, chat_id: object, counts: bool = True) -> Reply | None:
        """403 for a chat that blocked the bot; 429 while a chat is told to wait, or beyond the
        per-chat flood limit (only messages count towards it, chat actions do not)."""
        with self._lock:
            return self._refused_locked(method, chat_id, counts)

    def _refused_locked(self, method: str, chat_id: object, counts: bool) -> Reply | None:
        chat, now = str(chat_id), time.monotonic()
        if chat in {str(b) for b in self.blocked}:
            return self.error(403, "Forbidden: bot was blocked by the user")
        if self.flood_limit is None:
            return None
        held = self._chat_hold.get(chat, 0.0)
        if held > now:
            self.flood_violations.append((method, chat_id))
            retry = max(1, math.ceil(held - now))
            return self.error(429, f"Too Many Requests: retry after {retry}", retry)
        if not counts:
            return None
        count, window = self.flood_limit
        recent = [t for t in self._chat_sends.get(chat, []) if now - t < window]
        if len(recent) >= count:
            retry = max(1, math.ceil(window - (now - recent[0])))
            self._chat_hold[chat] = now + retry
            return self.error(429, f"Too Many Requests: retry after {retry}", retry)
        self._chat_sends[chat] = [*recent, now]
        return None

    CANNOT_PARSE = ("Bad Request: can't parse entities: Can't find end of the entity starting at "
                    "byte offset 3")

    def m_sendMessage(self, params: dict[str, Any]) -> Reply:
        refused = self._refused("sendMessage", params.get("chat_id"))
        if refused:
            return refused
        if not params.get("chat_id") or not params.get("text"):
            return self.error(400, "Bad Request: message text is empty")
        if len(params["text"]) > 4096:
            return self.error(400, "Bad Request: message is too long")
        if self.reject_markdown and params.get("parse_mode"):
            return self.error(400, self.CANNOT_PARSE)
        message = {"message_id": self.next_message_id, "date": int(time.time()),
                   "chat": {"id": params["chat_id"], "type": "private"}, "text": params["text"]}
        self.next_message_id += 1
        self.delivered.append(params)
        self.texts[message["message_id"]] = params["text"]
        self.markups[message["message_id"]] = _keyboard(params.get("reply_markup"))
        return self.ok(message)

    NOT_MODIFIED = ("Bad Request: message is not modified: specified new message content and "
                    "reply markup are exactly the same as a current content and reply markup of "
                    "the message")

    def m_editMessageText(self, params: dict[str, Any]) -> Reply:
        message_id, markup = params["message_id"], _keyboard(params.get("reply_markup"))
        if self.reject_markdown and params.get("parse_mode"):
            return self.error(400, self.CANNOT_PARSE)
        if (self.texts.get(message_id), self.markups.get(message_id)) == (params["text"], markup):
            return self.error(400, self.NOT_MODIFIED)  # as the real Bot API does
        self.texts[message_id] = params["text"]
        self.markups[message_id] = markup
        return self.ok({"message_id": message_id, "text": params["text"],
                        "chat": {"id": params["chat_id"], "type": "private"}, "date": 0})

    def m_editMessageReplyMarkup(self, params: dict[str, Any]) -> Reply:
        message_id, markup = params["message_id"], _keyboard(params.get("reply_markup"))
        if message_id not in self.texts:
            return self.error(400, "Bad Request: message to edit not found")
        if self.markups.get(message_id) == markup:
            return self.error(400, self.NOT_MODIFIED)
        self.markups[message_id] = markup
        return self.ok({"message_id": message_id, "text": self.texts[message_id],
                        "chat": {"id": params["chat_id"], "type": "private"}, "date": 0})

    def m_answerCallbackQuery(self, params: dict[str, Any]) -> Reply:
        if params.get("callback_query_id") not in self._callbacks:
            return self.error(400, "Bad Request: query is too old and response timeout expired "
                                   "or query ID is invalid")
        self._callbacks.discard(params["callback_query_id"])
        return self.ok(True)

    def m_sendChatAction(self, params: dict[str, Any]) -> Reply:
        return self._refused("sendChatAction", params.get("chat_id"), counts=False) or self.ok(True)

    DOWNLOAD_LIMIT = 20_000_000
    """Bots may download files of at most 20 MB."""

    def m_getFile(self, params: dict[str, Any]) -> Reply:
        file_id = params.get("file_id")
        if not isinstance(file_id, str) or file_id not in self.files:
            return self.error(400, "Bad Request: invalid file_id")
        size = len(self.files[file_id])
        if size > self.DOWNLOAD_LIMIT:
            return self.error(400, "Bad Request: file is too big")
        return self.ok({"file_id": file_id, "file_unique_id": f"u{file_id}", "file_size": size,
                        "file_path": f"voice/{file_id}.oga"})

    def serve_file(self, request: BaseHTTPRequestHandler) -> None:
        """``GET /file/bot<token>/<file_path>``: the file's bytes, or 404."""
        prefix = f"/file/bot{self.token}/voice/"
        name = request.path[len(prefix):] if request.path.startswith(prefix) else ""
        data = self.files.get(name.removesuffix(".oga"))
        if data is None:
            return reply_json(request, 404, {"ok": False, "error_code": 404, "description": "Not Found"})
        self.downloads.append(request.path.removeprefix(f"/file/bot{self.token}/"))
        request.send_response(200)
        request.send_header("Content-Type", "application/octet-stream")
        request.send_header("Content-Length", str(len(data)))
        request.end_headers()
        request.wfile.write(data)
        return None

    def m_sendPhoto(self, params: dict[str, Any]) -> Reply:
        if len(params.get("caption", "")) > 1024:
            return self.error(400, "Bad Request: message caption is too long")
        if self.reject_markdown and params.get("parse_mode"):
            return self.error(400, self.CANNOT_PARSE)
        self.photos.append(params)
        return self.ok({"message_id": self.next_message_id, "date": 0, "chat": {"id": 1, "type": "private"},
                        "photo": [{"file_id": "f", "width": 1, "height": 1}]})


def telegram_config(server: FakeTelegram, extra: str = "", allowed: str = '["42", "43"]',
                    drafts: bool = False) -> str:
    """A config that talks to ``server`` only (no terminal channel)."""
    return f"""
[channels.cli]
enabled = false
[channels.telegram]
bot_token = "{server.token}"
api_base = "{server.api_base}"
allowed_users = {allowed}
poll_timeout_seconds = 1
stream_drafts = {str(drafts).lower()}
{extra}
"""


def _keyboard(markup: dict[str, Any] | None) -> dict[str, Any] | None:
    """An inline keyboard as Telegram keeps it: an empty one is none."""
    if not markup or not any(markup.get("inline_keyboard") or []):
        return None
    return markup


def texts_to(server: FakeTelegram, chat_id: object) -> list[str]:
    """The texts sent to ``chat_id``, in order."""
    return [p["text"] for p in server.sent() if str(p["chat_id"]) == str(chat_id)]


def _form_fields(body: bytes) -> dict[str, str]:
    """The text fields of a multipart body (``chat_id``, ``caption``, ``parse_mode``...); the
    file parts are left in ``body``."""
    if not body.startswith(b"--"):
        return {}
    boundary = body[:body.index(b"\r\n")]
    fields = {}
    for part in body.split(boundary)[1:-1]:
        head, _, value = part.partition(b"\r\n\r\n")
        named = re.search(rb'name="([^"]+)"', head)
        if named and b"filename=" not in head:
            fields[named.group(1).decode()] = value.removesuffix(b"\r\n").decode()
    return fields


def captions_to(server: FakeTelegram, chat_id: object) -> list[str | None]:
    """The caption of each picture ``chat_id`` got (None: none), in order (a call the server
    refused, a caption too long or Markdown it rejected, is not counted)."""
    return [call.get("caption") for call in server.photos if call.get("chat_id") == str(chat_id)]


def photos_to(server: FakeTelegram, chat_id: object) -> list[Image.Image]:
    """The pictures sent to ``chat_id`` with ``sendPhoto``, in order: the ``photo`` part of each
    multipart body, decoded (JPEG or PNG)."""
    from PIL import Image

    found: list[Image.Image] = []
    for call in server.sent("sendPhoto"):
        body: bytes = call["body"]
        boundary = body[:body.index(b"\r\n")]  # a multipart body opens with its boundary
        parts = dict(part.partition(b"\r\n\r\n")[::2] for part in body.split(boundary)[1:-1])
        if not any(b'name="chat_id"' in head and value.strip() == str(chat_id).encode()
                   for head, value in parts.items()):
            continue
        [photo] = [value.removesuffix(b"\r\n") for head, value in parts.items()
                   if b'name="photo"' in head]
        picture = Image.open(io.BytesIO(photo))
        picture.load()
        found.append(picture)
    return found
