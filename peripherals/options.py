"""The base of every adapter's options: the keys of its ``[boards.NAME]`` or ``[sensors.NAME]``
section as the config file writes them. Unknown keys are errors and defaults are checked too.

Options read values as configuration is written: ``"5"`` is 5 and ``"true"`` is true
(environment variables are text), but ``true`` is no number and ``5`` is no text. Defaults are
written as values (``aliases: dict[str, str] = {}``): pydantic copies them for each instance,
and a value costs less at import than a ``default_factory``, whose signature pydantic inspects.
The runtime's own config sections (``edge.config.section.Section``) are Options too, so a
driver's keys and the agent's read alike.

>>> class Pump(Options):
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
from collections.abc import Callable, Collection
from typing import Any, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, model_validator


class Options(BaseModel):
    """An adapter's config keys: unknown keys are errors, defaults are checked too."""

    model_config = ConfigDict(extra="forbid", validate_default=True, defer_build=True)

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


def among(allowed: Collection[Any], explain: Callable[[Any], str]) -> AfterValidator:
    """``Annotated`` metadata: the value must be one of ``allowed``; ``explain(value)`` says
    what is (a chip's addresses, an ADC's ranges).

    >>> from typing import Annotated
    >>> class Chip(Options):
    ...     address: Annotated[int, among((0x76, 0x77), lambda a: f"0x{a:02x}: use 0x76 or 0x77")] = 0x76
    >>> Chip(address=0x77).address
    119
    """
    def check(value: Any) -> Any:
        if value not in allowed:
            raise ValueError(explain(value))
        return value
    return AfterValidator(check)


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
