"""The base of every config section (unknown keys are errors; defaults are validated too), on a
floor below the schema so that section modules (sensors, schedules, rules, mqtt) and the
``Config`` model that gathers them import it without a cycle.

A section is :class:`peripherals.options.Options`, the base of a board's or a sensor driver's
options, so the agent's keys and a driver's read alike: ``"5"`` is 5 and ``"true"`` is true
(environment variables are text), but ``true`` is no number and ``5`` is no text.

>>> class Pump(Section):
...     max_on_seconds: float = 30.0
>>> Pump.model_validate({"max_on_seconds": "45"}).max_on_seconds
45.0
"""

from __future__ import annotations

import functools
import operator
import re
from collections.abc import Iterable
from typing import Annotated, Any, Literal, TypeVar, cast

from pydantic import AfterValidator, BaseModel, BeforeValidator, ConfigDict, Discriminator, create_model

from edge.core.durations import counted_in
from peripherals.options import Options

NAME = re.compile(r"[A-Za-z][A-Za-z0-9_-]{0,63}")

Seconds = Annotated[float, AfterValidator(counted_in("s"))]
"""A duration key counted in seconds (``timeout_seconds``): finite and at most 10 years; its
``Field`` gives the lower bound. ``inf`` and ``1e300`` are refused with the key."""
Minutes = Annotated[float, AfterValidator(counted_in("m"))]
Hours = Annotated[float, AfterValidator(counted_in("h"))]


class Section(Options):
    """A config section: unknown keys are errors, defaults are checked too."""

    model_config = ConfigDict(defer_build=True)
    """Built on first use, as a driver's options are: reading the config builds the schema of
    :class:`~edge.config.model.Config` with every section in it, so each section's own validator
    waits for a caller that validates the section alone (an edit, ``doctor``). Building each one
    as it was defined cost about 5 ms more of every start (issue 38)."""


SectionT = TypeVar("SectionT", bound=Section)


def adapter_section(kind: str, options: type[BaseModel], section: type[SectionT],
                    **fields: Any) -> type[SectionT]:
    """The config section of an adapter registered as ``kind``: its own ``options`` (the keys
    its driver reads) with the agent's keys of ``section`` and ``fields``, and ``type = kind``.
    Named after both (``bme280`` and ``SensorSection``: ``Bme280SensorConfig``).

    >>> class Fan(BaseModel):
    ...     speed: int = 1
    >>> class DeviceSection(Section):
    ...     type: str
    >>> adapter_section("ceiling_fan", Fan, DeviceSection)(speed=2)
    CeilingFanDeviceConfig(type='ceiling_fan', speed=2)
    """
    tag: Any = Literal[kind]  # a type made at run time: each adapter names its own
    name = "".join(part.title() for part in kind.split("_")) + section.__name__.removesuffix("Section")
    model = create_model(f"{name}Config", __base__=(options, section), __module__=section.__module__,
                         __doc__=options.__doc__, type=(tag, kind), **fields)
    return cast(type[SectionT], model)


def tagged_union(models: Iterable[type[BaseModel]], key: str = "type") -> Any:
    """``Annotated[A | B | ..., Discriminator(key)]`` over models made at run time (a type
    checker sees their base instead)."""
    return Annotated[functools.reduce(operator.or_, models), Discriminator(key)]


def key_default(default: str, key: str = "type") -> BeforeValidator:
    """``Annotated`` metadata after a union's ``Discriminator(key)``: a table without ``key`` is
    ``default``'s.

    >>> from pydantic import TypeAdapter
    >>> class Led(Section):
    ...     type: Literal["led"]
    >>> class Fan(Section):
    ...     type: Literal["fan"]
    ...     speed: int = 1
    >>> Device = TypeAdapter(Annotated[Led | Fan, Discriminator("type"), key_default("led")])
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
