"""The driver of a ``node`` board (:mod:`edge.fleet.board`): another edge-agent's pins, asked
through the broker on this agent's own ``[mqtt]`` connection.

Each write, PWM duty, servo angle and read is a request (:mod:`edge.fleet.protocol`) that the
node runs through its own door as ``mqtt:<this node_id>``; its answer is the result. A refusal
there is a BoardError in the node's words (``shed refused: ...``); no answer within the board's
``timeout_seconds`` (also the request's expiry, so it never acts later) is a BoardUnavailable
that says the command may not have run. Nothing is retried: a command is asked once.

The board is up while this agent is connected to the broker and the node's retained
``<base>/availability`` says ``online``; its pins' states come from the node's retained state
topics, its inputs' changes from ``<base>/events``. The node keeps its own safe state, rules,
interlocks and auto-off timers: this agent's shutdown asks it for nothing (the node stands
alone), so :meth:`NodeBoard.apply_safe_state` leaves its pins as they are.

>>> board = NodeBoard("shed", "shed", "edge-agent/shed", pins=["pump"], aliases={"water": "pump"})
>>> board.resolve("water"), board.connected
('pump', False)
>>> board.status().detail
'node shed: waiting for this agent to connect to the broker'
"""

from __future__ import annotations

import json
import logging
import re
import time
from collections.abc import Callable, Iterable
from typing import Any, ClassVar, Protocol

from edge.fleet.protocol import Answer, NodeDescription, Response
from peripherals.base import BoardEvent, BoardListener, BoardStatus, PinInfo, PinMode, PinState, Pull
from peripherals.exc import BoardError, BoardUnavailable, PinModeError, UnknownPin

log = logging.getLogger(__name__)

PIN_NAME = re.compile(r"[A-Za-z0-9_.:-]{1,80}")
READ_BACK_SECONDS = 2.0
"""How long a write's answer stands for the pin's read-back (the door reads right after)."""


class FleetAsker(Protocol):
    """What the board asks through: this agent's broker connection (:mod:`edge.fleet.link`)."""

    @property
    def connected(self) -> bool: ...

    async def ask(self, node_id: str, op: str, args: dict[str, Any], timeout: float) -> Answer:
        """The node's answer; TimeoutError when none came in ``timeout`` seconds,
        ConnectionError when the broker is not there (or the node is not paired)."""
        ...


def _iso(when: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.localtime(when))


class NodeBoard:
    kind = "node"
    holds_levels = True
    """The node drives its pins whatever this agent does."""
    servo_pins: ClassVar[frozenset[str]] = frozenset()

    def __init__(self, name: str, node_id: str, base: str, *, pins: Iterable[str] = (),
                 timeout: float = 5.0, aliases: dict[str, str] | None = None):
        """``pins``: the names its section allowlists (the node's names for them): this
        board has no others, so a name elsewhere is not taken for one of its pins."""
        self.name = name
        self.node_id = node_id
        self.base = base
        self.timeout = timeout
        self.aliases = dict(aliases or {})
        self.pins = frozenset(pins)
        self.asker: FleetAsker | None = None
        self.availability: str | None = None
        """The node's retained availability (``online``/``offline``); None: never heard."""
        self.availability_since: float | None = None
        self.description: NodeDescription | None = None
        self.last_error: str | None = None
        self.authenticated: bool | None = None
        """Whether the node's last answer was sealed with the pair's key (None: none yet)."""
        self._connected = False
        self._states: dict[str, float] = {}
        """Remote pin name (on the broker) -> the value its state topic shows."""
        self._modes: dict[str, PinMode] = {}
        self._read_back: dict[str, tuple[float, float]] = {}
        self._listeners: list[BoardListener] = []

    # the link ------------------------------------------------------------------------------

    def attach(self, asker: FleetAsker) -> None:
        """This agent's fleet link on the broker connection (the runtime's assembly attaches it)."""
        self.asker = asker

    @property
    def connected(self) -> bool:
        return self._connected and self.asker is not None and self.asker.connected

    @connected.setter
    def connected(self, value: bool) -> None:
        self._connected = value

    def topic_prefix(self) -> str:
        return self.base + "/"

    def on_message(self, topic: str, payload: bytes) -> None:
        """A message on one of the node's topics (``<base>/+``, ``<base>/+/duty``)."""
        leaf = topic[len(self.base) + 1:]
        if leaf == "availability":
            self._on_availability(payload.decode("utf-8", "replace").strip())
        elif leaf == "node":
            try:
                self.description = NodeDescription.decode(payload) if payload else None
            except ValueError as exc:
                log.warning("fleet_description_unreadable node=%s error=%r", self.node_id, str(exc))
        elif leaf == "events":
            self._on_event(payload)
        elif leaf.endswith("/duty"):
            value = _number(payload)
            if value is not None:
                self._states[leaf.removesuffix("/duty")] = value / 100
        elif "/" not in leaf and leaf not in ("health", "refused", "request", "response", "chat"):
            value = _number(payload)
            if value is not None and not (leaf in self._states and value == 1.0
                                          and self._modes.get(leaf) is PinMode.PWM):
                self._states[leaf] = value

    def lost_broker(self, why: str) -> None:
        """This agent lost the broker: the node cannot be reached (its state is unknown)."""
        self.last_error = why
        self._down(f"this agent lost the broker: {why}")

    def _on_availability(self, text: str) -> None:
        if text == self.availability:
            return
        self.availability, self.availability_since = text or None, time.time()
        if text != "online":
            self._down(f"node {self.node_id} went {text or 'away'}")

    def _down(self, why: str) -> None:
        if self._connected:
            self._connected = False
            log.warning("fleet_node_down board=%s node=%s why=%r", self.name, self.node_id, why)
            self._emit(BoardEvent(self.name, "down"))

    def _on_event(self, payload: bytes) -> None:
        try:
            event = json.loads(payload)
        except ValueError:
            return
        if not isinstance(event, dict) or event.get("kind") != "input":
            return
        pin, value = event.get("pin"), event.get("value")
        if isinstance(pin, str) and isinstance(value, (int, float)):
            local = self._local_name(pin)
            self._states[pin] = float(value)
            if local is not None:
                self._emit(BoardEvent(self.name, "input", local, float(value)))

    def _local_name(self, remote: str) -> str | None:
        """This board's name for the node's pin ``remote`` (as its topics name it), if the
        allowlist here knows it under that name, another of its names, or ``board:pin``."""
        if remote in self._modes:
            return remote
        row = self._row(remote)
        names = {remote} | ({row.pin, *row.aliases, row.pin.partition(":")[2]} if row else set())
        return next((name for name in self._modes if name in names), None)

    def _row(self, name: str) -> Any:
        if self.description is None:
            return None
        return next((row for row in self.description.pins if name in (
            row.name, row.pin, row.pin.partition(":")[2], *row.aliases)), None)

    def _emit(self, event: BoardEvent) -> None:
        for listener in list(self._listeners):
            listener(event)

    # the Board protocol --------------------------------------------------------------------

    def resolve(self, spec: str) -> str:
        return self.canonical(self.aliases.get(spec, spec))

    def canonical(self, spec: str) -> str:
        if spec not in self.pins or not PIN_NAME.fullmatch(spec):
            listed = ", ".join(sorted(self.pins)) or "none"
            raise UnknownPin(f"{spec!r} is not a pin of board {self.name} (node "
                             f"{self.node_id}): its pins are those [boards.{self.name}.pins] "
                             f"lists ({listed}), by the node's own names for them")
        return spec

    def capabilities(self) -> list[PinInfo]:
        """Unknown here: the node's own allowlist says what each pin can do."""
        return []

    async def connect(self) -> None:
        if self.asker is None:
            raise BoardUnavailable(f"node {self.node_id}: waiting for this agent to connect to "
                                   "the broker (a node board needs [mqtt] url)")
        if not self.asker.connected:
            raise BoardUnavailable(f"node {self.node_id}: this agent is not connected to the "
                                   "broker")
        if self.availability != "online":
            raise BoardUnavailable(self._absence())
        if not self._connected:
            self._connected = True
            self.last_error = None
            log.info("fleet_node_up board=%s node=%s", self.name, self.node_id)
            self._emit(BoardEvent(self.name, "up"))

    def _absence(self) -> str:
        if self.availability is None:
            return (f"node {self.node_id} has not been seen on the broker (nothing retained on "
                    f"{self.base}/availability): is it running with [mqtt] node_id = "
                    f"\"{self.node_id}\" on this broker?")
        since = f" since {_iso(self.availability_since)}" if self.availability_since else ""
        return f"node {self.node_id} is {self.availability}{since}"

    async def close(self) -> None:
        self._connected = False

    async def setup_pin(self, pin: str, mode: PinMode, pull: Pull = Pull.UP, *,
                        initial: bool = False, bounce_ms: int = 0) -> None:
        """Nothing to claim here: the node claims its own pins. Remembers the mode."""
        self._modes[pin] = mode

    async def read(self, pin: str) -> float:
        kept = self._read_back.pop(pin, None)
        if kept is not None and time.monotonic() - kept[1] < READ_BACK_SECONDS:
            return kept[0]
        answer = await self._ask("gpio.read", {"pin": pin})
        return self._value(answer, pin)

    async def write(self, pin: str, value: bool) -> None:
        await self._act(pin, "gpio.write", {"pin": pin, "value": "on" if value else "off"})

    async def pwm(self, pin: str, duty: float, frequency: float | None = None) -> None:
        args: dict[str, Any] = {"pin": pin, "duty": duty}
        if frequency is not None:
            args["frequency"] = frequency
        await self._act(pin, "gpio.pwm", args)

    async def servo(self, pin: str, angle: float) -> None:
        await self._act(pin, "gpio.servo", {"pin": pin, "angle": angle})

    async def apply_safe_state(self, values: dict[str, bool]) -> list[str]:
        """The node keeps its own safe state (it stands alone): nothing is asked of it."""
        return []

    async def declare_safe_state(self, values: dict[str, bool]) -> None:
        return None

    async def simulate_input(self, pin: str, level: float) -> None:
        raise PinModeError(f"board {self.name} is node {self.node_id}'s real pins; set "
                           f"[boards.{self.name}] simulate = true to try inputs by hand")

    async def adopt_pin(self, pin: str, mode: PinMode, pull: Pull = Pull.UP, *,
                        initial: bool = False, bounce_ms: int = 0) -> None:
        await self.setup_pin(pin, mode, pull, initial=initial, bounce_ms=bounce_ms)

    def subscribe(self, listener: BoardListener) -> Callable[[], None]:
        self._listeners.append(listener)
        return lambda: self._listeners.remove(listener) if listener in self._listeners else None

    def status(self) -> BoardStatus:
        info = {"node_id": self.node_id, "base_topic": self.base}
        if self.description is not None:
            info["version"] = self.description.version
        pins = [PinState(pin, mode, self._states.get(self._remote_slug(pin), 0.0))
                for pin, mode in self._modes.items()]
        return BoardStatus(self.name, self.kind, self.connected, False, self._detail(), pins, info)

    def _remote_slug(self, pin: str) -> str:
        row = self._row(pin)
        return row.name if row is not None else pin

    def _detail(self) -> str:
        if self.connected:
            unsealed = "; its answers are UNAUTHENTICATED (no key shared with it)" \
                if self.authenticated is False else ""
            return f"node {self.node_id} online on the broker ({self.base}){unsealed}"
        if self.asker is None:
            return f"node {self.node_id}: waiting for this agent to connect to the broker"
        if not self.asker.connected:
            return f"node {self.node_id}: this agent is not connected to the broker"
        return self._absence()

    # asking ----------------------------------------------------------------------------------

    async def _act(self, pin: str, op: str, args: dict[str, Any]) -> None:
        answer = await self._ask(op, args)
        self._read_back[pin] = (self._value(answer, pin), time.monotonic())

    def _value(self, answer: Response, pin: str) -> float:
        value = answer.data.get("value")
        if not isinstance(value, (int, float)):
            raise BoardError(f"node {self.node_id} answered without a value for {pin}")
        return float(value)

    async def _ask(self, op: str, args: dict[str, Any]) -> Response:
        if not self.connected or self.asker is None:
            raise BoardUnavailable(f"board {self.name}: {self._detail()}")
        try:
            taken = await self.asker.ask(self.node_id, op, args, self.timeout)
        except TimeoutError:
            raise BoardUnavailable(
                f"no answer from node {self.node_id} within {self.timeout:g} s; it may not have "
                f"run — check `edge-cli --node {self.node_id} pins`") from None
        except ConnectionError as exc:
            raise BoardUnavailable(f"node {self.node_id}: {exc}; it may not have run — check "
                                   f"`edge-cli --node {self.node_id} pins`") from None
        self.authenticated = taken.authenticated
        answer = taken.response
        if not answer.ok:
            raise BoardError(f"{self.node_id} refused: {answer.error or 'no reason given'}")
        return answer


def _number(payload: bytes) -> float | None:
    text = payload.decode("utf-8", "replace").strip()
    if text in ("ON", "OFF"):
        return 1.0 if text == "ON" else 0.0
    try:
        return float(text)
    except ValueError:
        return None
