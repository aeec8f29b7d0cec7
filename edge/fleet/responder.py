"""The node's side of the fleet: a request on ``<base>/request`` run through the node's own
control operations (:func:`edge.control.ops.run_op`: its allowlist, modes, interlocks, rate
limits, approvals, auto-off timers and audit trail), as ``mqtt:<caller>``, and answered on the
request's ResponseTopic with its CorrelationData (:mod:`edge.fleet.protocol`).

What is not run, and why:

- a retained request (left on the broker, it would act again at every reconnect): ignored, logged;
- one whose expiry ran out before it could start: ignored, logged (the asker has given up);
- a repeat of one already taken (a QoS 1 redelivery after a broker restart): not run again; it
  gets the first one's answer;
- an operation that is not a remote one (operator-only, unknown): refused, answered;
- a write, PWM duty or servo angle when ``[mqtt] allow_commands = false``: refused, answered.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from paho.mqtt.properties import Properties

from edge.config.mqtt import MqttConfig
from edge.control.ops import OpResult, run_op
from edge.core.requester import Requester
from edge.fleet.protocol import (
    ACTUATING_OPS,
    Envelope,
    RecentRequests,
    Request,
    Response,
    correlation_of,
    refusal,
    response_properties,
)

if TYPE_CHECKING:
    from edge.control.ops import OpTarget

log = logging.getLogger(__name__)

Publish = Callable[[str, bytes, Properties], Awaitable[None]]
"""Publish ``payload`` on ``topic`` (QoS 1, not retained) with these properties."""


class Responder:
    def __init__(self, config: MqttConfig, publish: Publish, *,
                 clock: Callable[[], float] = time.monotonic):
        self.config = config
        self.publish = publish
        self.clock = clock
        self.target: OpTarget | None = None
        self.recent = RecentRequests(clock=clock)
        self.counts = {"requests": 0, "answered": 0, "refused": 0, "ignored": 0, "repeats": 0}

    def serve(self, target: OpTarget) -> None:
        """Run requests on ``target`` (the runtime: the control socket's operations)."""
        self.target = target

    async def on_request(self, payload: bytes, properties: Properties | None,
                         retained: bool) -> None:
        self.counts["requests"] += 1
        if retained:
            self._ignore("retained", "a retained request would act again at every reconnect")
            return
        try:
            envelope = Envelope.read(properties)
        except ValueError as exc:
            reply_to = getattr(properties, "ResponseTopic", None)
            correlation = correlation_of(properties)
            if isinstance(reply_to, str) and reply_to and correlation:
                await self._answer(reply_to, correlation, None,
                                   OpResult(False, str(exc), exit_code=2))
            else:
                self._ignore("malformed", str(exc))
            return
        deadline = self.clock() + envelope.expiry
        key = (envelope.caller, envelope.correlation)
        if not self.recent.claim(key):
            await self._repeat(envelope, key)
            return
        result = await self._run(envelope, payload, deadline)
        if result is None:  # expired before it could start: the asker has given up
            return
        await self._answer(envelope.reply_to, envelope.correlation, key, result)

    async def _run(self, envelope: Envelope, payload: bytes, deadline: float) -> OpResult | None:
        try:
            request = Request.decode(payload)
        except ValueError as exc:
            return OpResult(False, str(exc), exit_code=2)
        why = refusal(request.op)
        if why is None and request.op in ACTUATING_OPS and not self.config.allow_commands:
            why = (f"node {self.config.node_id} takes no commands over the broker ([mqtt] "
                   "allow_commands = false); reading is allowed")
        if why is None and self.target is None:
            why = f"node {self.config.node_id} does not run requests (its agent is not serving them)"
        if why is not None:
            self.counts["refused"] += 1
            log.warning("fleet_request_refused op=%s by=mqtt:%s reason=%r", request.op,
                        envelope.caller, why)
            return OpResult(False, why, exit_code=1)
        if self.clock() > deadline:
            self._ignore("expired", f"{request.op} from {envelope.caller} waited past its "
                         f"expiry ({envelope.expiry} s)")
            return None
        assert self.target is not None
        requester = Requester("mqtt", envelope.caller, why="fleet request")
        log.info("fleet_request op=%s by=%s", request.op, requester.caller)
        try:
            return await run_op(self.target, request.op, dict(request.args), requester)
        except Exception as exc:  # a bug answers as one, never as silence
            log.exception("fleet_request_failed op=%s", request.op)
            return OpResult(False, f"{type(exc).__name__}: {exc}")

    async def _repeat(self, envelope: Envelope, key: tuple[str, bytes]) -> None:
        self.counts["repeats"] += 1
        cached = self.recent.answer(key)
        log.info("fleet_request_repeat by=mqtt:%s answered=%s", envelope.caller, cached is not None)
        if cached is not None:
            await self._send(envelope.reply_to, envelope.correlation, cached)

    async def _answer(self, reply_to: str, correlation: bytes, key: tuple[str, bytes] | None,
                      result: OpResult) -> None:
        payload = Response.of(result).encode()
        if key is not None:
            self.recent.finish(key, payload)
        self.counts["answered"] += 1
        await self._send(reply_to, correlation, payload)

    async def _send(self, reply_to: str, correlation: bytes, payload: bytes) -> None:
        try:
            await self.publish(reply_to, payload, response_properties(correlation))
        except Exception as exc:  # the broker went away: the asker's wait ends without it
            log.warning("fleet_answer_not_sent topic=%r error=%r", reply_to, str(exc))

    def _ignore(self, reason: str, detail: str) -> None:
        self.counts["ignored"] += 1
        log.warning("fleet_request_ignored reason=%s detail=%r", reason, detail)

    def status(self) -> dict[str, Any]:
        return {"serving": self.target is not None, **self.counts}
