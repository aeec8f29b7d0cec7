"""The node's side of the fleet: a request on ``edge-agent/_fleet/<node_id>/request`` run through the node's own
control operations (:func:`edge.control.ops.run_op`: its allowlist, modes, interlocks, rate
limits, approvals, auto-off timers and audit trail) as ``mqtt:<caller>``, the caller named by
the key that verified it, and answered, sealed with that key, on the caller's own answer topic
(:mod:`edge.fleet.envelope`).

Before any work, what is not run and is answered to nobody (a stranger learns nothing):

- a request larger than :data:`~edge.fleet.protocol.MAX_REQUEST_BYTES`, malformed, retained, or
  not sealed with a key this node was paired with (``unverified``; with
  ``[mqtt] allow_unauthenticated``, an unsealed one runs as ``mqtt:unverified:<name>``);
- one naming an answer topic that is not its caller's own;
- one sent before this node started (a replay across a restart), from the future or past its
  expiry by this node's clock (allowing :data:`~edge.fleet.envelope.SKEW_SECONDS`).

Then: a repeat of one already taken (a QoS 1 redelivery, or a replay within its expiry) is not
run again and gets the first answer; beyond a caller's or the node's budget of requests in
flight, the answer is ``busy``; one whose expiry passes while it waits for its turn is not
started; an operation that is not a remote one, or a write when ``[mqtt] allow_commands =
false``, is refused and answered.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections import Counter
from collections.abc import Awaitable, Callable, Coroutine
from typing import TYPE_CHECKING, Any

from paho.mqtt.properties import Properties

from edge.config.mqtt import MqttConfig
from edge.control.ops import OpResult, run_op
from edge.core.requester import Requester
from edge.fleet.envelope import (
    SKEW_SECONDS,
    Envelope,
    answer_properties,
    bound_to,
    now_ms,
)
from edge.fleet.keys import FleetKeys
from edge.fleet.protocol import (
    MAX_EXPIRY_SECONDS,
    MAX_REQUEST_BYTES,
    RecentRequests,
    Request,
    Response,
    refusal,
)
from edge.ops.catalog import actuating, paired_only

if TYPE_CHECKING:
    from edge.control.ops import OpTarget

log = logging.getLogger(__name__)

Publish = Callable[[str, bytes, Properties], Awaitable[None]]
"""Publish ``payload`` on ``topic`` (QoS 1, not retained) with these properties."""
Work = Callable[[], Coroutine[Any, Any, None]]
"""A request taken: run it (in a task of its own) and answer."""

RUNNING = 4
"""Requests run at once; the others wait their turn."""
IN_FLIGHT_PER_CALLER = 16
IN_FLIGHT = 64
"""Requests taken and not yet answered, per caller and in all; beyond, ``busy``."""
SUMMARY_SECONDS = 10.0
"""Dropped requests are logged as one summary line at most this often."""


class Responder:
    def __init__(self, config: MqttConfig, publish: Publish, keys: FleetKeys, request_topic: str,
                 *, clock: Callable[[], float] = time.monotonic):
        self.config = config
        self.publish = publish
        self.keys = keys
        self.request_topic = request_topic
        self.clock = clock
        self.target: OpTarget | None = None
        self.started_ms = now_ms()
        self.recent = RecentRequests(MAX_EXPIRY_SECONDS + 2 * SKEW_SECONDS + 1, clock=clock)
        """Longer than a request holds by any clock: a replay is either remembered or too late."""
        self.counts = {"requests": 0, "answered": 0, "refused": 0, "busy": 0, "expired": 0,
                       "repeats": 0, "dropped": 0}
        self.dropped: Counter[str] = Counter()
        """Why requests were dropped unanswered (``unverified``, ``stale``...), since start."""
        self._unlogged: Counter[str] = Counter()
        self._logged_at = -SUMMARY_SECONDS
        self._turns = asyncio.Semaphore(RUNNING)
        self._in_flight: Counter[str] = Counter()

    def serve(self, target: OpTarget) -> None:
        """Run requests on ``target`` (the runtime: the control socket's operations)."""
        self.target = target

    # admission: synchronous, before any work ---------------------------------------------------

    def admit(self, payload: bytes, properties: Properties | None, retained: bool) -> Work | None:
        """What to do about a request that just arrived: None when it is dropped (counted,
        logged in a summary), else the work to run in a task of its own."""
        self.counts["requests"] += 1
        if retained:
            return self._drop("retained")
        if len(payload) > MAX_REQUEST_BYTES:
            return self._drop("too large")
        try:
            envelope = Envelope.read(properties)
        except ValueError:
            return self._drop("malformed")
        key = self.keys.get(envelope.caller)
        if key is not None and envelope.verified_by(key, self.request_topic, payload):
            caller = envelope.caller
        elif envelope.mac is None and self.config.allow_unauthenticated:
            key, caller = None, f"unverified:{envelope.caller}"
        else:
            return self._drop("unverified")
        if not bound_to(envelope.reply_to, envelope.caller):
            return self._drop("not its own answer topic")
        at = now_ms()
        if envelope.too_late(at):
            return self._drop("expired")
        if envelope.sent_ms < self.started_ms:
            return self._drop("sent before this node started")
        if envelope.from_the_future(at):
            return self._drop("sent in the future (clocks apart)")
        seen = (caller, envelope.correlation)
        if not self.recent.claim(seen):
            return lambda: self._repeat(envelope, key, seen)
        if (self._in_flight[caller] >= IN_FLIGHT_PER_CALLER
                or sum(self._in_flight.values()) >= IN_FLIGHT):
            self.counts["busy"] += 1
            busy = OpResult(False, f"node {self.config.node_id} is busy (too many requests in "
                            "flight); ask again shortly", exit_code=1)
            return lambda: self._answer(envelope, key, seen, busy)
        self._in_flight[caller] += 1
        return lambda: self._take(envelope, key, caller, seen, payload)

    def _drop(self, reason: str) -> Work | None:
        """Count and (in a summary) log a request dropped unanswered; None, for :meth:`admit`."""
        self.counts["dropped"] += 1
        self.dropped[reason] += 1
        self._unlogged[reason] += 1
        if self.clock() - self._logged_at >= SUMMARY_SECONDS:
            summary = ", ".join(f"{why}={n}" for why, n in sorted(self._unlogged.items()))
            log.warning("fleet_requests_dropped %s (answered to nobody)", summary)
            self._unlogged.clear()
            self._logged_at = self.clock()
        return None

    # running ------------------------------------------------------------------------------------

    async def _take(self, envelope: Envelope, key: bytes | None, caller: str,
                    seen: tuple[str, bytes], payload: bytes) -> None:
        try:
            async with self._turns:
                if envelope.too_late(now_ms()):  # it waited its turn past its expiry
                    self.counts["expired"] += 1
                    log.warning("fleet_request_expired by=mqtt:%s waited past its expiry (%d s)",
                                caller, envelope.expiry)
                    return
                result = await self._run(envelope, caller, payload)
        finally:
            self._in_flight[caller] -= 1
            if not self._in_flight[caller]:
                del self._in_flight[caller]
        await self._answer(envelope, key, seen, result)

    async def _run(self, envelope: Envelope, caller: str, payload: bytes) -> OpResult:
        try:
            request = Request.decode(payload)
        except ValueError as exc:
            return OpResult(False, str(exc), exit_code=2)
        why = refusal(request.op)
        if why is None and request.op in actuating() and not self.config.allow_commands:
            why = (f"node {self.config.node_id} takes no commands over the broker ([mqtt] "
                   "allow_commands = false); reading is allowed")
        if why is None and caller.startswith("unverified:") and request.op in paired_only():
            why = (f"{request.op} is only answered to a paired caller (`edge-cli fleet pair "
                   f"{self.config.node_id}` on the asking machine)")
        if why is None and self.target is None:
            why = f"node {self.config.node_id} does not run requests (its agent is not serving them)"
        if why is not None:
            self.counts["refused"] += 1
            log.warning("fleet_request_refused op=%s by=mqtt:%s reason=%r", request.op, caller,
                        why)
            return OpResult(False, why, exit_code=1)
        assert self.target is not None
        via = "" if envelope.via == "agent" else f" ({envelope.via}, as its key holder says)"
        verified = not caller.startswith("unverified:")  # else only the name it gave itself
        requester = Requester("mqtt", caller, why=f"fleet request{via}",
                              identity=f"key:{caller}" if verified else "")
        log.info("fleet_request op=%s by=%s", request.op, requester.caller)
        try:
            return await run_op(self.target, request.op, dict(request.args), requester)
        except Exception as exc:  # a bug answers as one, never as silence
            log.exception("fleet_request_failed op=%s", request.op)
            return OpResult(False, f"{type(exc).__name__}: {exc}")

    async def _repeat(self, envelope: Envelope, key: bytes | None,
                      seen: tuple[str, bytes]) -> None:
        self.counts["repeats"] += 1
        cached = self.recent.answer(seen)
        log.info("fleet_request_repeat by=mqtt:%s answered=%s", seen[0], cached is not None)
        if cached is not None:
            await self._send(envelope, key, cached)

    async def _answer(self, envelope: Envelope, key: bytes | None, seen: tuple[str, bytes],
                      result: OpResult) -> None:
        payload = Response.of(result).encode()
        self.recent.finish(seen, payload)
        self.counts["answered"] += 1
        await self._send(envelope, key, payload)

    async def _send(self, envelope: Envelope, key: bytes | None, payload: bytes) -> None:
        props = answer_properties(key, topic=envelope.reply_to, correlation=envelope.correlation,
                                  sender=self.config.node_id, payload=payload)
        try:
            await self.publish(envelope.reply_to, payload, props)
        except Exception as exc:  # the broker went away: the asker's wait ends without it
            log.warning("fleet_answer_not_sent topic=%r error=%r", envelope.reply_to, str(exc))

    def status(self) -> dict[str, Any]:
        return {"serving": self.target is not None, "paired": self.keys.names(),
                **self.counts, "dropped_why": dict(self.dropped)}
