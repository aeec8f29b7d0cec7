"""Typed records checked at the boundary: configuration sections, tool arguments, chat updates.

A :class:`Record` declares its fields as annotated class attributes, as a dataclass does; data
from outside (TOML, JSON, a model's tool call) becomes a record through :meth:`Record.parse`, which
checks every field and reports every problem at once, each with the key path it was found at, in
our words. Records replace pydantic here: pydantic cost an idle agent about 12 MB (its compiled
core alone maps 4 MB) and a one-shot command about 100 ms of imports, for a fraction of what it
does that we use.

>>> class Pin(Record):
...     mode: Literal["input", "output"]
...     max_on_seconds: float | None = Field(default=None, gt=0)
>>> Pin.parse({"mode": "output", "max_on_seconds": 30})
Pin(mode='output', max_on_seconds=30.0)
>>> try:
...     Pin.parse({"mode": "out", "max_on_seconds": -1, "saf": "off"})
... except Invalid as exc:
...     print(exc)
mode: expected 'input' or 'output' (got 'out'); max_on_seconds: must be greater than 0 \
(got -1); saf: unknown key

What a field takes: ``str``, ``int``, ``float``, ``bool``, ``None``, ``Literal``, an ``Enum``,
``list[X]``, ``dict[K, V]``, another record, a union of these, :class:`Secret`, ``Any``;
``Annotated`` adds :func:`Field` limits and :class:`Before`/:class:`After` functions, and
:class:`Tagged` picks a union's member by a key (``type = "bme280"``). Records are lenient as
configuration is written (``"5"`` for 5, ``"true"`` for true: environment variables are text)
unless the class says ``strict=True``; an integer is never text and a bool is never a number.
A record's ``check()`` method sees the whole record once its fields are valid.
"""

from __future__ import annotations

import enum
import inspect
import math
import operator
import sys
import types
import typing
from collections.abc import Callable, Iterable, Mapping
from typing import Annotated, Any, ClassVar, Literal, Self, Union, dataclass_transform

__all__ = ["After", "Before", "Field", "Invalid", "Issue", "Record", "Secret", "Tagged", "Validator",
           "validator"]


class _Missing:
    def __repr__(self) -> str:
        return "MISSING"


MISSING: Any = _Missing()
"""A field without a default (required)."""
_FAIL: Any = _Missing()
"""What a check returns after recording an issue."""

Loc = tuple[str | int, ...]


class Issue:
    """One problem with the input: where (the key path), what kind, and what to do, in words."""

    __slots__ = ("loc", "kind", "message", "input")

    def __init__(self, loc: Loc, kind: Literal["missing", "unknown", "type", "value"], message: str,
                 input: object = None) -> None:  # noqa: A002 (the input the issue is about)
        self.loc, self.kind, self.message, self.input = loc, kind, message, input

    @property
    def where(self) -> str:
        return ".".join(str(part) for part in self.loc)

    def __str__(self) -> str:
        return f"{self.where}: {self.message}" if self.loc else self.message

    def __repr__(self) -> str:
        return f"Issue({self.loc!r}, {self.kind!r}, {self.message!r})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Issue) and (self.loc, self.kind, self.message) == (
            other.loc, other.kind, other.message)

    def __hash__(self) -> int:
        return hash((self.loc, self.kind, self.message))


class Invalid(ValueError):
    """The input does not fit the record; ``issues`` lists every problem found."""

    def __init__(self, issues: list[Issue]) -> None:
        self.issues = issues
        super().__init__("; ".join(map(str, issues)))


class Secret:
    """Text that is never shown: ``repr``, ``str`` and a JSON dump give ``**********``.

    >>> token = Secret("123:abc")
    >>> token, token.reveal()
    (Secret('**********'), '123:abc')
    """

    __slots__ = ("_value",)
    MASK = "**********"

    def __init__(self, value: str) -> None:
        self._value = value

    def reveal(self) -> str:
        return self._value

    def __repr__(self) -> str:
        return f"Secret({self.MASK!r})"

    def __str__(self) -> str:
        return self.MASK

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Secret) and other._value == self._value

    def __hash__(self) -> int:
        return hash(self._value)


class Before:
    """Annotated metadata: ``fn(raw) -> raw`` before the type is checked (an id as a TOML
    integer made text); a ValueError from it is the field's issue."""

    __slots__ = ("fn",)

    def __init__(self, fn: Callable[[Any], Any]) -> None:
        self.fn = fn


class After:
    """Annotated metadata: ``fn(value) -> value`` once the type and limits hold; a ValueError
    from it is the field's issue."""

    __slots__ = ("fn",)

    def __init__(self, fn: Callable[[Any], Any]) -> None:
        self.fn = fn


class Tagged:
    """Annotated metadata on a union of records: the member is the one whose ``key`` field is
    ``Literal[value]`` for the input's ``key`` (``default`` when the key is absent)."""

    __slots__ = ("key", "default")

    def __init__(self, key: str = "type", default: str | None = None) -> None:
        self.key, self.default = key, default


class FieldInfo:
    """What :func:`Field` says of a field."""

    __slots__ = ("default", "default_factory", "alias", "description", "ge", "gt", "le", "lt",
                 "min_length", "max_length")

    def __init__(self, default: Any = MISSING, default_factory: Callable[[], Any] | None = None,
                 alias: str | None = None, description: str = "", ge: float | None = None,
                 gt: float | None = None, le: float | None = None, lt: float | None = None,
                 min_length: int | None = None, max_length: int | None = None) -> None:
        self.default, self.default_factory, self.alias, self.description = (
            default, default_factory, alias, description)
        self.ge, self.gt, self.le, self.lt = ge, gt, le, lt
        self.min_length, self.max_length = min_length, max_length


def Field(*, default: Any = MISSING, default_factory: Callable[[], Any] | None = None,  # noqa: N802
          alias: str | None = None, description: str = "", ge: float | None = None,
          gt: float | None = None, le: float | None = None, lt: float | None = None,
          min_length: int | None = None, max_length: int | None = None) -> Any:
    """A field's default, limits (numbers: ``ge gt le lt``; text and lists: ``min_length
    max_length``), the key it is read from when that is not its name (``alias``), and the
    description a tool's JSON schema carries. Also usable inside ``Annotated``."""
    return FieldInfo(default, default_factory, alias, description, ge, gt, le, lt, min_length,
                     max_length)


Validator = Callable[[Any, Loc, list[Issue]], Any]
"""Checks and converts one value: returns it, or records an issue and returns the failure mark."""


def _describe(value: object) -> str:
    if isinstance(value, Mapping):
        return "a table"
    if isinstance(value, list | tuple):
        return "a list"
    if isinstance(value, Secret):
        return "a secret"
    try:
        text = repr(value)
    except ValueError:  # an int past the 4300-digit limit of int -> text
        return "a value too long to show"
    return text if len(text) <= 80 else text[:77] + "..."


def _type_issue(issues: list[Issue], loc: Loc, expected: str, value: object) -> Any:
    issues.append(Issue(loc, "type", f"expected {expected} (got {_describe(value)})", value))
    return _FAIL


_TRUE = {"true", "t", "yes", "y", "on", "1"}
_FALSE = {"false", "f", "no", "n", "off", "0"}


def _check_str(value: Any, loc: Loc, issues: list[Issue]) -> Any:
    return value if isinstance(value, str) else _type_issue(issues, loc, "text", value)


def _lenient_int(value: Any, loc: Loc, issues: list[Issue]) -> Any:
    if isinstance(value, bool):
        return _type_issue(issues, loc, "an integer", value)
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, str):
        text = value.strip().replace("_", "")
        try:  # "010" is ten; "0x76" (an I2C address) needs base 0
            return int(text, 10 if text.lstrip("+-").isdigit() else 0)
        except ValueError:
            pass
    return _type_issue(issues, loc, "an integer", value)


def _strict_int(value: Any, loc: Loc, issues: list[Issue]) -> Any:
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    return _type_issue(issues, loc, "an integer", value)


def _lenient_float(value: Any, loc: Loc, issues: list[Issue]) -> Any:
    if isinstance(value, bool):
        return _type_issue(issues, loc, "a number", value)
    if isinstance(value, float) or isinstance(value, int) and abs(value) <= sys.float_info.max:
        return float(value)
    if isinstance(value, str):
        try:
            return float(value.strip())
        except ValueError:
            pass
    return _type_issue(issues, loc, "a number", value)


def _strict_float(value: Any, loc: Loc, issues: list[Issue]) -> Any:
    if isinstance(value, float) or (isinstance(value, int) and not isinstance(value, bool)
                                    and abs(value) <= sys.float_info.max):  # 10**400: no float
        return float(value)
    return _type_issue(issues, loc, "a number", value)


def _lenient_bool(value: Any, loc: Loc, issues: list[Issue]) -> Any:
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().lower() in _TRUE | _FALSE:
        return value.strip().lower() in _TRUE
    if isinstance(value, int) and value in (0, 1):
        return bool(value)
    return _type_issue(issues, loc, "true or false", value)


def _strict_bool(value: Any, loc: Loc, issues: list[Issue]) -> Any:
    return value if isinstance(value, bool) else _type_issue(issues, loc, "true or false", value)


def _check_none(value: Any, loc: Loc, issues: list[Issue]) -> Any:
    return None if value is None else _type_issue(issues, loc, "nothing (null)", value)


def _check_secret(value: Any, loc: Loc, issues: list[Issue]) -> Any:
    if isinstance(value, Secret):
        return value
    if isinstance(value, str):
        return Secret(value)
    issues.append(Issue(loc, "type", "expected text (a quoted string; the value is not shown: "
                                     "it is a secret)", None))
    return _FAIL


def _check_any(value: Any, loc: Loc, issues: list[Issue]) -> Any:
    return value


def _alternatives(choices: Iterable[object]) -> str:
    """``'a', 'b' or 'c'``"""
    shown = [repr(choice) for choice in choices]
    return " or ".join(filter(None, (", ".join(shown[:-1]), shown[-1])))


def _literal(choices: tuple[Any, ...], strict: bool) -> Validator:
    shown = _alternatives(choices)
    by_text = {str(c): c for c in choices if isinstance(c, int) and not isinstance(c, bool)}

    def check(value: Any, loc: Loc, issues: list[Issue]) -> Any:
        for choice in choices:
            if value == choice and type(value) is type(choice):
                return choice
        if not strict and isinstance(value, str) and value.strip() in by_text:
            return by_text[value.strip()]
        issues.append(Issue(loc, "type", f"expected {shown} (got {_describe(value)})", value))
        return _FAIL
    return check


def _enum(kind: type[enum.Enum]) -> Validator:
    shown = _alternatives(member.value for member in kind)

    def check(value: Any, loc: Loc, issues: list[Issue]) -> Any:
        if isinstance(value, kind):
            return value
        try:
            return kind(value)
        except (ValueError, TypeError):
            issues.append(Issue(loc, "type", f"expected {shown} (got {_describe(value)})",
                                value))
            return _FAIL
    return check


def _list(item: Validator) -> Validator:
    def check(value: Any, loc: Loc, issues: list[Issue]) -> Any:
        if not isinstance(value, list | tuple):
            return _type_issue(issues, loc, "a list", value)
        out, ok = [], True
        for index, element in enumerate(value):
            checked = item(element, (*loc, index), issues)
            ok = ok and checked is not _FAIL
            out.append(checked)
        return out if ok else _FAIL
    return check


def _dict(key: Validator, item: Validator) -> Validator:
    def check(value: Any, loc: Loc, issues: list[Issue]) -> Any:
        if not isinstance(value, Mapping):
            return _type_issue(issues, loc, "a table", value)
        out, ok = {}, True
        for name, element in value.items():
            where = (*loc, str(name))
            checked_key = key(name, where, issues)
            checked = item(element, where, issues)
            if checked_key is _FAIL or checked is _FAIL:
                ok = False
            else:
                out[checked_key] = checked
        return out if ok else _FAIL
    return check


def _union(members: list[Validator], nullable: bool) -> Validator:
    def check(value: Any, loc: Loc, issues: list[Issue]) -> Any:
        if value is None and nullable:
            return None
        best: list[Issue] = []
        tried: list[Issue] = []
        for member in members:
            attempt: list[Issue] = []
            checked = member(value, loc, attempt)
            if checked is not _FAIL:
                return checked
            tried += attempt
            if not best or max(len(i.loc) for i in attempt) > max(len(i.loc) for i in best):
                best = attempt
        if max(len(i.loc) for i in best) > len(loc):  # the member whose shape fitted best
            issues.extend(best)
        else:  # every member's expectation, not only the first's: "expected a number or 'auto'"
            wanted = list(dict.fromkeys(i.message.split(" (got ")[0] for i in tried))
            if all(w.startswith("expected ") for w in wanted):
                wanted = ["expected " + " or ".join(w.removeprefix("expected ") for w in wanted)]
            issues.append(Issue(loc, "type", " or ".join(wanted) + f" (got {_describe(value)})", value))
        return _FAIL
    return check


def _tagged(tag: Tagged, members: tuple[type[Record], ...]) -> Validator:
    by_tag: dict[str, type[Record]] = {}
    for member in members:
        hint = member._fields()[tag.key].hint
        for value in typing.get_args(hint):
            by_tag[value] = member
    names = ", ".join(by_tag)

    def check(value: Any, loc: Loc, issues: list[Issue]) -> Any:
        if isinstance(value, members):
            return value
        if not isinstance(value, Mapping):
            return _type_issue(issues, loc, "a table", value)
        chosen = value.get(tag.key, tag.default)
        member = by_tag.get(chosen) if isinstance(chosen, str) else None
        if member is None:
            where = (*loc, tag.key) if tag.key in value else loc
            what = f"unknown {tag.key} {_describe(chosen)}" if tag.key in value else f"{tag.key} is missing"
            issues.append(Issue(where, "value" if tag.key in value else "missing",
                                f"{what}; use one of: {names}", chosen))
            return _FAIL
        return member._check(value, loc, issues)
    return check


def _limits(info: FieldInfo, inner: Validator) -> Validator:
    compare: list[tuple[float | None, str, Callable[[Any, Any], bool]]] = [
        (info.ge, "at least", operator.ge), (info.gt, "greater than", operator.gt),
        (info.le, "at most", operator.le), (info.lt, "less than", operator.lt)]
    bounds = [b for b in compare if b[0] is not None]
    shortest, longest = info.min_length, info.max_length
    if not bounds and shortest is None and longest is None:
        return inner

    def check(raw: Any, loc: Loc, issues: list[Issue]) -> Any:
        value = inner(raw, loc, issues)
        if value is _FAIL or value is None:
            return value
        if isinstance(value, int | float):
            for bound, words, holds in bounds:
                if not holds(value, bound) or (isinstance(value, float) and math.isnan(value)):
                    issues.append(Issue(loc, "value", f"must be {words} {bound:g} "
                                                      f"(got {_describe(raw)})", raw))
                    return _FAIL
        if isinstance(value, str | list | dict):
            units = "characters" if isinstance(value, str) else "entries" if isinstance(value, dict) else "items"
            if shortest is not None and len(value) < shortest:
                need = "must not be empty" if shortest == 1 else f"needs at least {shortest} {units}"
                issues.append(Issue(loc, "value", need, value))
                return _FAIL
            if longest is not None and len(value) > longest:
                issues.append(Issue(loc, "value", f"must have at most {longest} {units} "
                                                  f"(got {len(value)})", None))
                return _FAIL
        return value
    return check


def _calling(fn: Callable[[Any], Any], inner: Validator, before: bool) -> Validator:
    def check(value: Any, loc: Loc, issues: list[Issue]) -> Any:
        if not before:
            value = inner(value, loc, issues)
            if value is _FAIL:
                return value
        try:
            value = fn(value)
        except (ValueError, TypeError, AssertionError) as exc:
            issues.append(Issue(loc, "value", str(exc), value))
            return _FAIL
        return inner(value, loc, issues) if before else value
    return check


def validator(hint: Any, strict: bool = False) -> Validator:
    """The check for a (resolved) type annotation; :meth:`Record.parse` uses it for each field,
    and it is public for lists of records and single values."""
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin is Annotated:
        inner_hint, metadata = args[0], args[1:]
        tag = next((m for m in metadata if isinstance(m, Tagged)), None)
        if tag is not None:
            check = _tagged(tag, typing.get_args(inner_hint))
        else:
            check = validator(inner_hint, strict)
        for meta in metadata:
            if isinstance(meta, FieldInfo):
                check = _limits(meta, check)
            elif isinstance(meta, Before | After):
                check = _calling(meta.fn, check, isinstance(meta, Before))
        return check
    if hint is Any or hint is object:
        return _check_any
    if hint is None or hint is type(None):
        return _check_none
    if origin is Literal:
        return _literal(args, strict)
    if origin in (Union, types.UnionType):
        nullable = type(None) in args
        members = [validator(a, strict) for a in args if a is not type(None)]
        if len(members) == 1:
            only = members[0]
            return (lambda v, loc, issues: None if v is None else only(v, loc, issues)) if nullable else only
        return _union(members, nullable)
    if origin in (list, tuple) or hint in (list, tuple):
        return _list(validator(args[0], strict) if args else _check_any)
    if origin is dict or hint is dict:
        return _dict(validator(args[0], strict), validator(args[1], strict)) if args \
            else _dict(_check_any, _check_any)
    if isinstance(hint, type):
        if issubclass(hint, Record):
            return hint._check
        if issubclass(hint, enum.Enum):
            return _enum(hint)
        if hint is Secret:
            return _check_secret
        simple = {str: (_check_str, _check_str), bool: (_lenient_bool, _strict_bool),
                  int: (_lenient_int, _strict_int), float: (_lenient_float, _strict_float)}
        if hint in simple:
            return simple[hint][strict]
    raise TypeError(f"records cannot check {hint!r}")


class _Field:
    __slots__ = ("name", "hint", "info", "check")

    def __init__(self, name: str, hint: Any, info: FieldInfo, check: Validator) -> None:
        self.name, self.hint, self.info, self.check = name, hint, info, check

    @property
    def key(self) -> str:
        return self.info.alias or self.name

    @property
    def required(self) -> bool:
        return self.info.default is MISSING and self.info.default_factory is None

    def default(self) -> Any:
        factory = self.info.default_factory
        return factory() if factory is not None else self.info.default


@dataclass_transform(kw_only_default=True, field_specifiers=(Field,))
class Record:
    """A checked record; see the module's documentation."""

    __extra__: ClassVar[Literal["forbid", "ignore"]] = "forbid"
    __strict__: ClassVar[bool] = False
    __frozen__: ClassVar[bool] = False
    __fields_set__: frozenset[str]
    __record_infos__: ClassVar[dict[str, FieldInfo]]

    def __init_subclass__(cls, *, extra: Literal["forbid", "ignore"] | None = None,
                          strict: bool | None = None, frozen: bool | None = None,
                          **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if extra is not None:
            cls.__extra__ = extra
        if strict is not None:
            cls.__strict__ = strict
        if frozen is not None:
            cls.__frozen__ = frozen
        for name, value in list(cls.__dict__.items()):
            if isinstance(value, FieldInfo):  # read at the first check, not left as a default
                delattr(cls, name)
                cls.__record_infos__ = {**cls.__dict__.get("__record_infos__", {}), name: value}

    def __init__(self, **values: Any) -> None:
        issues: list[Issue] = []
        made = type(self)._check(values, (), issues)
        if made is _FAIL:
            raise Invalid(issues)
        object.__setattr__(self, "__dict__", made.__dict__)

    # -- the schema, worked out once per class at its first use --------------------------------

    @classmethod
    def _fields(cls) -> dict[str, _Field]:
        cached: dict[str, _Field] | None = cls.__dict__.get("__record_fields__")
        if cached is not None:
            return cached
        infos: dict[str, FieldInfo] = {}
        for klass in reversed(cls.__mro__):
            if isinstance(klass, type) and issubclass(klass, Record):
                for name in inspect.get_annotations(klass):  # its own, on every Python version
                    if name.startswith("_"):
                        continue
                    value = klass.__dict__.get("__record_infos__", {}).get(
                        name, klass.__dict__.get(name, MISSING))
                    infos[name] = value if isinstance(value, FieldInfo) else FieldInfo(default=value)
        hints = typing.get_type_hints(cls, include_extras=True)
        fields: dict[str, _Field] = {}
        for name, info in infos.items():
            hint = hints[name]
            if typing.get_origin(hint) is ClassVar:
                continue
            if hasattr(Record, name):  # a field "check" or "dump" would break the record's methods
                raise TypeError(f"{cls.__name__}.{name}: a field cannot be named as a Record method")
            # the field's own limits hold before any After function runs, as for Annotated ones
            inner, metadata = ((typing.get_args(hint)[0], typing.get_args(hint)[1:])
                               if typing.get_origin(hint) is Annotated else (hint, ()))
            check = validator(Annotated[(inner, info, *metadata)], cls.__strict__)
            fields[name] = _Field(name, hint, info, check)
        type.__setattr__(cls, "__record_fields__", fields)
        return fields

    @classmethod
    def _check(cls, data: Any, loc: Loc, issues: list[Issue]) -> Any:
        if isinstance(data, cls):
            return data
        if not isinstance(data, Mapping):
            return _type_issue(issues, loc, "a table", data)
        fields = cls._fields()
        values: dict[str, Any] = {}
        given: set[str] = set()
        failed = False
        for field in fields.values():
            if field.key in data:
                raw = data[field.key]
                given.add(field.name)
            elif field.key != field.name and field.name in data:
                raw = data[field.name]
                given.add(field.name)
            elif field.required:
                issues.append(Issue((*loc, field.key), "missing", "required key is missing"))
                failed = True
                continue
            else:
                raw = field.default()
            checked = field.check(raw, (*loc, field.key), issues)
            if checked is _FAIL:
                failed = True
            else:
                values[field.name] = checked
        if cls.__extra__ == "forbid":
            known = {f.key for f in fields.values()} | {f.name for f in fields.values()}
            for key in data:
                if key not in known:
                    issues.append(Issue((*loc, str(key)), "unknown", "unknown key", None))
                    failed = True
        if failed:
            return _FAIL
        record = cls.__new__(cls)
        object.__setattr__(record, "__dict__", values)
        object.__setattr__(record, "__fields_set__", frozenset(given))
        try:
            record.check()
        except (ValueError, TypeError) as exc:
            issues.append(Issue(loc, "value", str(exc), None))
            return _FAIL
        return record

    def check(self) -> None:
        """The whole record, once every field is valid: raise ValueError to refuse it.
        Subclasses that add checks call ``super().check()``."""

    # -- the public surface ----------------------------------------------------------------------

    @classmethod
    def parse(cls, data: Any) -> Self:
        """``data`` (a mapping) as this record, or :class:`Invalid` listing every problem."""
        issues: list[Issue] = []
        made: Self = cls._check(data, (), issues)
        if made is _FAIL:
            raise Invalid(issues)
        return made

    @classmethod
    def field_names(cls) -> tuple[str, ...]:
        return tuple(cls._fields())

    @property
    def fields_set(self) -> frozenset[str]:
        """The fields the input gave (the rest took their defaults)."""
        given: frozenset[str] = self.__dict__["__fields_set__"]
        return given

    def dump(self, *, exclude: Iterable[str] = (), exclude_defaults: bool = False,
             json: bool = False) -> dict[str, Any]:
        """The fields as plain data (nested records as dicts). ``json``: only JSON types, enums
        as their values and secrets masked."""
        skip = set(exclude)
        out: dict[str, Any] = {}
        for name, field in type(self)._fields().items():
            if name in skip:
                continue
            value = self.__dict__[name]
            if exclude_defaults and not field.required and value == field.default():
                continue
            out[name] = _dumped(value, exclude_defaults, json)
        return out

    def replace(self, **changes: Any) -> Self:
        """A copy with ``changes``, checked again."""
        return type(self).parse({**{n: self.__dict__[n] for n in type(self)._fields()}, **changes})

    @classmethod
    def json_schema(cls) -> dict[str, Any]:
        """A JSON schema of the record (tools' parameters): descriptions, defaults and limits."""
        properties: dict[str, Any] = {}
        required: list[str] = []
        for field in cls._fields().values():
            schema = _with_limits(_schema(field.hint), field.info)
            if field.info.description:
                schema["description"] = field.info.description
            if field.required:
                required.append(field.key)
            else:
                default = field.default()
                if default is None or isinstance(default, str | int | float | bool):
                    schema["default"] = default
            properties[field.key] = schema
        out: dict[str, Any] = {"type": "object", "properties": properties}
        if required:
            out["required"] = required
        if cls.__extra__ == "forbid":
            out["additionalProperties"] = False
        return out

    def __setattr__(self, name: str, value: Any) -> None:
        if type(self).__frozen__:
            raise AttributeError(f"{type(self).__name__} is read-only")
        object.__setattr__(self, name, value)

    def __eq__(self, other: object) -> bool:
        if type(other) is not type(self):
            return NotImplemented
        names = type(self)._fields()
        return all(self.__dict__[n] == other.__dict__[n] for n in names)

    def __hash__(self) -> int:
        if not type(self).__frozen__:
            raise TypeError(f"{type(self).__name__} can change: it cannot be hashed")
        return hash(tuple(_hashable(self.__dict__[n]) for n in type(self)._fields()))

    def __repr__(self) -> str:
        shown = ", ".join(f"{n}={self.__dict__[n]!r}" for n in type(self)._fields())
        return f"{type(self).__name__}({shown})"


def _hashable(value: Any) -> Any:
    if isinstance(value, list):
        return tuple(map(_hashable, value))
    if isinstance(value, dict):
        return frozenset((k, _hashable(v)) for k, v in value.items())  # keys need not sort
    return value


def _dumped(value: Any, exclude_defaults: bool, json: bool) -> Any:
    if isinstance(value, Record):
        return value.dump(exclude_defaults=exclude_defaults, json=json)
    if isinstance(value, list | tuple):
        return [_dumped(v, exclude_defaults, json) for v in value]
    if isinstance(value, dict):
        return {(k.value if json and isinstance(k, enum.Enum) else k): _dumped(v, exclude_defaults, json)
                for k, v in value.items()}
    if json and isinstance(value, enum.Enum):
        return value.value
    if json and isinstance(value, Secret):
        return Secret.MASK
    return value


_JSON_TYPES = {str: "string", int: "integer", float: "number", bool: "boolean", Secret: "string"}


def _limit_keywords(info: FieldInfo) -> dict[str, Any]:
    words = {"ge": "minimum", "gt": "exclusiveMinimum", "le": "maximum", "lt": "exclusiveMaximum",
             "min_length": "minLength", "max_length": "maxLength"}
    return {word: getattr(info, name) for name, word in words.items() if getattr(info, name) is not None}


def _with_limits(schema: dict[str, Any], info: FieldInfo) -> dict[str, Any]:
    """Limits go on the member that is not null (``number | null`` with a minimum)."""
    limits = _limit_keywords(info)
    if limits and "anyOf" in schema:
        for member in schema["anyOf"]:
            if member.get("type") != "null":
                member.update(limits)
    else:
        schema.update(limits)
    return schema


def _enum_schema(values: list[Any]) -> dict[str, Any]:
    """The choices, with their JSON type when they share one (an IntEnum's is no string)."""
    kinds = {_JSON_TYPES.get(type(value)) for value in values}
    return {"enum": values, **({"type": kinds.pop()} if len(kinds) == 1 and None not in kinds else {})}


def _schema(hint: Any) -> dict[str, Any]:
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin is Annotated:
        schema = _schema(args[0])
        for meta in args[1:]:
            if isinstance(meta, FieldInfo):
                schema = _with_limits(schema, meta)
        return schema
    if origin is Literal:
        return _enum_schema(list(args))
    if origin in (Union, types.UnionType):
        return {"anyOf": [_schema(a) for a in args]}
    if hint is type(None) or hint is None:
        return {"type": "null"}
    if origin in (list, tuple) or hint in (list, tuple):
        return {"type": "array", "items": _schema(args[0])} if args else {"type": "array"}
    if origin is dict or hint is dict:
        return {"type": "object", "additionalProperties": _schema(args[1])} if args else {"type": "object"}
    if isinstance(hint, type) and issubclass(hint, Record):
        return hint.json_schema()
    if isinstance(hint, type) and issubclass(hint, enum.Enum):
        return _enum_schema([member.value for member in hint])
    if hint in _JSON_TYPES:
        return {"type": _JSON_TYPES[hint]}
    return {}
