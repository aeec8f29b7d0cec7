"""The base of every config section (unknown keys are errors; defaults are validated too), on a
floor below the schema so that section modules (sensors, schedules, rules, mqtt) and the
``Config`` model that gathers them import it without a cycle.

Sections read values as configuration is written: ``"5"`` is 5 and ``"true"`` is true
(environment variables are text), but ``true`` is no number and ``5`` is no text. Defaults are
written as values (``pins: dict[str, PinConfig] = {}``, ``groups: TelegramGroupsConfig =
TelegramGroupsConfig()``): pydantic copies them for each instance, and a value costs less at
import than a ``default_factory``, whose signature pydantic inspects.

>>> class Pump(Section):
...     max_on_seconds: float = 30.0
>>> Pump.model_validate({"max_on_seconds": "45"}).max_on_seconds
45.0
>>> Pump.model_validate({"max_on_seconds": True})
Traceback (most recent call last):
...
pydantic_core._pydantic_core.ValidationError: 1 validation error for Pump
...
"""

from __future__ import annotations

import functools
import re
import types
import typing
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, BeforeValidator, ConfigDict, model_validator

from edge.core.durations import counted_in

NAME = re.compile(r"[A-Za-z][A-Za-z0-9_-]{0,63}")

Seconds = Annotated[float, AfterValidator(counted_in("s"))]
"""A duration key counted in seconds (``timeout_seconds``): finite and at most 10 years; its
``Field`` gives the lower bound. ``inf`` and ``1e300`` are refused with the key."""
Minutes = Annotated[float, AfterValidator(counted_in("m"))]
Hours = Annotated[float, AfterValidator(counted_in("h"))]


class Section(BaseModel):
    """A config section: unknown keys are errors, defaults are checked too."""

    model_config = ConfigDict(extra="forbid", validate_default=True)

    @model_validator(mode="before")
    @classmethod
    def _numbers_as_written(cls, data: Any) -> Any:
        """pydantic takes ``true`` for 1 where a number is expected; we do not (``max_on_seconds
        = true`` is a mistake, not one second): the bool is handed on as a value the field's own
        check refuses, with every other problem. Text is read as environment variables write
        it: ``" 5 "``, ``"2"`` for ``qos`` (a choice of integers), ``"0x76"`` (an I2C address),
        ``" yes "``."""
        if not isinstance(data, dict):
            return data
        kinds = _scalar_fields(cls)
        changed: dict[str, Any] = {}
        for key, value in data.items():
            kind = kinds.get(key)
            if kind is None:
                continue
            if kind != "bool" and isinstance(value, bool):
                changed[key] = _NotANumber(value)
            elif isinstance(value, str):
                text = value.strip()
                if kind == "int" and _INTEGER.fullmatch(text):
                    changed[key] = int(text, 0 if _PREFIXED.match(text) else 10)
                elif text != value:
                    changed[key] = text
        return {**data, **changed} if changed else data


class _NotANumber:
    """A bool where a number is expected; shown as the bool it was (``got True``)."""

    __slots__ = ("value",)

    def __init__(self, value: bool) -> None:
        self.value = value

    def __repr__(self) -> str:
        return repr(self.value)


_INTEGER = re.compile(r"[+-]?(?:0[xX][0-9A-Fa-f_]+|0[oO][0-7_]+|0[bB][01_]+|[0-9][0-9_]*)")
_PREFIXED = re.compile(r"[+-]?0[xXoObB]")


@functools.cache
def _scalar_fields(model: type[BaseModel]) -> dict[str, Literal["int", "float", "bool"]]:
    """The keys of ``model``'s fields that take only numbers (``int``: integers or a choice of
    them, ``float``) or only a bool, and nothing else but None."""
    kinds: dict[str, Literal["int", "float", "bool"]] = {}
    for name, field in model.model_fields.items():
        members = [m for m in _members(field.annotation) if m is not type(None)]
        literals = [v for m in members if typing.get_origin(m) is Literal for v in typing.get_args(m)]
        plain = [m for m in members if typing.get_origin(m) is not Literal]
        key = field.alias or name
        if members and plain == [bool] and not literals:
            kinds[key] = "bool"
        elif not members or not all(m in (int, float) for m in plain):
            continue
        elif all(type(v) is int for v in literals):
            kinds[key] = "float" if float in plain else "int"
    return kinds


def _members(hint: Any) -> tuple[Any, ...]:
    origin = typing.get_origin(hint)
    if origin is typing.Annotated:
        return _members(typing.get_args(hint)[0])
    if origin is typing.Union or origin is types.UnionType:
        return tuple(m for arg in typing.get_args(hint) for m in _members(arg))
    return (hint,)


def key_default(default: str, key: str = "type") -> BeforeValidator:
    """``Annotated`` metadata after a union's ``Discriminator(key)``: a table without ``key`` is
    ``default``'s.

    >>> class Led(Section):
    ...     type: Literal["led"]
    >>> class Fan(Section):
    ...     type: Literal["fan"]
    ...     speed: int = 1
    >>> from pydantic import Discriminator, TypeAdapter
    >>> Device = TypeAdapter(typing.Annotated[Led | Fan, Discriminator("type"), key_default("led")])
    >>> Device.validate_python({"type": "fan", "speed": 2}), Device.validate_python({})
    (Fan(type='fan', speed=2), Led(type='led'))
    """
    def fill(value: Any) -> Any:
        return {key: default, **value} if isinstance(value, dict) and key not in value else value
    return BeforeValidator(fill)


def check_name(value: str, what: str = "", why: str = "") -> str:
    """A name people write and that shows up in callers, logs and commands (a rule, a schedule,
    a sensor): letters, digits, ``_`` and ``-``, starting with a letter.

    >>> check_name("greenhouse-1")
    'greenhouse-1'
    """
    if not NAME.fullmatch(value):
        raise ValueError(f"{what + ' ' if what else ''}{value!r}: use letters, digits, '_' and '-', "
                         f"starting with a letter (at most 64 characters){why}")
    return value
