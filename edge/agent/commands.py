"""Direct commands, answered without the model: ``/help``, ``/status``, ``/pins``, ``/gpio``, ``/pwm``,
``/chart``, ``/photo``...

They go through the same tools (and so the same policy) as the model's tool calls. The
operations' spellings (``/pins``, ``/gpio``, ``/pwm``, ``/servo``, ``/sensors``, ``/rules``,
``/interlocks``, ``/schedule``) and their ``/help`` lines are the catalog's
(:mod:`edge.ops.chat`); the commands about the agent itself are here.

Who may do what: every allowed user may read and drive pins (the policy decides), see the model's
name and the list of models, and start their own conversation afresh. What changes the agent for
everyone needs an admin of the channel (or the local terminal, the operator): ``/model NAME``.
Non-admins' ``/status`` and ``/models`` leave out file paths, provider URLs, board details and
error text; errors shown to admins are redacted like the logs. Pairing codes are issued only by
the local operator (``edge-cli channel pair``); no chat command issues or approves one.

>>> parse_command("/gpio led on")
('gpio', ['led', 'on'])
>>> parse_command("turn the led on") is None
True
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from edge.core.requester import Requester
from edge.ops.catalog import CATALOG
from edge.ops.operation import Chat, Kind, Operation
from edge.security.approvals import is_admin
from edge.tools.base import Tool

if TYPE_CHECKING:
    from edge.ops.result import OpTarget
    from edge.providers.switch import ModelSwitch
    from edge.safe_mode import SafeMode
    from edge.security.web_sessions import WebSessions

RUNTIME_HELP = [
    ("/help", "this list"), ("/status", "agent, boards, channels and provider"),
    ("/new, /reset", "start a new conversation (history cleared)"),
    ("/stop", "cancel the request in progress"),
    ("/model [NAME]", "show the model, or switch it (admins)"),
    ("/models", "list the configured models"),
]
"""The ``/help`` lines of the commands about the agent itself; the operations' come from the
catalog (:mod:`edge.ops.chat`), then :data:`MORE_HELP`."""
MORE_HELP = [
    ("/chart NAME [QUANTITY] [24h] [with OUTPUT...]",
     "a sensor's history as a picture, with the outputs its rules switched"),
    ("/photo [NAME]", "a picture from a camera ([cameras.NAME]); the cameras without NAME"),
    ("/history [PIN]", "who switched which pin, when and why (the audit trail)"),
    ("/resume", "leave safe mode after a crash loop (admins)"),
    ("/web [operator|admin] [NAME]", "a one-time code pairing a browser with the web page (admins)"),
]


def help_text() -> str:
    """``/help``: every command, the catalog's operations in the catalog's order."""
    spellings = [(chat.usage, chat.help) for op in CATALOG.values() for chat in op.chat]
    lines = ["Commands (no model needed):"]
    for usage, words in [*RUNTIME_HELP, *spellings, *MORE_HELP]:
        lines.append(f"  {usage:<20} {words}" if len(usage) <= 20 else
                     f"  {usage}\n{'':23}{words}")
    return "\n".join([*lines, "Anything else goes to the language model."])


def catalog_menu() -> list[tuple[str, str]]:
    """Each command of the catalog's chat spellings, once, with its menu line."""
    menu: dict[str, str] = {}
    for op in CATALOG.values():
        for chat in op.chat:
            menu.setdefault(chat.command, chat.menu or chat.help)
    return list(menu.items())


COMMAND_MENU = [
    ("help", "what I can do"), ("status", "agent, boards and channels"), *catalog_menu(),
    ("chart", "a sensor's history: /chart greenhouse 24h"),
    ("photo", "a camera's picture: /photo door"),
    ("new", "start a new conversation"),
    ("reset", "start a new conversation"), ("stop", "cancel the running request"),
    ("model", "show or switch the model"), ("models", "list the models"),
    ("resume", "leave safe mode (admins)"),
    ("history", "who switched which pin, when and why"),
]
"""(command, description) for channel menus such as Telegram's setMyCommands."""


@dataclass
class CommandContext:
    tools: dict[str, Tool]
    status_text: Callable[..., Awaitable[str]]
    """The status as text; called with ``full=False`` for a non-admin (no paths, URLs, errors)."""
    requester: Requester
    reset_session: Callable[[], Awaitable[object]] | None = None
    provider: ModelSwitch | None = None
    admins: Mapping[str, frozenset[str]] = field(default_factory=dict)
    """Channel -> admin senders (the approval gate's list)."""
    safe_mode: SafeMode | None = None
    """The agent's safe mode, for ``/resume``."""
    web_codes: WebSessions | None = None
    """The web page's sessions, for an admin's ``/web``; None when there is no page."""
    target: OpTarget | None = None
    """What the catalog's own handlers act on (``/sim``), once the runtime has started."""

    @property
    def is_admin(self) -> bool:
        return is_admin(self.requester, self.admins)


def parse_command(text: str) -> tuple[str, list[str]] | None:
    text = text.strip()
    if not text.startswith("/") or len(text) < 2:
        return None
    word, *args = text[1:].split()
    return word.split("@", 1)[0].lower(), args


HISTORY_SHOWN = 20
"""The lines ``/history`` shows (the newest)."""


async def _tool_text(ctx: CommandContext, name: str, args: dict[str, Any]) -> str:
    return (await ctx.tools[name].execute(args, ctx.requester)).text


async def _help(args: list[str], ctx: CommandContext) -> str:
    return help_text()


async def _status(args: list[str], ctx: CommandContext) -> str:
    if ctx.is_admin:
        return await ctx.status_text()
    return await ctx.status_text(full=False)


CHART_USAGE = ("Usage: /chart NAME [QUANTITY] [SINCE] [with OUTPUT...]  e.g. "
               "/chart greenhouse temperature 24h with pump fan")


def parse_chart(args: list[str]) -> dict[str, str | list[str]]:
    """``/chart`` words as the ``sensor_chart`` tool's arguments: the sensor, then a quantity
    and how far back, in either order, then ``with`` and the outputs drawn beneath.

    >>> parse_chart(["greenhouse", "7d"])
    {'name': 'greenhouse', 'since': '7d'}
    >>> parse_chart(["greenhouse", "humidity", "6h"])
    {'name': 'greenhouse', 'quantity': 'humidity', 'since': '6h'}
    >>> parse_chart(["greenhouse", "24h", "with", "pump", "fan"])
    {'name': 'greenhouse', 'since': '24h', 'outputs': ['pump', 'fan']}
    """
    words, tracks = (args[:args.index("with")], args[args.index("with") + 1:]) \
        if "with" in args else (args, None)
    if not 1 <= len(words) <= 3 or tracks == []:
        raise ValueError(CHART_USAGE)
    call: dict[str, str | list[str]] = {"name": words[0]}
    for word in words[1:]:
        key = "since" if word[:1].isdigit() else "quantity"  # quantities start with a letter
        if key in call:
            raise ValueError(CHART_USAGE)
        call[key] = word
    if tracks:
        call["outputs"] = tracks
    return call


async def _chart(args: list[str], ctx: CommandContext) -> str:
    try:
        call = parse_chart(args)
    except ValueError as exc:
        return str(exc)
    result = await ctx.tools["sensor_chart"].execute(call, ctx.requester) \
        if "sensor_chart" in ctx.tools else None
    if result is None:
        return "Charts are not available in this agent."
    if not result.success or not result.data:
        return result.text
    return f"{result.output.splitlines()[0]}\n{result.data['marker']}"


async def _photo(args: list[str], ctx: CommandContext) -> str:
    """``/photo NAME``: the ``camera_snapshot`` tool's picture and its marker (the channel
    sends it); ``/photo`` alone names the cameras."""
    from edge.tools.camera import CameraSnapshotTool  # the command module stays light

    tool = ctx.tools.get("camera_snapshot")
    if not isinstance(tool, CameraSnapshotTool) or not tool.cameras.names:
        return "No cameras are configured; add a [cameras.NAME] section (type rpicam or v4l2)."
    if len(args) != 1:
        return f"Usage: /photo NAME  (cameras: {', '.join(tool.cameras.names)})"
    result = await tool.execute({"name": args[0]}, ctx.requester)
    if not result.success or not result.data:
        return result.text
    return f"{result.output.splitlines()[0]}\n{result.data['marker']}"


async def _new(args: list[str], ctx: CommandContext) -> str:
    if ctx.reset_session is not None:
        await ctx.reset_session()
    return "Started a new conversation."


async def _stop(args: list[str], ctx: CommandContext) -> str:
    return "Nothing is running."


async def _model(args: list[str], ctx: CommandContext) -> str:
    if ctx.provider is None:
        return "No language model is configured; see [provider] in the config."
    if not args:
        return f"Current model: {ctx.provider.model}"
    if not ctx.is_admin:
        return _only_admins(ctx.requester, ctx.admins)
    try:
        row = ctx.provider.select(" ".join(args))
    except ValueError as exc:
        return str(exc)
    return (f"Now using {row.model} on {row.name} (until restart; set [provider] model to keep "
            "it).")


def _only_admins(requester: Requester, admins: Mapping[str, frozenset[str]]) -> str:
    """Why ``/model NAME`` is refused, naming the key that makes this sender an admin when their
    channel has admins ([channels.telegram] and [channels.signal] do; MQTT's chat topic, where
    anyone the broker admits may write, does not)."""
    start = "Only an admin can switch the model (it changes it for everyone); "
    if requester.channel in admins:
        return (start + f"ask one, or add {requester.sender} to [channels.{requester.channel}] "
                "admins.")
    keys = ", ".join(f"[channels.{name}] admins" for name in admins) or "[channels.NAME] admins"
    return (start + f"the {requester.channel} channel has no admins, so switch it from the "
            f"agent's terminal (`edge-cli models use NAME`) or as an admin on a channel that has "
            f"them ({keys}).")


async def _models(args: list[str], ctx: CommandContext) -> str:
    if ctx.provider is None:
        return "No language model is configured; see [provider] in the config."
    lines = ["Models (an admin switches with /model NAME):"]
    for row in ctx.provider.list_models():
        mark = "*" if row.active else " "
        extra = f", fallbacks {', '.join(row.fallback_models)}" if row.fallback_models else ""
        where = f" at {row.base_url}" if ctx.is_admin else ""
        lines.append(f"{mark} {row.name}: {row.model} ({row.kind}{where}{extra})")
    return "\n".join(lines)


async def _resume(args: list[str], ctx: CommandContext) -> str:
    """Leave safe mode (:mod:`edge.safe_mode`): it restarts rules and schedules for everyone."""
    if ctx.safe_mode is None or not ctx.safe_mode.active:
        return "The agent is not in safe mode."
    if not ctx.is_admin:
        return ("Only an admin can leave safe mode (rules and schedules start again for "
                "everyone); ask one, or run `edge-cli resume` on the agent's machine.")
    return await ctx.safe_mode.resume(ctx.requester.caller)


async def _web(args: list[str], ctx: CommandContext) -> str:
    """A one-time code for the web page (``[web] listen``), as ``edge-cli web pair`` gives."""
    if ctx.web_codes is None:
        return "The agent serves no web page: set [web] listen in its config."
    if not ctx.is_admin:
        return "Only an admin can pair a browser with the web page; ask one, or run `edge-cli web pair`."
    role = args[0] if args and args[0] in ("viewer", "operator", "admin") else "viewer"
    rest = args[1:] if args and args[0] == role else args
    try:
        issued = ctx.web_codes.issue(role, rest[0] if rest else None)
    except ValueError as exc:
        return str(exc)
    return (f"Open the agent's web page and enter {issued.code} within 10 minutes: the browser is "
            f"paired as {issued.name} ({issued.role}).")


async def _history(args: list[str], ctx: CommandContext) -> str:
    """An admin sees the whole trail; anyone else their own calls and what the door did to those
    pins, other callers withheld (the history tool decides, for the model's asking too)."""
    if len(args) > 1:
        return "Usage: /history  or  /history PIN"
    asked: dict[str, Any] = {"pin": args[0]} if args else {}
    return await _tool_text(ctx, "history", {**asked, "limit": HISTORY_SHOWN})


async def _operation(spellings: list[Chat], args: list[str], ctx: CommandContext) -> str:
    """A catalog operation's chat spelling: the first of the command's spellings the words fit,
    run through the agent's tool (and so its policy) as the person who wrote it."""
    for op in CATALOG.values():
        for chat in op.chat:
            if chat not in spellings:
                continue
            try:
                call = chat.parse(args)
            except ValueError as exc:
                return str(exc)
            if call is not None and op.handler is not None:
                return await _handled(op, call, ctx)
            if call is not None:
                tool = ctx.tools.get(op.tool_name)
                if tool is None:
                    return f"/{chat.command} is not available in this agent."
                return (await tool.execute(call, ctx.requester)).text
    wrong = next((chat.wrong for chat in spellings if chat.wrong), "")
    return wrong or "Usage: " + "  or  ".join(chat.usage for chat in spellings)


async def _handled(op: Operation, call: dict[str, Any], ctx: CommandContext) -> str:
    """An operation with a handler of its own: an operator's one needs an admin in chat."""
    if op.kind is Kind.OPERATOR and not ctx.is_admin:
        return f"Only an admin can use /{op.chat[0].command}."
    if ctx.target is None:
        return f"/{op.chat[0].command} is not available in this agent."
    return (await op.run(ctx.target, call, ctx.requester)).message


def spellings_of(command: str) -> list[Chat]:
    """The catalog's chat spellings of ``command`` (``gpio``: read and write)."""
    return [chat for op in CATALOG.values() for chat in op.chat
            if command == chat.command or command in chat.aliases]


COMMANDS: dict[str, Callable[[list[str], CommandContext], Awaitable[str]]] = {
    "help": _help, "start": _help, "status": _status, "chart": _chart, "photo": _photo,
    "new": _new, "reset": _new, "stop": _stop,
    "model": _model, "models": _models, "resume": _resume, "history": _history, "web": _web,
}


async def run_command(text: str, ctx: CommandContext,
                      parsed: tuple[str, list[str]] | None = None) -> str | None:
    """The reply to a command, or None when ``text`` is not a command; ``parsed``: ``text``
    already read by :func:`parse_command` (the dispatcher's), so it is read once."""
    parsed = parsed or parse_command(text)
    if parsed is None:
        return None
    name, args = parsed
    handler = COMMANDS.get(name)
    if handler is not None:
        return await handler(args, ctx)
    spellings = spellings_of(name)
    if spellings:
        return await _operation(spellings, args, ctx)
    return f"Unknown command /{name}. /help lists the commands."
