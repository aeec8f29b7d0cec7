"""The fleet's wire protocol: one edge-agent asks another to run a control operation over MQTT 5.

A **request** is a PUBLISH (QoS 1, never retained) to ``edge-agent/_fleet/<target node_id>/request``
(the fleet's own namespace, beside the answer topics: a controller that listens to a node's
``<base>/+`` hears none of the requests sent to it) whose MQTT 5 properties say who
asks, where the answer goes, when it was sent and until when it holds, sealed with the key the
two agents share (:mod:`edge.fleet.envelope`, :mod:`edge.fleet.keys`), and whose payload is
``{"op": NAME, "args": {...}}``, NAME one of the catalog's remote operations
(:func:`edge.ops.catalog.remote`, the control socket's, with the same arguments). The node runs
it through its own door (its allowlist, modes, interlocks, rate limits, approvals, audit
trail) as ``mqtt:<caller>``, the caller named by the key that verified it; operator-only
operations are refused.

The **answer** is a PUBLISH (QoS 1, not retained) to the asker's own answer topic with the same
CorrelationData, sealed with the same key; its payload is the operation's result as
``edge-cli --json`` shows it (:class:`Response`, the shape of :meth:`OpResult.as_dict`).

The node also keeps a retained **description** on ``<base>/node`` (:class:`NodeDescription`):
its version, boards, pins and sensors.

>>> ask = Request(op="gpio.write", args={"pin": "pump", "value": "on"})
>>> Request.decode(ask.encode()) == ask
True
>>> refusal("resume").split(";")[0]
'resume is not asked over the broker (an operator-only or unknown operation)'
>>> refusal("gpio.write") is None
True
>>> request_topic("shed")
'edge-agent/_fleet/shed/request'
"""

from __future__ import annotations

import asyncio
import json
import secrets
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from edge.control.ops import OpResult

FLEET_BASE = "edge-agent/_fleet"
"""Requests to and answers for each agent, by node_id."""
NODE_SUFFIX = "node"
CORRELATION_BYTES = 16
DEFAULT_EXPIRY_SECONDS = 5
MAX_EXPIRY_SECONDS = 60
MAX_REQUEST_BYTES = 64 * 1024
"""A larger request is dropped unread (before its seal is checked)."""


def request_topic(node_id: str) -> str:
    """Where requests to the agent ``node_id`` go."""
    return f"{FLEET_BASE}/{node_id}/request"


def node_topic(base: str) -> str:
    """The node's retained description."""
    return f"{base}/{NODE_SUFFIX}"


def new_correlation() -> bytes:
    return secrets.token_bytes(CORRELATION_BYTES)


def refusal(op: str) -> str | None:
    """Why ``op`` is not run for a remote caller, or None when it may be asked: the catalog's
    operations declared remote (a sensor's history, not its chart: a picture is no answer to
    carry through the broker)."""
    from edge.ops.catalog import remote  # the node's side: the asking client never loads it

    asked = remote()
    if op in asked:
        return None
    return (f"{op} is not asked over the broker (an operator-only or unknown operation); remote "
            f"callers may ask: {', '.join(sorted(asked))}")


class _Wire(BaseModel):
    model_config = ConfigDict(extra="ignore", frozen=True)


class Request(_Wire):
    """The payload of a request."""

    op: str = Field(min_length=1, max_length=64)
    args: dict[str, Any] = {}

    def encode(self) -> bytes:
        return self.model_dump_json().encode()

    @classmethod
    def decode(cls, payload: bytes) -> Request:
        """A ValueError for anything but ``{"op": NAME, "args": {...}}``.

        >>> Request.decode(b'{"args": {}}')
        Traceback (most recent call last):
        ...
        ValueError: not a request: op: Field required (a request is {"op": NAME, "args": {...}})
        """
        return _decode(cls, payload, 'not a request (a request is {"op": NAME, "args": {...}})')


class Response(_Wire):
    """The payload of a response: an :class:`OpResult` as ``--json`` shows it.

    >>> answer = Response.of(OpResult(False, "pump is not allowlisted"))
    >>> answer.error, answer.exit_code, Response.decode(answer.encode()).result().ok
    ('pump is not allowlisted', 1, False)
    """

    ok: bool
    message: str | None = None
    error: str | None = None
    data: dict[str, Any] = {}
    exit_code: int = 0

    @classmethod
    def of(cls, result: OpResult) -> Response:
        return cls.model_validate(result.as_dict())

    def result(self) -> OpResult:
        return OpResult.from_dict(self.model_dump())

    def encode(self) -> bytes:
        return self.model_dump_json().encode()

    @classmethod
    def decode(cls, payload: bytes) -> Response:
        return _decode(cls, payload, "not a response")


W = TypeVar("W", bound=_Wire)


class BoardRow(_Wire):
    name: str
    kind: str
    connected: bool


class PinRow(_Wire):
    name: str
    """The pin's name on the broker (its slug: the first alias, else the pin's name)."""
    pin: str
    """``board:pin``."""
    mode: str
    aliases: list[str] = []


class SensorRow(_Wire):
    name: str
    quantities: dict[str, str] = {}
    """quantity -> unit."""


class NodeDescription(_Wire):
    """The retained ``<base>/node``: what the node has.

    >>> text = NodeDescription(version="1.0", node_id="shed", boards=[BoardRow(name="gpio",
    ...     kind="gpio", connected=True)]).encode()
    >>> NodeDescription.decode(text).boards[0].connected
    True
    """

    version: str
    node_id: str
    boards: list[BoardRow] = []
    pins: list[PinRow] = []
    sensors: list[SensorRow] = []

    def encode(self) -> bytes:
        return self.model_dump_json().encode()

    @classmethod
    def decode(cls, payload: bytes) -> NodeDescription:
        return _decode(cls, payload, "not a node description")


def _decode(model: type[W], payload: bytes, what: str) -> W:
    try:
        return model.model_validate(json.loads(payload))
    except ValueError as exc:  # pydantic's ValidationError is one
        if isinstance(exc, ValidationError):
            first = exc.errors()[0]
            where = ".".join(str(p) for p in first["loc"]) or "payload"
            detail = f"{where}: {first['msg']}"
        else:
            detail = f"invalid JSON ({exc})"
        head, _, tail = what.partition(" (")
        raise ValueError(f"{head}: {detail}" + (f" ({tail}" if tail else "")) from None


# both ends' bookkeeping ----------------------------------------------------------------------

class RecentRequests:
    """The node's memory of requests it took, by ``(caller, correlation)``, for the longest
    expiry: a QoS 1 redelivery (after a broker restart) must not act twice, and is answered
    with the first answer. Bounded: the oldest are forgotten first.

    >>> now = [0.0]
    >>> recent = RecentRequests(size=2, clock=lambda: now[0])
    >>> recent.claim(("kitchen", b"1")), recent.claim(("kitchen", b"1"))
    (True, False)
    >>> recent.answer(("kitchen", b"1")) is None  # still running: the first run will answer
    True
    >>> recent.finish(("kitchen", b"1"), b"{}"); recent.answer(("kitchen", b"1"))
    b'{}'
    >>> now[0] = 61.0; recent.claim(("kitchen", b"1"))  # forgotten after the longest expiry
    True
    """

    def __init__(self, keep_seconds: float = MAX_EXPIRY_SECONDS, size: int = 4096,
                 clock: Callable[[], float] = time.monotonic):
        self.keep_seconds, self.size, self.clock = keep_seconds, size, clock
        self._seen: OrderedDict[tuple[str, bytes], tuple[float, bytes | None]] = OrderedDict()

    def _drop_old(self) -> None:
        horizon = self.clock() - self.keep_seconds
        while self._seen and (len(self._seen) > self.size
                              or next(iter(self._seen.values()))[0] < horizon):
            self._seen.popitem(last=False)

    def claim(self, key: tuple[str, bytes]) -> bool:
        """True for a request not seen before (now remembered): run it."""
        self._drop_old()
        if key in self._seen:
            return False
        self._seen[key] = (self.clock(), None)
        self._drop_old()
        return True

    def finish(self, key: tuple[str, bytes], answer: bytes) -> None:
        if key in self._seen:
            self._seen[key] = (self._seen[key][0], answer)

    def answer(self, key: tuple[str, bytes]) -> bytes | None:
        """The answer a repeat gets; None while the first is still running."""
        entry = self._seen.get(key)
        return entry[1] if entry is not None else None


@dataclass(frozen=True)
class Answer:
    """A node's answer as the asker took it."""

    response: Response
    authenticated: bool
    """Sealed with the key shared with that node (False only from a node that takes
    unauthenticated requests, ``[mqtt] allow_unauthenticated``)."""
    clock_offset_ms: int | None = None
    """The node's clock minus ours as the answer arrived (its send time: within the round trip)."""


AnswerCheck = Callable[[Any, bytes], "Answer | None"]
"""The asker's judgement of an arrival (its properties, its payload): the answer, or None for
one that is not the node's (a forgery, a stranger's)."""


class AwaitedAnswers:
    """The asker's side: a future per correlation, settled by the first arrival its check takes
    for the node's answer; anything else on the topic (a stranger's forgery, a late or repeated
    answer) is counted and dropped, and the real answer may still come.

    >>> async def demo():
    ...     answers = AwaitedAnswers()
    ...     real = lambda props, payload: Answer(Response.decode(payload), props == "sealed")
    ...     waiting = answers.expect(b"c", lambda p, b: real(p, b) if p == "sealed" else None)
    ...     answers.deliver(b"c", Response(ok=True, message="forged").encode(), "stranger")
    ...     answers.deliver(b"c", Response(ok=True, message="done").encode(), "sealed")
    ...     return (await waiting).response.message, answers.forged
    >>> asyncio.run(demo())
    ('done', 1)
    """

    def __init__(self) -> None:
        self._waiting: dict[bytes, tuple[asyncio.Future[Answer], AnswerCheck]] = {}
        self.forged = 0

    def expect(self, correlation: bytes, check: AnswerCheck) -> asyncio.Future[Answer]:
        future: asyncio.Future[Answer] = asyncio.get_running_loop().create_future()
        self._waiting[correlation] = (future, check)
        return future

    def deliver(self, correlation: bytes | None, payload: bytes, properties: Any) -> bool:
        """Settle the request this answers; False for an arrival nobody waits for (late, a
        repeat, not ours) or that its check refuses (not the node's)."""
        entry = self._waiting.get(correlation) if correlation is not None else None
        if entry is None or entry[0].done():
            return False
        future, check = entry
        try:
            answer = check(properties, payload)
        except ValueError as exc:  # sealed by the node, but unreadable
            del self._waiting[correlation]  # type: ignore[arg-type]
            future.set_exception(exc)
            return True
        if answer is None:
            self.forged += 1
            return False
        del self._waiting[correlation]  # type: ignore[arg-type]
        future.set_result(answer)
        return True

    def forget(self, correlation: bytes) -> None:
        self._waiting.pop(correlation, None)

    def fail_all(self, why: str) -> None:
        """The connection is gone: every waiting request ends with ``why``."""
        waiting, self._waiting = self._waiting, {}
        for future, _ in waiting.values():
            if not future.done():
                future.set_exception(ConnectionError(why))
