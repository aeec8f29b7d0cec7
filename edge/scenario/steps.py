"""A scenario file, read: where it starts (a wall time in a zone), who the people are, and its
steps, each one table of ``[[steps]]`` whose first key says what it is. A step that is wrong is
a :class:`~edge.core.exc.UsageError` naming it (``edge-cli test`` exits 2).

Actions: ``input`` (with ``value = "on"|"off"``), ``sensor`` (``"NAME.QUANTITY"``, ``value``;
``value = "release"`` lets go), ``wait`` (``"10m"``) or ``until`` (``"06:00"``: the next such time
in the scenario's zone, or ``"2026-03-29 06:00"``), ``chat`` (``from`` a person; ``model``: the
model's scripted turns; ``reply``/``receipt``: what the reply must say), ``op`` (an operation
as the local operator, ``args``), ``mqtt`` (a pin's ``/set`` with ``payload``), ``mcp`` (a tool
by its MCP name as client ``client``, ``args``).
Expectations, about what happened since the last action began: ``expect_pin`` (``is``),
``expect_refused`` (an interlock's name; optional ``door``), ``expect_trip``,
``expect_notified`` (a person; ``containing``), ``expect_audit`` (fields of a record).

>>> scenario = parse_scenario({"start": "2026-03-28 05:00", "timezone": "Europe/Berlin",
...     "steps": [{"wait": "90m"}, {"expect_pin": "pump", "is": "off"}]})
>>> [step.kind for step in scenario.steps], scenario.steps[0].seconds
(['wait', 'expect_pin'], 5400.0)
>>> from datetime import UTC
>>> saturday = scenario.start.replace(hour=6).astimezone(UTC)  # before the move to summer time
>>> sunday = scenario.next_time(saturday, "06:00")
>>> sunday.isoformat(), (sunday.astimezone(UTC) - saturday).total_seconds() / 3600
('2026-03-29T06:00:00+02:00', 23.0)
>>> parse_scenario({"steps": [{"jump": 3}]})  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
edge.core.exc.UsageError: step 1: a step begins with one of input, sensor, wait, until, ... (it has jump)
"""

from __future__ import annotations

import re
from datetime import datetime, time, timedelta
from typing import Any, Literal
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from edge.core.exc import UsageError

_SPAN = re.compile(r"(\d+(?:\.\d+)?)\s*(s|m|h|d|w)")
_UNIT = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800}


def seconds_of(text: str) -> float:
    """``"90s"``, ``"10m"``, ``"1h30m"``, ``"7d"``, ``"1w"`` in seconds.

    >>> seconds_of("1h30m"), seconds_of("2d")
    (5400.0, 172800.0)
    """
    spans = _SPAN.findall(text.replace(" ", ""))
    if not spans or "".join(n + u for n, u in spans) != text.replace(" ", ""):
        raise ValueError(f"{text!r} is not a span of time; write 90s, 10m, 1h30m, 2d or 1w")
    return float(sum(float(n) * _UNIT[u] for n, u in spans))


class Step(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    name: str = ""
    """How the report names it (default: its first key and value)."""

    @property
    def kind(self) -> str:
        return KIND_OF[type(self)]

    def title(self, index: int) -> str:
        first = next(iter(self.model_dump(exclude={"name"}, by_alias=True).items()))
        return f"step {index} ({self.name or f'{first[0]} {first[1]}'})"


class InputStep(Step):
    input: str
    value: Literal["on", "off"]


class SensorStep(Step):
    sensor: str = Field(pattern=r"^[^.]+\.[^.]+$")
    value: float | Literal["release"]


class WaitStep(Step):
    wait: str

    @property
    def seconds(self) -> float:
        return seconds_of(self.wait)


class UntilStep(Step):
    until: str


class ModelTurn(BaseModel):
    model_config = ConfigDict(extra="forbid")
    call: str | None = None
    """A tool the model calls (``gpio_write``), with ``args``."""
    args: dict[str, Any] = {}
    say: str | None = None
    """What the model answers (the turn's end)."""


class ChatStep(Step):
    chat: str
    sender: str = Field(alias="from")
    model: list[ModelTurn] = []
    reply: str | None = None
    receipt: str | None = None


class OpStep(Step):
    op: str
    args: dict[str, Any] = {}


class MqttStep(Step):
    mqtt: str
    payload: str


class McpStep(Step):
    mcp: str
    args: dict[str, Any] = {}
    client: str = "scenario"


class ExpectPin(Step):
    expect_pin: str
    is_: str | float = Field(alias="is")


class ExpectRefused(Step):
    expect_refused: str
    door: str | None = None


class ExpectTrip(Step):
    expect_trip: str


class ExpectNotified(Step):
    expect_notified: str
    containing: str = ""


class ExpectAudit(Step):
    expect_audit: dict[str, str | float]


KINDS: dict[str, type[Step]] = {
    "input": InputStep, "sensor": SensorStep, "wait": WaitStep, "until": UntilStep,
    "chat": ChatStep, "op": OpStep, "mqtt": MqttStep, "mcp": McpStep,
    "expect_pin": ExpectPin, "expect_refused": ExpectRefused, "expect_trip": ExpectTrip,
    "expect_notified": ExpectNotified, "expect_audit": ExpectAudit}
KIND_OF = {model: kind for kind, model in KINDS.items()}


class Scenario(BaseModel):
    model_config = ConfigDict(extra="forbid", arbitrary_types_allowed=True)

    config: str | None = None
    """The config file, relative to the scenario (``--config`` overrides it)."""
    timezone: str = "UTC"
    start: datetime
    people: dict[str, str] = {}
    """A name -> ``channel:id`` (``alice = "telegram:123456789"``)."""
    steps: list[Step]

    @property
    def zone(self) -> ZoneInfo:
        return ZoneInfo(self.timezone)

    def next_time(self, now: datetime, text: str) -> datetime:
        """``"06:00"``: the next 06:00 on the scenario's zone's wall clock after ``now``;
        ``"2026-03-29 06:00"``: that time in the zone."""
        zone = self.zone
        try:
            at = time.fromisoformat(text)
        except ValueError:
            return datetime.fromisoformat(text).replace(tzinfo=zone)
        local = now.astimezone(zone)
        day = local.date()
        while (when := datetime.combine(day, at, tzinfo=zone)) <= local:
            day += timedelta(days=1)
        return when


def parse_scenario(data: dict[str, Any]) -> Scenario:
    """The scenario in ``data`` (a TOML file's tables); UsageError names what is wrong."""
    raw_steps = data.get("steps")
    if not isinstance(raw_steps, list) or not raw_steps:
        raise UsageError("a scenario has [[steps]]: at least one")
    steps = [_step(index, raw) for index, raw in enumerate(raw_steps, 1)]
    rest = {k: v for k, v in data.items() if k != "steps"}
    try:
        ZoneInfo(str(rest.get("timezone", "UTC")))
    except (ZoneInfoNotFoundError, ValueError):
        raise UsageError(f"timezone {rest.get('timezone')!r} is not a zone name "
                         "(Europe/Berlin, UTC)") from None
    rest.setdefault("start", "2026-01-05 00:00")
    try:
        scenario = Scenario.model_validate({**rest, "steps": []})
    except ValidationError as exc:
        raise UsageError(_words(exc, "the scenario")) from None
    if scenario.start.tzinfo is None:
        scenario.start = scenario.start.replace(tzinfo=scenario.zone)
    scenario.steps = steps
    return scenario


def _step(index: int, raw: object) -> Step:
    if not isinstance(raw, dict) or not raw:
        raise UsageError(f"step {index}: a step is a table ([[steps]])")
    kind = next((key for key in raw if key in KINDS), None)
    if kind is None:
        raise UsageError(f"step {index}: a step begins with one of {', '.join(KINDS)} (it has "
                         f"{', '.join(raw)})")
    try:
        step = KINDS[kind].model_validate(raw)
        if isinstance(step, WaitStep):
            step.seconds  # noqa: B018 - a wrong span is the step's error, now
    except (ValidationError, ValueError) as exc:
        words = _words(exc, f"step {index}") if isinstance(exc, ValidationError) else str(exc)
        raise UsageError(f"step {index} ({kind}): {words}") from None
    return step


def _words(exc: ValidationError, where: str) -> str:
    return "; ".join(f"{'.'.join(map(str, e['loc'])) or where}: {e['msg']}" for e in exc.errors())
