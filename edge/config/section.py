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

import re
from collections.abc import Callable, Hashable, Iterable, Mapping
from typing import Annotated, Any, Generic, Literal, TypeVar, cast

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    GetCoreSchemaHandler,
    GetJsonSchemaHandler,
    ValidationInfo,
    create_model,
)
from pydantic.json_schema import JsonSchemaValue
from pydantic_core import CoreSchema, PydanticKnownError, SchemaValidator, core_schema

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


class SectionByType(Generic[SectionT]):
    """``Annotated`` metadata of a section whose model its ``type`` key chooses, each type's
    model made when a section first names it (``[boards.NAME]`` by its board type): reading a
    config builds the schemas of the types it uses, not of every type there is (issue 38).

    ``section(kind)`` is a type's model, or None when no type has that name; ``kinds()`` names
    them all, in order, for an error and for the docs (that may load every adapter). A table
    without ``key`` is ``default``'s; an instance of the annotated class passes as it is.
    Errors inside a section carry its type in their location, as pydantic's tagged unions do
    (``boards.uno.arduino.port``), which :mod:`edge.core.validation` drops, finding the type's
    keys through :class:`~edge.core.validation.ChosenByKey`; an unknown or missing type is
    pydantic's ``union_tag_invalid`` or ``union_tag_not_found``.

    >>> from pydantic import TypeAdapter
    >>> class DeviceSection(Section):
    ...     type: str
    >>> class Led(DeviceSection):
    ...     type: Literal["led"] = "led"
    >>> class Fan(DeviceSection):
    ...     type: Literal["fan"] = "fan"
    ...     speed: int = 1
    >>> models = {"led": Led, "fan": Fan}
    >>> Device = TypeAdapter(Annotated[DeviceSection, SectionByType(models.get, models.keys, default="led")])
    >>> Device.validate_python({"type": "fan", "speed": "2"}), Device.validate_python({})
    (Fan(type='fan', speed=2), Led(type='led'))
    >>> Device.validate_python({"type": "lamp"})
    Traceback (most recent call last):
    ...
    pydantic_core._pydantic_core.ValidationError: 1 validation error for function-plain[section()]
      Input tag 'lamp' found using 'type' does not match any of the expected tags: 'led', 'fan' ...
    """

    def __init__(self, section: Callable[[str], type[SectionT] | None], kinds: Callable[[], Iterable[str]],
                 default: str | None = None, key: str = "type") -> None:
        self.section = section
        self.kinds = kinds
        self.default = default
        self.key = key
        self._validators: dict[str, SchemaValidator] = {}

    def member(self, kind: object) -> type[SectionT] | None:
        """The model of the sections whose ``key`` is ``kind``; None when no type is named so."""
        return self.section(kind) if isinstance(kind, str) else None

    def tags(self) -> list[str]:
        """Every type's name, in order."""
        return list(self.kinds())

    def members(self) -> dict[str, type[SectionT]]:
        """Every type's model, by its name (the docs and the JSON schema show them all)."""
        return {kind: model for kind in self.kinds() if (model := self.section(kind)) is not None}

    def validate(self, value: Any, context: Any = None) -> Any:
        """A table as its type's section; a ValidationError if it is wrong."""
        if not isinstance(value, Mapping):
            raise PydanticKnownError("dict_type")
        if self.key not in value and self.default is not None:
            value = {self.key: self.default, **value}
        if self.key not in value:
            raise PydanticKnownError("union_tag_not_found", {"discriminator": repr(self.key)})
        kind = value[self.key]
        validator = self._validators.get(kind) if isinstance(kind, str) else None
        if validator is None:
            model = self.member(kind)
            if model is None:
                raise PydanticKnownError("union_tag_invalid", {
                    "discriminator": repr(self.key), "tag": str(kind),
                    "expected_tags": ", ".join(map(repr, self.tags()))})
            validator = self._validators[kind] = SchemaValidator(
                core_schema.tagged_union_schema({kind: _core_schema(model)}, self.key))
        return validator.validate_python(value, context=context)

    def __get_pydantic_core_schema__(self, source: type[Any], handler: GetCoreSchemaHandler) -> CoreSchema:
        def section(value: Any, info: ValidationInfo) -> Any:
            return value if isinstance(value, source) else self.validate(value, info.context)
        return core_schema.with_info_plain_validator_function(section)

    def __get_pydantic_json_schema__(self, schema: CoreSchema, handler: GetJsonSchemaHandler) -> JsonSchemaValue:
        """Every type's schema, chosen by ``key``."""
        choices: dict[Hashable, CoreSchema] = {
            kind: _core_schema(model) for kind, model in self.members().items()}
        return handler(core_schema.tagged_union_schema(choices, self.key))


def _core_schema(model: type[BaseModel]) -> CoreSchema:
    """``model``'s core schema, built now if it waited (``defer_build``)."""
    model.model_rebuild()
    return model.__pydantic_core_schema__


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
